// fuse-bias: add(conv(x, w), c) -> conv(x, w, c) for a per-output-channel constant c, and
// add(matmul(a, b), c) -> matmul(a, b, c) for a constant c per column of the product (or per row
// of a 2-D one); sub(_, c) becomes a bias of -c. Only producers without a bias are fused, and the
// interpreter adds the bias after accumulating (y = acc + bias), so the result is bit-exact.
#include "BiasFolding.h"

#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"

namespace strata {
namespace {

using namespace biasfold;

// f16/bf16 conv and matmul accumulate in f32 and round once; fusing the add would drop the
// rounding of the intermediate product, so only dtypes computed natively are fused.
bool fusableDType(DType dt) { return dt != DType::F16 && dt != DType::BF16 && dt != DType::Bool; }

bool tryFuse(Graph &g, Op &user) {
  if (user.kind() != OpKind::Add && user.kind() != OpKind::Sub)
    return false;
  std::optional<Match> m = matchProducer(g, user);
  if (!m || m->producer->numOperands() > 2 || !fusableDType(m->constant.dtype()))
    return false;
  Tensor bias = m->constant;
  if (user.kind() == OpKind::Sub) {
    // acc - c == acc + (-c) exactly (IEEE subtraction is addition of the negation; integers
    // wrap the same way).
    std::optional<Tensor> negated = evaluate(OpKind::Neg, {bias});
    if (!negated)
      return false;
    bias = *negated;
  }
  if (m->producer->kind() == OpKind::Conv) {
    std::optional<Tensor> perChannel = channelVector(bias, m->producer->result(0)->type(), 1);
    if (!perChannel)
      return false;
    bias = *perChannel;
  }
  // A matmul bias must be per column or per row (rebuildProducer checks it).
  return rebuildProducer(g, user, *m->producer, std::nullopt, bias);
}

int64_t fuseInGraph(Graph &root) {
  int64_t merged = 0;
  forEachGraph(root, [&](Graph &g) {
    for (Op *op : g.opList())
      merged += tryFuse(g, *op);
  });
  return merged;
}

class FuseBiasPass final : public Pass {
public:
  std::string_view name() const override { return "fuse-bias"; }
  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    int64_t merged = fuseInGraph(g);
    if (merged)
      ctx.stats.add("fuse-bias.merged", merged);
    return merged > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createFuseBiasPass() { return std::make_unique<FuseBiasPass>(); }

} // namespace strata
