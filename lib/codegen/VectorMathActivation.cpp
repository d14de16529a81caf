//===- VectorMathActivation.cpp - tanh, erf and sigmoid --------------------------------------===//
#include "strata/codegen/VectorMath.h"

#include "VectorMathImpl.h"

using namespace llvm;

namespace strata::codegen {

using detail::MathBuilder;

// tanh is odd; on a = |x|:
//   a < 0.625:  a + a^3 P(a^2), P of degree 5 (relative error 2e-10);
//   otherwise:  1 - 2 / (exp(2a) + 1), where tanh >= 0.55 so the subtraction loses nothing,
//               and exp(2a) = inf for large a gives exactly 1 (no inf/inf).
Value *emitTanh(IRBuilderBase &ir, Value *x) {
  MathBuilder m(ir, x);
  Value *a = m.fabs(x);
  Value *a2 = m.mul(a, a);
  Value *small = m.fma(m.mul(a2, a),
                       m.horner(a2, {-0x1.555554p-2, 0x1.11107ap-3, -0x1.b9f188p-5, 0x1.63a55p-6,
                                     -0x1.0c5edp-7, 0x1.1a2816p-9}),
                       a);
  Value *e = emitExp(m.ir(), m.add(a, a));
  Value *large = m.sub(m.f(1.0), m.div(m.f(2.0), m.add(e, m.f(1.0))));
  Value *res = m.sel(m.ir().CreateFCmpOLT(a, m.f(0.625)), small, large);
  return m.copySign(res, x); // NaN takes the `large` path and stays NaN
}

// erf is odd; on a = |x|:
//   a < 0.921875:  a + a * Q(a^2), Q of degree 6 with Q(0) = 2/sqrt(pi) - 1 (relative error
//                  9e-10). Splitting off the leading `a` makes the only large rounding the
//                  final add, with or without FMA (a * 2/sqrt(pi) alone rounds twice);
//   otherwise:     1 - exp(L(a)), L of degree 7 approximating log(erfc(a)) on
//                  [0.921875, 3.9375]; erf(a) rounds to 1 above 3.9375, so a is clamped there.
Value *emitErf(IRBuilderBase &ir, Value *x) {
  MathBuilder m(ir, x);
  auto &b = m.ir();
  Value *a = m.fabs(x);
  Value *a2 = m.mul(a, a);
  Value *q = m.horner(a2, {0x1.06eba8p-3, -0x1.812742p-2, 0x1.ce2df0p-4, -0x1.b80d70p-6,
                           0x1.54c2b4p-8, -0x1.aa3268p-11, 0x1.5cfc0ep-14});
  Value *small = m.fma(a, q, a);
  Value *ac = m.sel(b.CreateFCmpOGT(a, m.f(3.9375)), m.f(3.9375), a); // keeps NaN
  Value *l = m.horner(ac, {0x1.6f6384p-13, -0x1.21280cp+0, -0x1.44456cp-1, -0x1.bb894ap-4,
                           0x1.9b9c16p-6, -0x1.116ec4p-8, 0x1.c7d06ap-12, -0x1.623e14p-16});
  Value *large = m.sub(m.f(1.0), emitExp(b, l));
  Value *res = m.sel(b.CreateFCmpOLT(a, m.f(0.921875)), small, large);
  return m.copySign(res, x);
}

// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, with e = exp(-|x|) <= 1:
// never overflows, never forms inf/inf, and keeps full relative accuracy in the far negative
// tail (down to subnormal results) where 1 - sigmoid(-x) would cancel.
Value *emitSigmoid(IRBuilderBase &ir, Value *x) {
  MathBuilder m(ir, x);
  Value *e = emitExp(m.ir(), m.ir().CreateFNeg(m.fabs(x)));
  Value *num = m.sel(m.ir().CreateFCmpOLT(x, m.f(0.0)), e, m.f(1.0));
  return m.div(num, m.add(m.f(1.0), e)); // NaN: e is NaN
}

} // namespace strata::codegen
