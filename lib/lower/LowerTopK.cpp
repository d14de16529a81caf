// topk (lib/interp/TopK.cpp semantics): entries are totally ordered by "comes first" (larger
// first when `largest`, NaN beyond every number, ties to the lower index). A small static k runs
// k selection passes per row, pass j picking the first entry that comes after pass j-1's pick
// (O(k * n), no buffer); a larger or run-time k merge-sorts the row's indices (O(n log n), two
// rows of indices) and takes the first k. The results are always sorted, as in the interpreter.
#include "LowerImpl.h"

#include <limits>

namespace strata::lower {
namespace {

// A static k up to this many runs k selection passes over the row; a larger or run-time k sorts.
constexpr int64_t kSelectionPassesUpTo = 8;

using loop::ExprKind;

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
  // A k of more than a few entries: sort each row's indices (O(n log n)) and take the first k.
  const bool sortRows = !topK.k().isStatic() || topK.k().size > kSelectionPassesUpTo;
  if (sortRows)
    return loopNest(c, rowShape, LoopRole::Parallel, [&](const Exprs &row) {
      const int64_t bound = in[axis] >= 0 ? in[axis] : std::numeric_limits<int64_t>::max();
      const DType kt = bound <= std::numeric_limits<int32_t>::max() ? DType::I32 : DType::I64;
      loop::Buffer keys = loop::makeBuffer(c.newName("order"), kt, {imm(2), size}, {},
                                           loop::MemoryScope::Local);
      Acc parity = makeAcc(c, "parity", DType::I64);
      loop::Var i = c.newVar("i"), j = c.newVar("j");
      auto value = [&](const Expr &idx) { return loop::load(c.ins[0], withAxis(row, axis, idx)); };
      Stmt fill = c.loopOver(i, size, LoopRole::Reduction,
                             loop::store(keys, {imm(0), loop::var(i)},
                                         kt == DType::I64 ? loop::var(i) : loop::cast(kt, loop::var(i))));
      Stmt sort = mergeSortIndices(c, keys, size, mergePasses(bound), parity,
                                   [&](const Expr &a, const Expr &b) {
                                     return comesFirst(value(a), a, value(b), b, largest, fl);
                                   });
      Expr picked = loop::load(keys, {parity.get(), loop::var(j)});
      if (kt != DType::I64)
        picked = loop::cast(DType::I64, picked);
      Stmt take = c.loopOver(
          j, k, LoopRole::Reduction,
          loop::seq({loop::store(c.outs[0], withAxis(row, axis, loop::var(j)), value(picked)),
                     loop::store(c.outs[1], withAxis(row, axis, loop::var(j)),
                                 it == DType::I64 ? picked : loop::cast(it, picked))}));
      return loop::allocate(keys, loop::allocate(parity.buf, loop::seq({fill, sort, take})));
    });
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
