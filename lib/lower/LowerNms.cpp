// nms_count and nms (ONNX NonMaxSuppression; the interpreter's lib/interp/Nms.cpp): per batch
// and class, a flag per box (dropped: below the score threshold, taken, or suppressed), then up
// to min(max_output, N) rounds, each a scan for the highest-scoring box still in (the lower
// index on ties) and a pass dropping the boxes it overlaps above the IoU threshold
// (graph/NmsMath.h's test, in the same f32 operations). nms_count counts the picks; nms writes
// them in order, at most the count its result dim holds. All serial: the order is the result.
#include "LowerImpl.h"

#include <algorithm>
#include <functional>

namespace strata::lower {

namespace {

using loop::ExprKind;

// The boxes' f32 coordinates: span (min, max) of axis `x` (true) or y of box `i` in batch `b`.
std::pair<Expr, Expr> span(const LowerCtx &c, const Expr &b, const Expr &i, bool x, bool centered) {
  auto coord = [&](int64_t k) { return loop::load(c.ins[0], {b, i, imm(k)}); };
  if (centered) { // [xc, yc, w, h]
    Expr mid = coord(x ? 0 : 1),
         half = bin(ExprKind::Div, coord(x ? 2 : 3), loop::floatImm(2, DType::F32));
    return {mid - half, mid + half};
  }
  Expr p = coord(x ? 1 : 0), q = coord(x ? 3 : 2); // [y1, x1, y2, x2]
  return {bin(ExprKind::Min, p, q), bin(ExprKind::Max, p, q)};
}

// Whether box j overlaps box i by an IoU above the threshold (NmsMath.h's suppresses).
Expr suppresses(const LowerCtx &c, const Expr &b, const Expr &i, const Expr &j, bool centered,
                double threshold) {
  auto [ax0, ax1] = span(c, b, i, true, centered);
  auto [ay0, ay1] = span(c, b, i, false, centered);
  auto [bx0, bx1] = span(c, b, j, true, centered);
  auto [by0, by1] = span(c, b, j, false, centered);
  Expr ix0 = bin(ExprKind::Max, ax0, bx0), ix1 = bin(ExprKind::Min, ax1, bx1);
  Expr iy0 = bin(ExprKind::Max, ay0, by0), iy1 = bin(ExprKind::Min, ay1, by1);
  Expr inter = (ix1 - ix0) * (iy1 - iy0);
  Expr areaA = (ax1 - ax0) * (ay1 - ay0), areaB = (bx1 - bx0) * (by1 - by0);
  Expr uni = areaA + areaB - inter;
  Expr zero = loop::floatImm(0, DType::F32);
  auto all = [](std::initializer_list<Expr> conds) {
    Expr r;
    for (const Expr &e : conds)
      r = r ? bin(ExprKind::And, r, e) : e;
    return r;
  };
  // A box with no overlap divides nothing: the quotient is only taken when every test holds
  // (a select keeps a zero union from dividing).
  Expr ok = all({bin(ExprKind::GT, ix1, ix0), bin(ExprKind::GT, iy1, iy0),
                 bin(ExprKind::GT, inter, zero), bin(ExprKind::GT, areaA, zero),
                 bin(ExprKind::GT, areaB, zero), bin(ExprKind::GT, uni, zero)});
  Expr ratio = bin(ExprKind::Div, inter, loop::select(ok, uni, loop::floatImm(1, DType::F32)));
  return bin(ExprKind::And, ok, bin(ExprKind::GT, ratio, loop::floatImm(threshold, DType::F32)));
}

// The selection of an nms/nms_count op (its attribute view `View`): `pick(batch, class, box)`
// records each selected box, counted in `total` (a local the caller allocates and zeroes).
template <typename View>
Stmt lowerSelection(LowerCtx &c,
                    const std::function<Stmt(const Expr &, const Expr &, const Expr &)> &pick,
                    const Acc &total) {
  const View attrs(c.op);
  const Shape &scores = c.inShapes[1];
  if (c.inTypes[0] != DType::F32 || c.inTypes[1] != DType::F32 || scores.size() != 3)
    throw LowerError(std::string(c.op.opName()) + ": expected f32 boxes and scores");
  // Batches, classes and boxes may be run-time extents (a detector's candidates: a sum of
  // data-dependent selections); the plan checks a run-time box count is at most kMaxNmsBoxes.
  const Expr batches = c.inDims[1][0], classes = c.inDims[1][1], n = c.inDims[1][2];
  if (scores[2] > kMaxNmsBoxes)
    notLowered(c.op, "more than 2^20 boxes per class");
  const bool centered = attrs.center_point_box() == 1;
  const Expr rounds = scores[2] >= 0 ? imm(std::min(attrs.max_output(), scores[2]))
                                     : bin(ExprKind::Min, imm(attrs.max_output()), n);
  loop::Var b = c.newVar("b"), cl = c.newVar("c"), r = c.newVar("r"), i = c.newVar("i"),
            j = c.newVar("j"), i0 = c.newVar("i");
  // One flag per box: on the stack when few, else allocated for the kernel's run.
  loop::Buffer dropped = loop::makeBuffer(
      c.newName("dropped"), DType::I8,
      {scores[2] >= 0 ? imm(std::max<int64_t>(scores[2], 1)) : n}, {}, loop::MemoryScope::Local);
  Acc best = makeAcc(c, "best", DType::I64), bestScore = makeAcc(c, "score", DType::F32);
  Acc live = makeAcc(c, "live", DType::I8);
  auto score = [&](const Expr &box) {
    return loop::load(c.ins[1], {loop::var(b), loop::var(cl), box});
  };
  auto isDropped = [&](const Expr &box) {
    return bin(ExprKind::NE, loop::load(dropped, {box}), loop::intImm(0, DType::I8));
  };
  auto drop = [&](const Expr &box) {
    return loop::store(dropped, {box}, loop::intImm(1, DType::I8));
  };
  Expr below =
      attrs.has_score_threshold()
          ? loop::cast(DType::I8,
                       loop::logicalNot(bin(ExprKind::GT, score(loop::var(i0)),
                                            loop::floatImm(attrs.score_threshold(), DType::F32))))
          : loop::intImm(0, DType::I8);
  Stmt init = c.loopOver(i0, n, LoopRole::Reduction, loop::store(dropped, {loop::var(i0)}, below));
  Expr bi = best.get();
  Stmt scan = c.loopOver(
      i, n, LoopRole::Reduction,
      loop::ifThenElse(bin(ExprKind::And, loop::logicalNot(isDropped(loop::var(i))),
                           bin(ExprKind::Or, bin(ExprKind::LT, bi, imm(0)),
                               bin(ExprKind::GT, score(loop::var(i)), bestScore.get()))),
                       loop::seq({best.set(loop::var(i)), bestScore.set(score(loop::var(i)))})));
  Stmt suppress =
      c.loopOver(j, n, LoopRole::Reduction,
                 loop::ifThenElse(bin(ExprKind::And, loop::logicalNot(isDropped(loop::var(j))),
                                      suppresses(c, loop::var(b), bi, loop::var(j), centered,
                                                 attrs.iou_threshold())),
                                  drop(loop::var(j))));
  Stmt round = loop::ifThenElse(
      bin(ExprKind::NE, live.get(), loop::intImm(0, DType::I8)),
      loop::seq(
          {best.set(imm(-1)), bestScore.set(loop::floatImm(0, DType::F32)), scan,
           loop::ifThenElse(bin(ExprKind::LT, bi, imm(0)), live.set(loop::intImm(0, DType::I8)),
                            loop::seq({pick(loop::var(b), loop::var(cl), bi),
                                       total.set(total.get() + imm(1)), drop(bi), suppress}))}));
  Stmt perClass = loop::seq({init, live.set(loop::intImm(1, DType::I8)),
                             c.loopOver(r, rounds, LoopRole::Reduction, round)});
  Stmt nest = c.loopOver(b, batches, LoopRole::Reduction,
                         c.loopOver(cl, classes, LoopRole::Reduction, perClass));
  c.nest(b, {std::string(c.op.opName()), -1, true});
  return loop::allocate(
      dropped,
      loop::allocate(best.buf, loop::allocate(bestScore.buf, loop::allocate(live.buf, nest))));
}

} // namespace

Stmt lowerNmsCount(LowerCtx &c) {
  Acc total = makeAcc(c, "total", DType::I64);
  Stmt body = lowerSelection<ops::NmsCountOp>(
      c, [](const Expr &, const Expr &, const Expr &) { return loop::seq({}); }, total);
  return loop::allocate(
      total.buf, loop::seq({total.set(imm(0)), body, loop::store(c.outs[0], {}, total.get())}));
}

Stmt lowerNms(LowerCtx &c) {
  Acc total = makeAcc(c, "total", DType::I64);
  const Expr count = c.outDims[0][0]; // bound from the count operand before this kernel
  Stmt body = lowerSelection<ops::NmsOp>(
      c,
      [&](const Expr &b, const Expr &cl, const Expr &best) {
        Expr k = total.get();
        return loop::ifThenElse(bin(ExprKind::LT, k, count),
                                loop::seq({loop::store(c.outs[0], {k, imm(0)}, b),
                                           loop::store(c.outs[0], {k, imm(1)}, cl),
                                           loop::store(c.outs[0], {k, imm(2)}, best)}));
      },
      total);
  Stmt verify =
      requireCount(c, total.get(), count, "the count operand minus the boxes selected (must be 0)");
  return loop::allocate(total.buf, loop::seq({total.set(imm(0)), body, verify}));
}

} // namespace strata::lower
