// A register-tiled micro-kernel for 2-D f32 conv with group 1: in a blocked layout NCHW<B>c
// (weight blocked [O/B, I/B, KH, KW, B, B]), the shape TVM's conv2d_NCHWc and oneDNN's direct conv
// take; or plain NCHW with output channels in groups of 8 (the network's stem, whose 3 input
// channels are not blocked), where the weight vector is a gather and the result a scatter, both
// amortized over the KH * KW * C multiply-adds of each output vector; or blocked depthwise
// (group == channels, weight [C/B, 1, KH, KW, 1, B]), where each tap is a vector load of B
// channels times a weight vector.
//
//   for q in [0, N * OCB * OH)                    (n, output channel block, output row)
//     for owo in [0, ceil(OW / T))                (a tile of T output columns)
//       acc[T, B] = bias block                    (T vector accumulators, promoted to registers)
//       for icb, kh (row inside the input), kw, bi:
//         w = weight[ocb, icb, kh, kw, bi, 0:B]   (one vector)
//         acc[t, 0:B] = fma(broadcast(x[n, icb, ih, iw_t, bi]), w, acc[t, 0:B])   t = 0..T-1
//       out[n, ocb, oh, ow_t, 0:B] = acc[t, 0:B]
//
// The T columns are unrolled in the IR, so every accumulator access has constant indices and
// LLVM keeps them in vector registers. Taps left or right of the input read a clamped address and
// contribute 0 (select), rows outside it are skipped, so nothing reads out of bounds. The sum runs
// over (icb, kh, kw, bi) with fused multiply-adds: the same terms as the interpreter's conv in
// another order, like its blocked GEMM.
#include "LowerImpl.h"

#include "strata/graph/Layout.h"

namespace strata::lower {

namespace {

using loop::ExprKind;

Expr bin(ExprKind k, Expr a, Expr b) { return loop::binary(k, std::move(a), std::move(b)); }

// Output columns per tile: the largest divisor of `ow` in [4, maxT] (no tail), else min(ow, 8).
// 12 vector accumulators plus a weight vector and a broadcast fit AVX2's 16 registers; AVX-512's
// 32 take 14 (more independent FMAs in flight).
int64_t columnTile(int64_t ow, int64_t maxT) {
  for (int64_t t = maxT; t >= 4; --t)
    if (ow % t == 0)
      return t;
  return std::min<int64_t>(ow, 8);
}

} // namespace

constexpr int64_t kPlainLanes = 8;

namespace {
// Depthwise in a blocked layout: every output channel reads its own input channel.
bool isBlockedDepthwise(const LowerCtx &c, int64_t b) {
  const Shape &x = c.inShapes[0], &w = c.inShapes[1], &out = c.outShapes[0];
  return b >= 2 && x.size() == 5 && w.size() == 6 && out.size() == 5 && x[4] == b && out[4] == b &&
         out[1] == x[1] && ops::ConvOp(c.op).group() == x[1] * b &&
         w == Shape{x[1], 1, w[2], w[3], 1, b} &&
         (c.ins.size() < 3 || c.inShapes[2] == Shape{out[1] * b});
}
} // namespace

bool canLowerBlockedConv(const LowerCtx &c) {
  const ops::ConvOp conv(c.op);
  const int64_t layout = conv.layout();
  if (c.inTypes[0] != DType::F32)
    return false;
  if (conv.group() != 1)
    return layout && isBlockedDepthwise(c, layout);
  const Shape &x = c.inShapes[0], &w = c.inShapes[1], &out = c.outShapes[0];
  if (layout == 0) // plain NCHW: whole vectors of output channels
    return x.size() == 4 && w.size() == 4 && out.size() == 4 && out[1] % kPlainLanes == 0 &&
           w[0] == out[1] && w[1] == x[1] &&
           (c.ins.size() < 3 || c.inShapes[2] == Shape{out[1]});
  int64_t b = layout;
  return b >= 2 && x.size() == 5 && w.size() == 6 && out.size() == 5 && x[4] == b &&
         out[4] == b && w[4] == b && w[5] == b && w[1] == x[1] && w[0] == out[1] &&
         (c.ins.size() < 3 || c.inShapes[2] == Shape{out[1] * b});
}

Stmt lowerBlockedConv(LowerCtx &c) {
  const Shape &xs = c.inShapes[0], &ws = c.inShapes[1], &os = c.outShapes[0];
  const ops::ConvOp conv(c.op);
  const bool plain = xs.size() == 4, depthwise = conv.group() != 1;
  // B: vector lanes (output channels per vector); ICB x BI: the input channels each output
  // vector sums over, as blocks (depthwise: its own block, one vector tap).
  const int64_t plainLanes =
      c.opts.vectorLanesF32 > kPlainLanes && os[1] % c.opts.vectorLanesF32 == 0
          ? c.opts.vectorLanesF32
          : kPlainLanes;
  const int64_t B = plain ? plainLanes : xs[4], N = xs[0], IH = xs[2], IW = xs[3];
  const int64_t ICB = depthwise ? 1 : xs[1], BI = plain || depthwise ? 1 : B;
  const int64_t OCB = plain ? os[1] / B : os[1], OH = os[2], OW = os[3], KH = ws[2], KW = ws[3];
  const int64_t sh = conv.strides()[0], sw = conv.strides()[1];
  const int64_t dh = conv.dilations()[0], dw = conv.dilations()[1];
  const int64_t ph = conv.pads()[0], pw = conv.pads()[1];
  const int64_t T = columnTile(OW, c.opts.vectorLanesF32 >= 16 ? 14 : 12), tiles = (OW + T - 1) / T;
  const bool tail = OW % T != 0;
  // Guards only where a tap can leave the input.
  const bool rowGuard = ph > 0 || (OH - 1) * sh - ph + (KH - 1) * dh >= IH;
  const bool colGuard = pw > 0 || tail || (OW - 1) * sw - pw + (KW - 1) * dw >= IW;

  loop::Var q = c.newVar("q"), owo = c.newVar("owo");
  Expr qv = loop::var(q);
  Expr n = bin(ExprKind::FloorDiv, qv, imm(OCB * OH));
  Expr ocb = bin(ExprKind::FloorMod, bin(ExprKind::FloorDiv, qv, imm(OH)), imm(OCB));
  Expr oh = bin(ExprKind::FloorMod, qv, imm(OH));
  Expr lanes = loop::ramp(imm(0), imm(1), static_cast<int>(B));
  loop::Buffer acc = loop::makeBuffer(c.newName("acc"), DType::F32, {imm(T), imm(B)}, {},
                                      loop::MemoryScope::Local);
  auto accAt = [&](int64_t t) { return Exprs{imm(t), lanes}; };
  auto column = [&](int64_t t) { return loop::var(owo) * imm(T) + imm(t); };

  std::vector<Stmt> init;
  Expr start = c.ins.size() > 2
                   ? loop::load(c.ins[2], {loop::ramp(ocb * imm(B), imm(1), static_cast<int>(B))})
                   : loop::broadcast(loop::floatImm(0, DType::F32), static_cast<int>(B));
  for (int64_t t = 0; t < T; ++t)
    init.push_back(loop::store(acc, accAt(t), start));

  Expr outChannels = loop::ramp(ocb * imm(B), imm(1), static_cast<int>(B));
  auto summed = [&](const loop::Var &v, int64_t extent, Stmt body) {
    return c.loopOver(v, extent, LoopRole::Reduction, std::move(body));
  };
  // The reduction over (icb, kh, kw, bi) into the accumulators; `guarded` handles taps left or
  // right of the input and a column tail.
  auto reduction = [&](bool guarded) {
    loop::Var icb = c.newVar("icb"), kh = c.newVar("kh"), kw = c.newVar("kw"), bi = c.newVar("bi");
    Expr ih = oh * imm(sh) - imm(ph) + loop::var(kh) * imm(dh);
    Expr wv = plain ? loop::load(c.ins[1], {outChannels, loop::var(icb), loop::var(kh), loop::var(kw)})
              : depthwise
                  ? loop::load(c.ins[1], {ocb, imm(0), loop::var(kh), loop::var(kw), imm(0), lanes})
                  : loop::load(c.ins[1], {ocb, loop::var(icb), loop::var(kh), loop::var(kw),
                                          loop::var(bi), lanes});
    std::vector<Stmt> update;
    for (int64_t t = 0; t < T; ++t) {
      Expr iw = column(t) * imm(sw) - imm(pw) + loop::var(kw) * imm(dw);
      Expr at = guarded ? bin(ExprKind::Max, bin(ExprKind::Min, iw, imm(IW - 1)), imm(0)) : iw;
      // One input value for all B output channels, or (depthwise) B channels' own values.
      Expr xv = plain       ? loop::load(c.ins[0], {n, loop::var(icb), ih, at})
                : depthwise ? loop::load(c.ins[0], {n, ocb, ih, at, lanes})
                            : loop::load(c.ins[0], {n, loop::var(icb), ih, at, loop::var(bi)});
      Expr zero = loop::floatImm(0, DType::F32);
      if (depthwise)
        zero = loop::broadcast(zero, static_cast<int>(B));
      if (guarded) {
        Expr ok = bin(ExprKind::And, bin(ExprKind::GE, iw, imm(0)), bin(ExprKind::LT, iw, imm(IW)));
        if (tail)
          ok = bin(ExprKind::And, ok, bin(ExprKind::LT, column(t), imm(OW)));
        xv = loop::select(ok, xv, zero);
      }
      if (!depthwise)
        xv = loop::broadcast(xv, static_cast<int>(B));
      Expr sum = loop::call(loop::Intrinsic::Fma, {xv, wv, loop::load(acc, accAt(t))});
      update.push_back(loop::store(acc, accAt(t), sum));
    }
    Stmt taps = summed(kw, KW, BI == 1 ? loop::seq(update) : summed(bi, BI, loop::seq(update)));
    if (rowGuard)
      taps = loop::ifThenElse(bin(ExprKind::And, bin(ExprKind::GE, ih, imm(0)),
                                  bin(ExprKind::LT, ih, imm(IH))),
                              taps);
    return ICB == 1 && depthwise ? summed(kh, KH, taps) : summed(icb, ICB, summed(kh, KH, taps));
  };
  // Most tiles lie inside the input: they run without the per-tap clamp and select.
  Stmt reduce = reduction(colGuard);
  if (colGuard) {
    Expr first = column(0) * imm(sw) - imm(pw);
    Expr last = column(T - 1) * imm(sw) - imm(pw) + imm((KW - 1) * dw);
    Expr inside = bin(ExprKind::And, bin(ExprKind::GE, first, imm(0)), bin(ExprKind::LT, last, imm(IW)));
    if (tail)
      inside = bin(ExprKind::And, inside, bin(ExprKind::LT, column(T - 1), imm(OW)));
    reduce = loop::ifThenElse(inside, reduction(false), reduce);
  }

  std::vector<Stmt> finish;
  for (int64_t t = 0; t < T; ++t) {
    Exprs where = plain ? Exprs{n, outChannels, oh, column(t)} : Exprs{n, ocb, oh, column(t), lanes};
    Stmt st = c.storeOut(where, loop::load(acc, accAt(t)));
    finish.push_back(tail ? loop::ifThenElse(bin(ExprKind::LT, column(t), imm(OW)), st) : st);
  }
  Stmt tile = loop::allocate(acc, loop::seq({loop::seq(init), reduce, loop::seq(finish)}));
  // The structure is final (unrolled columns, constant accumulator indices); whether q runs in
  // parallel is the schedule's choice, from the work recorded here.
  c.nest(q, {std::string(c.op.opName()), N * OCB * B * OH * OW * ICB * BI * KH * KW, true});
  return c.loopOver(q, N * OCB * OH, LoopRole::Parallel,
                    c.loopOver(owo, tiles, LoopRole::Parallel, tile));
}

} // namespace strata::lower
