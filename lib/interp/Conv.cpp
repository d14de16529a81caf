// conv and conv_transpose: N-d, NC... layout, via im2col / col2im around the shared GEMM.
#include "Kernels.h"

#include "strata/graph/Layout.h"

#include <algorithm>

namespace strata::interp::structured {

namespace {

// Per-spatial-dim window geometry (the attributes list every spatial dim: their normal form).
struct ConvGeometry {
  int64_t spatialRank = 0;
  std::vector<int64_t> strides, padsBegin, padsEnd, dilations;
  shape::WindowDim window(int64_t d, int64_t kernel) const {
    return {kernel, strides[d], padsBegin[d], padsEnd[d], dilations[d]};
  }
};

template <typename ConvView> ConvGeometry readGeometry(const Op &op, int64_t spatialRank) {
  const ConvView conv(op);
  ConvGeometry g;
  g.spatialRank = spatialRank;
  g.strides = conv.strides();
  g.dilations = conv.dilations();
  const std::vector<int64_t> &pads = conv.pads();
  if (static_cast<int64_t>(g.strides.size()) != spatialRank ||
      static_cast<int64_t>(g.dilations.size()) != spatialRank ||
      static_cast<int64_t>(pads.size()) != 2 * spatialRank)
    fail(op, "strides, dilations and pads do not match " + std::to_string(spatialRank) +
                 " spatial dims");
  g.padsBegin.assign(pads.begin(), pads.begin() + spatialRank);
  g.padsEnd.assign(pads.begin() + spatialRank, pads.end());
  for (int64_t d = 0; d < spatialRank; ++d)
    if (g.strides[d] <= 0 || g.dilations[d] <= 0)
      fail(op, "strides and dilations must be positive");
  return g;
}

// Rows of the column matrix are (channel, kernel offset...) tuples, columns are the positions of
// `outer` (the output grid for conv, the input grid for conv_transpose). `visit(row, col, inner)`
// is called with the flattened position in `inner` (the other grid) or -1 when it falls in the
// padding. Shared by im2col (gather) and col2im (scatter-add).
template <typename Visit>
void forEachWindowTap(const ConvGeometry &g, int64_t channels, const Shape &kernel,
                      const Shape &outerGrid, const Shape &innerGrid, Visit &&visit) {
  int64_t rank = g.spatialRank;
  int64_t kernelSize = numElements(kernel), outerSize = numElements(outerGrid);
  if (outerSize == 0 || kernelSize == 0)
    return;
  std::vector<int64_t> innerStrides = contiguousStrides(innerGrid);
  int64_t innerSize = numElements(innerGrid);
  std::vector<int64_t> kIdx(rank), pos(rank);
  int64_t lastOuter = outerGrid[rank - 1];
  for (int64_t kFlat = 0; kFlat < kernelSize; ++kFlat) {
    for (int64_t d = rank - 1, r = kFlat; d >= 0; --d) {
      kIdx[d] = r % kernel[d];
      r /= kernel[d];
    }
    // Walk the outer grid; the innermost dim is a contiguous run handled in one loop.
    std::fill(pos.begin(), pos.end(), 0);
    for (int64_t colBase = 0; colBase < outerSize; colBase += lastOuter) {
      int64_t offset = 0;
      bool inside = true;
      for (int64_t d = 0; d + 1 < rank; ++d) {
        // conv: in = out*s - pb + k*dil; conv_transpose: out = in*s - pb + k*dil.
        int64_t coord = pos[d] * g.strides[d] - g.padsBegin[d] + kIdx[d] * g.dilations[d];
        if (coord < 0 || coord >= innerGrid[d]) {
          inside = false;
          break;
        }
        offset += coord * innerStrides[d];
      }
      int64_t d = rank - 1;
      for (int64_t c = 0; c < channels; ++c) {
        int64_t row = c * kernelSize + kFlat;
        int64_t channelOffset = c * innerSize;
        for (int64_t x = 0; x < lastOuter; ++x) {
          int64_t coord = x * g.strides[d] - g.padsBegin[d] + kIdx[d] * g.dilations[d];
          bool ok = inside && coord >= 0 && coord < innerGrid[d];
          visit(row, colBase + x, ok ? channelOffset + offset + coord : int64_t{-1});
        }
      }
      for (int64_t dd = rank - 2; dd >= 0; --dd) {
        if (++pos[dd] < outerGrid[dd])
          break;
        pos[dd] = 0;
      }
    }
  }
}

template <typename T>
Tensor convTyped(const Tensor &x, const Tensor &w, const Tensor *bias, const ConvGeometry &g,
                 int64_t group, const Shape &outShape) {
  int64_t rank = g.spatialRank;
  int64_t batch = x.shape()[0], inChannels = x.shape()[1], outChannels = w.shape()[0];
  int64_t inPerGroup = inChannels / group, outPerGroup = outChannels / group;
  Shape inGrid(x.shape().begin() + 2, x.shape().end());
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  Shape outGrid(outShape.begin() + 2, outShape.end());
  int64_t inSize = numElements(inGrid), outSize = numElements(outGrid);
  int64_t kernelSize = numElements(kernel);
  int64_t colRows = inPerGroup * kernelSize;

  Tensor result(x.dtype(), outShape);
  if (result.numElements() == 0) // nothing to compute; huge pads could still overflow the col size
    return result;
  const T *xData = x.data<T>(), *wData = w.data<T>();
  T *yData = result.data<T>();
  // A 1x1 kernel with unit stride and no padding reads the input directly as the column matrix.
  bool pointwise = kernelSize == 1 && inGrid == outGrid;
  for (int64_t d = 0; d < rank && pointwise; ++d)
    pointwise = g.strides[d] == 1 && g.padsBegin[d] == 0;
  std::vector<T> col(pointwise ? 0 : static_cast<size_t>(colRows * outSize));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t gi = 0; gi < group; ++gi) {
      const T *xGroup = xData + (n * inChannels + gi * inPerGroup) * inSize;
      const T *colData = xGroup;
      if (!pointwise) {
        forEachWindowTap(g, inPerGroup, kernel, outGrid, inGrid,
                         [&](int64_t row, int64_t c, int64_t in) {
                           col[row * outSize + c] = in < 0 ? T(0) : xGroup[in];
                         });
        colData = col.data();
      }
      gemmAccumulate<T>(outPerGroup, outSize, colRows, wData + gi * outPerGroup * colRows, colRows,
                        colData, outSize, yData + (n * outChannels + gi * outPerGroup) * outSize,
                        outSize);
    }
  // The bias goes on after accumulation (y = acc + bias), so conv(x, w, b) rounds exactly like
  // add(conv(x, w), b) and fusing that add is exact.
  if (bias) {
    const T *bData = bias->data<T>();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t m = 0; m < outChannels; ++m) {
        T *row = yData + (n * outChannels + m) * outSize;
        for (int64_t i = 0; i < outSize; ++i)
          row[i] += bData[m];
      }
  }
  return result;
}

void checkBias(const Op &op, const Tensor *bias, int64_t channels, DType dtype) {
  if (!bias)
    return;
  if (bias->dtype() != dtype || bias->rank() != 1 || bias->shape()[0] != channels)
    fail(op, "bias must be a 1-D " + std::string(dtypeName(dtype)) + " tensor of " +
                 std::to_string(channels) + " elements, got " + shapeToString(bias->shape()));
}

} // namespace

Tensors convKernelPlain(const Op &op, const Tensors &operands);

// A conv in a blocked layout (layout-nchwc pass) is the plain conv on unblocked operands with
// the result blocked again: the reference, not a fast path.
Tensors convKernel(const Op &op, const Tensors &operands) {
  std::optional<int64_t> block = ops::ConvOp(op).layout();
  if (*block == 0)
    return convKernelPlain(op, operands);
  if (ops::ConvOp(op).plain_input()) // plain operands, blocked result
    return {blockChannels(convKernelPlain(op, operands).at(0), *block)};
  if (operands[0].rank() < 3 || operands[0].shape().back() != *block ||
      operands[1].rank() != operands[0].rank() + 1 || operands[1].shape().back() != *block)
    fail(op, "operands " + shapeToString(operands[0].shape()) + " and " +
                 shapeToString(operands[1].shape()) + " are not blocked by " +
                 std::to_string(*block));
  Tensors plain = {unblockChannels(operands[0]), unblockConvWeight(operands[1])};
  if (operands.size() > 2)
    plain.push_back(operands[2]);
  return {blockChannels(convKernelPlain(op, plain).at(0), *block)};
}

Tensors convKernelPlain(const Op &op, const Tensors &operands) {
  DType dtype = operands[0].dtype();
  Tensor x = widenHalf(operands[0]), w = widenHalf(operands[1]);
  Tensor biasWide = operands.size() > 2 ? widenHalf(operands[2]) : Tensor();
  const Tensor *bias = operands.size() > 2 ? &biasWide : nullptr;
  if (operands[1].dtype() != dtype)
    fail(op, "input and weight dtypes differ");
  if (x.rank() < 3 || w.rank() != x.rank())
    fail(op, "expected input [N, C, spatial...] and weight of the same rank, got " +
                 shapeToString(x.shape()) + " and " + shapeToString(w.shape()));
  int64_t rank = x.rank() - 2;
  ConvGeometry g = readGeometry<ops::ConvOp>(op, rank);
  int64_t group = std::max<int64_t>(ops::ConvOp(op).group(), 1);
  int64_t inChannels = x.shape()[1], outChannels = w.shape()[0];
  std::optional<int64_t> weightChannels = shape::checkedMul(w.shape()[1], group); // group: hostile
  if (inChannels % group || outChannels % group || weightChannels != inChannels)
    fail(op, "channels do not match group " + std::to_string(group) + ": input " +
                 shapeToString(x.shape()) + ", weight " + shapeToString(w.shape()));
  checkBias(op, bias, outChannels, x.dtype());

  Shape outShape = {x.shape()[0], outChannels};
  for (int64_t d = 0; d < rank; ++d) {
    std::string why;
    std::optional<int64_t> size =
        shape::windowOutputSize(x.shape()[d + 2], g.window(d, w.shape()[d + 2]), false, &why);
    if (!size)
      fail(op, why + " in spatial dim " + std::to_string(d));
    outShape.push_back(*size);
  }
  Tensor result = visitDType(op, x.dtype(), /*allowInts=*/false, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>)
      return convTyped<T>(x, w, bias, g, group, outShape);
    else
      return Tensor();
  });
  return {narrowFromF32(result, dtype)};
}

namespace {

template <typename T>
Tensor convTransposeTyped(const Tensor &x, const Tensor &w, const Tensor *bias,
                          const ConvGeometry &g, int64_t group, const Shape &outShape) {
  int64_t batch = x.shape()[0], inChannels = x.shape()[1];
  int64_t outPerGroup = w.shape()[1], inPerGroup = inChannels / group;
  int64_t outChannels = outPerGroup * group;
  Shape inGrid(x.shape().begin() + 2, x.shape().end());
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  Shape outGrid(outShape.begin() + 2, outShape.end());
  int64_t inSize = numElements(inGrid), outSize = numElements(outGrid);
  int64_t kernelSize = numElements(kernel);
  int64_t colRows = outPerGroup * kernelSize;

  Tensor result(x.dtype(), outShape);
  const T *xData = x.data<T>(), *wData = w.data<T>();
  T *yData = result.data<T>();
  // Per group: col [outPerGroup*k, inSize] = W_g^T [outPerGroup*k, inPerGroup] x X_g, then each
  // column entry is scatter-added to the output position its tap lands on.
  std::vector<T> weightT(static_cast<size_t>(colRows * inPerGroup));
  std::vector<T> col(static_cast<size_t>(colRows * inSize));
  for (int64_t gi = 0; gi < group; ++gi) {
    const T *wGroup = wData + gi * inPerGroup * colRows;
    for (int64_t ci = 0; ci < inPerGroup; ++ci)
      for (int64_t r = 0; r < colRows; ++r)
        weightT[r * inPerGroup + ci] = wGroup[ci * colRows + r];
    for (int64_t n = 0; n < batch; ++n) {
      std::fill(col.begin(), col.end(), T(0));
      gemmAccumulate<T>(colRows, inSize, inPerGroup, weightT.data(), inPerGroup,
                        xData + (n * inChannels + gi * inPerGroup) * inSize, inSize, col.data(),
                        inSize);
      T *yGroup = yData + (n * outChannels + gi * outPerGroup) * outSize;
      forEachWindowTap(g, outPerGroup, kernel, inGrid, outGrid,
                       [&](int64_t row, int64_t c, int64_t out) {
                         if (out >= 0)
                           yGroup[out] += col[row * inSize + c];
                       });
    }
  }
  if (bias) {
    const T *bData = bias->data<T>();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t m = 0; m < outChannels; ++m) {
        T *plane = yData + (n * outChannels + m) * outSize;
        for (int64_t i = 0; i < outSize; ++i)
          plane[i] += bData[m];
      }
  }
  return result;
}

} // namespace

Tensors convTransposeKernel(const Op &op, const Tensors &operands) {
  DType dtype = operands[0].dtype();
  Tensor x = widenHalf(operands[0]), w = widenHalf(operands[1]);
  Tensor biasWide = operands.size() > 2 ? widenHalf(operands[2]) : Tensor();
  const Tensor *bias = operands.size() > 2 ? &biasWide : nullptr;
  if (operands[1].dtype() != dtype)
    fail(op, "input and weight dtypes differ");
  if (x.rank() < 3 || w.rank() != x.rank())
    fail(op, "expected input [N, C, spatial...] and weight of the same rank, got " +
                 shapeToString(x.shape()) + " and " + shapeToString(w.shape()));
  int64_t rank = x.rank() - 2;
  const ops::ConvTransposeOp convT(op);
  ConvGeometry g = readGeometry<ops::ConvTransposeOp>(op, rank);
  int64_t group = std::max<int64_t>(convT.group(), 1);
  if (x.shape()[1] != w.shape()[0] || x.shape()[1] % group)
    fail(op, "weight " + shapeToString(w.shape()) + " does not match input " +
                 shapeToString(x.shape()) + " with group " + std::to_string(group));
  const std::vector<int64_t> &outputPadding = convT.output_padding();
  if (static_cast<int64_t>(outputPadding.size()) != rank)
    fail(op, "output_padding has " + std::to_string(outputPadding.size()) + " entries, expected " +
                 std::to_string(rank));
  std::optional<int64_t> channels = shape::checkedMul(w.shape()[1], group); // group: hostile
  if (!channels)
    fail(op, "output channels " + std::to_string(w.shape()[1]) + " x group " +
                 std::to_string(group) + " overflow int64");
  int64_t outChannels = *channels;
  checkBias(op, bias, outChannels, x.dtype());

  Shape outShape = {x.shape()[0], outChannels};
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<int64_t> size = shape::convTransposeOutputSize(
        x.shape()[d + 2], g.window(d, w.shape()[d + 2]), outputPadding[d]);
    if (!size)
      fail(op, "output size overflows int64 in spatial dim " + std::to_string(d));
    if (*size < 0)
      fail(op, "output size " + std::to_string(*size) + " is negative in spatial dim " +
                   std::to_string(d));
    outShape.push_back(*size);
  }
  Tensor result = visitDType(op, x.dtype(), /*allowInts=*/false, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>)
      return convTransposeTyped<T>(x, w, bias, g, group, outShape);
    else
      return Tensor();
  });
  return {narrowFromF32(result, dtype)};
}

} // namespace strata::interp::structured
