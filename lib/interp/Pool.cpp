// pool: max | avg | lp over the spatial dims of an NC... tensor (ONNX MaxPool / AveragePool /
// LpPool with explicit pads).
#include "Kernels.h"

#include "strata/graph/Layout.h"

#include <cmath>
#include <limits>

namespace strata::interp::structured {

namespace {

// For one spatial dim: for each output coordinate, the input coordinates its window reads (taps
// inside the real input) and how many taps fall inside the padded bounds.
struct DimWindows {
  std::vector<std::vector<int64_t>> taps;
  std::vector<int64_t> paddedCount;
};

DimWindows windowsForDim(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                         int64_t padBegin, int64_t padEnd) {
  DimWindows w;
  w.taps.resize(out);
  w.paddedCount.resize(out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * stride - padBegin;
    for (int64_t t = 0; t < kernel; ++t) {
      int64_t coord = start + t * dilation;
      if (coord >= -padBegin && coord < in + padEnd)
        ++w.paddedCount[o];
      if (coord >= 0 && coord < in)
        w.taps[o].push_back(coord);
    }
  }
  return w;
}

template <typename T>
Tensor poolTyped(const Tensor &x, const Shape &outShape, const std::vector<DimWindows> &windows,
                 PoolKind kind, bool countIncludePad, int64_t p) {
  int64_t rank = static_cast<int64_t>(windows.size());
  Shape inGrid(x.shape().begin() + 2, x.shape().end());
  Shape outGrid(outShape.begin() + 2, outShape.end());
  std::vector<int64_t> inStrides = contiguousStrides(inGrid);
  int64_t planes = x.shape()[0] * x.shape()[1];
  int64_t inSize = numElements(inGrid), outSize = numElements(outGrid);
  Tensor result(x.dtype(), outShape);
  const T *xData = x.data<T>();
  T *yData = result.data<T>();
  std::vector<int64_t> outIdx(rank), tapIdx(rank);

  for (int64_t o = 0; o < outSize; ++o) {
    for (int64_t d = rank - 1, r = o; d >= 0; --d) {
      outIdx[d] = r % outGrid[d];
      r /= outGrid[d];
    }
    // Offsets of all real taps of this window, and the window's divisor for avg.
    std::vector<int64_t> offsets = {0};
    int64_t padded = 1;
    for (int64_t d = 0; d < rank; ++d) {
      const std::vector<int64_t> &taps = windows[d].taps[outIdx[d]];
      std::vector<int64_t> next;
      next.reserve(offsets.size() * taps.size());
      for (int64_t base : offsets)
        for (int64_t t : taps)
          next.push_back(base + t * inStrides[d]);
      offsets = std::move(next);
      // Saturates rather than overflows: the kernel sizes come from the model file.
      padded = shape::checkedMul(padded, windows[d].paddedCount[outIdx[d]])
                   .value_or(std::numeric_limits<int64_t>::max());
    }
    for (int64_t plane = 0; plane < planes; ++plane) {
      const T *in = xData + plane * inSize;
      T &out = yData[plane * outSize + o];
      if (kind == PoolKind::Max) {
        T best = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                      : std::numeric_limits<T>::lowest();
        for (int64_t off : offsets) {
          T v = in[off];
          if constexpr (std::is_floating_point_v<T>)
            if (std::isnan(v)) {
              best = v;
              break;
            }
          if (v > best)
            best = v;
        }
        out = best;
      } else if (kind == PoolKind::Avg) {
        double sum = 0;
        for (int64_t off : offsets)
          sum += static_cast<double>(in[off]);
        int64_t divisor = countIncludePad ? padded : static_cast<int64_t>(offsets.size());
        out = static_cast<T>(divisor ? sum / static_cast<double>(divisor)
                                     : std::numeric_limits<double>::quiet_NaN());
      } else {
        double sum = 0;
        for (int64_t off : offsets)
          sum += std::pow(std::fabs(static_cast<double>(in[off])), static_cast<double>(p));
        out = static_cast<T>(std::pow(sum, 1.0 / static_cast<double>(p)));
      }
    }
  }
  return result;
}

} // namespace

Tensors poolKernelPlain(const Op &op, const Tensors &operands);

// A pool in a blocked layout is the plain pool on the unblocked operand, blocked again.
Tensors poolKernel(const Op &op, const Tensors &operands) {
  const int64_t block = ops::PoolOp(op).layout();
  if (block == 0)
    return poolKernelPlain(op, operands);
  if (operands[0].rank() < 4 || operands[0].shape().back() != block)
    fail(op, "operand " + shapeToString(operands[0].shape()) + " is not blocked by " +
                 std::to_string(block));
  return {blockChannels(poolKernelPlain(op, {unblockChannels(operands[0])}).at(0), block)};
}

Tensors poolKernelPlain(const Op &op, const Tensors &operands) {
  DType dtype = operands[0].dtype();
  Tensor x = widenHalf(operands[0]);
  if (x.rank() < 3)
    fail(op, "expected an input [N, C, spatial...], got " + shapeToString(x.shape()));
  int64_t rank = x.rank() - 2;
  const ops::PoolOp pool(op);
  const PoolKind kind = pool.kind();
  const std::vector<int64_t> &kernel = pool.kernel(), &strides = pool.strides(),
                             &dilations = pool.dilations(), &pads = pool.pads();
  if (static_cast<int64_t>(kernel.size()) != rank || static_cast<int64_t>(strides.size()) != rank ||
      static_cast<int64_t>(dilations.size()) != rank ||
      static_cast<int64_t>(pads.size()) != 2 * rank)
    fail(op, "kernel, strides, dilations and pads do not match " + std::to_string(rank) +
                 " spatial dims");
  const bool ceilMode = pool.ceil_mode(), countIncludePad = pool.count_include_pad();
  const int64_t p = pool.p();
  for (int64_t d = 0; d < rank; ++d)
    if (kernel[d] <= 0 || strides[d] <= 0 || dilations[d] <= 0)
      fail(op, "kernel, strides and dilations must be positive");

  Shape outShape = {x.shape()[0], x.shape()[1]};
  std::vector<DimWindows> windows;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = x.shape()[d + 2];
    std::string why;
    std::optional<int64_t> size = shape::windowOutputSize(
        in, {kernel[d], strides[d], pads[d], pads[rank + d], dilations[d]}, ceilMode, &why);
    if (!size)
      fail(op, why + " in spatial dim " + std::to_string(d));
    int64_t out = *size;
    outShape.push_back(out);
    windows.push_back(
        windowsForDim(in, out, kernel[d], strides[d], dilations[d], pads[d], pads[rank + d]));
  }
  Tensor result = visitDType(op, x.dtype(), /*allowInts=*/kind == PoolKind::Max, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      fail(op, "bool input is not supported");
      return Tensor();
    } else {
      return poolTyped<T>(x, outShape, windows, kind, countIncludePad, p);
    }
  });
  return {narrowFromF32(result, dtype)};
}

} // namespace strata::interp::structured
