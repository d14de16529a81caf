//===- VectorMath.cpp - exp, log, pow and the shared helpers ---------------------------------===//
//
// Coefficients are weighted minimax fits (linear programming over ~2000 Chebyshev-spaced
// points, leading coefficients rounded to f32 first and the rest refitted), written as exact
// hexadecimal f32 literals; scripts/fit_vector_math.py reproduces them. docs/vector-math.md
// lists the fitted targets and the measured error bounds.
//
//===-----------------------------------------------------------------------------------------===//
#include "strata/codegen/VectorMath.h"

#include "VectorMathImpl.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/Support/ErrorHandling.h>

#include <cassert>
#include <limits>

using namespace llvm;

namespace strata::codegen {
namespace detail {

MathBuilder::MathBuilder(IRBuilderBase &builder, Value *like)
    : b(builder), savedFMF(builder.getFastMathFlags()) {
  // Range reductions and the rounding trick rely on exact IEEE semantics: no fast-math.
  b.clearFastMathFlags();
  Type *ty = like->getType();
  assert(ty->getScalarType()->isFloatTy() && !isa<ScalableVectorType>(ty) &&
         "vector math expects f32 or <N x f32>");
  LLVMContext &ctx = ty->getContext();
  f32 = ty;
  i32 = Type::getInt32Ty(ctx);
  f64 = Type::getDoubleTy(ctx);
  i64 = Type::getInt64Ty(ctx);
  if (auto *vt = dyn_cast<FixedVectorType>(ty)) {
    unsigned n = vt->getNumElements();
    i32 = FixedVectorType::get(i32, n);
    f64 = FixedVectorType::get(f64, n);
    i64 = FixedVectorType::get(i64, n);
  }
}

MathBuilder::~MathBuilder() { b.setFastMathFlags(savedFMF); }

Value *MathBuilder::fma(Value *a, Value *c, Value *e) {
  return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {a->getType()}, {a, c, e});
}

Value *MathBuilder::fabs(Value *a) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a); }

Value *MathBuilder::horner(Value *t, ArrayRef<double> coefs, bool inF64) {
  auto k = [&](double v) { return inF64 ? d(v) : f(v); };
  Value *acc = k(coefs.back());
  for (size_t j = coefs.size() - 1; j-- > 0;)
    acc = fma(acc, t, k(coefs[j]));
  return acc;
}

Value *MathBuilder::bits(Value *a) {
  return b.CreateBitCast(a, a->getType()->getScalarType()->isDoubleTy() ? i64 : i32);
}

Value *MathBuilder::fromBits(Value *a) {
  return b.CreateBitCast(a, a->getType()->getScalarSizeInBits() == 64 ? f64 : f32);
}

Value *MathBuilder::roundMagic(Value *v, Value **intBits) {
  bool isF64 = v->getType()->getScalarType()->isDoubleTy();
  Value *magic = isF64 ? d(0x1.8p52) : f(0x1.8p23);
  Value *biased = add(v, magic);
  // The biased sum is 1.5 * 2^23 + n (f32) or 1.5 * 2^52 + n (f64) with exponent 23 (52),
  // so its bits minus the magic's bits are n itself.
  if (intBits)
    *intBits = b.CreateSub(bits(biased), isF64 ? l(0x4338000000000000LL) : i(0x4b400000));
  return sub(biased, magic);
}

Value *MathBuilder::copySign(Value *mag, Value *sign) {
  Value *m = b.CreateAnd(bits(mag), i(0x7fffffff));
  Value *s = b.CreateAnd(bits(sign), i(INT32_MIN));
  return fromBits(b.CreateOr(m, s));
}

} // namespace detail

using detail::MathBuilder;

// exp(x) = 2^n * e^r with n = round(x / ln2), r = x - n*ln2 in [-ln2/2, ln2/2].
// ln2 is split Cody-Waite style: LN2_HI has 15 significant bits, so n*LN2_HI (|n| <= 150,
// 8 bits) is exact and x - n*LN2_HI is exact by Sterbenz, with or without FMA.
// e^r = 1 + r + r^2 * Q(r), Q of degree 4 (relative error 3e-9). 2^n is applied as two
// factors 2^(n/2) and 2^(n - n/2), each a normal float, so results that overflow become inf
// and subnormal results are rounded only once, by the last multiply.
Value *emitExp(IRBuilderBase &ir, Value *x) {
  MathBuilder m(ir, x);
  auto &b = m.ir();
  // Clamp to [-104, 89]: exp(-104) rounds to 0 and exp(89) to inf, so nothing changes for
  // clamped inputs, and n stays in [-150, 129] so both 2^n factors below are normal. `ult`
  // sends NaN to a bound too; NaN is restored at the end.
  Value *xc = m.sel(b.CreateFCmpULT(x, m.f(-104.0)), m.f(-104.0), x);
  xc = m.sel(b.CreateFCmpOGT(xc, m.f(89.0)), m.f(89.0), xc);
  Value *n = nullptr;
  Value *nf = m.roundMagic(m.mul(xc, m.f(0x1.715476p+0)), &n);
  Value *r = m.fma(nf, m.f(-0x1.62e4p-1), xc); // -LN2_HI, exact
  r = m.fma(nf, m.f(-0x1.7f7d1cp-20), r);      // -LN2_LO
  Value *q =
      m.horner(r, {0x1.fffffcp-2, 0x1.555494p-3, 0x1.5558bep-5, 0x1.123856p-7, 0x1.6a3d0ep-10});
  Value *p = m.add(m.fma(m.mul(r, r), q, r), m.f(1.0));
  Value *n1 = b.CreateAShr(n, m.i(1));
  Value *n2 = b.CreateSub(n, n1);
  auto pow2 = [&](Value *k) { return m.fromBits(b.CreateShl(b.CreateAdd(k, m.i(127)), m.i(23))); };
  Value *res = m.mul(m.mul(p, pow2(n1)), pow2(n2));
  return m.sel(m.isNaN(x), x, res);
}

// log(x) = e*ln2 + log(m) with m in [sqrt(1/2), sqrt(2)). Subtracting the bits of sqrt(1/2)
// before splitting exponent and mantissa centers m on 1 without a compare. With f = m - 1
// (exact), log(1 + f) = f - f^2/2 + f^3 * P(f), P of degree 7 (relative error 6e-9).
// Subnormal inputs are scaled by 2^23 first.
Value *emitLog(IRBuilderBase &ir, Value *x) {
  MathBuilder m(ir, x);
  auto &b = m.ir();
  constexpr int32_t kSqrtHalfBits = 0x3f3504f3;
  Value *isSub = b.CreateFCmpOLT(x, m.f(0x1p-126));
  Value *xs = m.sel(isSub, m.mul(x, m.f(0x1p23)), x);
  Value *ix = b.CreateSub(m.bits(xs), m.i(kSqrtHalfBits));
  Value *e = b.CreateSub(b.CreateAShr(ix, m.i(23)), m.sel(isSub, m.i(23), m.i(0)));
  Value *mant = m.fromBits(b.CreateAdd(b.CreateAnd(ix, m.i(0x7fffff)), m.i(kSqrtHalfBits)));
  Value *f = m.sub(mant, m.f(1.0));
  Value *f2 = m.mul(f, f);
  Value *p = m.horner(f, {0x1.555554p-2, -0x1.000226p-2, 0x1.99a01cp-3, -0x1.54728cp-3,
                          0x1.22d936p-3, -0x1.0d8232p-3, 0x1.055e62p-3, -0x1.38c91p-4});
  // Small terms first: f^3 P - f^2/2, then + e*LN2_LO, + f, + e*LN2_HI (exact product).
  Value *ef = b.CreateSIToFP(e, m.f32Ty());
  Value *c = m.fma(m.mul(f2, f), p, m.mul(f2, m.f(-0.5)));
  c = m.fma(ef, m.f(0x1.7f7d1cp-20), c);
  Value *res = m.fma(ef, m.f(0x1.62e4p-1), m.add(f, c));
  // Special values: log(+-0) = -inf, log(x < 0) = NaN, log(NaN) = NaN, log(inf) = inf.
  res = m.sel(b.CreateFCmpOEQ(x, m.f(0.0)), m.f(-std::numeric_limits<double>::infinity()), res);
  res = m.sel(b.CreateFCmpOEQ(x, m.f(std::numeric_limits<double>::infinity())), x, res);
  return m.sel(b.CreateFCmpULT(x, m.f(0.0)), m.f(std::numeric_limits<double>::quiet_NaN()), res);
}

namespace {

// log2(a) in f64 for a finite positive double (every f32 |x| including subnormals is a normal
// double). a = 2^e * m, m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with s = (m-1)/(m+1),
// |s| <= 0.172: the series to s^13 has relative error below 2e-12, ample for an f32 result.
Value *log2F64(MathBuilder &m, Value *a) {
  auto &b = m.ir();
  constexpr int64_t kSqrtHalfBits = 0x3fe6a09e667f3bcdLL;
  Value *ia = b.CreateSub(m.bits(a), m.l(kSqrtHalfBits));
  Value *e = b.CreateSIToFP(b.CreateAShr(ia, m.l(52)), m.f64Ty());
  Value *mant =
      m.fromBits(b.CreateAdd(b.CreateAnd(ia, m.l((int64_t{1} << 52) - 1)), m.l(kSqrtHalfBits)));
  Value *s = m.div(m.sub(mant, m.d(1.0)), m.add(mant, m.d(1.0)));
  Value *s2 = m.mul(s, s);
  Value *series = m.horner(s2, {2.0, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13},
                           /*inF64=*/true);
  return m.fma(m.mul(s, series), m.d(0x1.71547652b82fep+0), e); // ln m * log2(e) + e
}

// 2^z in f64 for |z| <= 200 (caller clamps): z = k + g, |g| <= 1/2, Taylor series of
// e^(g ln2) to degree 10 (relative error 2e-13), times 2^k built in the exponent field.
Value *exp2F64(MathBuilder &m, Value *z) {
  auto &b = m.ir();
  Value *kBits = nullptr;
  Value *k = m.roundMagic(z, &kBits);
  Value *t = m.mul(m.sub(z, k), m.d(0x1.62e42fefa39efp-1));
  double fact[11] = {1.0};
  for (int j = 1; j <= 10; ++j)
    fact[j] = fact[j - 1] / j;
  Value *p = m.horner(t, fact, /*inF64=*/true);
  Value *scale = m.fromBits(b.CreateShl(b.CreateAdd(kBits, m.l(1023)), m.l(52)));
  return m.mul(p, scale);
}

} // namespace

// pow(x, y) = 2^(y * log2|x|), evaluated in f64 so the product's rounding error (up to
// 128 * 2^-24 in f32) does not reach the result, then rounded once to f32. Sign and the
// C99 special cases are applied with selects at the end.
Value *emitPow(IRBuilderBase &ir, Value *x, Value *y) {
  assert(x->getType() == y->getType() && "pow operands must share a type");
  MathBuilder m(ir, x);
  auto &b = m.ir();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Value *ax = m.fabs(x);
  Value *axd = b.CreateFPExt(ax, m.f64Ty());
  Value *lg = log2F64(m, axd);
  lg = m.sel(b.CreateFCmpOEQ(axd, m.d(0.0)), m.d(-inf), lg);
  lg = m.sel(b.CreateFCmpOEQ(axd, m.d(inf)), m.d(inf), lg);
  lg = m.sel(m.isNaN(axd), m.d(nan), lg);
  Value *z = m.mul(b.CreateFPExt(y, m.f64Ty()), lg);
  // Beyond +-200 the f32 result is 0 or inf anyway; NaN survives the clamp (ordered compares).
  Value *zc = m.sel(b.CreateFCmpOGT(z, m.d(200.0)), m.d(200.0), z);
  zc = m.sel(b.CreateFCmpOLT(zc, m.d(-200.0)), m.d(-200.0), zc);
  Value *res = b.CreateFPTrunc(exp2F64(m, zc), m.f32Ty());
  res = m.sel(m.isNaN(z), m.f(nan), res);

  // y integral: |y| >= 2^23 always is; otherwise compare with its rounding. Infinities count
  // as even integers (pow(-2, inf) = inf); NaN is neither (result is NaN anyway).
  Value *ay = m.fabs(y);
  Value *yBig = b.CreateFCmpOGE(ay, m.f(0x1p23));
  Value *yRound = m.roundMagic(m.sel(yBig, m.f(0.0), y));
  Value *yInt = b.CreateOr(yBig, b.CreateFCmpOEQ(yRound, y));
  // Odd only below 2^24 (above, every f32 is even); fptosi sees only in-range values.
  Value *yI = b.CreateFPToSI(m.sel(b.CreateFCmpOLT(ay, m.f(0x1p24)), y, m.f(0.0)), m.i32Ty());
  Value *yOdd = b.CreateAnd(yInt, b.CreateTrunc(yI, CmpInst::makeCmpResultType(m.i32Ty())));
  Value *xNeg = b.CreateICmpSLT(m.bits(x), m.i(0)); // sign bit, so -0 and -inf count
  res = m.sel(b.CreateAnd(xNeg, yOdd), b.CreateFNeg(res), res);
  // Negative finite base with a non-integer exponent: NaN.
  Value *xNegFinite = b.CreateAnd(b.CreateFCmpOLT(x, m.f(0.0)), b.CreateFCmpONE(x, m.f(-inf)));
  res = m.sel(b.CreateAnd(xNegFinite, b.CreateNot(yInt)), m.f(nan), res);
  // Exact ones: pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN, pow(-1, +-inf) = 1.
  Value *one = m.f(1.0);
  res = m.sel(b.CreateAnd(b.CreateFCmpOEQ(x, m.f(-1.0)), b.CreateFCmpOEQ(ay, m.f(inf))), one, res);
  res = m.sel(b.CreateFCmpOEQ(x, one), one, res);
  return m.sel(b.CreateFCmpOEQ(y, m.f(0.0)), one, res);
}

StringRef mathFnName(MathFn fn) {
  switch (fn) {
  case MathFn::Exp: return "exp";
  case MathFn::Log: return "log";
  case MathFn::Tanh: return "tanh";
  case MathFn::Erf: return "erf";
  case MathFn::Sigmoid: return "sigmoid";
  case MathFn::Sin: return "sin";
  case MathFn::Cos: return "cos";
  case MathFn::Atan: return "atan";
  case MathFn::Pow: return "pow";
  }
  llvm_unreachable("unknown MathFn");
}

std::optional<MathFn> mathFnByName(StringRef name) {
  for (MathFn fn : {MathFn::Exp, MathFn::Log, MathFn::Tanh, MathFn::Erf, MathFn::Sigmoid,
                    MathFn::Sin, MathFn::Cos, MathFn::Atan, MathFn::Pow})
    if (mathFnName(fn) == name)
      return fn;
  return std::nullopt;
}

unsigned mathFnArity(MathFn fn) { return fn == MathFn::Pow ? 2 : 1; }

Value *emitMathFn(IRBuilderBase &b, MathFn fn, ArrayRef<Value *> args) {
  assert(args.size() == mathFnArity(fn) && "wrong operand count");
  switch (fn) {
  case MathFn::Exp: return emitExp(b, args[0]);
  case MathFn::Log: return emitLog(b, args[0]);
  case MathFn::Tanh: return emitTanh(b, args[0]);
  case MathFn::Erf: return emitErf(b, args[0]);
  case MathFn::Sigmoid: return emitSigmoid(b, args[0]);
  case MathFn::Sin: return emitSin(b, args[0]);
  case MathFn::Cos: return emitCos(b, args[0]);
  case MathFn::Atan: return emitAtan(b, args[0]);
  case MathFn::Pow: return emitPow(b, args[0], args[1]);
  }
  llvm_unreachable("unknown MathFn");
}

} // namespace strata::codegen
