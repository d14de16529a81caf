// nms_count and nms (ONNX NonMaxSuppression): greedy selection per batch and class in score
// order (lib/lower/LowerNms.cpp computes the same).
#include "Kernels.h"

#include "strata/graph/NmsMath.h"

#include <algorithm>
#include <array>

namespace strata::interp::structured {

namespace {

template <typename View>
std::vector<std::array<int64_t, 3>> select(const Op &op, const Tensors &operands) {
  const View attrs(op);
  const Tensor &boxes = operands[0], &scores = operands[1];
  if (boxes.dtype() != DType::F32 || scores.dtype() != DType::F32 || boxes.rank() != 3 ||
      scores.rank() != 3 || boxes.shape()[2] != 4 || boxes.shape()[0] != scores.shape()[0] ||
      boxes.shape()[1] != scores.shape()[2])
    fail(op, "expected f32 boxes [B, N, 4] and scores [B, C, N], got " + shapeText(boxes.shape()) +
                 " and " + shapeText(scores.shape()));
  const int64_t batches = scores.shape()[0], classes = scores.shape()[1], n = scores.shape()[2];
  const float *b = static_cast<const float *>(boxes.rawData());
  const float *s = static_cast<const float *>(scores.rawData());
  const bool centered = attrs.center_point_box() == 1;
  float iou = static_cast<float>(attrs.iou_threshold());
  float floor = static_cast<float>(attrs.score_threshold());
  int64_t maxOutput = attrs.max_output();
  // Limits read from data (the operand after boxes, scores and nms's count).
  const size_t limitsAt = op.kind() == OpKind::NmsCount ? 2 : 3;
  if (operands.size() > limitsAt) {
    const Tensor &limits = operands[limitsAt];
    if (limits.dtype() != DType::F64 || limits.numElements() != 3)
      fail(op, "limits must be f64 [3], got " + shapeText(limits.shape()));
    const double m = limits.getDouble(0);
    maxOutput = m > 0 ? static_cast<int64_t>(std::min(m, 1099511627776.0)) : 0; // NaN: 0
    iou = static_cast<float>(limits.getDouble(1));
    floor = static_cast<float>(limits.getDouble(2));
  }
  std::vector<std::array<int64_t, 3>> out;
  std::vector<int64_t> order, kept;
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t c = 0; c < classes; ++c) {
      const float *cs = s + (bi * classes + c) * n;
      order.clear();
      for (int64_t i = 0; i < n; ++i)
        if (!attrs.has_score_threshold() || cs[i] > floor)
          order.push_back(i);
      // Highest score first, NaN before every number, ties to the lower index (topk's order).
      std::sort(order.begin(), order.end(),
                [&](int64_t x, int64_t y) { return comesFirst(cs[x], x, cs[y], y, true); });
      // A box is kept unless one kept before it overlaps it: the same picks as taking the best
      // remaining box and dropping what it overlaps, round after round.
      kept.clear();
      for (int64_t box : order) {
        if (static_cast<int64_t>(kept.size()) >= maxOutput)
          break;
        const float *candidate = b + (bi * n + box) * 4;
        if (std::none_of(kept.begin(), kept.end(), [&](int64_t k) {
              return nms::suppresses(b + (bi * n + k) * 4, candidate, centered, iou);
            })) {
          kept.push_back(box);
          out.push_back({bi, c, box});
        }
      }
    }
  return out;
}

} // namespace

Tensors nmsCountKernel(const Op &op, const Tensors &operands) {
  return {Tensor::scalar(DType::I64,
                         static_cast<double>(select<ops::NmsCountOp>(op, operands).size()))};
}

Tensors nmsKernel(const Op &op, const Tensors &operands) {
  std::vector<std::array<int64_t, 3>> picked = select<ops::NmsOp>(op, operands);
  const int64_t k = static_cast<int64_t>(picked.size());
  if (operands[2].dtype() != DType::I64 || operands[2].numElements() != 1 ||
      operands[2].getInt(0) != k)
    fail(op, "the count operand does not hold the " + std::to_string(k) + " boxes selected");
  Tensor out(DType::I64, {k, 3});
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < 3; ++j)
      out.setInt(i * 3 + j, picked[static_cast<size_t>(i)][static_cast<size_t>(j)]);
  return {out};
}

} // namespace strata::interp::structured
