// raise-layer-norm: finds layer normalization spelled out in elementwise ops and reductions (as
// exporters write it before ONNX opset 17's LayerNormalization) and raises it to one layer_norm
// op, which lowers to a vectorized row kernel instead of six reductions and elementwise passes:
//
//   m = reduce_mean(x, A, keepdims)      d = sub(x, m)
//   v = reduce_mean(mul(d, d) | pow(d, 2), A, keepdims)
//   y = div(d, sqrt(add(v, eps)))                      -> layer_norm(x, 1) {axis, epsilon = eps}
//   mul(layer_norm(x, 1), g)                           -> layer_norm(x, g)
//   add(layer_norm(x, s), b)                           -> layer_norm(x, s, b)
//
// A are the trailing axes [axis, rank); eps is a one-element constant. Every intermediate must
// feed only the pattern (no other user, not a graph output), so nothing is computed twice.
// The real-number result is the same; the rounding is the layer_norm op's (one rounding in the
// interpreter, f32 rows in compiled code) instead of one per step, as in ONNX Runtime's
// LayerNormFusion.
#include "CanonicalizePatterns.h"

#include "strata/graph/passes/Passes.h"

namespace strata {
namespace {

using canonicalize::addPattern;
using canonicalize::replaceWithNew;

// The op defining `v` if it is of `kind` and `v` feeds only `uses` operands and no graph output.
Op *soleProducer(const Value *v, OpKind kind, size_t uses = 1) {
  Op *op = v->definingOp();
  if (!op || op->kind() != kind || v->uses().size() != uses || v->isGraphOutput())
    return nullptr;
  return op;
}

// The first trailing axis when `op` is reduce_mean with keepdims over exactly [axis, rank).
std::optional<int64_t> trailingMeanAxis(const Op &op) {
  if (op.kind() != OpKind::Reduce)
    return std::nullopt;
  const ops::ReduceOp reduce(op);
  const std::vector<int64_t> &axes = reduce.axes();
  int64_t rank = op.operand(0)->type().rank();
  if (reduce.kind() != ReduceKind::Mean || !reduce.keepdims() || axes.empty())
    return std::nullopt;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size() - i))
      return std::nullopt;
  return axes.front();
}

// y = div(d, sqrt(add(v, eps))) with d = x - mean(x), v = mean(d * d): layer_norm(x, 1).
bool raiseNormalization(Op &div, PatternRewriter &r) {
  Value *d = div.operand(0);
  if (!isFloat(d->type().dtype))
    return false;
  Op *sqrt = soleProducer(div.operand(1), OpKind::Sqrt);
  Op *add = sqrt ? soleProducer(sqrt->operand(0), OpKind::Add) : nullptr;
  if (!add)
    return false;
  // add(v, eps) in either order.
  const Tensor *eps = nullptr;
  Op *var = nullptr;
  for (unsigned i = 0; i < 2 && !var; ++i) {
    eps = constantValue(add->operand(1 - i));
    var = eps && eps->numElements() == 1 ? soleProducer(add->operand(i), OpKind::Reduce) : nullptr;
  }
  if (!var || add->result(0)->type() != var->result(0)->type())
    return false;
  std::optional<int64_t> axis = trailingMeanAxis(*var);
  // The square of d: mul(d, d) (two uses of d) or pow(d, 2) (one); with div, d has no others.
  Op *square = var->operand(0)->definingOp();
  if (!axis || !square || var->operand(0)->uses().size() != 1 || var->operand(0)->isGraphOutput())
    return false;
  bool isSquare =
      (square->kind() == OpKind::Mul && square->operand(0) == d && square->operand(1) == d) ||
      (square->kind() == OpKind::Pow && square->operand(0) == d &&
       isConstantSplat(square->operand(1), 2.0));
  size_t dUses = square->kind() == OpKind::Mul ? 3 : 2;
  Op *sub = isSquare ? soleProducer(d, OpKind::Sub, dUses) : nullptr;
  if (!sub)
    return false;
  Value *x = sub->operand(0);
  Op *mean = soleProducer(sub->operand(1), OpKind::Reduce);
  if (!mean || mean->operand(0) != x || trailingMeanAxis(*mean) != axis || x->type() != d->type() ||
      d->type() != div.result(0)->type())
    return false;
  Value *one = r.builder().constant(Tensor::scalar(x->type().dtype, 1.0).reshaped({1}));
  return replaceWithNew(div, OpKind::LayerNorm, {x, one}, r,
                        {{"axis", *axis}, {"epsilon", eps->getDouble(0)}});
}

// `v` as a scale or bias of a layer_norm normalizing the dims of `x` from `axis`: `v` itself
// when its dims broadcast there, a constant with its extra leading ones dropped, else null
// (checked before anything is created).
Value *asNormalizedOperand(Value *v, const TensorType &x, int64_t axis, PatternRewriter &r) {
  const std::vector<Dim> &dims = v->type().dims;
  std::vector<Dim> normalized(x.dims.begin() + axis, x.dims.end());
  size_t extra = dims.size() > normalized.size() ? dims.size() - normalized.size() : 0;
  for (size_t i = 0; i < extra; ++i)
    if (!dims[i].isStatic() || dims[i].size != 1)
      return nullptr;
  for (size_t k = 0; k + extra < dims.size(); ++k) {
    const Dim &pd = dims[dims.size() - 1 - k], &xd = normalized[normalized.size() - 1 - k];
    if (pd != xd && !(pd.isStatic() && pd.size == 1))
      return nullptr;
  }
  if (extra == 0)
    return v;
  const Tensor *c = constantValue(v);
  if (!c)
    return nullptr;
  Shape kept(c->shape().begin() + static_cast<std::ptrdiff_t>(extra), c->shape().end());
  return r.builder().constant(c->reshaped(kept));
}

// The layer_norm defining operand i of `op` (its only use), with no bias and, when
// `unitScale`, scale 1; its result type must be op's (the other operand does not broadcast it).
Op *layerNormOperand(const Op &op, unsigned i, bool unitScale) {
  Op *ln = soleProducer(op.operand(i), OpKind::LayerNorm);
  if (!ln || ln->numOperands() != 2 || ln->result(0)->type() != op.result(0)->type())
    return nullptr;
  return !unitScale || isConstantSplat(ln->operand(1), 1.0) ? ln : nullptr;
}

// mul(layer_norm(x, 1), g) -> layer_norm(x, g); add(layer_norm(x, s), b) -> layer_norm(x, s, b).
bool absorbAffine(Op &op, PatternRewriter &r) {
  bool scale = op.kind() == OpKind::Mul;
  for (unsigned i = 0; i < 2; ++i) {
    Op *ln = layerNormOperand(op, i, scale);
    if (!ln)
      continue;
    Value *x = ln->operand(0);
    const ops::LayerNormOp attrs(*ln);
    Value *param = asNormalizedOperand(op.operand(1 - i), x->type(), attrs.axis(), r);
    if (!param)
      continue;
    std::vector<Value *> operands =
        scale ? std::vector<Value *>{x, param} : std::vector<Value *>{x, ln->operand(1), param};
    if (replaceWithNew(op, OpKind::LayerNorm, operands, r,
                       {{"axis", attrs.axis()}, {"epsilon", attrs.epsilon()}}))
      return true;
  }
  return false;
}

class RaiseLayerNormPass final : public Pass {
public:
  std::string_view name() const override { return "raise-layer-norm"; }
  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    PatternSet patterns;
    addPattern(patterns, OpKind::Div, "normalization", raiseNormalization);
    addPattern(patterns, OpKind::Mul, "scale", absorbAffine);
    addPattern(patterns, OpKind::Add, "bias", absorbAffine);
    return applyPatternsGreedily(g, patterns, ctx, "raise-layer-norm");
  }
};

} // namespace

std::unique_ptr<Pass> createRaiseLayerNormPass() { return std::make_unique<RaiseLayerNormPass>(); }

} // namespace strata
