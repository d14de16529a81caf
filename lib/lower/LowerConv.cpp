// Windowed ops as direct loop nests over the result: conv (N-d, NC... layout, strides, pads,
// dilations, group, bias) and pool (max, avg). A window tap at input coordinate
// out * stride - padBegin + tap * dilation is read only when inside the input (an `if`, so no
// out-of-bounds access is ever evaluated); padding contributes nothing (conv: zero; max: skipped;
// avg: counted only with count_include_pad).
#include "LowerImpl.h"

#include "strata/graph/Layout.h"

#include <cmath>

namespace strata::lower {
namespace {

using loop::ExprKind;
using loop::Intrinsic;

struct Window {
  std::vector<int64_t> strides, padsBegin, dilations;
};

// The window attributes of a conv or pool (one entry per spatial dim: their normal form).
template <typename View> Window window(const View &op, size_t rank) {
  if (op.strides().size() != rank || op.dilations().size() != rank || op.pads().size() != 2 * rank)
    throw LowerError("strides, dilations and pads do not match " + std::to_string(rank) +
                     " spatial dims");
  Window w{op.strides(), {}, op.dilations()};
  w.padsBegin.assign(op.pads().begin(), op.pads().begin() + static_cast<std::ptrdiff_t>(rank));
  return w;
}

// Input coordinates of a tap and the condition that all are inside `grid`.
std::pair<Exprs, Expr> tapCoords(const Window &w, const Exprs &outPos, const Exprs &tap,
                                 const Exprs &grid) {
  Exprs coords;
  Expr inside;
  for (size_t d = 0; d < grid.size(); ++d) {
    Expr x = outPos[d] * imm(w.strides[d]) + tap[d] * imm(w.dilations[d]) - imm(w.padsBegin[d]);
    coords.push_back(x);
    Expr ok = bin(ExprKind::And, bin(ExprKind::GE, x, imm(0)), bin(ExprKind::LT, x, grid[d]));
    inside = inside ? bin(ExprKind::And, inside, ok) : ok;
  }
  return {coords, inside ? inside : loop::boolImm(true)};
}

Exprs concat(Exprs a, const Exprs &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

loop::Buffer localScalar(LowerCtx &c, const std::string &hint, DType t) {
  return loop::makeBuffer(c.newName(hint), t, {imm(1)}, {}, loop::MemoryScope::Local);
}

} // namespace

// y[n, o, p...] = sum over (ci, taps...) of x[n, g * Cg + ci, coords...] * w[o, ci, taps...],
// accumulated in the operand dtype in that order, then + bias[o]. With layout NCHW<c>c
// (include/strata/graph/Layout.h) the same sum runs on the logical plain indices, which are
// mapped to the blocked activation [N, C/c, S..., c] and weight [O/co, I/ci, K..., ci, co].
Stmt lowerConv(LowerCtx &c) {
  const ops::ConvOp conv(c.op);
  int64_t block = conv.layout();
  if (canLowerBlockedConv(c)) // the register-tiled micro-kernel (LowerConvBlocked.cpp)
    return lowerBlockedConv(c);
  // plain_input: plain x [N, C, S...] and w [O, I, K...], a blocked result.
  const bool plainInput = conv.plain_input();
  if (plainInput && !c.symbolic)
    notLowered(c.op, "plain_input outside the f32 micro-kernel's shapes");
  const Shape &xs = c.inShapes[0], &ws = c.inShapes[1], &outs = c.outShapes[0];
  DType t = c.inTypes[0];
  if (!isFloat(t) || xs.size() < 3) // integer conv is not defined by the interpreter either
    notLowered(c.op, !isFloat(t) ? std::string(dtypeName(t)) + " operands" : "rank < 3");
  const int64_t inBlock = plainInput ? 0 : block; // the operands' block (0 when plain)
  int64_t wci = 1, wco = 1; // weight block sizes (1 when plain)
  Shape x = xs, w = ws;
  Exprs grid(c.inDims[0].begin() + 2, c.inDims[0].end() - (inBlock ? 1 : 0));
  if (block && (outs.size() != xs.size() + (inBlock ? 0 : 1) || outs.back() != block))
    throw LowerError("conv: the result is not blocked by " + std::to_string(block));
  if (inBlock) {
    if (xs.size() < 4 || xs.back() != block || ws.size() != xs.size() + 1 || ws.back() != block)
      throw LowerError("conv: operands are not blocked by " + std::to_string(block));
    wci = ws[ws.size() - 2];
    wco = ws.back();
    x = Shape(xs.begin(), xs.end() - 1);
    x[1] *= block;
    w = Shape(ws.begin(), ws.end() - 2);
    w[0] *= wco;
    w[1] *= wci;
  }
  if (w.size() != x.size())
    throw LowerError("conv: the weight's rank does not match the input's");
  size_t rank = x.size() - 2;
  Window win = window(conv, rank);
  int64_t group = conv.group();
  int64_t outChannels = block ? outs[1] * block : outs[1];
  if (group < 1 || x[1] % group != 0 || outChannels % group != 0)
    throw LowerError("conv: group does not divide the channels");
  int64_t cg = x[1] / group, og = outChannels / group;
  Shape kernel(w.begin() + 2, w.end());
  Shape reduceShape = {cg};
  reduceShape.insert(reduceShape.end(), kernel.begin(), kernel.end());
  auto split = [](const Expr &e, int64_t b) -> std::pair<Expr, Expr> {
    if (b == 1)
      return {e, imm(0)};
    return {bin(ExprKind::FloorDiv, e, imm(b)), bin(ExprKind::FloorMod, e, imm(b))};
  };
  auto loadX = [&](const Expr &n, const Expr &ch, const Exprs &coords) {
    if (!inBlock)
      return loop::load(c.ins[0], concat({n, ch}, coords));
    auto [cb, ci] = split(ch, block);
    return loop::load(c.ins[0], concat(concat({n, cb}, coords), {ci}));
  };
  auto loadW = [&](const Expr &o, const Expr &i, const Exprs &tap) {
    if (!inBlock)
      return loop::load(c.ins[1], concat({o, i}, tap));
    auto [ob, oi] = split(o, wco);
    auto [ib, ii] = split(i, wci);
    return loop::load(c.ins[1], concat(concat({ob, ib}, tap), {ii, oi}));
  };
  Expr zero = loop::floatImm(0, t);
  return loopNest(c, c.outDims[0], LoopRole::Parallel, [&](const Exprs &idx) {
    loop::Buffer acc = localScalar(c, "acc", t);
    Expr sum = loop::load(acc, {imm(0)});
    Exprs outPos(idx.begin() + 2, idx.begin() + 2 + static_cast<std::ptrdiff_t>(rank));
    Expr o = block ? idx[1] * imm(block) + idx.back() : idx[1];
    Expr channelBase = bin(ExprKind::FloorDiv, o, imm(og)) * imm(cg);
    Stmt inner = loopNest(c, reduceShape, LoopRole::Reduction, [&](const Exprs &r) {
      Exprs tap(r.begin() + 1, r.end());
      auto [coords, inside] = tapCoords(win, outPos, tap, grid);
      Expr xv = loadX(idx[0], channelBase + r[0], coords);
      Expr wv = loadW(o, r[0], tap);
      return loop::ifThenElse(inside, loop::store(acc, {imm(0)}, sum + xv * wv));
    });
    Expr result = c.ins.size() > 2 ? sum + loop::load(c.ins[2], {o}) : sum;
    return loop::allocate(acc, loop::seq({loop::store(acc, {imm(0)}, zero), inner,
                                          loop::store(c.outs[0], idx, result)}));
  });
}

// pool max: the first NaN tap wins, otherwise the largest real tap (-inf / lowest when none).
// pool avg: f64 sum of the real taps in row-major tap order, divided by their count (or by the
// whole window when count_include_pad), rounded once.
Stmt lowerBlockedPool(LowerCtx &c);

Stmt lowerPool(LowerCtx &c) {
  const ops::PoolOp pool(c.op);
  if (pool.layout())
    return lowerBlockedPool(c);
  const PoolKind kind = pool.kind();
  const Shape &x = c.inShapes[0];
  DType t = c.inTypes[0];
  bool supported = isFloat(t) || (kind == PoolKind::Max && isInteger(t)); // the interpreter's
  if (!supported || x.size() < 3)
    notLowered(c.op, "kind " + std::string(enumName(kind)) + " on " + std::string(dtypeName(t)));
  bool includePad = pool.count_include_pad();
  if (kind == PoolKind::Avg && includePad && pool.ceil_mode())
    notLowered(c.op, "avg with count_include_pad and ceil_mode");
  size_t rank = x.size() - 2;
  Window win = window(pool, rank);
  const std::vector<int64_t> &kernel = pool.kernel();
  if (kernel.size() != rank)
    throw LowerError("pool: kernel needs one entry per spatial dim");
  Exprs grid(c.inDims[0].begin() + 2, c.inDims[0].end());
  // The kernel attribute is not bounded by any tensor's size: its product is checked.
  std::optional<int64_t> windowSize = shape::checkedProduct(kernel);
  if (!windowSize)
    throw LowerError("pool: the kernel's window size overflows int64");
  bool isMax = kind == PoolKind::Max, isLp = kind == PoolKind::Lp;
  DType at = isMax ? t : DType::F64;
  // lp: (sum |x|^p)^(1/p) in f64, as the interpreter.
  Expr p = loop::floatImm(static_cast<double>(pool.p()), DType::F64);
  Expr lowest; // max's start: -inf, or the integer dtype's minimum
  if (isFloat(t)) {
    lowest = loop::floatImm(-INFINITY, t);
  } else {
    unsigned bits = static_cast<unsigned>(dtypeSize(t)) * 8;
    lowest = loop::intImm(!isSigned(t) ? 0 : bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1)), t);
  }
  return loopNest(c, c.outDims[0], LoopRole::Parallel, [&](const Exprs &idx) {
    loop::Buffer acc = localScalar(c, "acc", at), count = localScalar(c, "count", DType::I64);
    Expr a = loop::load(acc, {imm(0)}), n = loop::load(count, {imm(0)});
    Exprs outPos(idx.begin() + 2, idx.end());
    Stmt inner = loopNest(
        c, Shape(kernel.begin(), kernel.end()), LoopRole::Reduction, [&](const Exprs &tap) {
          auto [coords, inside] = tapCoords(win, outPos, tap, grid);
          Expr v = loop::load(c.ins[0], concat({idx[0], idx[1]}, coords));
          Stmt update;
          if (isMax) {
            Expr take =
                isFloat(t)
                    ? bin(ExprKind::And, bin(ExprKind::EQ, a, a),
                          bin(ExprKind::Or, bin(ExprKind::NE, v, v), bin(ExprKind::GT, v, a)))
                    : bin(ExprKind::GT, v, a);
            update = loop::store(acc, {imm(0)}, loop::select(take, v, a));
          } else if (isLp) {
            Expr term =
                loop::call(Intrinsic::Pow, {loop::call(Intrinsic::Abs, {loop::cast(at, v)}), p});
            update = loop::store(acc, {imm(0)}, a + term);
          } else {
            update = loop::seq({loop::store(acc, {imm(0)}, a + loop::cast(at, v)),
                                loop::store(count, {imm(0)}, n + imm(1))});
          }
          return loop::ifThenElse(inside, update);
        });
    Expr result;
    if (isMax) {
      result = a;
    } else if (isLp) {
      Expr root = loop::call(Intrinsic::Pow, {a, bin(ExprKind::Div, loop::floatImm(1, at), p)});
      result = loop::cast(t, root);
    } else {
      Expr divisor =
          includePad ? loop::floatImm(static_cast<double>(*windowSize), at) : loop::cast(at, n);
      Expr avg = bin(ExprKind::Div, a, divisor);
      if (!includePad) // no real tap: NaN, like the interpreter's 0 / 0
        avg = loop::select(bin(ExprKind::EQ, n, imm(0)), loop::floatImm(NAN, at), avg);
      result = loop::cast(t, avg);
    }
    Stmt init = loop::seq({loop::store(acc, {imm(0)}, isMax ? lowest : loop::floatImm(0, at)),
                           loop::store(count, {imm(0)}, imm(0))});
    return loop::allocate(acc, loop::allocate(count, loop::seq({init, inner,
                                                                loop::store(c.outs[0], idx, result)})));
  });
}

// pool in a blocked layout [N, C/c, S..., c]: the plain pool's semantics per channel, with the c
// channels of a block as one vector: per output position a vector accumulator over the taps
// inside the input (max: a lane takes a tap when it is NaN or larger, unless the lane already
// holds NaN; avg: f64 sums divided by the count of real taps, or the whole window).
Stmt lowerBlockedPool(LowerCtx &c) {
  const ops::PoolOp pool(c.op);
  const PoolKind kind = pool.kind();
  const Shape &x = c.inShapes[0], &out = c.outShapes[0];
  const DType t = c.inTypes[0];
  const int64_t B = pool.layout();
  if (!isFloat(t) || (kind != PoolKind::Max && kind != PoolKind::Avg) || x.size() < 4 ||
      x.back() != B || out.size() != x.size() || out.back() != B)
    notLowered(c.op, "blocked " + std::string(enumName(kind)) + " on " +
                         std::string(dtypeName(t)) + " " + shapeToString(x));
  const bool includePad = pool.count_include_pad(), isMax = kind == PoolKind::Max;
  if (!isMax && includePad && pool.ceil_mode())
    notLowered(c.op, "avg with count_include_pad and ceil_mode");
  const size_t rank = x.size() - 3;
  Window win = window(pool, rank);
  const std::vector<int64_t> &kernel = pool.kernel();
  if (kernel.size() != rank)
    throw LowerError("pool: kernel needs one entry per spatial dim");
  const Exprs grid(c.inDims[0].begin() + 2, c.inDims[0].end() - 1);
  const Exprs positions(c.outDims[0].begin(), c.outDims[0].end() - 1);
  std::optional<int64_t> windowSize = shape::checkedProduct(kernel);
  if (!windowSize)
    throw LowerError("pool: the kernel's window size overflows int64");
  const DType at = isMax ? t : DType::F64;
  const int lanes = static_cast<int>(B);
  Expr ramp = loop::ramp(imm(0), imm(1), lanes);
  return loopNest(c, positions, LoopRole::Parallel, [&](const Exprs &idx) {
    loop::Buffer acc = loop::makeBuffer(c.newName("acc"), at, {imm(B)}, {},
                                        loop::MemoryScope::Local);
    loop::Buffer count = localScalar(c, "count", DType::I64);
    // The tap's vector, stored first: a select with a load of the input in an arm would be
    // guarded lane by lane (code generation cannot prove the clamped address in bounds).
    loop::Buffer tapValue = loop::makeBuffer(c.newName("tap"), t, {imm(B)}, {},
                                             loop::MemoryScope::Local);
    Expr a = loop::load(acc, {ramp}), n = loop::load(count, {imm(0)});
    Exprs outPos(idx.begin() + 2, idx.end());
    Stmt inner = loopNest(
        c, Shape(kernel.begin(), kernel.end()), LoopRole::Reduction, [&](const Exprs &tap) {
          // Branch-free: a tap outside the input reads a clamped address and is not taken
          // (an `if` per tap made LLVM split the accumulator into scalar lanes).
          auto [coords, inside] = tapCoords(win, outPos, tap, grid);
          for (size_t d = 0; d < coords.size(); ++d)
            coords[d] = bin(ExprKind::Max, bin(ExprKind::Min, coords[d], grid[d] - imm(1)), imm(0));
          Stmt read = loop::store(
              tapValue, {ramp}, loop::load(c.ins[0], concat(concat({idx[0], idx[1]}, coords), {ramp})));
          Expr v = loop::load(tapValue, {ramp});
          if (isMax) { // a NaN lane keeps it; else a NaN tap, else the larger
            Expr larger = loop::select(bin(ExprKind::GT, v, a), v, a);
            Expr taken = loop::select(bin(ExprKind::NE, v, v), v, larger);
            Expr next = loop::select(bin(ExprKind::NE, a, a), a, taken);
            return loop::seq({read, loop::store(acc, {ramp}, loop::select(inside, next, a))});
          }
          return loop::seq(
              {read, loop::store(acc, {ramp}, loop::select(inside, a + loop::cast(at, v), a)),
               loop::store(count, {imm(0)}, n + loop::select(inside, imm(1), imm(0)))});
        });
    Expr result = a;
    if (!isMax) {
      Expr divisor = includePad ? loop::floatImm(static_cast<double>(*windowSize), at)
                                : loop::cast(at, n);
      Expr avg = bin(ExprKind::Div, a, loop::broadcast(divisor, lanes));
      if (!includePad) // no real tap: NaN, like the interpreter's 0 / 0
        avg = loop::select(bin(ExprKind::EQ, n, imm(0)),
                           loop::broadcast(loop::floatImm(NAN, at), lanes), avg);
      result = loop::cast(t, avg);
    }
    Expr start = isMax ? loop::floatImm(-INFINITY, t) : loop::floatImm(0, at);
    Stmt init = loop::seq({loop::store(acc, {ramp}, loop::broadcast(start, lanes)),
                           loop::store(count, {imm(0)}, imm(0))});
    return loop::allocate(
        acc, loop::allocate(count, loop::allocate(tapValue, loop::seq({init, inner,
                                              loop::store(c.outs[0], concat(idx, {ramp}),
                                                          result)}))));
  });
}

} // namespace strata::lower
