#include "ElementwiseSupport.h"

#include <cstring>

namespace strata::interp {

int64_t checkedAxis(int64_t axis, int64_t rank, std::string_view what) {
  if (axis < 0 || axis >= rank)
    throw InterpError(std::string(what) + ": axis " + std::to_string(axis) +
                      " out of range for rank " + std::to_string(rank));
  return axis;
}

void coalesce(StridedPlan &plan) {
  const size_t numOperands = plan.strides.size();
  StridedPlan out;
  out.base = plan.base;
  out.strides.resize(numOperands);
  for (size_t d = 0; d < plan.dims.size(); ++d) {
    int64_t size = plan.dims[d];
    if (size == 1)
      continue; // a size-1 dim never moves any offset
    bool mergeable = !out.dims.empty() && size != 0 && out.dims.back() != 0;
    // Merging dim d into the previous (outer) one is valid when, for every operand, stepping the
    // outer dim once equals stepping dim d `size` times.
    for (size_t k = 0; mergeable && k < numOperands; ++k)
      mergeable = out.strides[k].back() == plan.strides[k][d] * size;
    if (mergeable) {
      out.dims.back() *= size;
      for (size_t k = 0; k < numOperands; ++k)
        out.strides[k].back() = plan.strides[k][d];
    } else {
      out.dims.push_back(size);
      for (size_t k = 0; k < numOperands; ++k)
        out.strides[k].push_back(plan.strides[k][d]);
    }
  }
  if (out.dims.empty()) {
    out.dims.push_back(1);
    for (auto &s : out.strides)
      s.push_back(0);
  }
  plan = std::move(out);
}

StridedPlan planBroadcast(const std::vector<const Shape *> &shapes, Shape &outShape) {
  outShape.clear();
  for (const Shape *s : shapes)
    outShape = broadcastShapes(outShape, *s);
  const size_t rank = outShape.size();
  StridedPlan plan;
  plan.dims = outShape;
  plan.base.assign(shapes.size(), 0);
  for (const Shape *s : shapes) {
    std::vector<int64_t> contiguous = contiguousStrides(*s);
    std::vector<int64_t> strides(rank, 0);
    const size_t lead = rank - s->size();
    for (size_t d = 0; d < s->size(); ++d)
      strides[lead + d] = (*s)[d] == 1 ? 0 : contiguous[d];
    plan.strides.push_back(std::move(strides));
  }
  coalesce(plan);
  return plan;
}

Tensor stridedCopy(const Tensor &src, const Shape &outShape, int64_t base,
                   const std::vector<int64_t> &strides) {
  Tensor out(src.dtype(), outShape);
  if (out.numElements() == 0)
    return out;
  StridedPlan plan{outShape, {strides}, {base}};
  coalesce(plan);
  visitElemSize(dtypeSize(src.dtype()), [&](auto word) {
    using W = decltype(word);
    const W *in = src.data<W>();
    W *dst = out.data<W>();
    forEachRow(plan, [&](int64_t o, const int64_t *off, int64_t n, const int64_t *stride) {
      const W *p = in + off[0];
      if (stride[0] == 1) {
        std::memcpy(dst + o, p, static_cast<size_t>(n) * sizeof(W));
        return;
      }
      const int64_t s = stride[0];
      for (int64_t i = 0; i < n; ++i)
        dst[o + i] = p[i * s];
    });
  });
  return out;
}

std::vector<int64_t> readIndices(const Tensor &t, std::string_view what) {
  if (!isInteger(t.dtype()))
    throw InterpError(std::string(what) + ": indices must be integers, got " +
                      std::string(dtypeName(t.dtype())));
  return t.toIntVector();
}

} // namespace strata::interp
