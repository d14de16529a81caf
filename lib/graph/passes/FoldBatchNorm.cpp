// fold-batchnorm: folds the per-channel affine ops an imported BatchNormalization leaves behind
// (sub mean, mul scale, add shift) into the conv or matmul before them:
//   mul(conv(x, w[, b]), s)   -> conv(x, w * s[:, None, ...], b * s)   s per output channel
//   mul(matmul(a, W[, b]), s) -> matmul(a, W * s, b * s)               s along the last dim
//   add/sub(producer(.., b), c) -> producer(.., b +/- c)
// Folding a scale into the weights reassociates: exact in real arithmetic, but rounding differs
// by about 1 ulp per product (w*s summed vs the sum times s), as in every inference compiler.
#include "BiasFolding.h"

#include "strata/graph/Ops.h"
#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"

namespace strata {
namespace {

using namespace biasfold;

// The per-channel constant shaped to broadcast against the producer's weight: [C, 1, ...] for a
// conv weight [C_out, C_in/group, k...], [N] for a matmul weight [..., K, N].
std::optional<Tensor> weightScale(const Op &producer, const Tensor &perChannel) {
  if (producer.kind() == OpKind::MatMul)
    return perChannel;
  Shape shape(static_cast<size_t>(producer.operand(1)->type().rank()), 1);
  shape[0] = perChannel.numElements();
  return perChannel.reshaped(shape);
}

bool foldScale(Graph &g, Op &user, const Match &m, int64_t axis) {
  Op &producer = *m.producer;
  const Tensor *weight = constantOperand(producer, 1);
  // A weight in panels (b_panel) does not broadcast against a per-column scale.
  if (!weight || (producer.kind() == OpKind::MatMul && ops::MatMulOp(producer).b_panel() != 0))
    return false;
  std::optional<Tensor> scale = channelVector(m.constant, producer.result(0)->type(), axis);
  if (!scale)
    return false;
  std::optional<Tensor> scaledWeight;
  if (std::optional<Tensor> s = weightScale(producer, *scale))
    scaledWeight = evaluate(OpKind::Mul, {*weight, *s});
  if (!scaledWeight || scaledWeight->shape() != weight->shape())
    return false;
  std::optional<Tensor> scaledBias;
  if (producer.numOperands() > 2) {
    const Tensor *bias = constantOperand(producer, 2);
    if (!bias || !(scaledBias = evaluate(OpKind::Mul, {*bias, *scale})))
      return false;
  }
  return rebuildProducer(g, user, producer, scaledWeight, scaledBias);
}

bool foldShift(Graph &g, Op &user, const Match &m, int64_t axis) {
  Op &producer = *m.producer;
  Tensor shift = m.constant;
  // A conv bias is [C_out]; a matmul bias may be any shape that broadcasts to the product.
  if (producer.kind() == OpKind::Conv) {
    std::optional<Tensor> perChannel = channelVector(shift, producer.result(0)->type(), axis);
    if (!perChannel)
      return false;
    shift = *perChannel;
  }
  OpKind combine = user.kind();
  std::optional<Tensor> bias;
  if (producer.numOperands() > 2) {
    const Tensor *old = constantOperand(producer, 2);
    if (!old)
      return false;
    bias = evaluate(combine, {*old, shift});
  } else {
    bias = combine == OpKind::Sub ? evaluate(OpKind::Neg, {shift}) : shift;
  }
  return bias && rebuildProducer(g, user, producer, std::nullopt, bias);
}

bool tryFold(Graph &g, Op &user) {
  std::optional<Match> m = matchProducer(g, user);
  if (!m || !isFloat(m->constant.dtype()))
    return false;
  std::optional<int64_t> axis = channelAxis(*m->producer);
  if (!axis)
    return false;
  return user.kind() == OpKind::Mul ? foldScale(g, user, *m, *axis)
                                    : foldShift(g, user, *m, *axis);
}

int64_t foldInGraph(Graph &root) {
  int64_t folded = 0;
  // Forward order folds a whole sub -> mul -> add chain in one walk: each rewrite leaves a new
  // producer that the next op of the chain matches.
  forEachGraph(root, [&](Graph &g) {
    for (Op *op : g.opList())
      folded += tryFold(g, *op);
  });
  return folded;
}

class FoldBatchNormPass final : public Pass {
public:
  std::string_view name() const override { return "fold-batchnorm"; }
  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    int64_t folded = foldInGraph(g);
    if (folded)
      ctx.stats.add("fold-batchnorm.folded", folded);
    return folded > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createFoldBatchNormPass() { return std::make_unique<FoldBatchNormPass>(); }

} // namespace strata
