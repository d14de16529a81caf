// unique_count and unique (ONNX Unique; the interpreter's lib/interp/Unique.cpp): items are the
// elements, or the slices along the axis, compared as row-major sequences with == and <.
// Quadratic in the number of items and serial, the interpreter's order: each item's first
// occurrence (the earliest distinct item equal to it), then each distinct item's position in
// the result (the distinct items before it, or below it when sorted), then the results.
#include "LowerImpl.h"

#include <algorithm>
#include <functional>

namespace strata::lower {

namespace {

using loop::ExprKind;

struct UniqueItems {
  LowerCtx &c;
  int64_t n = 0, pre = 1, post = 1;
  loop::Buffer first{}, position{}; // per item: its first occurrence; per distinct item: its place

  // The row-major index of element e of item i among `count` items of this shape (x: n items;
  // y: u of them).
  Expr flat(const Expr &e, const Expr &count, const Expr &i) const {
    return (bin(ExprKind::FloorDiv, e, imm(post)) * count + i) * imm(post) +
           bin(ExprKind::FloorMod, e, imm(post));
  }
  Expr element(const Expr &i, const Expr &e) const {
    return loop::load(c.ins[0], delinearize(flat(e, imm(n), i), extentsOf(c.inShapes[0])));
  }
  // A serial loop over an item's elements, `flag` (a local i64) set to `init` first and
  // updated by `step` on each.
  Stmt overElements(const Acc &flag, int64_t init,
                    const std::function<Stmt(const Expr &)> &step) const {
    loop::Var e = c.newVar("e");
    return loop::seq(
        {flag.set(imm(init)), c.loopOver(e, pre * post, LoopRole::Reduction, step(loop::var(e)))});
  }
  // flag = 1 when items i and j are equal.
  Stmt equal(const Acc &flag, const Expr &i, const Expr &j) const {
    return overElements(flag, 1, [&](const Expr &e) {
      return loop::ifThenElse(bin(ExprKind::NE, element(i, e), element(j, e)), flag.set(imm(0)));
    });
  }
  // flag = 1 when item i is below item j (their first differing element decides; `seen`
  // records that one was found).
  Stmt less(const Acc &flag, const Acc &seen, const Expr &i, const Expr &j) const {
    return loop::seq(
        {seen.set(imm(0)), overElements(flag, 0, [&](const Expr &e) {
           Expr a = element(i, e), b = element(j, e);
           return loop::ifThenElse(
               bin(ExprKind::And, bin(ExprKind::EQ, seen.get(), imm(0)), bin(ExprKind::NE, a, b)),
               loop::seq({seen.set(imm(1)),
                          flag.set(loop::select(bin(ExprKind::LT, a, b), imm(1), imm(0)))}));
         })});
  }
  Expr isDistinct(const Expr &i) const { return bin(ExprKind::EQ, loop::load(first, {i}), i); }
};

UniqueItems itemsOf(LowerCtx &c, int64_t axis, bool hasAxis) {
  UniqueItems items{c};
  const Shape &x = c.inShapes[0];
  for (int64_t d : x)
    if (d < 0)
      notLowered(c.op, "run-time dims");
  if (c.inTypes[0] == DType::Bool || c.inTypes[0] == DType::F16 || c.inTypes[0] == DType::BF16)
    notLowered(c.op, std::string(dtypeName(c.inTypes[0])) + " items");
  if (!hasAxis) {
    items.n = numElements(x);
    items.post = 1;
  } else {
    if (axis < 0 || axis >= static_cast<int64_t>(x.size()))
      throw LowerError("unique: axis out of range");
    for (int64_t d = 0; d < static_cast<int64_t>(x.size()); ++d)
      (d < axis ? items.pre : items.post) *= d == axis ? 1 : x[static_cast<size_t>(d)];
    items.n = x[static_cast<size_t>(axis)];
  }
  if (items.n > (int64_t(1) << 16))
    notLowered(c.op, "more than 2^16 items (quadratic)");
  items.first = localArray(c, "first", DType::I64, std::max<int64_t>(items.n, 1));
  items.position = localArray(c, "position", DType::I64, std::max<int64_t>(items.n, 1));
  return items;
}

// first[i]: the earliest distinct item equal to item i (i itself when none is).
Stmt firstOccurrences(UniqueItems &items, const Acc &flag) {
  LowerCtx &c = items.c;
  loop::Var i = c.newVar("i"), j = c.newVar("j");
  Expr iv = loop::var(i), jv = loop::var(j);
  Stmt probe = loop::ifThenElse(
      bin(ExprKind::And, bin(ExprKind::EQ, loop::load(items.first, {iv}), iv),
          items.isDistinct(jv)),
      loop::seq({items.equal(flag, jv, iv), loop::ifThenElse(bin(ExprKind::NE, flag.get(), imm(0)),
                                                             loop::store(items.first, {iv}, jv))}));
  Stmt body = loop::seq(
      {loop::store(items.first, {iv}, iv), c.loopOver(j, iv, LoopRole::Reduction, probe)});
  Stmt nest = c.loopOver(i, items.n, LoopRole::Reduction, body);
  c.nest(i, {std::string(c.op.opName()), -1, true});
  return nest;
}

Stmt withLocals(const UniqueItems &items, std::vector<Acc> accs, Stmt body) {
  for (const Acc &a : accs)
    body = loop::allocate(a.buf, body);
  return loop::allocate(items.first, loop::allocate(items.position, body));
}

} // namespace

Stmt lowerUniqueCount(LowerCtx &c) {
  const ops::UniqueCountOp attrs(c.op);
  UniqueItems items = itemsOf(c, attrs.axis(), attrs.has_axis());
  Acc flag = makeAcc(c, "flag", DType::I64), total = makeAcc(c, "total", DType::I64);
  loop::Var i = c.newVar("i");
  Stmt count =
      c.loopOver(i, items.n, LoopRole::Reduction,
                 loop::ifThenElse(items.isDistinct(loop::var(i)), total.set(total.get() + imm(1))));
  return withLocals(items, {flag, total},
                    loop::seq({firstOccurrences(items, flag), total.set(imm(0)), count,
                               loop::store(c.outs[0], {}, total.get())}));
}

Stmt lowerUnique(LowerCtx &c) {
  const ops::UniqueOp attrs(c.op);
  UniqueItems items = itemsOf(c, attrs.axis(), attrs.has_axis());
  const Expr u = c.outDims[1][0]; // the distinct items, bound from the count operand
  Acc flag = makeAcc(c, "flag", DType::I64), seen = makeAcc(c, "seen", DType::I64);
  Acc rank = makeAcc(c, "rank", DType::I64), total = makeAcc(c, "total", DType::I64);
  Acc occurrences = makeAcc(c, "occurrences", DType::I64);
  loop::Var i = c.newVar("i"), j = c.newVar("j"), e = c.newVar("e"), k = c.newVar("k");
  Expr iv = loop::var(i), jv = loop::var(j);
  // position[i] for a distinct item i: the distinct items before it in the result.
  Stmt before = attrs.sorted()
                    ? loop::seq({items.less(flag, seen, jv, iv), rank.set(rank.get() + flag.get())})
                    : loop::ifThenElse(bin(ExprKind::LT, jv, iv), rank.set(rank.get() + imm(1)));
  Stmt place = loop::ifThenElse(
      items.isDistinct(iv),
      loop::seq({rank.set(imm(0)),
                 c.loopOver(j, items.n, LoopRole::Reduction,
                            loop::ifThenElse(items.isDistinct(jv), before)),
                 loop::store(items.position, {iv}, rank.get()), total.set(total.get() + imm(1))}));
  Stmt positions = c.loopOver(i, items.n, LoopRole::Reduction, place);
  // The results: each distinct item's slice, first index and count at its position (never past
  // u), then every item's position.
  const bool hasAxis = attrs.has_axis();
  Exprs yDims = c.outDims[0];
  loop::Var i2 = c.newVar("i"), j2 = c.newVar("j");
  Expr i2v = loop::var(i2), r = loop::load(items.position, {i2v});
  Expr flatY = items.flat(loop::var(e), u, r);
  Stmt copy = c.loopOver(e, items.pre * items.post, LoopRole::Reduction,
                         loop::store(c.outs[0], hasAxis ? delinearize(flatY, yDims) : Exprs{r},
                                     items.element(i2v, loop::var(e))));
  Stmt count = loop::seq(
      {occurrences.set(imm(0)),
       c.loopOver(j2, items.n, LoopRole::Reduction,
                  loop::ifThenElse(bin(ExprKind::EQ, loop::load(items.first, {loop::var(j2)}), i2v),
                                   occurrences.set(occurrences.get() + imm(1))))});
  Stmt write = c.loopOver(
      i2, items.n, LoopRole::Reduction,
      loop::ifThenElse(bin(ExprKind::And, items.isDistinct(i2v), bin(ExprKind::LT, r, u)),
                       loop::seq({copy, loop::store(c.outs[1], {r}, i2v), count,
                                  loop::store(c.outs[3], {r}, occurrences.get())})));
  Stmt inverse = c.loopOver(
      k, items.n, LoopRole::Reduction,
      loop::store(c.outs[2], {loop::var(k)},
                  loop::load(items.position, {loop::load(items.first, {loop::var(k)})})));
  Stmt verify = requireCount(c, total.get(), u,
                             "the count operand minus the distinct items found (must be 0)");
  return withLocals(items, {flag, seen, rank, total, occurrences},
                    loop::seq({firstOccurrences(items, flag), total.set(imm(0)), positions, verify,
                               write, inverse}));
}

} // namespace strata::lower
