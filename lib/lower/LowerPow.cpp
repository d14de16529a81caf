// pow on integers, as the interpreter's PowFn: the exponent is converted to the base's dtype,
// then square-and-multiply with wrapping multiplication over every bit of the exponent (a loop of
// the dtype's bit width, so any exponent is exact). A negative exponent (signed types) gives the
// truncated 1 / base^|e|: 1 for base 1, +-1 for base -1, 0 otherwise.
#include "LowerImpl.h"

namespace strata::lower {
using loop::ExprKind;

Stmt lowerIntPow(LowerCtx &c) {
  DType t = c.inTypes[0];
  const Exprs &out = c.outDims[0];
  auto k = [&](int64_t v) { return loop::intImm(v, t); };
  int64_t bits = static_cast<int64_t>(dtypeSize(t)) * 8;
  return loopNest(c, out, LoopRole::Parallel, [&](const Exprs &idx) {
    Expr base = loop::load(c.ins[0], broadcastIndex(idx, out, c.inDims[0]));
    Expr e = loop::load(c.ins[1], broadcastIndex(idx, out, c.inDims[1]));
    if (c.inTypes[1] != t)
      e = loop::cast(t, e);
    loop::Buffer acc = localArray(c, "acc", t), sq = localArray(c, "sq", t);
    Expr a = loop::load(acc, {imm(0)}), s = loop::load(sq, {imm(0)});
    loop::Var bit = c.newVar("bit");
    Expr set = bin(ExprKind::NE,
                   bin(ExprKind::BitAnd, bin(ExprKind::Shr, e, loop::cast(t, loop::var(bit))), k(1)),
                   k(0));
    Stmt step = loop::seq({loop::ifThenElse(set, loop::store(acc, {imm(0)}, a * s)),
                           loop::store(sq, {imm(0)}, s * s)});
    Expr result = a;
    if (isSigned(t)) {
      Expr odd = bin(ExprKind::NE, bin(ExprKind::BitAnd, e, k(1)), k(0));
      Expr negative = loop::select(bin(ExprKind::EQ, base, k(1)), k(1),
                                   loop::select(bin(ExprKind::EQ, base, k(-1)),
                                                loop::select(odd, k(-1), k(1)), k(0)));
      result = loop::select(bin(ExprKind::LT, e, k(0)), negative, a);
    }
    Stmt body = loop::seq({loop::store(acc, {imm(0)}, k(1)), loop::store(sq, {imm(0)}, base),
                           c.loopOver(bit, bits, LoopRole::Reduction, step),
                           loop::store(c.outs[0], idx, result)});
    return loop::allocate(acc, loop::allocate(sq, body));
  });
}

} // namespace strata::lower
