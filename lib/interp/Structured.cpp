// Registration of the structured kernels and the helpers they share.
#include "Kernels.h"

namespace strata::interp {

namespace structured {

void fail([[maybe_unused]] const Op &op, const std::string &msg) { throw InterpError(msg); }

Tensor widenHalf(const Tensor &t) {
  if (t.dtype() != DType::F16 && t.dtype() != DType::BF16)
    return t;
  Tensor wide(DType::F32, t.shape());
  const uint16_t *src = t.data<uint16_t>();
  float *dst = wide.data<float>();
  int64_t n = t.numElements();
  bool isHalf = t.dtype() == DType::F16;
  for (int64_t i = 0; i < n; ++i)
    dst[i] = isHalf ? halfToFloat(src[i]) : bf16ToFloat(src[i]);
  return wide;
}

Tensor narrowFromF32(const Tensor &t, DType to) {
  if (to != DType::F16 && to != DType::BF16)
    return t;
  Tensor narrow(to, t.shape());
  const float *src = t.data<float>();
  uint16_t *dst = narrow.data<uint16_t>();
  int64_t n = t.numElements();
  bool isHalf = to == DType::F16;
  for (int64_t i = 0; i < n; ++i)
    dst[i] = isHalf ? floatToHalf(src[i]) : floatToBf16(src[i]);
  return narrow;
}

std::vector<int64_t> broadcastOffsets(const Op &op, const Shape &src, const Shape &dst) {
  if (src.size() > dst.size())
    fail(op, "shape " + shapeToString(src) + " does not broadcast to " + shapeToString(dst));
  size_t lead = dst.size() - src.size();
  std::vector<int64_t> srcStrides = contiguousStrides(src);
  std::vector<int64_t> strides(dst.size(), 0); // per dst dim: stride in src (0 when broadcast)
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == dst[lead + i])
      strides[lead + i] = srcStrides[i];
    else if (src[i] != 1)
      fail(op, "shape " + shapeToString(src) + " does not broadcast to " + shapeToString(dst));
  }
  int64_t total = numElements(dst);
  std::vector<int64_t> offsets(static_cast<size_t>(total));
  std::vector<int64_t> index(dst.size(), 0);
  int64_t offset = 0;
  for (int64_t e = 0; e < total; ++e) {
    offsets[static_cast<size_t>(e)] = offset;
    // Odometer increment, keeping `offset` in step.
    for (int64_t d = static_cast<int64_t>(dst.size()) - 1; d >= 0; --d) {
      if (++index[d] < dst[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (dst[d] - 1);
      index[d] = 0;
    }
  }
  return offsets;
}

} // namespace structured

void registerStructuredKernels(KernelFn *table) {
  using namespace structured;
  auto set = [&](OpKind kind, KernelFn fn) { table[static_cast<size_t>(kind)] = fn; };
  set(OpKind::MatMul, matMulKernel);
  set(OpKind::Conv, convKernel);
  set(OpKind::ConvTranspose, convTransposeKernel);
  set(OpKind::Pool, poolKernel);
  set(OpKind::Reduce, reduceKernel);
  set(OpKind::ArgReduce, argReduceKernel);
  set(OpKind::Softmax, softmaxKernel);
  set(OpKind::LogSoftmax, logSoftmaxKernel);
  set(OpKind::Attention, attentionKernel);
  set(OpKind::LayerNorm, layerNormKernel);
  set(OpKind::CumSum, cumSumKernel);
  set(OpKind::TopK, topKKernel);
  set(OpKind::Resize, resizeKernel);
  set(OpKind::Einsum, einsumKernel);
  set(OpKind::WinogradInput, winogradInputKernel);
  set(OpKind::WinogradOutput, winogradOutputKernel);
  set(OpKind::NmsCount, nmsCountKernel);
  set(OpKind::Nms, nmsKernel);
  set(OpKind::RoiAlign, roiAlignKernel);
  set(OpKind::UniqueCount, uniqueCountKernel);
  set(OpKind::Unique, uniqueKernel);
}

} // namespace strata::interp
