// ONNX elementwise math, logic and comparison ops. Most map one-to-one onto a graph IR primitive;
// the inverse trigonometric/hyperbolic functions are decomposed with identities chosen to stay
// accurate near 0 and near the ends of their domains.
#include "Decompose.h"

#include <limits>

namespace strata::onnx_import {
namespace {

ConvertFn binaryOp(OpKind kind, bool swapOperands = false) {
  return [kind, swapOperands](ImportContext &ctx,
                              const onnx::NodeProto &node) -> std::vector<Value *> {
    Value *a = requiredInput(ctx, node, 0, "A");
    Value *b = requiredInput(ctx, node, 1, "B");
    if (swapOperands)
      std::swap(a, b);
    return {ctx.builder().value(kind, {a, b})};
  };
}

// Max/Min/Sum/Mean: any number of inputs, numpy-broadcast together, folded left to right.
Value *foldVariadic(ImportContext &ctx, const onnx::NodeProto &node, OpKind kind) {
  Value *acc = nullptr;
  for (int i = 0; i < ctx.numInputs(node); ++i) {
    Value *v = ctx.input(node, i);
    if (!v)
      continue;
    acc = acc ? ctx.builder().value(kind, {acc, v}) : v;
  }
  if (!acc)
    throw ConvertError("needs at least one input");
  return acc;
}

ConvertFn variadicOp(OpKind kind) {
  return [kind](ImportContext &ctx, const onnx::NodeProto &node) -> std::vector<Value *> {
    return {foldVariadic(ctx, node, kind)};
  };
}

std::vector<Value *> convertMean(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *sum = foldVariadic(ctx, node, OpKind::Add);
  int count = 0;
  for (int i = 0; i < ctx.numInputs(node); ++i)
    count += ctx.input(node, i) != nullptr;
  if (count == 1)
    return {sum};
  return {div(b, sum, scalarLike(b, sum, count))};
}

std::vector<Value *> convertMod(ImportContext &ctx, const onnx::NodeProto &node) {
  return {ctx.builder().value(
      OpKind::Mod, {requiredInput(ctx, node, 0, "A"), requiredInput(ctx, node, 1, "B")},
      {{"fmod", Attribute(attrInt(node, "fmod", 0))}})};
}

std::vector<Value *> convertPow(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *base = requiredInput(ctx, node, 0, "X");
  Value *exponent = castTo(b, requiredInput(ctx, node, 1, "Y"), base->type().dtype);
  return {b.value(OpKind::Pow, {base, exponent})};
}

std::vector<Value *> convertReciprocal(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "X");
  return {div(b, scalarLike(b, x, 1.0), x)};
}

std::vector<Value *> convertTan(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  return {div(b, unary(b, OpKind::Sin, x), unary(b, OpKind::Cos, x))};
}

// sqrt((1 - x) * (1 + x)) = sqrt(1 - x^2); the factored form keeps precision near |x| = 1.
Value *sqrtOneMinusSquare(Builder &b, Value *x) {
  Value *one = scalarLike(b, x, 1.0);
  return unary(b, OpKind::Sqrt, mul(b, sub(b, one, x), add(b, one, x)));
}

std::vector<Value *> convertAsin(ImportContext &ctx, const onnx::NodeProto &node) {
  // asin(x) = 2 atan(x / (1 + sqrt(1 - x^2))): the half-angle form has no pole at |x| = 1.
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  Value *denom = add(b, scalarLike(b, x, 1.0), sqrtOneMinusSquare(b, x));
  return {mul(b, scalarLike(b, x, 2.0), unary(b, OpKind::Atan, div(b, x, denom)))};
}

std::vector<Value *> convertAcos(ImportContext &ctx, const onnx::NodeProto &node) {
  // acos(x) = 2 atan(sqrt((1 - x) / (1 + x))); x = -1 gives atan(inf) = pi/2, as it should.
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  Value *one = scalarLike(b, x, 1.0);
  Value *ratio = div(b, sub(b, one, x), add(b, one, x));
  return {mul(b, scalarLike(b, x, 2.0), unary(b, OpKind::Atan, unary(b, OpKind::Sqrt, ratio)))};
}

std::vector<Value *> convertSinh(ImportContext &ctx, const onnx::NodeProto &node) {
  // (e^x - e^-x) / 2 cancels catastrophically near 0, so there use 2t / (1 - t^2) with
  // t = tanh(x / 2), which is accurate for |x| < 1 (t <= 0.47) but not for large |x|.
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  Value *half = scalarLike(b, x, 0.5);
  Value *one = scalarLike(b, x, 1.0);
  Value *t = unary(b, OpKind::Tanh, mul(b, x, half));
  Value *small = div(b, add(b, t, t), sub(b, one, mul(b, t, t)));
  Value *large = mul(b, sub(b, unary(b, OpKind::Exp, x), unary(b, OpKind::Exp, unary(b, OpKind::Neg, x))),
                     half);
  return {select(b, lessThan(b, unary(b, OpKind::Abs, x), one), small, large)};
}

std::vector<Value *> convertCosh(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  Value *sum = add(b, unary(b, OpKind::Exp, x), unary(b, OpKind::Exp, unary(b, OpKind::Neg, x)));
  return {mul(b, sum, scalarLike(b, x, 0.5))};
}

std::vector<Value *> convertAsinh(ImportContext &ctx, const onnx::NodeProto &node) {
  // asinh(|x|) = log(1 + |x| + sqrt(x^2 + 1) - 1) = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))),
  // then the sign is restored (asinh is odd).
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  Value *one = scalarLike(b, x, 1.0);
  Value *ax = unary(b, OpKind::Abs, x);
  Value *sq = mul(b, x, x);
  Value *arg = add(b, ax, div(b, sq, add(b, one, unary(b, OpKind::Sqrt, add(b, one, sq)))));
  return {mul(b, unary(b, OpKind::Sign, x), log1p(b, arg))};
}

std::vector<Value *> convertAcosh(ImportContext &ctx, const onnx::NodeProto &node) {
  // acosh(x) = log(x + sqrt(x^2 - 1)) = log1p((x - 1) + sqrt((x - 1)(x + 1))).
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  Value *one = scalarLike(b, x, 1.0);
  Value *xm1 = sub(b, x, one);
  return {log1p(b, add(b, xm1, unary(b, OpKind::Sqrt, mul(b, xm1, add(b, x, one)))))};
}

std::vector<Value *> convertAtanh(ImportContext &ctx, const onnx::NodeProto &node) {
  // atanh(x) = sign(x) 0.5 log1p(2|x| / (1 - |x|)): with |x| the log1p argument is
  // non-negative, so 1 + arg never cancels (it would near x = -1).
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  Value *ax = unary(b, OpKind::Abs, x);
  Value *arg = div(b, add(b, ax, ax), sub(b, scalarLike(b, x, 1.0), ax));
  Value *magnitude = mul(b, scalarLike(b, x, 0.5), log1p(b, arg));
  return {mul(b, unary(b, OpKind::Sign, x), magnitude)};
}

std::vector<Value *> convertIsInf(ImportContext &ctx, const onnx::NodeProto &node) {
  return {ctx.builder().value(
      OpKind::IsInf, {requiredInput(ctx, node, 0, "X")},
      {{"detect_negative", Attribute(attrInt(node, "detect_negative", 1))},
       {"detect_positive", Attribute(attrInt(node, "detect_positive", 1))}})};
}

std::vector<Value *> convertBitShift(ImportContext &ctx, const onnx::NodeProto &node) {
  std::string direction = attrString(node, "direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    throw ConvertError("BitShift direction must be LEFT or RIGHT, got '" + direction + "'");
  return {ctx.builder().value(
      OpKind::BitShift, {requiredInput(ctx, node, 0, "X"), requiredInput(ctx, node, 1, "Y")},
      {{"direction", Attribute(direction == "LEFT" ? "left" : "right")}})};
}

std::vector<Value *> convertClip(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  Value *lo = nullptr, *hi = nullptr;
  if (ctx.opset() < 11) {
    // Bounds are attributes; an absent one means no clamping on that side.
    if (hasAttr(node, "min"))
      lo = scalarLike(b, x, attrFloat(node, "min", std::numeric_limits<float>::lowest()));
    if (hasAttr(node, "max"))
      hi = scalarLike(b, x, attrFloat(node, "max", std::numeric_limits<float>::max()));
  } else {
    lo = optionalInput(ctx, node, 1);
    hi = optionalInput(ctx, node, 2);
  }
  // min(max(x, lo), hi): like numpy.clip, hi wins when lo > hi.
  Value *y = x;
  if (lo)
    y = maximum(b, y, castTo(b, lo, x->type().dtype));
  if (hi)
    y = minimum(b, y, castTo(b, hi, x->type().dtype));
  return {y};
}

// An ONNX op that maps one-to-one onto graph op `kind`: its inputs are the operands, in order.
ConvertFn oneToOne(OpKind kind) {
  return [kind](ImportContext &ctx, const onnx::NodeProto &node) -> std::vector<Value *> {
    const OpInfo &info = opInfo(kind);
    std::vector<Value *> operands;
    for (int i = 0; i < info.minOperands; ++i)
      operands.push_back(requiredInput(ctx, node, i, "operand"));
    return {ctx.builder().value(kind, operands)};
  };
}

} // namespace

void registerElementwiseConverters(ConverterTable &t) {
  // The one-to-one ops come from the op definitions (OpTable.def's onnx column).
  for (size_t k = 0; k < numOpKinds(); ++k)
    for (const std::string &onnxOp : opInfo(static_cast<OpKind>(k)).onnxOps)
      t[onnxOp] = oneToOne(static_cast<OpKind>(k));
  t["Mod"] = convertMod;
  t["Pow"] = convertPow;
  t["Reciprocal"] = convertReciprocal;
  t["Tan"] = convertTan;
  t["Asin"] = convertAsin;
  t["Acos"] = convertAcos;
  t["Sinh"] = convertSinh;
  t["Cosh"] = convertCosh;
  t["Asinh"] = convertAsinh;
  t["Acosh"] = convertAcosh;
  t["Atanh"] = convertAtanh;
  t["IsInf"] = convertIsInf;
  t["BitShift"] = convertBitShift;
  t["Greater"] = binaryOp(OpKind::Lt, /*swapOperands=*/true);
  t["GreaterOrEqual"] = binaryOp(OpKind::Le, /*swapOperands=*/true);
  t["Max"] = variadicOp(OpKind::Max);
  t["Min"] = variadicOp(OpKind::Min);
  t["Sum"] = variadicOp(OpKind::Add);
  t["Mean"] = convertMean;
  t["Clip"] = convertClip;
}

} // namespace strata::onnx_import
