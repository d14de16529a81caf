// Loss functions in inference form: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss,
// decomposed onto log_softmax, gather_elements, select and reductions.
#include "Decompose.h"

namespace strata::onnx_import {

namespace {

// Inserts a unit dim at `axis` of a statically shaped value.
Value *unsqueezeStatic(Builder &b, Value *x, int64_t axis, const char *what) {
  std::vector<int64_t> shape = staticShape(x, what);
  shape.insert(shape.begin() + axis, 1);
  return reshape(b, x, shape);
}

// NLL of log-probabilities `logProb` [N, C, d...] at integer `target` [N, d...], with optional
// per-class `weight` [C]. Ignored targets contribute neither loss nor weight.
Value *negativeLogLikelihood(ImportContext &ctx, const onnx::NodeProto &node, Value *logProb,
                             Value *target, Value *weight) {
  Builder &b = ctx.builder();
  requireRank(logProb, 2, "input");
  // target is [N, d...] for input [N, C, d...]; a scalar target would be unsqueezed at axis 1.
  if (target->type().rank() != logProb->type().rank() - 1)
    throw ConvertError("target must have rank " + std::to_string(logProb->type().rank() - 1) +
                       " for input " + logProb->type().str() + ", got " + target->type().str());
  std::string reduction = attrString(node, "reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    throw ConvertError("reduction must be none, sum or mean, got '" + reduction + "'");
  target = castTo(b, target, DType::I64);

  Value *ignored = nullptr;
  Value *safeTarget = target;
  if (hasAttr(node, "ignore_index")) {
    Value *ignoreIndex = b.scalar(DType::I64, static_cast<double>(attrInt(node, "ignore_index", 0)));
    ignored = b.value(OpKind::Eq, {target, ignoreIndex});
    // Ignored positions may hold an out-of-range class; gather class 0 there and mask later.
    safeTarget = select(b, ignored, b.scalar(DType::I64, 0), target);
  }

  Value *picked = b.value(OpKind::GatherElements,
                          {logProb, unsqueezeStatic(b, safeTarget, 1, "target")}, {{"axis", 1}});
  Value *loss = unary(b, OpKind::Neg, reshape(b, picked, staticShape(target, "target")));
  Value *zero = scalarLike(b, loss, 0.0);

  Value *weights = nullptr; // per-position weight, needed for a weighted or masked mean
  if (weight) {
    weights = b.value(OpKind::Gather, {weight, safeTarget}, {{"axis", 0}});
    loss = mul(b, loss, weights);
  } else if (ignored) {
    weights = b.value(OpKind::Expand, {scalarLike(b, loss, 1.0)},
                      {{"shape", staticShape(target, "target")}});
  }
  if (ignored) {
    loss = select(b, ignored, zero, loss);
    weights = select(b, ignored, zero, weights);
  }

  std::vector<int64_t> all = iota(0, loss->type().rank());
  if (reduction == "none")
    return loss;
  if (reduction == "sum")
    return reduce(b, loss, ReduceKind::Sum, all, false);
  if (!weights)
    return reduce(b, loss, ReduceKind::Mean, all, false);
  return div(b, reduce(b, loss, ReduceKind::Sum, all, false),
             reduce(b, weights, ReduceKind::Sum, all, false));
}

std::vector<Value *> convertNLL(ImportContext &ctx, const onnx::NodeProto &node) {
  Value *input = requiredInput(ctx, node, 0, "input");
  Value *target = requiredInput(ctx, node, 1, "target");
  Value *weight = optionalInput(ctx, node, 2);
  return {negativeLogLikelihood(ctx, node, input, target, weight)};
}

std::vector<Value *> convertSoftmaxCrossEntropy(ImportContext &ctx, const onnx::NodeProto &node) {
  Value *scores = requiredInput(ctx, node, 0, "scores");
  Value *labels = requiredInput(ctx, node, 1, "labels");
  Value *weight = optionalInput(ctx, node, 2);
  requireRank(scores, 2, "scores");
  Value *logProb = ctx.builder().value(OpKind::LogSoftmax, {scores}, {{"axis", 1}});
  Value *loss = negativeLogLikelihood(ctx, node, logProb, labels, weight);
  return {loss, logProb};
}

} // namespace

void registerLossConverters(ConverterTable &t) {
  t["NegativeLogLikelihoodLoss"] = convertNLL;
  t["SoftmaxCrossEntropyLoss"] = convertSoftmaxCrossEntropy;
}

} // namespace strata::onnx_import
