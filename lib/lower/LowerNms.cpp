// nms_count and nms (ONNX NonMaxSuppression; the interpreter's lib/interp/Nms.cpp): per batch
// and class, the boxes above the score threshold merge-sorted by score (highest first, NaN
// first, the lower index on ties), then each kept unless a box kept before it overlaps it by an
// IoU above the threshold (graph/NmsMath.h's test, in the same f32 operations), until
// min(max_output, N) are kept: O(N log N + N * kept). nms_count counts the picks; nms writes them
// in order, at most the count its result dim holds. All serial: the order is the result.
#include "LowerImpl.h"

#include <algorithm>
#include <array>
#include <functional>

namespace strata::lower {

namespace {

using loop::ExprKind;

// A box's extent as NmsMath.h computes it: x0, x1, y0, y1 (min and max along each axis) and its
// area, all f32.
using Extent = std::array<Expr, 5>;
enum { X0, X1, Y0, Y1, Area };

// Box `i` of batch `b`'s extent from its coordinates: [y1, x1, y2, x2] or centered
// [xc, yc, w, h].
Extent extentOf(const LowerCtx &c, const Expr &b, const Expr &i, bool centered) {
  auto coord = [&](int64_t k) { return loop::load(c.ins[0], {b, i, imm(k)}); };
  auto span = [&](bool x) -> std::pair<Expr, Expr> {
    if (centered) {
      Expr mid = coord(x ? 0 : 1),
           half = bin(ExprKind::Div, coord(x ? 2 : 3), loop::floatImm(2, DType::F32));
      return {mid - half, mid + half};
    }
    Expr p = coord(x ? 1 : 0), q = coord(x ? 3 : 2);
    return {stdMin(p, q), stdMax(p, q)};
  };
  auto [x0, x1] = span(true);
  auto [y0, y1] = span(false);
  return {x0, x1, y0, y1, (x1 - x0) * (y1 - y0)};
}

// Whether box a (a kept one) and box b overlap by an IoU above the threshold: NmsMath.h's
// suppresses in the same f32 operations, branch-free, on scalars or on vectors of `lanes` kept
// boxes (b's extent broadcast).
Expr overlaps(const Extent &a, const Extent &b, const Expr &threshold, int lanes) {
  auto k = [&](double v) {
    Expr f = loop::floatImm(v, DType::F32);
    return lanes > 1 ? loop::broadcast(f, lanes) : f;
  };
  const Expr limit = lanes > 1 ? loop::broadcast(threshold, lanes) : threshold;
  Expr ix0 = stdMax(a[X0], b[X0]), ix1 = stdMin(a[X1], b[X1]);
  Expr iy0 = stdMax(a[Y0], b[Y0]), iy1 = stdMin(a[Y1], b[Y1]);
  Expr inter = (ix1 - ix0) * (iy1 - iy0);
  Expr uni = a[Area] + b[Area] - inter;
  auto all = [](std::initializer_list<Expr> conds) {
    Expr r;
    for (const Expr &e : conds)
      r = r ? bin(ExprKind::And, r, e) : e;
    return r;
  };
  // The quotient only counts where every test holds: a zero union's (an IEEE inf or NaN, no
  // trap) never does.
  return all({bin(ExprKind::GT, ix1, ix0), bin(ExprKind::GT, iy1, iy0),
              bin(ExprKind::GT, inter, k(0)), bin(ExprKind::GT, a[Area], k(0)),
              bin(ExprKind::GT, b[Area], k(0)), bin(ExprKind::GT, uni, k(0)),
              bin(ExprKind::GT, bin(ExprKind::Div, inter, uni), limit)});
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
  // Limits read from data (the operand after boxes, scores and nms's count) are loaded when the
  // kernel runs; a max_output that is NaN or negative keeps none, as the interpreter.
  const size_t limitsAt = c.op.kind() == OpKind::NmsCount ? 2 : 3;
  const bool dataLimits = c.ins.size() > limitsAt;
  auto limit = [&](int64_t k) { return loop::load(c.ins[limitsAt], {imm(k)}); };
  const Expr iou = dataLimits ? loop::cast(DType::F32, limit(1))
                              : loop::floatImm(attrs.iou_threshold(), DType::F32);
  const Expr scoreFloor = dataLimits ? loop::cast(DType::F32, limit(2))
                                     : loop::floatImm(attrs.score_threshold(), DType::F32);
  Expr rounds;
  if (dataLimits) {
    const Expr m = limit(0), zero = loop::floatImm(0, DType::F64);
    const Expr capped = loop::select(bin(ExprKind::GT, m, zero),
                                     stdMin(m, loop::floatImm(1099511627776.0, DType::F64)), zero);
    rounds = bin(ExprKind::Min, loop::cast(DType::I64, capped), n);
  } else {
    rounds = scores[2] >= 0 ? imm(std::min(attrs.max_output(), scores[2]))
                            : bin(ExprKind::Min, imm(attrs.max_output()), n);
  }
  const int64_t boundN = scores[2] >= 0 ? scores[2] : kMaxNmsBoxes;
  const int lanes = static_cast<int>(std::max<int64_t>(c.opts.vectorLanesF32, 4));
  loop::Var b = c.newVar("b"), cl = c.newVar("c"), i = c.newVar("i"), t = c.newVar("t"),
            v = c.newVar("v"), s = c.newVar("s");
  // The candidates' indices (two rows for the merge sort) and the extents of the boxes kept so
  // far, one row per coordinate (whole vectors of kept boxes load at once): on the stack when
  // few, else allocated for the kernel's run. Box indices are below 2^20: i32.
  loop::Buffer order = loop::makeBuffer(
      c.newName("order"), DType::I32,
      {imm(2), scores[2] >= 0 ? imm(std::max<int64_t>(scores[2], 1)) : n}, {},
      loop::MemoryScope::Local);
  loop::Buffer kept = loop::makeBuffer(
      c.newName("kept"), DType::F32,
      {imm(5), scores[2] >= 0 ? imm(std::max<int64_t>(rounds.asInt() ? *rounds.asInt() : scores[2], 1))
                              : n},
      {},
      loop::MemoryScope::Local);
  loop::Buffer cand = localArray(c, "candidate", DType::F32, 5);
  loop::Buffer hits = localArray(c, "hits", DType::I32, lanes);
  loop::Buffer staged = loop::makeBuffer(c.newName("lanes"), DType::F32, {imm(5), imm(lanes)}, {},
                                         loop::MemoryScope::Local);
  Acc candidates = makeAcc(c, "candidates", DType::I64), taken = makeAcc(c, "taken", DType::I64);
  Acc parity = makeAcc(c, "parity", DType::I64);
  auto score = [&](const Expr &box) {
    return loop::load(c.ins[1], {loop::var(b), loop::var(cl), box});
  };
  // 1. The boxes above the score threshold, in index order.
  Stmt gather = loop::seq(
      {loop::store(order, {imm(0), candidates.get()}, loop::cast(DType::I32, loop::var(i))),
       candidates.set(candidates.get() + imm(1))});
  if (attrs.has_score_threshold())
    gather = loop::ifThenElse(bin(ExprKind::GT, score(loop::var(i)), scoreFloor), gather);
  // 2. Sorted by score, highest first (NaN first, ties to the lower index: topk's order).
  Stmt sort = mergeSortIndices(c, order, candidates.get(), mergePasses(boundN), parity,
                               [&](const Expr &x, const Expr &y) {
                                 return comesFirst(score(x), x, score(y), y, true, true);
                               });
  // 3. Greedy: a candidate is kept unless a box kept before it overlaps it -- the same picks as
  // taking the best remaining box and dropping what it overlaps, round after round. The test
  // against the kept boxes runs a vector of them at a time, OR-ing per-lane hits.
  Expr candidate = loop::cast(DType::I64, loop::load(order, {parity.get(), loop::var(t)}));
  Extent fresh = extentOf(c, loop::var(b), candidate, centered);
  std::vector<Stmt> setCandidate;
  for (int64_t e = 0; e < 5; ++e)
    setCandidate.push_back(loop::store(cand, {imm(e)}, fresh[static_cast<size_t>(e)]));
  auto candidateExtent = [&](int n) {
    Extent r;
    for (int64_t e = 0; e < 5; ++e) {
      Expr x = loop::load(cand, {imm(e)});
      r[static_cast<size_t>(e)] = n > 1 ? loop::broadcast(x, n) : x;
    }
    return r;
  };
  auto keptExtent = [&](const Expr &at) {
    Extent r;
    for (int64_t e = 0; e < 5; ++e)
      r[static_cast<size_t>(e)] = loop::load(kept, {imm(e), at});
    return r;
  };
  auto laneIdx = [&](int64_t from, int n) {
    return n > 1 ? loop::ramp(imm(from), imm(1), n) : imm(from);
  };
  auto i32s = [&](int64_t x, int n) {
    Expr e = loop::intImm(x, DType::I32);
    return n > 1 ? loop::broadcast(e, n) : e;
  };
  std::vector<Stmt> test;
  test.push_back(loop::store(hits, {laneIdx(0, lanes)}, i32s(0, lanes)));
  Expr whole = bin(ExprKind::FloorDiv, taken.get(), imm(lanes));
  Expr hitsNow = loop::load(hits, {laneIdx(0, lanes)});
  // A vector of kept boxes is copied to a local of constant indices first: the test's selects
  // (std::min/max) then read it without the per-lane guard a select of loads at run-time
  // indices gets (which would scalarize the vector).
  std::vector<Stmt> vectorStep;
  Extent lanesExtent, keptLanes = keptExtent(loop::ramp(loop::var(v) * imm(lanes), imm(1), lanes));
  for (int64_t e = 0; e < 5; ++e) {
    vectorStep.push_back(loop::store(staged, {imm(e), laneIdx(0, lanes)},
                                     keptLanes[static_cast<size_t>(e)]));
    lanesExtent[static_cast<size_t>(e)] = loop::load(staged, {imm(e), laneIdx(0, lanes)});
  }
  vectorStep.push_back(loop::store(
      hits, {laneIdx(0, lanes)},
      bin(ExprKind::Max, hitsNow,
          loop::select(overlaps(lanesExtent, candidateExtent(lanes), iou, lanes), i32s(1, lanes),
                       i32s(0, lanes)))));
  test.push_back(c.loopOver(v, whole, LoopRole::Reduction, loop::seq(vectorStep)));
  for (int h = lanes / 2; h >= 1; h /= 2)
    test.push_back(loop::store(hits, {laneIdx(0, h)},
                               bin(ExprKind::Max, loop::load(hits, {laneIdx(0, h)}),
                                   loop::load(hits, {laneIdx(h, h)}))));
  c.role(s, LoopRole::Reduction);
  test.push_back(loop::forLoop(
      s, whole * imm(lanes), taken.get() - whole * imm(lanes), loop::ForKind::Serial,
      loop::ifThenElse(overlaps(keptExtent(loop::var(s)), candidateExtent(1), iou, 1),
                       loop::store(hits, {imm(0)}, i32s(1, 1)))));
  std::vector<Stmt> keep;
  for (int64_t e = 0; e < 5; ++e)
    keep.push_back(loop::store(kept, {imm(e), taken.get()}, loop::load(cand, {imm(e)})));
  keep.push_back(pick(loop::var(b), loop::var(cl), candidate));
  keep.push_back(total.set(total.get() + imm(1)));
  keep.push_back(taken.set(taken.get() + imm(1)));
  Stmt consider = loop::ifThenElse(
      bin(ExprKind::LT, taken.get(), rounds),
      loop::seq({loop::seq(setCandidate), loop::seq(test),
                 loop::ifThenElse(bin(ExprKind::EQ, loop::load(hits, {imm(0)}), i32s(0, 1)),
                                  loop::seq(keep))}));
  Stmt perClass = loop::seq(
      {candidates.set(imm(0)), c.loopOver(i, n, LoopRole::Reduction, gather), sort,
       taken.set(imm(0)), c.loopOver(t, candidates.get(), LoopRole::Reduction, consider)});
  Stmt nest = c.loopOver(b, batches, LoopRole::Reduction,
                         c.loopOver(cl, classes, LoopRole::Reduction, perClass));
  c.nest(b, {std::string(c.op.opName()), -1, true});
  Stmt body = nest;
  for (const loop::Buffer &buf :
       {order, kept, cand, hits, staged, candidates.buf, taken.buf, parity.buf})
    body = loop::allocate(buf, body);
  return body;
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
