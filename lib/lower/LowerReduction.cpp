// Reductions (reduce sum/prod/max/min/mean) and row normalizations (softmax, log_softmax).
//
// Order and precision follow lib/interp/Reductions.cpp exactly, so results are bit-identical:
// each result element owns a one-element local accumulator; the reduced axes are visited in
// row-major order (the order the interpreter streams the input); floats accumulate in f64 and
// are rounded to the result dtype once at the end; integers wrap in their own dtype. The one
// exceptions, lowerReduceLanes (global pools of blocked tensors) and lowerReduceRows (rows along
// the last axis), sum rows in f32 vectors.
#include "LowerImpl.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::lower {
namespace {

using loop::ExprKind;

// Largest / smallest value of integer dtype t, as the loop IR holds it (unsigned zero-extended,
// u64 as its bit pattern).
int64_t intMax(DType t) {
  unsigned bits = static_cast<unsigned>(dtypeSize(t)) * 8;
  if (!isSigned(t))
    return bits == 64 ? -1 : static_cast<int64_t>((uint64_t(1) << bits) - 1);
  return bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1;
}
int64_t intMin(DType t) { return isSigned(t) ? -intMax(t) - 1 : 0; }

// Whether max/min `kind` replaces accumulator `a` by element `v`: v beyond a, or (floats) v NaN
// and a not: a NaN element wins, as in the interpreter.
Expr takesOver(ReduceKind kind, const Expr &v, const Expr &a, bool fl = true) {
  Expr take = bin(kind == ReduceKind::Max ? ExprKind::GT : ExprKind::LT, v, a);
  if (!fl)
    return take;
  return bin(ExprKind::Or, take,
             bin(ExprKind::And, bin(ExprKind::NE, v, v), bin(ExprKind::EQ, a, a)));
}

// Splits the dims of `shape` into kept (false) and reduced (true) ones.
Stmt reduceNest(LowerCtx &c, const Exprs &shape, const std::vector<bool> &reduced,
                const std::function<Stmt(const Exprs &kept, const std::function<Stmt(
                                             const std::function<Stmt(const Exprs &)> &)> &)> &body) {
  Exprs keptShape, redShape;
  for (size_t d = 0; d < shape.size(); ++d)
    (reduced[d] ? redShape : keptShape).push_back(shape[d]);
  return loopNest(c, keptShape, LoopRole::Parallel, [&](const Exprs &kept) {
    // Runs a loop over the reduced dims; the callback gets the full input index.
    auto overReduced = [&](const std::function<Stmt(const Exprs &)> &inner) {
      return loopNest(c, redShape, LoopRole::Reduction, [&](const Exprs &red) {
        Exprs full;
        size_t k = 0, r = 0;
        for (size_t d = 0; d < shape.size(); ++d)
          full.push_back(reduced[d] ? red[r++] : kept[k++]);
        return inner(full);
      });
    };
    return body(kept, overReduced);
  });
}

// A f32 sum, mean, max or min whose input's innermost dim is kept, static and whole vectors
// (a global pool of a blocked [N, C/c, H, W, c] tensor: the lanes are c channels): vectors of
// that dim accumulate together instead of one element at a time with a stride. Sums add each
// innermost reduced row in f32 and the row sums in f64 (so a 112 x 112 pool adds 112 values in
// f32, not 12544), where the scalar path adds every element in f64: results agree with the
// interpreter to rounding, not bit for bit. Max and min compare in f32, NaN propagating, as
// the scalar path does. nullopt when the shape does not fit.
std::optional<Stmt> lowerReduceLanes(LowerCtx &c, const std::vector<bool> &reduced,
                                     const Expr &groupSize, bool keep) {
  const Exprs &in = c.inDims[0];
  const ReduceKind kind = ops::ReduceOp(c.op).kind();
  const std::optional<int64_t> inner = in.empty() ? std::nullopt : in.back().asInt();
  if (c.inTypes[0] != DType::F32 || in.size() < 2 || reduced.back() || !inner || *inner % 8 ||
      (kind != ReduceKind::Sum && kind != ReduceKind::Mean && kind != ReduceKind::Max &&
       kind != ReduceKind::Min))
    return std::nullopt;
  size_t lastReduced = in.size();
  for (size_t d = 0; d < in.size(); ++d)
    if (reduced[d])
      lastReduced = d;
  if (lastReduced == in.size())
    return std::nullopt;
  const int64_t lanesWide = c.opts.vectorLanesF32;
  const int L = static_cast<int>(lanesWide > 8 && *inner % lanesWide == 0 ? lanesWide : 8);
  const bool sum = kind == ReduceKind::Sum || kind == ReduceKind::Mean;
  Exprs keptShape, outer; // kept dims, the innermost counted in vectors; reduced ones but the last
  for (size_t d = 0; d + 1 < in.size(); ++d)
    if (!reduced[d])
      keptShape.push_back(in[d]);
  keptShape.push_back(imm(*inner / L));
  for (size_t d = 0; d < in.size(); ++d)
    if (reduced[d] && d != lastReduced)
      outer.push_back(in[d]);
  const Expr lanes = loop::ramp(imm(0), imm(1), L);
  return loopNest(c, keptShape, LoopRole::Parallel, [&](const Exprs &kept) {
    loop::Buffer acc = localArray(c, "acc", sum ? DType::F64 : DType::F32, L);
    // Sums: the current row's f32 sum; max/min: the loaded vector (staged, see below).
    loop::Buffer row = localArray(c, sum ? "row" : "cur", DType::F32, L), cur = row;
    auto input = [&](const Exprs &red, const Expr &last) {
      Exprs full;
      size_t k = 0, r = 0;
      for (size_t d = 0; d + 1 < in.size(); ++d)
        full.push_back(d == lastReduced ? last : reduced[d] ? red[r++] : kept[k++]);
      full.push_back(loop::ramp(kept.back() * imm(L), imm(1), L));
      return loop::load(c.ins[0], full);
    };
    Stmt rows = loopNest(c, outer, LoopRole::Reduction, [&](const Exprs &red) {
      loop::Var i = c.newVar("r");
      if (sum) {
        Stmt add = loop::store(row, {lanes}, loop::load(row, {lanes}) + input(red, loop::var(i)));
        return loop::seq(
            {loop::store(row, {lanes}, loop::broadcast(loop::floatImm(0, DType::F32), L)),
             c.loopOver(i, in[lastReduced], LoopRole::Reduction, add),
             loop::store(acc, {lanes},
                         loop::load(acc, {lanes}) +
                             loop::cast(DType::F64, loop::load(row, {lanes})))});
      }
      // The loaded vector is staged in a local: a select whose arm is a load codegen cannot
      // prove in bounds is emitted lane by lane.
      Expr v = loop::load(cur, {lanes}), a = loop::load(acc, {lanes});
      Expr take = takesOver(kind, v, a);
      return c.loopOver(i, in[lastReduced], LoopRole::Reduction,
                        loop::seq({loop::store(cur, {lanes}, input(red, loop::var(i))),
                                   loop::store(acc, {lanes}, loop::select(take, v, a))}));
    });
    const double start = sum ? 0.0 : kind == ReduceKind::Max ? -INFINITY : INFINITY;
    Expr result = loop::load(acc, {lanes});
    if (kind == ReduceKind::Mean)
      result = bin(ExprKind::Div, result,
                   loop::broadcast(groupSize.asInt() ? loop::floatImm(
                                                           static_cast<double>(*groupSize.asInt()),
                                                           DType::F64)
                                                     : loop::cast(DType::F64, groupSize),
                                   L));
    if (sum)
      result = loop::cast(DType::F32, result);
    Exprs outIdx;
    size_t k = 0;
    for (size_t d = 0; d + 1 < in.size(); ++d) {
      if (!reduced[d])
        outIdx.push_back(kept[k++]);
      else if (keep)
        outIdx.push_back(imm(0));
    }
    outIdx.push_back(loop::ramp(kept.back() * imm(L), imm(1), L));
    Stmt body = loop::seq(
        {loop::store(acc, {lanes}, loop::broadcast(loop::floatImm(start, sum ? DType::F64 : DType::F32), L)),
         rows, loop::store(c.outs[0], outIdx, result)});
    return loop::allocate(acc, loop::allocate(sum ? row : cur, body));
  });
}

// A f32 sum, mean, max or min over trailing axes whose innermost dim is static and holds a
// vector or more (rows along the last axis; a global pool of a plain [N, C, H, W] tensor
// reduces rows of W): per result element, each innermost row accumulates in f32 vectors (one
// accumulator per lane, in blocks of kRowBlock vectors) plus a scalar tail; sums add each
// block's lanes into f64 lanes, folded by halving at the end, where the scalar path adds every
// element in f64: results agree with the interpreter to rounding, not bit for bit. Max and min
// compare in f32, NaN propagating (which of +0 and -0 wins may differ from the interpreter's).
// nullopt when the shape does not fit.
// Vectors of a row summed in f32 before they join the f64 lanes (lowerReduceRows).
constexpr int64_t kRowBlock = 64;

std::optional<Stmt> lowerReduceRows(LowerCtx &c, const std::vector<bool> &reduced,
                                    const Expr &groupSize, bool keep) {
  const Exprs &in = c.inDims[0];
  const ReduceKind kind = ops::ReduceOp(c.op).kind();
  const std::optional<int64_t> inner = in.empty() ? std::nullopt : in.back().asInt();
  if (c.inTypes[0] != DType::F32 || !inner || *inner < 8 || !reduced.back() ||
      (kind != ReduceKind::Sum && kind != ReduceKind::Mean && kind != ReduceKind::Max &&
       kind != ReduceKind::Min))
    return std::nullopt;
  size_t first = in.size() - 1; // the reduced axes must be the trailing ones
  while (first > 0 && reduced[first - 1])
    --first;
  for (size_t d = 0; d < first; ++d)
    if (reduced[d])
      return std::nullopt;
  const int64_t w = c.opts.vectorLanesF32;
  const int L = static_cast<int>(w > 8 && *inner >= w ? w : 8);
  const int64_t vectors = *inner / L, whole = vectors * L;
  const bool sum = kind == ReduceKind::Sum || kind == ReduceKind::Mean;
  const DType accType = sum ? DType::F64 : DType::F32;
  const Exprs kept(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(first));
  const Exprs outerReduced(in.begin() + static_cast<std::ptrdiff_t>(first), in.end() - 1);
  const Expr lanes = loop::ramp(imm(0), imm(1), L);
  auto f32 = [](double v) { return loop::floatImm(v, DType::F32); };
  const double start = sum ? 0.0 : kind == ReduceKind::Max ? -INFINITY : INFINITY;
  auto combine = [&](const Expr &a, const Expr &v) -> Expr {
    if (sum)
      return a + v;
    return loop::select(takesOver(kind, v, a), v, a);
  };
  return loopNest(c, kept, LoopRole::Parallel, [&](const Exprs &keptIdx) {
    loop::Buffer acc = localArray(c, "acc", accType, L), row = localArray(c, "row", DType::F32, L);
    Acc tail = makeAcc(c, "tail", accType), total = makeAcc(c, "total", accType);
    Stmt rows = loopNest(c, outerReduced, LoopRole::Reduction, [&](const Exprs &red) {
      auto at = [&](const Expr &last) {
        Exprs idx = keptIdx;
        idx.insert(idx.end(), red.begin(), red.end());
        idx.push_back(last);
        return idx;
      };
      loop::Var blk = c.newVar("b"), v = c.newVar("v"), t = c.newVar("t");
      // Blocks of kRowBlock vectors: each block's f32 lanes go into the f64 lanes, so a long row
      // neither loses precision nor overflows f32 where its f64 sum does not.
      const int64_t blocks = (vectors + kRowBlock - 1) / kRowBlock;
      Expr blockStart = loop::var(blk) * imm(kRowBlock);
      Expr count = bin(ExprKind::Min, imm(kRowBlock), imm(vectors) - blockStart);
      Expr x = loop::load(c.ins[0], at(loop::ramp((blockStart + loop::var(v)) * imm(L), imm(1), L)));
      Expr rowLanes = loop::load(row, {lanes});
      Stmt block = loop::seq(
          {loop::store(row, {lanes}, loop::broadcast(f32(start), L)),
           c.loopOver(v, vectors <= kRowBlock ? imm(vectors) : count, LoopRole::Reduction,
                      loop::store(row, {lanes}, combine(loop::load(row, {lanes}), x))),
           loop::store(acc, {lanes},
                       combine(loop::load(acc, {lanes}),
                               sum ? loop::cast(DType::F64, rowLanes) : rowLanes))});
      std::vector<Stmt> steps;
      steps.push_back(c.loopOver(blk, imm(blocks), LoopRole::Reduction, block));
      if (whole < *inner) {
        c.role(t, LoopRole::Reduction);
        Expr e = loop::load(c.ins[0], at(loop::var(t)));
        steps.push_back(loop::forLoop(t, imm(whole), imm(*inner - whole), loop::ForKind::Serial,
                                      tail.set(combine(tail.get(), sum ? loop::cast(DType::F64, e) : e))));
      }
      return loop::seq(steps);
    });
    Expr result = combine(total.get(), tail.get());
    if (kind == ReduceKind::Mean)
      result = bin(ExprKind::Div, result,
                   groupSize.asInt() ? loop::floatImm(static_cast<double>(*groupSize.asInt()), DType::F64)
                                     : loop::cast(DType::F64, groupSize));
    if (sum)
      result = loop::cast(DType::F32, result);
    Exprs outIdx = keptIdx;
    if (keep)
      for (size_t d = first; d < in.size(); ++d)
        outIdx.push_back(imm(0));
    Stmt body = loop::seq({loop::store(acc, {lanes}, loop::broadcast(loop::floatImm(start, accType), L)),
                           tail.set(loop::floatImm(start, accType)), rows,
                           foldLanes(c, acc, L, combine, total.buf),
                           loop::store(c.outs[0], outIdx, result)});
    return loop::allocate(acc, loop::allocate(row, loop::allocate(tail.buf, loop::allocate(total.buf, body))));
  });
}

} // namespace

Stmt lowerReduce(LowerCtx &c) {
  const Exprs &in = c.inDims[0];
  DType t = c.inTypes[0];
  int64_t rank = static_cast<int64_t>(in.size());
  const ops::ReduceOp reduce(c.op);
  const ReduceKind kind = reduce.kind();
  bool keep = reduce.keepdims();
  std::vector<bool> reduced(in.size(), false);
  for (int64_t a : reduce.axes())
    reduced[checkedAxis(c, a, static_cast<size_t>(rank))] = true;
  Exprs reducedDims;
  for (size_t d = 0; d < in.size(); ++d)
    if (reduced[d])
      reducedDims.push_back(in[d]);
  const Expr groupSize = product(reducedDims); // a constant unless a reduced dim is symbolic
  if (std::optional<Stmt> vectors = lowerReduceLanes(c, reduced, groupSize, keep))
    return *vectors;
  if (std::optional<Stmt> rows = lowerReduceRows(c, reduced, groupSize, keep))
    return *rows;

  bool fl = isFloat(t), isBool = t == DType::Bool;
  if (isBool && kind != ReduceKind::Max && kind != ReduceKind::Min)
    throw LowerError("reduce: only max and min reductions are defined on bool");
  DType at = fl ? DType::F64 : t;
  Expr identity;
  if (kind == ReduceKind::Sum || kind == ReduceKind::Mean)
    identity = fl ? loop::floatImm(0, at) : loop::intImm(0, at);
  else if (kind == ReduceKind::Prod)
    identity = fl ? loop::floatImm(1, at) : loop::intImm(1, at);
  else if (kind == ReduceKind::Max)
    identity = fl ? loop::floatImm(-INFINITY, at) : isBool ? loop::boolImm(false) : loop::intImm(intMin(t), at);
  else // min
    identity = fl       ? loop::floatImm(INFINITY, at)
               : isBool ? loop::boolImm(true)
                        : loop::intImm(intMax(t), at);

  return reduceNest(c, in, reduced, [&](const Exprs &kept, const auto &overReduced) {
    Acc acc = makeAcc(c, "acc", at);
    Stmt update = overReduced([&](const Exprs &full) {
      Expr v = loop::load(c.ins[0], full);
      if (fl)
        v = loop::cast(at, v);
      Expr a = acc.get();
      Expr next;
      if (kind == ReduceKind::Sum || kind == ReduceKind::Mean)
        next = a + v;
      else if (kind == ReduceKind::Prod)
        next = a * v;
      else if (isBool)
        next = bin(kind == ReduceKind::Max ? ExprKind::Or : ExprKind::And, a, v);
      else {
        next = loop::select(takesOver(kind, v, a, fl), v, a);
      }
      return acc.set(next);
    });
    Expr result = acc.get();
    if (kind == ReduceKind::Mean) {
      if (std::optional<int64_t> group = groupSize.asInt()) {
        if (fl)
          result = *group ? bin(ExprKind::Div, result, loop::floatImm(static_cast<double>(*group), at))
                          : loop::floatImm(NAN, at);
        else // divide in i64 so that the group size never wraps in a narrow dtype
          result = *group ? loop::cast(at, bin(ExprKind::Div, loop::cast(DType::I64, result), imm(*group)))
                          : loop::intImm(0, at);
      } else if (fl) { // an empty group divides 0 by 0: NaN, as above
        result = bin(ExprKind::Div, result, loop::cast(at, groupSize));
      } else {
        Expr empty = bin(ExprKind::EQ, groupSize, imm(0));
        Expr quotient = bin(ExprKind::Div, loop::cast(DType::I64, result),
                            loop::select(empty, imm(1), groupSize));
        result = loop::cast(at, loop::select(empty, imm(0), quotient));
      }
    }
    if (fl)
      result = loop::cast(t, result);
    Exprs outIdx;
    size_t k = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      if (!reduced[d])
        outIdx.push_back(kept[k++]);
      else if (keep)
        outIdx.push_back(imm(0));
    }
    return loop::allocate(acc.buf, loop::seq({acc.set(identity), update,
                                              loop::store(c.outs[0], outIdx, result)}));
  });
}

// softmax / log_softmax along one axis, max-subtracted, all in f64 like the interpreter (f32 rows
// along the last axis are vectorized instead, LowerRowVector.cpp):
//   m = max(x); s = sum(exp(x - m)); y = exp(x - m) / s  or  (x - m) - log(s).
static Stmt lowerSoftmax(LowerCtx &c, bool logarithm) {
  const Shape &in = c.inShapes[0];
  const Exprs &inDims = c.inDims[0];
  DType t = c.inTypes[0];
  if (!isFloat(t))
    notLowered(c.op, std::string(dtypeName(t)) + " operand");
  if (canLowerVectorRows(c))
    return lowerVectorSoftmax(c, logarithm);
  size_t axis = checkedAxis(
      c, logarithm ? ops::LogSoftmaxOp(c.op).axis() : ops::SoftmaxOp(c.op).axis(), in.size());
  std::vector<bool> reduced(in.size(), false);
  reduced[axis] = true;
  const DType f64 = DType::F64;
  return reduceNest(c, inDims, reduced, [&](const Exprs &, const auto &overAxis) {
    Acc mx = makeAcc(c, "max", f64), sum = makeAcc(c, "sum", f64);
    auto x = [&](const Exprs &full) { return loop::cast(f64, loop::load(c.ins[0], full)); };
    // std::max(m, v) == (m < v) ? v : m
    Stmt findMax = overAxis([&](const Exprs &full) {
      return mx.set(loop::select(bin(ExprKind::LT, mx.get(), x(full)), x(full), mx.get()));
    });
    Stmt addExp = overAxis([&](const Exprs &full) {
      return sum.set(sum.get() + loop::call(loop::Intrinsic::Exp, {x(full) - mx.get()}));
    });
    Stmt write = overAxis([&](const Exprs &full) {
      Expr shifted = x(full) - mx.get();
      Expr y = logarithm ? shifted - loop::call(loop::Intrinsic::Log, {sum.get()})
                         : bin(ExprKind::Div, loop::call(loop::Intrinsic::Exp, {shifted}), sum.get());
      return loop::store(c.outs[0], full, loop::cast(t, y));
    });
    Stmt body = loop::seq({mx.set(loop::floatImm(-INFINITY, f64)), findMax,
                           sum.set(loop::floatImm(0, f64)), addExp, write});
    return loop::allocate(mx.buf, loop::allocate(sum.buf, body));
  });
}

Stmt lowerSoftmax(LowerCtx &c) { return lowerSoftmax(c, false); }
Stmt lowerLogSoftmax(LowerCtx &c) { return lowerSoftmax(c, true); }

} // namespace strata::lower
