// Kernels that move elements without computing on them: reshape, transpose, expand, slice,
// concat and pad (gather/scatter live in GatherScatter.cpp). They copy by element size, so every
// dtype shares one implementation per width.
#include "ElementwiseSupport.h"
#include "strata/interp/Interpreter.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace strata::interp {

void registerGatherScatterKernels(KernelFn *table); // GatherScatter.cpp

namespace {

// ONNX Reshape from the static `shape` attribute and the runtime input shape: 0 copies the input
// dim (unless allowzero), one -1 is inferred. Shares the input's buffer.
Tensors reshapeKernel(const Op &op, const Tensors &xs) {
  const Tensor &x = xs[0];
  const ops::ReshapeOp reshape(op);
  const std::vector<Dim> dims = reshape.shape();
  // A symbolic entry is its size exactly (a 0 there is an empty dim, not a copy).
  const std::vector<int64_t> target = boundSizes(dims);
  const bool allowZero = reshape.allowzero();
  Shape out(target.size());
  int64_t inferAt = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (!dims[i].isStatic() && d < 0)
      throw InterpError("reshape: shape entry " + std::to_string(i) + " " + dims[i].str() +
                        " is negative: " + std::to_string(d));
    if (d == 0 && !allowZero && dims[i].isStatic()) {
      if (static_cast<int64_t>(i) >= x.rank())
        throw InterpError("reshape: shape entry " + std::to_string(i) +
                          " is 0 but the input has rank " + std::to_string(x.rank()));
      d = x.shape()[i];
    } else if (d == -1 && dims[i].isStatic()) {
      if (inferAt >= 0)
        throw InterpError("reshape: more than one -1 in shape");
      inferAt = static_cast<int64_t>(i);
      continue;
    } else if (d < 0) {
      throw InterpError("reshape: invalid shape entry " + std::to_string(d));
    }
    out[i] = d;
    std::optional<int64_t> product = shape::checkedMul(known, d);
    if (!product) // more elements than any input has; the product itself would be undefined
      throw InterpError("reshape: cannot reshape " + shapeText(x.shape()) + " into " +
                        shapeText(target) + " (its product overflows int64)");
    known = *product;
  }
  const int64_t total = x.numElements();
  if (inferAt >= 0) {
    if (known == 0)
      throw InterpError("reshape: cannot infer -1 with a zero-sized dim in shape");
    if (total % known != 0)
      throw InterpError("reshape: cannot reshape " + shapeText(x.shape()) + " (" +
                        std::to_string(total) + " elements) with a -1 into multiples of " +
                        std::to_string(known));
    out[inferAt] = total / known;
  }
  if (numElements(out) != total)
    throw InterpError("reshape: cannot reshape " + shapeText(x.shape()) + " into " +
                      shapeText(out));
  return {x.reshaped(out)};
}

Tensors transposeKernel(const Op &op, const Tensors &xs) {
  const Tensor &x = xs[0];
  const int64_t rank = x.rank();
  const std::vector<int64_t> &perm = ops::TransposeOp(op).perm();
  if (static_cast<int64_t>(perm.size()) != rank)
    throw InterpError("transpose: perm has " + std::to_string(perm.size()) +
                      " entries for rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> inStrides = contiguousStrides(x.shape());
  Shape outShape(rank);
  std::vector<int64_t> strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t p = perm[i];
    if (p < 0 || p >= rank)
      throw InterpError("transpose: perm entry " + std::to_string(p) + " out of range for rank " +
                        std::to_string(rank));
    if (seen[p])
      throw InterpError("transpose: perm repeats axis " + std::to_string(p));
    seen[p] = true;
    outShape[i] = x.shape()[p];
    strides[i] = inStrides[p];
  }
  return {stridedCopy(x, outShape, 0, strides)};
}

Tensors expandKernel(const Op &op, const Tensors &xs) {
  const Tensor &x = xs[0];
  Shape outShape = broadcastShapes(x.shape(), boundSizes(ops::ExpandOp(op).shape()));
  std::vector<int64_t> inStrides = contiguousStrides(x.shape());
  std::vector<int64_t> strides(outShape.size(), 0);
  const size_t lead = outShape.size() - x.shape().size();
  for (size_t d = 0; d < x.shape().size(); ++d)
    strides[lead + d] = x.shape()[d] == 1 ? 0 : inStrides[d];
  return {stridedCopy(x, outShape, 0, strides)};
}

// ONNX Slice, one entry per dim (shape::sliceRange clamps as ONNX does).
Tensors sliceKernel(const Op &op, const Tensors &xs) {
  const Tensor &x = xs[0];
  const size_t rank = static_cast<size_t>(x.rank());
  const ops::SliceOp slice(op);
  const std::vector<int64_t> &starts = slice.starts(), &ends = slice.ends(), &steps = slice.steps();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    throw InterpError("slice: starts, ends and steps must have one entry per dim");
  Shape outShape = x.shape();
  std::vector<int64_t> inStrides = contiguousStrides(x.shape());
  std::vector<int64_t> strides = inStrides;
  int64_t base = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (steps[d] == 0)
      throw InterpError("slice: step is 0 for axis " + std::to_string(d));
    shape::SliceRange r = shape::sliceRange(x.shape()[d], starts[d], ends[d], steps[d]);
    outShape[d] = r.length;
    base += r.start * inStrides[d];
    // With two or more elements the product stays inside the tensor, so it cannot overflow.
    strides[d] = r.length > 1 ? inStrides[d] * r.step : 0;
  }
  return {stridedCopy(x, outShape, base, strides)};
}

Tensors concatKernel(const Op &op, const Tensors &xs) {
  const Tensor &first = xs[0];
  const int64_t rank = first.rank();
  if (rank == 0)
    throw InterpError("concat: operands must have rank >= 1");
  const int64_t axis = checkedAxis(ops::ConcatOp(op).axis(), rank, "concat");
  Shape outShape = first.shape();
  outShape[axis] = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    const Tensor &x = xs[k];
    if (x.dtype() != first.dtype())
      throw InterpError("concat: operand " + std::to_string(k) + " has dtype " +
                        std::string(dtypeName(x.dtype())) + ", expected " +
                        std::string(dtypeName(first.dtype())));
    bool compatible = x.rank() == rank;
    for (int64_t d = 0; compatible && d < rank; ++d)
      compatible = d == axis || x.shape()[d] == first.shape()[d];
    if (!compatible)
      throw InterpError("concat: operand " + std::to_string(k) + " has shape " +
                        shapeText(x.shape()) + ", incompatible with " + shapeText(first.shape()) +
                        " along axis " + std::to_string(axis));
    std::optional<int64_t> sum = shape::checkedAdd(outShape[axis], x.shape()[axis]);
    if (!sum) // empty operands can have huge dims
      throw InterpError("concat: the result's axis " + std::to_string(axis) + " overflows int64");
    outShape[axis] = *sum;
  }
  Tensor out(first.dtype(), outShape);
  // Each operand contributes a contiguous block of (its axis dim x inner) elements per outer index.
  const size_t elem = dtypeSize(first.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= outShape[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= outShape[d];
  const size_t outRowBytes = static_cast<size_t>(outShape[axis] * inner) * elem;
  auto *dst = static_cast<uint8_t *>(out.rawData());
  size_t columnOffset = 0;
  for (const Tensor &x : xs) {
    const size_t blockBytes = static_cast<size_t>(x.shape()[axis] * inner) * elem;
    const auto *src = static_cast<const uint8_t *>(x.rawData());
    if (blockBytes != 0)
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + o * outRowBytes + columnOffset, src + o * blockBytes, blockBytes);
    columnOffset += blockBytes;
  }
  return {out};
}

// Maps output coordinate j along one axis to an input coordinate, or -1 for the pad value.
// Negative pads crop first; the padding modes then see only the kept range [lo, lo + size).
int64_t padSource(int64_t j, int64_t lo, int64_t size, PadMode mode) {
  if (j >= 0 && j < size)
    return lo + j;
  if (mode == PadMode::Constant)
    return -1;
  int64_t k;
  if (mode == PadMode::Edge) {
    k = j < 0 ? 0 : size - 1;
  } else if (mode == PadMode::Wrap) {
    k = ((j % size) + size) % size;
  } else { // reflect: mirror without repeating the edge element (numpy 'reflect')
    if (size == 1) {
      k = 0;
    } else {
      const int64_t period = 2 * (size - 1);
      k = ((j % period) + period) % period;
      if (k >= size)
        k = period - k;
    }
  }
  return lo + k;
}

Tensors padKernel(const Op &op, const Tensors &xs) {
  const Tensor &x = xs[0];
  const int64_t rank = x.rank();
  const ops::PadOp pad(op);
  const std::vector<Dim> padDims = pad.pads();
  const std::vector<int64_t> pads = boundSizes(padDims); // symbolic entries of either sign
  const PadMode mode = pad.mode();
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    throw InterpError("pad: pads has " + std::to_string(pads.size()) + " entries, expected " +
                      std::to_string(2 * rank));
  // The pad value: a one-element tensor, converted to x's dtype if it differs.
  Tensor value = xs[1];
  if (value.numElements() != 1)
    throw InterpError("pad: value must have exactly one element, got shape " +
                      shapeText(value.shape()));
  if (value.dtype() != x.dtype())
    value = castTensor(value, x.dtype());

  Shape outShape(rank);
  std::vector<std::vector<int64_t>> sourceIndex(rank); // per axis: output coord -> input coord
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t dim = x.shape()[d], begin = pads[d], end = pads[rank + d];
    // Checked before negating: a pad of INT64_MIN has no negation.
    const bool cropsTooMuch = begin < -dim || end < -dim;
    const int64_t lo = cropsTooMuch ? 0 : std::max<int64_t>(0, -begin);
    const int64_t kept = cropsTooMuch ? -1 : dim - lo - std::max<int64_t>(0, -end);
    if (kept < 0)
      throw InterpError("pad: pads " + std::to_string(begin) + ", " + std::to_string(end) +
                        " crop more than axis " + std::to_string(d) + " of size " +
                        std::to_string(dim));
    std::optional<int64_t> size = shape::checkedAdd(kept, std::max<int64_t>(0, begin));
    if (size)
      size = shape::checkedAdd(*size, std::max<int64_t>(0, end));
    if (!size)
      throw InterpError("pad: pads " + std::to_string(begin) + ", " + std::to_string(end) +
                        " grow axis " + std::to_string(d) + " past int64");
    outShape[d] = *size;
    if (kept == 0 && outShape[d] > 0 && mode != PadMode::Constant)
      throw InterpError("pad: cannot " + std::string(enumName(mode)) + "-pad axis " +
                        std::to_string(d) + ", which has no elements");
    sourceIndex[d].resize(outShape[d]);
    for (int64_t j = 0; j < outShape[d]; ++j)
      sourceIndex[d][j] = padSource(j - std::max<int64_t>(0, begin), lo, kept, mode);
  }

  Tensor out(x.dtype(), outShape);
  const int64_t total = out.numElements();
  if (total == 0)
    return {out};
  const std::vector<int64_t> inStrides = contiguousStrides(x.shape());
  visitElemSize(dtypeSize(x.dtype()), [&](auto word) {
    using W = decltype(word);
    const W *src = x.data<W>();
    const W fill = *value.data<W>();
    W *dst = out.data<W>();
    if (rank == 0) {
      dst[0] = src[0];
      return;
    }
    // Walk output rows along the last axis; an outer coordinate in the padding fills the row.
    const int64_t inner = outShape[rank - 1];
    const std::vector<int64_t> &lastMap = sourceIndex[rank - 1];
    std::vector<int64_t> index(rank - 1, 0);
    for (int64_t rowStart = 0; rowStart < total; rowStart += inner) {
      int64_t offset = 0;
      bool padded = false;
      for (int64_t d = 0; d < rank - 1 && !padded; ++d) {
        int64_t s = sourceIndex[d][index[d]];
        padded = s < 0;
        offset += s * inStrides[d];
      }
      W *row = dst + rowStart;
      if (padded) {
        std::fill(row, row + inner, fill);
      } else {
        for (int64_t j = 0; j < inner; ++j)
          row[j] = lastMap[j] < 0 ? fill : src[offset + lastMap[j]];
      }
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (++index[d] < outShape[d])
          break;
        index[d] = 0;
      }
    }
  });
  return {out};
}

} // namespace

// shape: the operand's dims [start, end) (its type was checked against them).
static Tensors shapeKernel(const Op &op, const Tensors &operands) {
  const ops::ShapeOp attrs(op);
  const Shape &dims = operands[0].shape();
  const int64_t start = attrs.start(), end = attrs.end();
  if (start < 0 || end < start || end > static_cast<int64_t>(dims.size()))
    structured::fail(op, "dims [" + std::to_string(start) + ", " + std::to_string(end) +
                             ") are not within " + shapeToString(dims));
  std::vector<int64_t> v(dims.begin() + start, dims.begin() + end);
  return {Tensor::fromVector(DType::I64, {end - start}, v)};
}

// iota: 0 .. n - 1 for n = dim `axis` of the operand.
static Tensors iotaKernel(const Op &op, const Tensors &operands) {
  const int64_t axis = ops::IotaOp(op).axis();
  const Shape &dims = operands[0].shape();
  if (axis < 0 || axis >= static_cast<int64_t>(dims.size()))
    structured::fail(op, "axis " + std::to_string(axis) + " is not within " + shapeToString(dims));
  Tensor out(DType::I64, {dims[static_cast<size_t>(axis)]});
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.setInt(i, i);
  return {out};
}

// nonzero: the row-major indices of the nonzero elements (NaN counts), [rank, count]; the count
// operand must be their number (the run-time value of the result's symbolic dim).
static Tensors nonzeroKernel(const Op &op, const Tensors &operands) {
  const Tensor &x = operands[0];
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  if (rank == 0 || operands[1].dtype() != DType::I64 || operands[1].numElements() != 1)
    structured::fail(op, "expected a tensor of rank >= 1 and a rank-0 i64 count");
  std::vector<int64_t> found;
  for (int64_t i = 0; i < x.numElements(); ++i)
    if (x.getDouble(i) != 0)
      found.push_back(i);
  const int64_t count = static_cast<int64_t>(found.size());
  if (operands[1].getInt(0) != count)
    structured::fail(op, "the count operand is " + std::to_string(operands[1].getInt(0)) +
                             " but the operand has " + std::to_string(count) +
                             " nonzero elements");
  Tensor out(DType::I64, {rank, count});
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = found[static_cast<size_t>(k)];
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t size = x.shape()[static_cast<size_t>(d)];
      out.setInt(d * count + k, rest % size);
      rest /= size;
    }
  }
  return {out};
}

// arange: 0 .. n - 1 for n the count operand's value (a size computed at run time).
static Tensors arangeKernel(const Op &op, const Tensors &operands) {
  if (operands[0].dtype() != DType::I64 || operands[0].numElements() != 1)
    structured::fail(op, "expected a rank-0 i64 count");
  const int64_t n = operands[0].getInt(0);
  if (n < 0) {
    const std::string &invalid = ops::ArangeOp(op).invalid();
    structured::fail(op, invalid.empty() ? "the count is " + std::to_string(n) + ", a negative size"
                                         : invalid);
  }
  Tensor out(DType::I64, {n}); // (refused past the max-tensor-elements limit)
  for (int64_t i = 0; i < n; ++i)
    out.setInt(i, i);
  return {out};
}

void registerDataMovementKernels(KernelFn *table) {
  auto set = [&](OpKind k, KernelFn fn) { table[static_cast<size_t>(k)] = fn; };
  set(OpKind::Reshape, reshapeKernel);
  set(OpKind::Transpose, transposeKernel);
  set(OpKind::Expand, expandKernel);
  set(OpKind::Slice, sliceKernel);
  set(OpKind::Concat, concatKernel);
  set(OpKind::Pad, padKernel);
  set(OpKind::Shape, shapeKernel);
  set(OpKind::Iota, iotaKernel);
  set(OpKind::NonZero, nonzeroKernel);
  set(OpKind::Arange, arangeKernel);
  registerGatherScatterKernels(table);
}

} // namespace strata::interp
