// Sorting helpers for the selection ops (topk, nms): a strict order on (value, index) pairs and a
// stable bottom-up merge sort of an index array, O(n log n) where the selection passes they
// replace cost O(k * n).
#include "LowerImpl.h"

namespace strata::lower {

using loop::ExprKind;

Expr comesFirst(const Expr &va, const Expr &ia, const Expr &vb, const Expr &ib, bool largest,
                bool fl) {
  Expr byIndex = bin(ExprKind::LT, ia, ib);
  Expr byValue = loop::select(bin(ExprKind::NE, va, vb),
                              bin(largest ? ExprKind::GT : ExprKind::LT, va, vb), byIndex);
  if (!fl)
    return byValue;
  Expr nanA = bin(ExprKind::NE, va, va), nanB = bin(ExprKind::NE, vb, vb);
  Expr nanOrder = loop::select(bin(ExprKind::And, nanA, nanB), byIndex, largest ? nanA : nanB);
  return loop::select(bin(ExprKind::Or, nanA, nanB), nanOrder, byValue);
}

Stmt mergeSortIndices(LowerCtx &c, const loop::Buffer &keys, const Expr &count,
                      int64_t maxPasses, const Acc &parity,
                      const std::function<Expr(const Expr &, const Expr &)> &before) {
  loop::Var p = c.newVar("pass"), q = c.newVar("block"), t = c.newVar("t");
  Acc ia = makeAcc(c, "ia", DType::I64), ib = makeAcc(c, "ib", DType::I64);
  // Pass p merges runs of w = 2^p from row `parity` into the other row.
  Expr w = bin(ExprKind::Shl, imm(1), loop::var(p));
  Expr lo = loop::var(q) * (w + w);
  Expr mid = bin(ExprKind::Min, lo + w, count), hi = bin(ExprKind::Min, lo + w + w, count);
  Expr src = parity.get(), dst = imm(1) - parity.get();
  // Both heads are read clamped into [0, count) (count > w >= 1 inside a pass): a run already
  // used up is never taken, but select evaluates both sides.
  Expr last = count - imm(1);
  Expr a = loop::load(keys, {src, bin(ExprKind::Min, ia.get(), last)});
  Expr b = loop::load(keys, {src, bin(ExprKind::Min, ib.get(), last)});
  auto wide = [](const Expr &k) {
    return k.type().dtype == DType::I64 ? k : loop::cast(DType::I64, k);
  };
  // Stable: the left run's head goes first unless the right one's strictly comes before it.
  Expr takeRight = bin(ExprKind::And, bin(ExprKind::LT, ib.get(), hi),
                       bin(ExprKind::Or, bin(ExprKind::GE, ia.get(), mid), before(wide(b), wide(a))));
  Expr out = lo + loop::var(t);
  Stmt step = loop::ifThenElse(
      takeRight, loop::seq({loop::store(keys, {dst, out}, b), ib.set(ib.get() + imm(1))}),
      loop::seq({loop::store(keys, {dst, out}, a), ia.set(ia.get() + imm(1))}));
  Stmt merge = loop::seq({ia.set(lo), ib.set(mid), c.loopOver(t, hi - lo, LoopRole::Reduction, step)});
  Expr blocks = bin(ExprKind::FloorDiv, count + w + w - imm(1), w + w);
  Stmt pass = loop::ifThenElse(
      bin(ExprKind::LT, w, count),
      loop::seq({c.loopOver(q, blocks, LoopRole::Reduction, merge), parity.set(dst)}));
  return loop::allocate(ia.buf, loop::allocate(ib.buf, loop::seq({parity.set(imm(0)),
                                                                   c.loopOver(p, maxPasses, LoopRole::Reduction, pass)})));
}

int64_t mergePasses(int64_t maxCount) {
  int64_t passes = 0;
  while (passes < 62 && (int64_t{1} << passes) < maxCount)
    ++passes;
  return passes;
}

} // namespace strata::lower
