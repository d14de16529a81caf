// attention: softmax(scale * q @ k^T + bias) @ v per batch (the definition in OpTable.def). Each
// row's scores, softmax and weighted sum are computed in f64 and rounded once into the result,
// like softmax here: the compiled kernel's f32 sums differ by rounding only.
#include "Kernels.h"

#include <algorithm>

namespace strata::interp::structured {

Tensors attentionKernel(const Op &op, const Tensors &operands) {
  const DType dtype = operands[0].dtype();
  std::vector<Tensor> wide;
  for (const Tensor &t : operands) {
    if (t.dtype() != dtype)
      fail(op, "operand dtypes differ (" + std::string(dtypeName(t.dtype())) + " vs " +
                   std::string(dtypeName(dtype)) + ")");
    if (!isFloat(dtype))
      fail(op, "dtype " + std::string(dtypeName(dtype)) + " is not supported (floating point only)");
    wide.push_back(widenHalf(t));
  }
  for (size_t i = 0; i < 3; ++i)
    if (wide[i].rank() < 2)
      fail(op, "operand " + std::to_string(i) + " must have rank >= 2, got shape " +
                   shapeToString(wide[i].shape()));
  const Shape &qs = wide[0].shape(), &ks = wide[1].shape(), &vs = wide[2].shape();
  const int64_t m = qs[qs.size() - 2], d = qs.back(), n = ks[ks.size() - 2], dv = vs.back();
  if (ks.back() != d || vs[vs.size() - 2] != n)
    fail(op, "q " + shapeToString(qs) + ", k " + shapeToString(ks) + " and v " + shapeToString(vs) +
                 " do not fit q [.., M, D], k [.., N, D], v [.., N, Dv]");
  auto batchOf = [](const Shape &s) { return Shape(s.begin(), s.end() - 2); };
  const Shape batch =
      broadcastShapes(broadcastShapes(batchOf(qs), batchOf(ks)), batchOf(vs));
  const std::vector<int64_t> qOff = broadcastOffsets(op, batchOf(qs), batch),
                             kOff = broadcastOffsets(op, batchOf(ks), batch),
                             vOff = broadcastOffsets(op, batchOf(vs), batch);
  Shape scoresShape = batch, outShape = batch;
  scoresShape.insert(scoresShape.end(), {m, n});
  outShape.insert(outShape.end(), {m, dv});
  // The bias at (batch b, row i, key j): its batch offset, then strides of 0 where it broadcasts.
  std::vector<int64_t> biasBatchOff;
  int64_t biasRowStride = 0, biasKeyStride = 0, biasBlock = 0;
  if (wide.size() > 3) {
    Shape bs = wide[3].shape();
    if (bs.size() > scoresShape.size())
      fail(op, "bias " + shapeToString(bs) + " does not broadcast to the scores " +
                   shapeToString(scoresShape));
    bs.insert(bs.begin(), scoresShape.size() - bs.size(), 1);
    const int64_t bm = bs[bs.size() - 2], bn = bs.back();
    if ((bm != 1 && bm != m) || (bn != 1 && bn != n))
      fail(op, "bias " + shapeToString(wide[3].shape()) + " does not broadcast to the scores " +
                   shapeToString(scoresShape));
    biasBatchOff = broadcastOffsets(op, batchOf(bs), batch);
    biasBlock = bm * bn;
    biasKeyStride = bn == 1 ? 0 : 1;
    biasRowStride = bm == 1 ? 0 : bn;
  }
  const double scale = ops::AttentionOp(op).scale();
  Tensor result(wide[0].dtype(), outShape);
  const int64_t batches = numElements(batch);
  // Nothing to compute; with no keys the weighted sum is empty: 0, as matmul(softmax, v) gives.
  if (result.numElements() == 0 || n == 0)
    return {narrowFromF32(result, dtype)};
  visitDType(op, wide[0].dtype(), /*allowInts=*/false, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T *q = wide[0].data<T>(), *k = wide[1].data<T>(), *v = wide[2].data<T>();
      const T *bias = wide.size() > 3 ? wide[3].data<T>() : nullptr;
      T *out = result.data<T>();
      std::vector<double> s(static_cast<size_t>(n)), acc(static_cast<size_t>(dv));
      for (int64_t b = 0; b < batches; ++b)
        for (int64_t i = 0; i < m; ++i) {
          const T *qRow = q + (qOff[b] * m + i) * d;
          double mx = -INFINITY;
          for (int64_t j = 0; j < n; ++j) {
            const T *kRow = k + (kOff[b] * n + j) * d;
            double dot = 0;
            for (int64_t e = 0; e < d; ++e)
              dot += static_cast<double>(qRow[e]) * static_cast<double>(kRow[e]);
            double x = scale * dot;
            if (bias)
              x += static_cast<double>(
                  bias[biasBatchOff[b] * biasBlock + i * biasRowStride + j * biasKeyStride]);
            s[j] = x;
            mx = std::max(mx, x);
          }
          double sum = 0;
          for (int64_t j = 0; j < n; ++j)
            sum += s[j] = std::exp(s[j] - mx);
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t j = 0; j < n; ++j) {
            const T *vRow = v + (vOff[b] * n + j) * dv;
            for (int64_t e = 0; e < dv; ++e)
              acc[e] += s[j] * static_cast<double>(vRow[e]);
          }
          T *oRow = out + (b * m + i) * dv;
          for (int64_t e = 0; e < dv; ++e)
            oRow[e] = static_cast<T>(acc[e] / sum);
        }
    }
  });
  return {narrowFromF32(result, dtype)};
}

} // namespace strata::interp::structured
