// canonicalize, algebraic family: identities of the elementwise ops.
//
// Exactness is the rule: a pattern fires by default only when the rewritten graph computes the
// same bits as the original for every input (NaN payloads aside). Rewrites that are only
// approximately equal under IEEE arithmetic check options().fastMath. docs/passes.md gives the
// legality argument of each one.
#include "CanonicalizePatterns.h"

#include <cmath>

namespace strata::canonicalize {
namespace {

// The data of a non-empty constant operand, or nullptr (also for an elided constant: no bytes
// to read; and for an empty one, which identities must not reason about).
const Tensor *constantData(const Value *v) {
  const Tensor *t = constantValue(v);
  return t && t->valid() && t->numElements() > 0 ? t : nullptr;
}

// What kind of zero a constant is: every element +0 (integer zeros count as +0), every element
// -0, a mix of both, or not all zero.
enum class Zero { None, Positive, Negative, Mixed };

Zero zeroKind(const Value *v) {
  const Tensor *t = constantData(v);
  if (!t)
    return Zero::None;
  bool positive = false, negative = false;
  for (int64_t i = 0, n = t->numElements(); i < n; ++i) {
    double d = t->getDouble(i);
    if (d != 0)
      return Zero::None;
    (std::signbit(d) ? negative : positive) = true;
  }
  if (positive && negative)
    return Zero::Mixed;
  return negative ? Zero::Negative : Zero::Positive;
}

bool isFloatValue(const Value *v) { return isFloat(v->type().dtype); }

// x + z == x for every x exactly when z is -0 (x + -0 is x even for x = -0), or for integers.
// x + +0 turns x = -0 into +0, so that fold needs fastMath.
bool isAdditiveIdentity(const Value *z, bool fastMath) {
  Zero k = zeroKind(z);
  if (k == Zero::None)
    return false;
  return !isFloatValue(z) || k == Zero::Negative || fastMath;
}

// add(x, 0) / add(0, x) -> x
bool foldAddZero(Op &op, PatternRewriter &r) {
  bool fast = r.options().fastMath;
  for (unsigned i = 0; i < 2; ++i)
    if (isAdditiveIdentity(op.operand(1 - i), fast) && replaceIfSameType(op, op.operand(i), r))
      return true;
  return false;
}

// sub(x, 0) -> x: x - +0 == x + -0 == x exactly; x - -0 == x + +0 needs fastMath.
bool foldSubZero(Op &op, PatternRewriter &r) {
  Zero k = zeroKind(op.operand(1));
  if (k == Zero::None)
    return false;
  bool exact = !isFloatValue(op.operand(1)) || k == Zero::Positive;
  if (!exact && !r.options().fastMath)
    return false;
  return replaceIfSameType(op, op.operand(0), r);
}

// mul(x, 1) / mul(1, x) -> x (exact: x * 1 is x for every float, -0, inf and NaN included).
bool foldMulOne(Op &op, PatternRewriter &r) {
  for (unsigned i = 0; i < 2; ++i)
    if (isConstantSplat(op.operand(1 - i), 1.0) && replaceIfSameType(op, op.operand(i), r))
      return true;
  return false;
}

// div(x, 1) -> x (exact for floats; integer division by 1 is the identity).
bool foldDivOne(Op &op, PatternRewriter &r) {
  return isConstantSplat(op.operand(1), 1.0) && replaceIfSameType(op, op.operand(0), r);
}

// neg(neg(x)) -> x (a sign flip twice; integer negation wraps, and wrapping twice is identity).
bool foldNegNeg(Op &op, PatternRewriter &r) {
  Op *inner = op.operand(0)->definingOp();
  if (!inner || inner->kind() != OpKind::Neg)
    return false;
  return replaceIfSameType(op, inner->operand(0), r);
}

Value *negatedOperand(Value *v) {
  Op *def = v->definingOp();
  return def && def->kind() == OpKind::Neg ? def->operand(0) : nullptr;
}

// add(x, neg(y)) / add(neg(y), x) -> sub(x, y): IEEE defines x - y as x + (-y).
bool foldAddNeg(Op &op, PatternRewriter &r) {
  for (unsigned i = 0; i < 2; ++i)
    if (Value *y = negatedOperand(op.operand(1 - i)))
      if (replaceWithNew(op, OpKind::Sub, {op.operand(i), y}, r))
        return true;
  return false;
}

// sub(x, neg(y)) -> add(x, y): x - (-y) == x + y.
bool foldSubNeg(Op &op, PatternRewriter &r) {
  Value *y = negatedOperand(op.operand(1));
  return y && replaceWithNew(op, OpKind::Add, {op.operand(0), y}, r);
}

// pow(x, 1) -> x (pow(x, 1) is x for every x, also in libm).
bool foldPowOne(Op &op, PatternRewriter &r) {
  return isConstantSplat(op.operand(1), 1.0) && replaceIfSameType(op, op.operand(0), r);
}

// pow(x, 2) -> mul(x, x). Integers: the same wrapping product. Floats: x * x is the correctly
// rounded square, what IEEE 754 recommends for pow; glibc's pow may differ by one ulp.
bool foldPowTwo(Op &op, PatternRewriter &r) {
  Value *x = op.operand(0);
  return isConstantSplat(op.operand(1), 2.0) && replaceWithNew(op, OpKind::Mul, {x, x}, r);
}

// pow(x, 0.5) -> sqrt(x), fastMath only: pow(-0, 0.5) = +0 but sqrt(-0) = -0, and
// pow(-inf, 0.5) = +inf but sqrt(-inf) = NaN. (An integer base would truncate 0.5 to 0.)
bool foldPowHalf(Op &op, PatternRewriter &r) {
  Value *x = op.operand(0);
  if (!r.options().fastMath || !isFloatValue(x) || !isConstantSplat(op.operand(1), 0.5))
    return false;
  return replaceWithNew(op, OpKind::Sqrt, {x}, r);
}

// div(x, c) -> mul(x, 1/c) for a float constant c. Exact when every element of c is a power of
// two whose reciprocal is representable: x / 2^k and x * 2^-k are the same real number, rounded
// once. Any other finite nonzero c needs fastMath (1/c is rounded, so is the product).
bool foldDivConstant(Op &op, PatternRewriter &r) {
  Value *divisor = op.operand(1);
  const Tensor *c = constantData(divisor);
  if (!c || !isFloatValue(divisor))
    return false;
  bool fast = r.options().fastMath;
  Tensor reciprocal(c->dtype(), c->shape());
  for (int64_t i = 0, n = c->numElements(); i < n; ++i) {
    double d = c->getDouble(i);
    if (d == 0 || !std::isfinite(d))
      return false;
    double inverse = 1.0 / d;
    reciprocal.setDouble(i, inverse);
    double stored = reciprocal.getDouble(i);
    if (stored == 0 || !std::isfinite(stored))
      return false;
    int exponent = 0;
    bool powerOfTwo = std::fabs(std::frexp(d, &exponent)) == 0.5;
    if (!fast && !(powerOfTwo && stored == inverse))
      return false;
  }
  Value *inverse = r.builder().constant(std::move(reciprocal));
  return replaceWithNew(op, OpKind::Mul, {op.operand(0), inverse}, r);
}

// select(c, x, x) -> x when c does not broadcast the result beyond x's shape.
bool foldSelectSame(Op &op, PatternRewriter &r) {
  return op.operand(1) == op.operand(2) && replaceIfSameType(op, op.operand(1), r);
}

// max(x, x), min(x, x), and(x, x), or(x, x) -> x: each is idempotent, NaN included.
bool foldIdempotent(Op &op, PatternRewriter &r) {
  return op.operand(0) == op.operand(1) && replaceIfSameType(op, op.operand(0), r);
}

// not(not(x)) -> x: logical not on bool and bitwise not on integers are involutions.
bool foldNotNot(Op &op, PatternRewriter &r) {
  Op *inner = op.operand(0)->definingOp();
  if (!inner || inner->kind() != OpKind::Not)
    return false;
  return replaceIfSameType(op, inner->operand(0), r);
}

} // namespace

void addAlgebraPatterns(PatternSet &patterns, const PassOptions &) {
  addPattern(patterns, OpKind::Add, "add-zero", foldAddZero);
  addPattern(patterns, OpKind::Sub, "sub-zero", foldSubZero);
  addPattern(patterns, OpKind::Mul, "mul-one", foldMulOne);
  addPattern(patterns, OpKind::Div, "div-one", foldDivOne);
  addPattern(patterns, OpKind::Neg, "neg-neg", foldNegNeg);
  addPattern(patterns, OpKind::Add, "add-neg-to-sub", foldAddNeg);
  addPattern(patterns, OpKind::Sub, "sub-neg-to-add", foldSubNeg);
  addPattern(patterns, OpKind::Pow, "pow-one", foldPowOne);
  addPattern(patterns, OpKind::Pow, "pow-two-to-mul", foldPowTwo);
  addPattern(patterns, OpKind::Pow, "pow-half-to-sqrt", foldPowHalf);
  addPattern(patterns, OpKind::Div, "div-const-to-mul", foldDivConstant);
  addPattern(patterns, OpKind::Select, "select-same", foldSelectSame);
  addPattern(patterns, OpKind::Max, "max-self", foldIdempotent);
  addPattern(patterns, OpKind::Min, "min-self", foldIdempotent);
  addPattern(patterns, OpKind::And, "and-self", foldIdempotent);
  addPattern(patterns, OpKind::Or, "or-self", foldIdempotent);
  addPattern(patterns, OpKind::Not, "not-not", foldNotNot);
}

} // namespace strata::canonicalize
