// topk as k selection passes per row (lib/interp/TopK.cpp semantics): entries are totally ordered
// by "comes first" (larger first when `largest`, NaN beyond every number, ties to the lower
// index), and pass j picks the first entry that comes after pass j-1's pick. O(k * n) per row,
// no sorting buffer; the results are always sorted, as in the interpreter.
#include "LowerImpl.h"

namespace strata::lower {
namespace {

using loop::ExprKind;

// Whether (va, ia) comes strictly before (vb, ib).
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

Exprs withAxis(const Exprs &rowIdx, size_t axis, const Expr &i) {
  Exprs r = rowIdx;
  r.insert(r.begin() + static_cast<std::ptrdiff_t>(axis), i);
  return r;
}

} // namespace

Stmt lowerTopK(LowerCtx &c) {
  const Shape &in = c.inShapes[0];
  DType t = c.inTypes[0];
  if (t == DType::Bool)
    notLowered(c.op, "bool operand");
  if (in.empty())
    throw LowerError("topk: operand must have rank >= 1");
  const ops::TopKOp topK(c.op);
  size_t axis = checkedAxis(c, topK.axis(), in.size());
  // The axis, the rows and k may be run-time extents (the plan checks the axis holds k).
  const Expr k = c.outDims[0][axis];
  const Expr size = c.inDims[0][axis];
  bool largest = topK.largest(), fl = isFloat(t);
  if (topK.k().isStatic() && topK.k().size == 0)
    return loop::seq({}); // empty results
  Exprs rowShape = c.inDims[0];
  rowShape.erase(rowShape.begin() + static_cast<std::ptrdiff_t>(axis));
  DType it = c.outTypes[1];
  return loopNest(c, rowShape, LoopRole::Parallel, [&](const Exprs &row) {
    loop::Buffer bestV = localArray(c, "bestv", t), bestI = localArray(c, "besti", DType::I64);
    loop::Buffer prevV = localArray(c, "prevv", t), prevI = localArray(c, "previ", DType::I64);
    Expr bv = loop::load(bestV, {imm(0)}), bi = loop::load(bestI, {imm(0)});
    Expr pv = loop::load(prevV, {imm(0)}), pi = loop::load(prevI, {imm(0)});
    Expr first = loop::load(c.ins[0], withAxis(row, axis, imm(0)));
    loop::Var j = c.newVar("j"), n = c.newVar("n");
    Expr x = loop::load(c.ins[0], withAxis(row, axis, loop::var(n))), xi = loop::var(n);
    // A negative index marks "none yet": no previous pick, no best candidate.
    Expr after = loop::select(bin(ExprKind::LT, pi, imm(0)), loop::boolImm(true),
                              comesFirst(pv, pi, x, xi, largest, fl));
    Expr better = loop::select(bin(ExprKind::LT, bi, imm(0)), loop::boolImm(true),
                               comesFirst(x, xi, bv, bi, largest, fl));
    Stmt scan = c.loopOver(n, size, LoopRole::Reduction,
                           loop::ifThenElse(bin(ExprKind::And, after, better),
                                            loop::seq({loop::store(bestV, {imm(0)}, x),
                                                       loop::store(bestI, {imm(0)}, xi)})));
    Expr jv = loop::var(j);
    Stmt pass = loop::seq(
        {loop::store(bestV, {imm(0)}, first), loop::store(bestI, {imm(0)}, imm(-1)), scan,
         loop::store(c.outs[0], withAxis(row, axis, jv), bv),
         loop::store(c.outs[1], withAxis(row, axis, jv), it == DType::I64 ? bi : loop::cast(it, bi)),
         loop::store(prevV, {imm(0)}, bv), loop::store(prevI, {imm(0)}, bi)});
    Stmt body =
        loop::seq({loop::store(prevV, {imm(0)}, first), loop::store(prevI, {imm(0)}, imm(-1)),
                   c.loopOver(j, k, LoopRole::Reduction, pass)});
    return loop::allocate(bestV, loop::allocate(bestI, loop::allocate(prevV, loop::allocate(prevI, body))));
  });
}

} // namespace strata::lower
