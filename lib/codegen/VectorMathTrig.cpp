//===- VectorMathTrig.cpp - sin, cos and atan ------------------------------------------------===//
#include "strata/codegen/VectorMath.h"

#include "VectorMathImpl.h"

using namespace llvm;

namespace strata::codegen {

using detail::MathBuilder;

namespace {

// sin and cos share the reduction x = q*pi/2 + r, |r| <= pi/4, done in f64: pi/2 is split
// into P1 and P2 of 26 significant bits each plus P3, so q*P1 and q*P2 are exact for
// |q| < 2^27 (|x| < 2.1e8) and x - q*P1 is exact by Sterbenz; the reduced argument is then
// good to ~2^-53 relative even when x is close to a multiple of pi/2, with or without FMA.
// Beyond that range the reduction loses accuracy gradually (and for |x| >= 2^51 the rounding
// trick no longer rounds); r is clamped to [-pi/4, pi/4] so results always stay in [-1, 1].
// The polynomials run in f32 on r rounded to f32 (plus a first-order correction for the
// rounding):
//   sin r = r + r^3 S(r^2), S of degree 3 (relative error 2e-10),
//   cos r = 1 - (r^2/2 - r^4 C(r^2)), C of degree 3 (relative error 7e-12).
Value *emitSinCos(IRBuilderBase &ir, Value *x, bool isCos) {
  MathBuilder m(ir, x);
  auto &b = m.ir();
  Value *xd = b.CreateFPExt(x, m.f64Ty());
  Value *qBits = nullptr;
  Value *q = m.roundMagic(m.mul(xd, m.d(0x1.45f306dc9c883p-1)), &qBits); // x * 2/pi
  Value *r = m.fma(q, m.d(-0x1.921fb5p+0), xd);
  r = m.fma(q, m.d(-0x1.110b46p-26), r);
  r = m.fma(q, m.d(-0x1.1a62633145c07p-54), r);
  // Only reached for |x| beyond the documented range; ordered compares keep NaN (x = +-inf).
  r = m.sel(b.CreateFCmpOGT(r, m.d(0.7854)), m.d(0.7854), r);
  r = m.sel(b.CreateFCmpOLT(r, m.d(-0.7854)), m.d(-0.7854), r);
  // r = rf + rlo exactly enough; the first-order terms of rlo are added back below, because
  // rounding r to f32 alone would cost up to 0.9 ulp.
  Value *rf = b.CreateFPTrunc(r, m.f32Ty());
  Value *rlo = b.CreateFPTrunc(m.sub(r, b.CreateFPExt(rf, m.f64Ty())), m.f32Ty());
  Value *r2 = m.mul(rf, rf);
  Value *h = m.mul(r2, m.f(0.5));
  // sin(rf + rlo) ~ rf + (rf^3 S(rf^2) + rlo * (1 - rf^2/2))
  Value *s = m.horner(r2, {-0x1.555556p-3, 0x1.111174p-7, -0x1.a05954p-13, 0x1.7c2c4ep-19});
  Value *sinR = m.add(rf, m.fma(m.mul(r2, rf), s, m.fma(b.CreateFNeg(rlo), h, rlo)));
  // cos(rf + rlo) ~ 1 - (rf^2/2 - rf^4 C(rf^2) + rlo * rf)
  Value *negC = m.horner(r2, {-0x1.555556p-5, 0x1.6c175ep-10, -0x1.a071c6p-16, 0x1.361c22p-22});
  Value *cosR = m.sub(m.f(1.0), m.fma(rlo, rf, m.fma(m.mul(r2, r2), negC, h)));
  // Quadrant: cos(x) = sin(x + pi/2), so cos uses q + 1. Odd quadrants take the other
  // polynomial; quadrants 2 and 3 flip the sign.
  Value *quad = b.CreateTrunc(qBits, m.i32Ty());
  if (isCos)
    quad = b.CreateAdd(quad, m.i(1));
  Value *useCos = b.CreateICmpNE(b.CreateAnd(quad, m.i(1)), m.i(0));
  Value *res = m.sel(useCos, cosR, sinR);
  Value *flip = b.CreateShl(b.CreateAnd(quad, m.i(2)), m.i(30));
  res = m.fromBits(b.CreateXor(m.bits(res), flip));
  if (!isCos) // sin x rounds to x below 2^-12; this also keeps the sign of -0
    res = m.sel(b.CreateFCmpOLT(m.fabs(x), m.f(0x1p-12)), x, res);
  return res;
}

} // namespace

Value *emitSin(IRBuilderBase &b, Value *x) { return emitSinCos(b, x, /*isCos=*/false); }
Value *emitCos(IRBuilderBase &b, Value *x) { return emitSinCos(b, x, /*isCos=*/true); }

// atan(|x|) on t = min(|x|, 1/|x|) in [0, 1]: atan t = t + t^3 P(t^2), P of degree 8
// (relative error 3e-9); for |x| > 1, atan|x| = pi/2 - atan(1/|x|) with pi/2 as a two-float
// sum. The sign is copied back from x, so atan(-0) = -0 and atan(+-inf) = +-pi/2.
Value *emitAtan(IRBuilderBase &ir, Value *x) {
  MathBuilder m(ir, x);
  auto &b = m.ir();
  Value *a = m.fabs(x);
  Value *inv = b.CreateFCmpOGT(a, m.f(1.0));
  Value *t = m.sel(inv, m.div(m.f(1.0), a), a);
  Value *t2 = m.mul(t, t);
  Value *p =
      m.horner(t2, {-0x1.55553ep-2, 0x1.9991e4p-3, -0x1.242086p-3, 0x1.c08c5p-4, -0x1.580932p-4,
                    0x1.da2ac2p-5, -0x1.fd80cap-6, 0x1.6429bcp-7, -0x1.d3679ap-10});
  Value *at = m.fma(m.mul(t2, t), p, t);
  Value *big = m.add(m.sub(m.f(0x1.921fb6p+0), at), m.f(-0x1.777a5cp-25));
  return m.copySign(m.sel(inv, big, at), x);
}

} // namespace strata::codegen
