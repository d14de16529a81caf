// resize: ONNX Resize (nearest | linear | cubic) as separable 1-D interpolations, one axis at a
// time from the innermost, computed in double like the ONNX reference implementation.
#include "Kernels.h"

#include "strata/graph/ResizeMath.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::interp::structured {

namespace {

struct Tap {
  int64_t index; // input coordinate, already clamped into [0, in) (edge padding)
  double weight;
};

// The non-zero taps of each output position (ResizeMath.h computes them).
std::vector<std::vector<Tap>> tapsForAxis(const ResizeTaps &t, int64_t outSize) {
  std::vector<std::vector<Tap>> taps(static_cast<size_t>(outSize));
  for (int64_t o = 0; o < outSize; ++o)
    for (int64_t j = 0; j < t.count; ++j)
      if (double w = t.weight[o * t.count + j]; w != 0)
        taps[o].push_back({t.index[o * t.count + j], w});
  return taps;
}

// One separable pass: resizes axis `axis` of `src` (shape `shape`) to taps.size().
std::vector<double> resizeAxis(const std::vector<double> &src, Shape &shape, int64_t axis,
                               const std::vector<std::vector<Tap>> &taps) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  int64_t inSize = shape[axis], outSize = static_cast<int64_t>(taps.size());
  std::vector<double> dst(static_cast<size_t>(outer * outSize * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t x = 0; x < outSize; ++x) {
      double *row = dst.data() + (o * outSize + x) * inner;
      for (const Tap &t : taps[x]) {
        const double *srcRow = src.data() + (o * inSize + t.index) * inner;
        for (int64_t i = 0; i < inner; ++i)
          row[i] += t.weight * srcRow[i];
      }
    }
  shape[axis] = outSize;
  return dst;
}

} // namespace

Tensors resizeKernel(const Op &op, const Tensors &operands) {
  const Tensor &x = operands[0];
  int64_t rank = x.rank();
  const ops::ResizeOp resize(op);
  const ResizeParams p = ResizeParams::of(resize);
  std::vector<int64_t> sizes; // -1: from the scale; a symbolic entry at its bound size
  for (const Dim &d : resize.sizes())
    sizes.push_back(d.isStatic() ? d.size : boundSize(d));
  // Scales read from data (operand 1) or the attribute's.
  std::vector<double> dataScales;
  if (operands.size() > 1)
    dataScales = operands[1].toDoubleVector();
  const std::vector<double> &scales = operands.size() > 1 ? dataScales : resize.scales();
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != rank)
    fail(op, "scales has " + std::to_string(scales.size()) + " entries for rank " +
                 std::to_string(rank));
  if (static_cast<int64_t>(sizes.size()) != rank)
    fail(op,
         "sizes has " + std::to_string(sizes.size()) + " entries for rank " + std::to_string(rank));
  if (x.dtype() == DType::Bool)
    fail(op, "bool input is not supported");

  Shape shape = x.shape();
  std::vector<double> data = x.toDoubleVector();
  for (int64_t d = rank - 1; d >= 0; --d) {
    int64_t inSize = shape[d];
    int64_t outSize = sizes[d];
    if (outSize == -1 && !scales.empty()) // floor(in * scale): a dim symbolic in the graph
      outSize = resizedSize(inSize, scales[d]).value_or(-1);
    if (outSize < 0)
      fail(op, "negative output size " + std::to_string(outSize) + " for dim " + std::to_string(d));
    if (inSize == 0 && outSize > 0)
      fail(op,
           "cannot resize an empty dim " + std::to_string(d) + " to " + std::to_string(outSize));
    double scale = resizeScale(scales, d, inSize, outSize);
    if (outSize > 0 && (!(scale > 0) || std::isinf(scale)))
      fail(op, "scale for dim " + std::to_string(d) + " must be positive");
    ResizeTaps axisTaps = resizeTaps(p, inSize, outSize, scale);
    if (outSize != 0 && axisTaps.identity)
      continue;
    data = resizeAxis(data, shape, d, tapsForAxis(axisTaps, outSize));
  }

  Tensor result(x.dtype(), shape);
  int64_t count = result.numElements();
  if (isFloat(x.dtype())) {
    for (int64_t i = 0; i < count; ++i)
      result.setDouble(i, data[i]);
  } else {
    // Integer outputs truncate like numpy's astype, clamped so the conversion stays defined.
    int bits = static_cast<int>(dtypeSize(x.dtype()) * 8) - (isSigned(x.dtype()) ? 1 : 0);
    double maxV = std::nextafter(std::ldexp(1.0, bits), 0.0);
    double minV = isSigned(x.dtype()) ? -std::ldexp(1.0, bits) : 0.0;
    for (int64_t i = 0; i < count; ++i) {
      double v = std::isnan(data[i]) ? 0.0 : std::trunc(std::clamp(data[i], minV, maxV));
      if (isSigned(x.dtype()))
        result.setInt(i, static_cast<int64_t>(v));
      else
        result.setInt(i, static_cast<int64_t>(static_cast<uint64_t>(v)));
    }
  }
  return {result};
}

} // namespace strata::interp::structured
