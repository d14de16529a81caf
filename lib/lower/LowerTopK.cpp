// topk (lib/interp/TopK.cpp semantics): entries are totally ordered by "comes first" (larger
// first when `largest`, NaN beyond every number, ties to the lower index). A small static k runs
// k selection passes per row, pass j picking the first entry that comes after pass j-1's pick
// (O(k * n), no buffer); a larger or run-time k keeps a heap of the best k so far (O(n log k))
// and merge-sorts them. The results are always sorted, as in the interpreter.
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
  // A k of more than a few entries: a heap of the k entries that come first so far, its root
  // the one that comes last, which each further entry replaces when it comes before it
  // (O(n log k): a detector's 1000 best of millions of scores); then the k sorted.
  const bool heapRows = !topK.k().isStatic() || topK.k().size > kSelectionPassesUpTo;
  if (heapRows)
    return loopNest(c, rowShape, LoopRole::Parallel, [&](const Exprs &row) {
      const int64_t bound = in[axis] >= 0 ? in[axis] : std::numeric_limits<int64_t>::max();
      const int64_t kBound = topK.k().isStatic() ? topK.k().size : bound;
      const DType kt = bound <= std::numeric_limits<int32_t>::max() ? DType::I32 : DType::I64;
      // One slot more than k: a run-time k of 0 still has a root to compare with (loop IR takes
      // sizes as >= 1, so a guard `k > 0` would be simplified away); none of it is output.
      loop::Buffer heap = loop::makeBuffer(c.newName("order"), kt, {imm(2), k + imm(1)}, {},
                                           loop::MemoryScope::Local);
      Acc parity = makeAcc(c, "parity", DType::I64), levels = makeAcc(c, "levels", DType::I64);
      Acc pos = makeAcc(c, "pos", DType::I64), done = makeAcc(c, "done", DType::I64);
      Acc worst = makeAcc(c, "worst", DType::I64), held = makeAcc(c, "held", DType::I64);
      auto value = [&](const Expr &idx) { return loop::load(c.ins[0], withAxis(row, axis, idx)); };
      auto wide = [&](const Expr &e) { return kt == DType::I64 ? e : loop::cast(DType::I64, e); };
      auto narrow = [&](const Expr &e) { return kt == DType::I64 ? e : loop::cast(kt, e); };
      auto entry = [&](const Expr &at) { return wide(loop::load(heap, {imm(0), at})); };
      auto setEntry = [&](const Expr &at, const Expr &v) {
        return loop::store(heap, {imm(0), at}, narrow(v));
      };
      // Whether index a's entry comes after index b's.
      auto after = [&](const Expr &a, const Expr &b) {
        return comesFirst(value(b), b, value(a), a, largest, fl);
      };
      // Moves the entry at `start` down until both children come before it.
      auto siftDown = [&](const Expr &start) {
        loop::Var lv = c.newVar("level");
        Expr p = pos.get(), l = p * imm(2) + imm(1), r = l + imm(1);
        Expr rightWorse = bin(ExprKind::And, bin(ExprKind::LT, r, k),
                              after(entry(bin(ExprKind::Min, r, k - imm(1))), entry(l)));
        Stmt step = loop::ifThenElse(
            bin(ExprKind::GE, l, k), done.set(imm(1)),
            loop::seq({worst.set(loop::select(rightWorse, r, l)),
                       loop::ifThenElse(
                           after(entry(worst.get()), entry(p)),
                           loop::seq({held.set(entry(p)), setEntry(p, entry(worst.get())),
                                      setEntry(worst.get(), held.get()), pos.set(worst.get())}),
                           done.set(imm(1)))}));
        return loop::seq({pos.set(start), done.set(imm(0)),
                          c.loopOver(lv, levels.get(), LoopRole::Reduction,
                                     loop::ifThenElse(bin(ExprKind::EQ, done.get(), imm(0)), step))});
      };
      loop::Var i = c.newVar("i"), h = c.newVar("h"), j = c.newVar("j"), o = c.newVar("o"),
                bit = c.newVar("bit");
      // The heap's levels: floor(log2(k)) + 1.
      Stmt countLevels = loop::seq(
          {levels.set(imm(0)),
           c.loopOver(bit, imm(63), LoopRole::Reduction,
                      loop::ifThenElse(bin(ExprKind::GT, bin(ExprKind::Shr, k, loop::var(bit)), imm(0)),
                                       levels.set(loop::var(bit) + imm(1))))});
      Stmt fill = c.loopOver(i, k, LoopRole::Reduction, setEntry(loop::var(i), loop::var(i)));
      Stmt heapify = c.loopOver(
          h, bin(ExprKind::FloorDiv, k, imm(2)), LoopRole::Reduction,
          siftDown(bin(ExprKind::FloorDiv, k, imm(2)) - imm(1) - loop::var(h)));
      Expr next = k + loop::var(j);
      Stmt scan = c.loopOver(j, size - k, LoopRole::Reduction,
                             loop::ifThenElse(after(entry(imm(0)), next),
                                              loop::seq({setEntry(imm(0), next), siftDown(imm(0))})));
      Stmt sort = mergeSortIndices(c, heap, k, mergePasses(kBound), parity,
                                   [&](const Expr &a, const Expr &b) {
                                     return comesFirst(value(a), a, value(b), b, largest, fl);
                                   });
      Expr picked = wide(loop::load(heap, {parity.get(), loop::var(o)}));
      Stmt take = c.loopOver(
          o, k, LoopRole::Reduction,
          loop::seq({loop::store(c.outs[0], withAxis(row, axis, loop::var(o)), value(picked)),
                     loop::store(c.outs[1], withAxis(row, axis, loop::var(o)),
                                 it == DType::I64 ? picked : loop::cast(it, picked))}));
      Stmt body = loop::seq({countLevels, fill, heapify, scan, sort, take});
      for (const loop::Buffer &b : {heap, parity.buf, levels.buf, pos.buf, done.buf, worst.buf,
                                    held.buf})
        body = loop::allocate(b, body);
      return body;
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
