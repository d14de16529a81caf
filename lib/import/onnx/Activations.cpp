// ONNX activation functions, decomposed onto elementwise primitives (sigmoid, tanh and erf are
// primitives themselves). Scalar parameters are materialized in the operand's dtype.
#include "Decompose.h"

#include <cmath>

namespace strata::onnx_import {
namespace {

Value *inputX(ImportContext &ctx, const onnx::NodeProto &node) {
  return requiredInput(ctx, node, 0, "X");
}

Value *relu(Builder &b, Value *x) { return maximum(b, x, scalarLike(b, x, 0.0)); }

// log(1 + e^x) computed as max(x, 0) + log(1 + e^-|x|), which cannot overflow.
Value *softplus(Builder &b, Value *x) {
  Value *expNegAbs = unary(b, OpKind::Exp, unary(b, OpKind::Neg, unary(b, OpKind::Abs, x)));
  return add(b, relu(b, x), log1p(b, expNegAbs));
}

// max(0, min(1, alpha * x + beta))
Value *hardSigmoid(Builder &b, Value *x, double alpha, double beta) {
  Value *linear = add(b, mul(b, x, scalarLike(b, x, alpha)), scalarLike(b, x, beta));
  return maximum(b, minimum(b, linear, scalarLike(b, x, 1.0)), scalarLike(b, x, 0.0));
}

Value *isNegative(Builder &b, Value *x) { return lessThan(b, x, scalarLike(b, x, 0.0)); }

std::vector<Value *> convertRelu(ImportContext &ctx, const onnx::NodeProto &node) {
  return {relu(ctx.builder(), inputX(ctx, node))};
}

std::vector<Value *> convertLeakyRelu(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = inputX(ctx, node);
  Value *scaled = mul(b, x, scalarLike(b, x, attrFloat(node, "alpha", 0.01f)));
  return {select(b, isNegative(b, x), scaled, x)};
}

std::vector<Value *> convertPRelu(ImportContext &ctx, const onnx::NodeProto &node) {
  // The slope broadcasts unidirectionally to X (numpy rules, opset >= 7).
  Builder &b = ctx.builder();
  Value *x = inputX(ctx, node);
  Value *slope = castTo(b, requiredInput(ctx, node, 1, "slope"), x->type().dtype);
  return {select(b, isNegative(b, x), mul(b, x, slope), x)};
}

std::vector<Value *> convertElu(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = inputX(ctx, node);
  Value *negative = mul(b, scalarLike(b, x, attrFloat(node, "alpha", 1.0f)), expm1(b, x));
  return {select(b, isNegative(b, x), negative, x)};
}

std::vector<Value *> convertSelu(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = inputX(ctx, node);
  double alpha = attrFloat(node, "alpha", 1.67326319217681884765625f);
  double gamma = attrFloat(node, "gamma", 1.05070102214813232421875f);
  Value *negative = mul(b, scalarLike(b, x, alpha), expm1(b, x));
  Value *y = select(b, b.value(OpKind::Le, {x, scalarLike(b, x, 0.0)}), negative, x);
  return {mul(b, y, scalarLike(b, x, gamma))};
}

std::vector<Value *> convertCelu(ImportContext &ctx, const onnx::NodeProto &node) {
  // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  Builder &b = ctx.builder();
  Value *x = inputX(ctx, node);
  double alpha = attrFloat(node, "alpha", 1.0f);
  if (alpha == 0)
    throw ConvertError("Celu alpha must be non-zero");
  Value *alphaV = scalarLike(b, x, alpha);
  Value *negative = mul(b, alphaV, expm1(b, div(b, x, alphaV)));
  return {add(b, relu(b, x), minimum(b, negative, scalarLike(b, x, 0.0)))};
}

std::vector<Value *> convertSigmoid(ImportContext &ctx, const onnx::NodeProto &node) {
  return {unary(ctx.builder(), OpKind::Sigmoid, inputX(ctx, node))};
}

std::vector<Value *> convertHardSigmoid(ImportContext &ctx, const onnx::NodeProto &node) {
  return {hardSigmoid(ctx.builder(), inputX(ctx, node), attrFloat(node, "alpha", 0.2f),
                      attrFloat(node, "beta", 0.5f))};
}

std::vector<Value *> convertSoftplus(ImportContext &ctx, const onnx::NodeProto &node) {
  return {softplus(ctx.builder(), inputX(ctx, node))};
}

std::vector<Value *> convertSoftsign(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = inputX(ctx, node);
  return {div(b, x, add(b, scalarLike(b, x, 1.0), unary(b, OpKind::Abs, x)))};
}

std::vector<Value *> convertGelu(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = inputX(ctx, node);
  std::string approximate = attrString(node, "approximate", "none");
  Value *half = scalarLike(b, x, 0.5);
  Value *one = scalarLike(b, x, 1.0);
  Value *inner;
  if (approximate == "none") {
    // 0.5 x (1 + erf(x / sqrt(2)))
    inner = unary(b, OpKind::Erf, mul(b, x, scalarLike(b, x, M_SQRT1_2)));
  } else if (approximate == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    Value *cube = mul(b, mul(b, x, x), x);
    Value *poly = add(b, x, mul(b, cube, scalarLike(b, x, 0.044715)));
    inner = unary(b, OpKind::Tanh, mul(b, poly, scalarLike(b, x, std::sqrt(2.0 / M_PI))));
  } else {
    throw ConvertError("Gelu approximate must be 'none' or 'tanh', got '" + approximate + "'");
  }
  return {mul(b, mul(b, half, x), add(b, one, inner))};
}

std::vector<Value *> convertMish(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = inputX(ctx, node);
  return {mul(b, x, unary(b, OpKind::Tanh, softplus(b, x)))};
}

std::vector<Value *> convertThresholdedRelu(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = inputX(ctx, node);
  Value *alpha = scalarLike(b, x, attrFloat(node, "alpha", 1.0f));
  return {select(b, lessThan(b, alpha, x), x, scalarLike(b, x, 0.0))};
}

std::vector<Value *> convertShrink(ImportContext &ctx, const onnx::NodeProto &node) {
  // x < -lambd: x + bias; x > lambd: x - bias; otherwise 0.
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  double lambd = attrFloat(node, "lambd", 0.5f);
  Value *bias = scalarLike(b, x, attrFloat(node, "bias", 0.0f));
  Value *below = lessThan(b, x, scalarLike(b, x, -lambd));
  Value *above = lessThan(b, scalarLike(b, x, lambd), x);
  Value *zero = scalarLike(b, x, 0.0);
  return {select(b, below, add(b, x, bias), select(b, above, sub(b, x, bias), zero))};
}

} // namespace

bool activationTakesAlpha(const std::string &name) {
  return name == "Affine" || name == "LeakyRelu" || name == "ThresholdedRelu" ||
         name == "ScaledTanh" || name == "HardSigmoid" || name == "Elu";
}

bool activationTakesBeta(const std::string &name) {
  return name == "Affine" || name == "ScaledTanh" || name == "HardSigmoid";
}

Value *namedActivation(Builder &b, Value *x, const std::string &name, std::optional<double> alpha,
                       std::optional<double> beta) {
  auto zero = [&] { return scalarLike(b, x, 0.0); };
  if (name == "Sigmoid")
    return unary(b, OpKind::Sigmoid, x);
  if (name == "Tanh")
    return unary(b, OpKind::Tanh, x);
  if (name == "Relu")
    return relu(b, x);
  if (name == "Affine")
    return add(b, mul(b, x, scalarLike(b, x, alpha.value_or(1.0))),
               scalarLike(b, x, beta.value_or(0.0)));
  if (name == "LeakyRelu")
    return select(b, isNegative(b, x), mul(b, x, scalarLike(b, x, alpha.value_or(0.01))), x);
  if (name == "ThresholdedRelu")
    return select(b, lessThan(b, scalarLike(b, x, alpha.value_or(1.0)), x), x, zero());
  if (name == "ScaledTanh")
    return mul(b, scalarLike(b, x, alpha.value_or(1.0)),
               unary(b, OpKind::Tanh, mul(b, x, scalarLike(b, x, beta.value_or(1.0)))));
  if (name == "HardSigmoid")
    return hardSigmoid(b, x, alpha.value_or(0.2), beta.value_or(0.5));
  if (name == "Elu")
    return select(b, isNegative(b, x), mul(b, scalarLike(b, x, alpha.value_or(1.0)), expm1(b, x)),
                  x);
  if (name == "Softsign")
    return div(b, x, add(b, scalarLike(b, x, 1.0), unary(b, OpKind::Abs, x)));
  if (name == "Softplus")
    return softplus(b, x);
  throw ConvertError("unsupported activation '" + name + "'");
}

void registerActivationConverters(ConverterTable &t) {
  t["Relu"] = convertRelu;
  t["LeakyRelu"] = convertLeakyRelu;
  t["PRelu"] = convertPRelu;
  t["Elu"] = convertElu;
  t["Selu"] = convertSelu;
  t["Celu"] = convertCelu;
  t["Sigmoid"] = convertSigmoid;
  t["HardSigmoid"] = convertHardSigmoid;
  t["Softplus"] = convertSoftplus;
  t["Softsign"] = convertSoftsign;
  t["Gelu"] = convertGelu;
  t["Mish"] = convertMish;
  t["ThresholdedRelu"] = convertThresholdedRelu;
  t["Shrink"] = convertShrink;
}

} // namespace strata::onnx_import
