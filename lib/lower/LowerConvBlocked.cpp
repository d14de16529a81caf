// A register-tiled micro-kernel for 2-D f32 conv with group 1: in a blocked layout NCHW<B>c
// (weight blocked [O/B, I/B, KH, KW, B, B]), the shape TVM's conv2d_NCHWc and oneDNN's direct conv
// take; or plain NCHW with output channels in groups of 8 (the network's stem, whose 3 input
// channels are not blocked), where the weight vector is a gather and the result a scatter, both
// amortized over the KH * KW * C multiply-adds of each output vector; or blocked depthwise
// (group == channels, weight [C/B, 1, KH, KW, 1, B]), where each tap is a vector load of B
// channels times a weight vector; or blocked with groups of whole blocks (weight
// [O/B, I/(B*group), KH, KW, B, B]), where a tile's output blocks read their group's input
// blocks.
//
//   for q in [0, N * OCB/O * OH)                  (n, group of O output channel blocks, row)
//     for owo in [0, ceil(OW / T))                (a tile of T output columns)
//       acc[O, T, B] = bias blocks                (O x T vector accumulators, in registers)
//       for icb, kh (row inside the input), kw, bi:
//         w_o = weight[ocb_o, icb, kh, kw, bi, 0:B]              (O vectors)
//         x_t = broadcast(x[n, icb, ih, iw_t, bi])               (T broadcasts)
//         acc[o, t, 0:B] = fma(x_t, w_o, acc[o, t, 0:B])         o < O, t < T
//       out[n, ocb_o, oh, ow_t, 0:B] = acc[o, t, 0:B]
//
// O and T come from the target's registers (convTile): O * T accumulators, O weight vectors and
// a broadcast; O > 1 reuses each broadcast O times, so a step issues O + T loads for O * T
// multiply-adds (14 + 1 loads for 14 with O = 1, T = 14; 2 + 14 for 28 with O = 2). The O * T
// accumulators are unrolled in the IR, so every access has constant indices and LLVM keeps them
// in vector registers. Taps left or right of the input read a clamped address and
// contribute 0 (select), rows outside it are skipped, so nothing reads out of bounds. The sum runs
// over (icb, kh, kw, bi) with fused multiply-adds: the same terms as the interpreter's conv in
// another order, like its blocked GEMM.
#include "LowerImpl.h"

#include "strata/graph/Layout.h"

#include <algorithm>
#include <functional>

namespace strata::lower {

namespace {

using loop::ExprKind;

struct ConvTile {
  int64_t blocks = 1;  // O: output channel blocks per tile
  int64_t columns = 1; // T: output columns per tile
};

// The tile of O output channel blocks (O divides `channelBlocks`, at most 4 and `maxBlocks`)
// by T columns that keeps the most multiply-adds busy: each candidate fits O * T accumulators,
// O weight vectors and a broadcast into the registers (T at most 14, 12 with 16 registers) and
// is scored by the share of its columns that are real, squared (a clamped last tile computes
// columns past OW, on the guarded path: 1x1 and 3x3 convs at 7x7 ran 1.35x faster with O = 2,
// T = 7 than with O = 4, T = 4), by O * T against the O + T loads of a step (a load port serves
// fewer than two FMAs' operands per cycle), and by whether O * T accumulators are enough
// independent chains to hide the FMA latency (20 with 32 registers, 10 with 16). Ties keep the
// larger O * T.
// Whether the parallel loop runs output rows outside the tile groups of output channels. With
// the groups outside (the default) each group sweeps every row and reads the whole input once
// per group; with the rows outside, consecutive iterations share an input row and cycle
// through the whole weight. Each order re-reads from beyond the core's cache only what does
// not fit it: rows go outside when that costs less (a 1x1 conv of 256 channels at 56x56: its
// 3.2 MB input read 8 times against its 256 KB of weights from cache).
bool rowsOuter(const LowerCtx &c, const Expr &n, const Expr &oh, int64_t groups) {
  constexpr double kCacheBytes = 1024 * 1024; // a core's L2 and then some: L3 re-reads are cheap
  std::optional<int64_t> images = n.asInt(), rows = oh.asInt();
  std::optional<int64_t> input = product(c.inDims[0]).asInt(),
                         weight = product(c.inDims[1]).asInt();
  if (groups < 2 || !images || !rows || !input || !weight || *images < 1)
    return false;
  const double inputBytes = static_cast<double>(*input) * 4 / static_cast<double>(*images),
               weightBytes = static_cast<double>(*weight) * 4;
  const double groupsOutside = inputBytes > kCacheBytes ? inputBytes * groups : inputBytes;
  const double rowsOutside = weightBytes > kCacheBytes ? weightBytes * *rows : weightBytes;
  return rowsOutside < groupsOutside;
}

ConvTile convTile(int64_t ow, int64_t channelBlocks, int64_t registers, int64_t maxBlocks) {
  const int64_t maxColumns = registers >= 32 ? 14 : 12, chains = registers >= 32 ? 20 : 10;
  ConvTile best;
  double bestScore = -1;
  for (int64_t o = 1; o <= std::min<int64_t>(maxBlocks, 4); ++o) {
    if (channelBlocks % o != 0)
      continue;
    int64_t widest = std::min(maxColumns, (registers - 1 - o) / o);
    for (int64_t t = 1; t <= std::min(widest, ow); ++t) {
      double real = static_cast<double>(ow) / static_cast<double>(((ow + t - 1) / t) * t);
      double fmas = static_cast<double>(o * t);
      double score = real * real * std::min(1.0, fmas / (1.3 * static_cast<double>(o + t))) *
                     std::min(1.0, fmas / static_cast<double>(chains));
      if (score > bestScore + 1e-9 ||
          (score > bestScore - 1e-9 && o * t > best.blocks * best.columns)) {
        bestScore = score;
        best = {o, t};
      }
    }
  }
  return best;
}

} // namespace

constexpr int64_t kPlainLanes = 8;
// The stem's staged weight vectors stay on the stack (see lowerBlockedConv).
constexpr int64_t kMaxStagedBytes = 32 * 1024;
// A border tile's staged input window stays on the stack (wider ones, from large dilations,
// guard each tap instead).
constexpr int64_t kMaxWindowBytes = 16 * 1024;

namespace {
// Depthwise in a blocked layout: every output channel reads its own input channel.
// A blocked 2-D ([N, C/B, H, W, B]) or 3-D ([N, C/B, D, H, W, B]) conv's operand ranks.
bool blockedRanks(const Shape &x, const Shape &w, const Shape &out, int64_t b) {
  return (x.size() == 5 || x.size() == 6) && w.size() == x.size() + 1 && out.size() == x.size() &&
         x.back() == b && out.back() == b;
}
bool isBlockedDepthwise(const LowerCtx &c, int64_t b) {
  const Shape &x = c.inShapes[0], &w = c.inShapes[1], &out = c.outShapes[0];
  if (b < 2 || !blockedRanks(x, w, out, b))
    return false;
  Shape depthwise = w;
  depthwise[0] = x[1];
  depthwise[1] = 1;
  depthwise[w.size() - 2] = 1;
  depthwise[w.size() - 1] = b;
  return out[1] == x[1] && ops::ConvOp(c.op).group() == x[1] * b && w == depthwise &&
         (c.ins.size() < 3 || c.inShapes[2] == Shape{out[1] * b});
}
} // namespace

// Grouped in a blocked layout with whole blocks per group: weight [O/B, I/(B*group), KH, KW, B, B],
// output block ob reading the input blocks of its group.
bool isBlockedGrouped(const LowerCtx &c, int64_t b) {
  const Shape &x = c.inShapes[0], &w = c.inShapes[1], &out = c.outShapes[0];
  const int64_t group = ops::ConvOp(c.op).group();
  return b >= 2 && group > 1 && blockedRanks(x, w, out, b) && w[w.size() - 2] == b &&
         w.back() == b && w[0] == out[1] && out[1] % group == 0 && w[1] * group == x[1] &&
         (c.ins.size() < 3 || c.inShapes[2] == Shape{out[1] * b});
}

bool canLowerBlockedConv(const LowerCtx &c) {
  const ops::ConvOp conv(c.op);
  const int64_t layout = conv.layout();
  if (c.inTypes[0] != DType::F32)
    return false;
  if (conv.group() != 1)
    return layout && (isBlockedDepthwise(c, layout) || isBlockedGrouped(c, layout));
  const Shape &x = c.inShapes[0], &w = c.inShapes[1], &out = c.outShapes[0];
  if (layout == 0) // plain NCHW: whole vectors of output channels
    return x.size() == 4 && w.size() == 4 && out.size() == 4 && out[1] % kPlainLanes == 0 &&
           w[0] == out[1] && w[1] == x[1] &&
           (c.ins.size() < 3 || c.inShapes[2] == Shape{out[1]});
  int64_t b = layout;
  if (conv.plain_input()) // plain operands, each output vector one block of the result
    return b >= 2 && x.size() == 4 && w.size() == 4 && out.size() == 5 && out[4] == b &&
           w[0] == out[1] * b && w[1] == x[1] &&
           (c.ins.size() < 3 || c.inShapes[2] == Shape{out[1] * b});
  return b >= 2 && blockedRanks(x, w, out, b) && w[w.size() - 2] == b && w.back() == b &&
         w[1] == x[1] && w[0] == out[1] &&
         (c.ins.size() < 3 || c.inShapes[2] == Shape{out[1] * b});
}

Stmt lowerBlockedConv(LowerCtx &c) {
  const Shape &xs = c.inShapes[0], &ws = c.inShapes[1], &os = c.outShapes[0];
  const ops::ConvOp conv(c.op);
  const bool plain = xs.size() == 4, depthwise = !plain && ws[ws.size() - 2] == 1;
  // A 3-D conv (blocked operands only) has a depth ahead of its rows; sp shifts H and W past it.
  const bool volume = xs.size() == 6;
  const size_t sp = volume ? 1 : 0;
  // Blocked groups (not depthwise): each group's OCB / convGroups output blocks read its ICB
  // input blocks.
  const int64_t convGroups = depthwise ? 1 : conv.group();
  // B: vector lanes (output channels per vector); ICB x BI: the input channels each output
  // vector sums over, as blocks (depthwise: its own block, one vector tap).
  const int64_t plainLanes =
      c.opts.vectorLanesF32 > kPlainLanes && os[1] % c.opts.vectorLanesF32 == 0
          ? c.opts.vectorLanesF32
          : kPlainLanes;
  // A plain input with a blocked result (plain_input): vectors are the result's blocks.
  const bool blockedOut = os.size() == 5;
  const int64_t B = blockedOut ? os[4] : plain ? plainLanes : xs.back();
  const int64_t ICB = depthwise ? 1 : plain ? xs[1] : ws[1], BI = plain || depthwise ? 1 : B;
  const int64_t OCB = plain && !blockedOut ? os[1] / B : os[1], KH = ws[2 + sp],
                KW = ws[3 + sp], KD = volume ? ws[2] : 1;
  // Batch and spatial extents: constants, or run-time extents (symbolic dims) for which every
  // decision below takes the general path (guards on, tiles chosen for a wide row).
  const Expr N = c.inDims[0][0], IH = c.inDims[0][2 + sp], IW = c.inDims[0][3 + sp];
  const Expr OH = c.outDims[0][2 + sp], OW = c.outDims[0][3 + sp];
  const Expr ID = volume ? c.inDims[0][2] : imm(1), OD = volume ? c.outDims[0][2] : imm(1);
  const std::optional<int64_t> ihStatic = IH.asInt(), iwStatic = IW.asInt();
  const std::optional<int64_t> ohStatic = OH.asInt(), owStatic = OW.asInt();
  const bool staticExtents =
      ihStatic && iwStatic && ohStatic && owStatic && N.asInt() && ID.asInt() && OD.asInt();
  // The work of one conv (for the schedule's parallel decision): symbolic dims counted as 32.
  auto nominal = [](const Expr &e) { return e.asInt().value_or(32); };
  const int64_t sh = conv.strides()[sp], sw = conv.strides()[sp + 1];
  const int64_t dh = conv.dilations()[sp], dw = conv.dilations()[sp + 1];
  const int64_t ph = conv.pads()[sp], pw = conv.pads()[sp + 1];
  const int64_t sd = volume ? conv.strides()[0] : 1, dd = volume ? conv.dilations()[0] : 1,
                pd = volume ? conv.pads()[0] : 0;
  // A plain weight's vectors are gathers: the stem stages a tile's O blocks of them on the stack
  // (below), so O is bounded by what fits there.
  const int64_t stagedBytesPerBlock = ICB * KH * KW * B * 4;
  const int64_t maxBlocks = depthwise ? 1
                            : plain   ? std::max<int64_t>(1, kMaxStagedBytes / stagedBytesPerBlock)
                                      : 4;
  const ConvTile tileShape =
      convTile(owStatic.value_or(1 << 20), OCB / convGroups, c.opts.vectorRegisters, maxBlocks);
  const int64_t O = tileShape.blocks;
  int64_t T = tileShape.columns; // the columns of the tile being built (see below)
  // Static extents: tiles of T over the row, the last one clamped when T does not divide OW.
  const int64_t tiles = staticExtents ? (*owStatic + T - 1) / T : 0;
  const bool tail = staticExtents && *owStatic % T != 0;
  // Guards only where a tap can leave the input.
  const bool rowGuard =
      ph > 0 || !ohStatic || !ihStatic || (*ohStatic - 1) * sh - ph + (KH - 1) * dh >= *ihStatic;
  const bool colGuard =
      pw > 0 || tail || !iwStatic || (*owStatic - 1) * sw - pw + (KW - 1) * dw >= *iwStatic;
  const bool depthGuard = volume && (pd > 0 || !OD.asInt() || !ID.asInt() ||
                                     (*OD.asInt() - 1) * sd - pd + (KD - 1) * dd >= *ID.asInt());
  // The rows the parallel loop runs over: OH, or OD x OH (a 3-D conv's depth and rows).
  const Expr outRows = volume ? mulExtents(OD, OH) : OH;

  loop::Var q = c.newVar("q"), owo = c.newVar("owo");
  Expr qv = loop::var(q);
  const int64_t groups = OCB / O;
  // A plain weight's vector of B output channels is a gather (stride I * KH * KW): the stem
  // copies its O x ICB*KH*KW vectors into a local buffer once per chunk of output rows, and the
  // tiles load them from there. Bounded so the buffer stays on the stack (32 KiB).
  const int64_t taps = ICB * KH * KW;
  const bool stageWeights = plain && O * taps * B * 4 <= kMaxStagedBytes;
  const int64_t chunkRows = stageWeights ? std::min<int64_t>(ohStatic.value_or(8), 8) : 1;
  const Expr chunks = ceilDivExtent(OH, chunkRows);
  loop::Var row = c.newVar("r");
  Expr n, group, oh;
  if (stageWeights) {
    n = bin(ExprKind::FloorDiv, qv, mulExtents(imm(groups), chunks));
    group = bin(ExprKind::FloorMod, bin(ExprKind::FloorDiv, qv, chunks), imm(groups));
    oh = bin(ExprKind::FloorMod, qv, chunks) * imm(chunkRows) + loop::var(row);
  } else if (rowsOuter(c, N, outRows, groups)) {
    n = bin(ExprKind::FloorDiv, qv, mulExtents(imm(groups), outRows));
    oh = bin(ExprKind::FloorMod, bin(ExprKind::FloorDiv, qv, imm(groups)), outRows);
    group = bin(ExprKind::FloorMod, qv, imm(groups));
  } else {
    n = bin(ExprKind::FloorDiv, qv, mulExtents(imm(groups), outRows));
    group = bin(ExprKind::FloorMod, bin(ExprKind::FloorDiv, qv, outRows), imm(groups));
    oh = bin(ExprKind::FloorMod, qv, outRows);
  }
  // A 3-D conv's row index covers depth and row.
  Expr od = imm(0);
  if (volume) {
    od = bin(ExprKind::FloorDiv, oh, OH);
    oh = bin(ExprKind::FloorMod, oh, OH);
  }
  // The kernel depth tap of the reduction being built (3-D) and its input depth.
  loop::Var kd;
  auto idAt = [&] { return od * imm(sd) - imm(pd) + loop::var(kd) * imm(dd); };
  // A blocked index [a, b, rest...] of a 2-D conv, with a 3-D conv's depth `d` after b.
  auto withDepth = [&](Exprs at, const Expr &d) {
    if (volume)
      at.insert(at.begin() + 2, d);
    return at;
  };
  loop::Buffer staged = loop::makeBuffer(c.newName("wstage"), DType::F32,
                                         {imm(O), imm(taps), imm(B)}, {}, loop::MemoryScope::Local);
  auto ocbOf = [&](int64_t o) { return O == 1 ? group : group * imm(O) + imm(o); };
  // The input block icb of the tile's group (tiles never straddle groups: O divides OCB/groups).
  auto inBlock = [&](const loop::Var &icb) {
    return convGroups == 1 ? loop::var(icb)
                           : bin(ExprKind::FloorDiv, ocbOf(0), imm(OCB / convGroups)) * imm(ICB) +
                                 loop::var(icb);
  };
  Expr lanes = loop::ramp(imm(0), imm(1), static_cast<int>(B));
  loop::Buffer acc;
  auto accAt = [&](int64_t o, int64_t t) { return Exprs{imm(o), imm(t), lanes}; };
  // Output column of the tile's column t (tile owo of T columns).
  std::function<Expr(int64_t)> column = [&](int64_t t) {
    return loop::var(owo) * imm(T) + imm(t);
  };
  auto outChannels = [&](int64_t o) {
    return loop::ramp(ocbOf(o) * imm(B), imm(1), static_cast<int>(B));
  };

  // Symbolic extents with padding along the row: border tiles stage their input window
  // (reductionStaged) in one local buffer sized for the widest tile, allocated once per row
  // around all its tiles (its zero fill, a memset, would cost a 3x3 depthwise tile as much as
  // its taps). A stride or dilation too large for a window guards each tap instead.
  const int64_t padEnd = conv.pads()[conv.pads().size() / 2 + sp + 1];
  auto spanOf = [&](int64_t columns) { return (columns - 1) * sw + (KW - 1) * dw + 1; };
  const bool stageWindows = !staticExtents && (pw > 0 || padEnd > 0) && sw <= kMaxWindowBytes &&
                            dw <= kMaxWindowBytes &&
                            spanOf(T) * (plain ? 1 : B) * 4 <= kMaxWindowBytes;
  loop::Buffer window;
  if (stageWindows) // (a plain input's window holds values; a blocked one's B lanes per column)
    window = loop::makeBuffer(c.newName("window"), DType::F32, {imm(spanOf(T)), imm(plain ? 1 : B)},
                              {}, loop::MemoryScope::Local);

  // One tile of T columns: accumulators, their reduction and the stores; `perTap`: the guards
  // decided per tap column at run time (symbolic extents, reductionPerTap).
  auto buildTile = [&](bool perTap) -> Stmt {
    acc = loop::makeBuffer(c.newName("acc"), DType::F32, {imm(O), imm(T), imm(B)}, {},
                           loop::MemoryScope::Local);
    std::vector<Stmt> init;
    for (int64_t o = 0; o < O; ++o) {
      Expr start = c.ins.size() > 2
                       ? loop::load(c.ins[2], {outChannels(o)})
                       : loop::broadcast(loop::floatImm(0, DType::F32), static_cast<int>(B));
      for (int64_t t = 0; t < T; ++t)
        init.push_back(loop::store(acc, accAt(o, t), start));
    }

    auto summed = [&](const loop::Var &v, int64_t extent, Stmt body) {
      return c.loopOver(v, extent, LoopRole::Reduction, std::move(body));
    };
    // The reduction over (icb, kh, kw, bi) into the accumulators; `guarded` handles taps left or
    // right of the input and a column tail.
    // The O weight vectors of tap (icb, kh, kw, bi).
    auto weightVectors = [&](const Expr &icb, const Expr &kh, const Expr &kw, const Expr &bi) {
      std::vector<Expr> wv;
      for (int64_t o = 0; o < O; ++o) {
        if (stageWeights) {
          wv.push_back(loop::load(staged, {imm(o), (icb * imm(KH) + kh) * imm(KW) + kw, lanes}));
        } else if (plain) {
          wv.push_back(loop::load(c.ins[1], {outChannels(o), icb, kh, kw}));
        } else {
          Exprs at = depthwise ? Exprs{ocbOf(o), imm(0), kh, kw, imm(0), lanes}
                               : Exprs{ocbOf(o), icb, kh, kw, bi, lanes};
          wv.push_back(loop::load(c.ins[1], withDepth(at, volume ? loop::var(kd) : Expr())));
        }
      }
      return wv;
    };
    // acc[o, t] += x(iw) * w_o for every o: x one input value for all B output channels, or
    // (depthwise) B channels' own values.
    auto accumulate = [&](int64_t t, Expr xv, const std::vector<Expr> &wv,
                          std::vector<Stmt> &update) {
      if (!depthwise)
        xv = loop::broadcast(xv, static_cast<int>(B));
      for (int64_t o = 0; o < O; ++o) {
        Expr sum = loop::call(loop::Intrinsic::Fma, {xv, wv[o], loop::load(acc, accAt(o, t))});
        update.push_back(loop::store(acc, accAt(o, t), sum));
      }
    };
    auto inputAt = [&](const loop::Var &icb, const Expr &ih, const Expr &iw, const Expr &bi) {
      if (plain)
        return loop::load(c.ins[0], {n, loop::var(icb), ih, iw});
      Exprs at = depthwise ? Exprs{n, ocbOf(0), ih, iw, lanes} : Exprs{n, inBlock(icb), ih, iw, bi};
      return loop::load(c.ins[0], withDepth(at, volume ? idAt() : Expr()));
    };
    // The sum over rows (and input blocks) around `taps`, rows outside the input skipped.
    auto overRows = [&](const loop::Var &icb, const loop::Var &kh, const Expr &ih, Stmt taps) {
      if (rowGuard)
        taps = loop::ifThenElse(
            bin(ExprKind::And, bin(ExprKind::GE, ih, imm(0)), bin(ExprKind::LT, ih, IH)), taps);
      Stmt rowsOfTaps = summed(kh, KH, taps);
      if (volume) { // depth taps outside the input are skipped like rows
        Expr id = idAt();
        if (depthGuard)
          rowsOfTaps = loop::ifThenElse(
              bin(ExprKind::And, bin(ExprKind::GE, id, imm(0)), bin(ExprKind::LT, id, ID)),
              rowsOfTaps);
        rowsOfTaps = summed(kd, KD, rowsOfTaps);
      }
      return ICB == 1 && depthwise ? rowsOfTaps : summed(icb, ICB, rowsOfTaps);
    };
    // The updates of the tile's columns at tap (icb, ih, kw, bi); `guarded`: a tap left or right
    // of the input (or a column past OW with `tail`) reads a clamped address and adds 0.
    // Input columns `from` .. `to` (inclusive) all lie inside the input row.
    auto readsInside = [&](const Expr &from, const Expr &to) {
      return bin(ExprKind::And, bin(ExprKind::GE, from, imm(0)), bin(ExprKind::LT, to, IW));
    };
    auto tapUpdates = [&](const loop::Var &icb, const loop::Var &kh, const Expr &ih,
                          const loop::Var &kw, const loop::Var &bi, bool guarded) {
      std::vector<Expr> wv =
          weightVectors(loop::var(icb), loop::var(kh), loop::var(kw), loop::var(bi));
      std::vector<Stmt> update;
      for (int64_t t = 0; t < T; ++t) {
        Expr iw = column(t) * imm(sw) - imm(pw) + loop::var(kw) * imm(dw);
        Expr last = iwStatic ? imm(*iwStatic - 1) : IW - imm(1);
        Expr at = guarded ? bin(ExprKind::Max, bin(ExprKind::Min, iw, last), imm(0)) : iw;
        Expr xv = inputAt(icb, ih, at, loop::var(bi));
        if (guarded) {
          Expr zero = loop::floatImm(0, DType::F32);
          if (depthwise)
            zero = loop::broadcast(zero, static_cast<int>(B));
          Expr ok = readsInside(iw, iw);
          if (tail)
            ok = bin(ExprKind::And, ok, bin(ExprKind::LT, column(t), OW));
          xv = loop::select(ok, xv, zero);
        }
        accumulate(t, xv, wv, update);
      }
      return BI == 1 ? loop::seq(update) : summed(bi, BI, loop::seq(update));
    };
    // The reduction over (icb, kh, kw, bi) into the accumulators, guarded or not.
    auto reduction = [&](bool guarded) {
      loop::Var icb = c.newVar("icb"), kh = c.newVar("kh"), kw = c.newVar("kw"),
                bi = c.newVar("bi");
      if (volume)
        kd = c.newVar("kd");
      Expr ih = oh * imm(sh) - imm(ph) + loop::var(kh) * imm(dh);
      Stmt taps = summed(kw, KW, tapUpdates(icb, kh, ih, kw, bi, guarded));
      return overRows(icb, kh, ih, taps);
    };
    // Symbolic extents: per tap column kw, the tile's columns all read inside the input (one
    // branch per kw, the unguarded updates) or some do not (the guarded ones): a tile at a row's
    // border guards only the taps that reach past it.
    auto reductionPerTap = [&]() {
      loop::Var icb = c.newVar("icb"), kh = c.newVar("kh"), kw = c.newVar("kw");
      if (volume)
        kd = c.newVar("kd");
      loop::Var bi = c.newVar("bi"), biGuarded = c.newVar("bi");
      Expr ih = oh * imm(sh) - imm(ph) + loop::var(kh) * imm(dh);
      Expr first = column(0) * imm(sw) - imm(pw) + loop::var(kw) * imm(dw);
      Expr last = column(T - 1) * imm(sw) - imm(pw) + loop::var(kw) * imm(dw);
      Stmt tap = loop::ifThenElse(readsInside(first, last), tapUpdates(icb, kh, ih, kw, bi, false),
                                  tapUpdates(icb, kh, ih, kw, biGuarded, true));
      return overRows(icb, kh, ih, summed(kw, KW, tap));
    };
    // Symbolic extents, a tile's input window staged: per input row (and block), a tile whose
    // taps all read inside the input sums them straight from it; one at a row's border first
    // copies the span of input columns its taps read into the local window, zero where a column
    // lies outside the input, and sums its taps from there without guards. The copies cost a
    // branch each per row against the tap loop's T * KW * BI multiply-adds per output block (a
    // clamped select on each multiply-add cost resnet18's 7x7 stage and convnext's depthwise 7x7
    // convs, whose every tile is a border tile, up to 2.7x).
    auto reductionStaged = [&]() {
      loop::Var icb = c.newVar("icb"), kh = c.newVar("kh"), kw = c.newVar("kw"),
                kwWindow = c.newVar("kw");
      if (volume)
        kd = c.newVar("kd");
      loop::Var bi = c.newVar("bi"), biWindow = c.newVar("bi");
      Expr ih = oh * imm(sh) - imm(ph) + loop::var(kh) * imm(dh);
      Expr first = column(0) * imm(sw) - imm(pw);
      Expr inside = readsInside(first, first + imm(spanOf(T) - 1));
      Expr column0 = plain ? imm(0) : lanes, zero = loop::floatImm(0, DType::F32);
      if (!plain)
        zero = loop::broadcast(zero, static_cast<int>(B));
      loop::Var j = c.newVar("j");
      Expr iw = first + loop::var(j);
      Exprs from = plain ? Exprs{n, loop::var(icb), ih, iw}
                         : withDepth(Exprs{n, depthwise ? ocbOf(0) : inBlock(icb), ih, iw, lanes},
                                     volume ? idAt() : Expr());
      Stmt fill = c.loopOver(
          j, spanOf(T), LoopRole::Parallel,
          loop::ifThenElse(readsInside(iw, iw), loop::store(window, {loop::var(j), column0}, loop::load(c.ins[0], from)),
                           loop::store(window, {loop::var(j), column0}, zero)));
      std::vector<Expr> wv =
          weightVectors(loop::var(icb), loop::var(kh), loop::var(kwWindow), loop::var(biWindow));
      std::vector<Stmt> update;
      for (int64_t t = 0; t < T; ++t) {
        Expr w = imm(t * sw) + loop::var(kwWindow) * imm(dw);
        Expr x = loop::load(window, {w, depthwise ? lanes : plain ? imm(0) : loop::var(biWindow)});
        accumulate(t, x, wv, update);
      }
      Stmt fromWindow = BI == 1 ? loop::seq(update) : summed(biWindow, BI, loop::seq(update));
      Stmt staged = loop::seq({fill, summed(kwWindow, KW, fromWindow)});
      Stmt direct = summed(kw, KW, tapUpdates(icb, kh, ih, kw, bi, false));
      return overRows(icb, kh, ih, loop::ifThenElse(inside, direct, staged));
    };
    // The reduction of border tile `k` (known at compile time): taps are unrolled over kw and
    // those left or right of the input, or past OW, are left out instead of being clamped and
    // selected per tap. The terms that remain are summed in the same order.
    auto borderReduction = [&](int64_t k) {
      loop::Var icb = c.newVar("icb"), kh = c.newVar("kh");
      if (volume)
        kd = c.newVar("kd");
      Expr ih = oh * imm(sh) - imm(ph) + loop::var(kh) * imm(dh);
      std::vector<Stmt> perTap;
      for (int64_t kw = 0; kw < KW; ++kw) {
        loop::Var bi = c.newVar("bi");
        std::vector<Expr> wv = weightVectors(loop::var(icb), loop::var(kh), imm(kw), loop::var(bi));
        std::vector<Stmt> update;
        for (int64_t t = 0; t < T; ++t) {
          const int64_t col = k * T + t, iw = col * sw - pw + kw * dw;
          if (col < *owStatic && iw >= 0 && iw < *iwStatic)
            accumulate(t, inputAt(icb, ih, imm(iw), loop::var(bi)), wv, update);
        }
        if (!update.empty())
          perTap.push_back(BI == 1 ? loop::seq(update) : summed(bi, BI, loop::seq(update)));
      }
      return overRows(icb, kh, ih, loop::seq(perTap));
    };
    // Most tiles lie inside the input: they run without any per-tap guard. The few border tiles
    // (the first and last, usually; every tile when a row is one tile, as at 7x7 and 14x14) get
    // unrolled reductions of their own; with many of them (strided, wide padding) one guarded
    // reduction serves them all.
    // (Border tiles are known only for static extents; symbolic ones guard per tap column.)
    auto tileInside = [&](int64_t k) {
      return k * T * sw - pw >= 0 && (k * T + T - 1) * sw - pw + (KW - 1) * dw < *iwStatic &&
             (!tail || k * T + T - 1 < *owStatic);
    };
    std::vector<int64_t> borderTiles;
    for (int64_t k = 0; colGuard && !perTap && k < tiles; ++k)
      if (!tileInside(k))
        borderTiles.push_back(k);
    Stmt reduce;
    if (perTap) {
      // (Without padding along the row no tile reaches past the input, its last tap reading at
      // most column IW - 1: the per-tap guards never run.)
      reduce = stageWindows ? reductionStaged() : reductionPerTap();
    } else if (!colGuard) {
      reduce = reduction(false);
    } else if (borderTiles.size() <= 4) {
      reduce = borderTiles.size() == static_cast<size_t>(tiles) ? Stmt() : reduction(false);
      for (auto it = borderTiles.rbegin(); it != borderTiles.rend(); ++it)
        reduce = reduce ? loop::ifThenElse(bin(ExprKind::EQ, loop::var(owo), imm(*it)),
                                           borderReduction(*it), reduce)
                        : borderReduction(*it);
    } else {
      Expr first = column(0) * imm(sw) - imm(pw);
      Expr inside = readsInside(first, column(T - 1) * imm(sw) - imm(pw) + imm((KW - 1) * dw));
      if (tail)
        inside = bin(ExprKind::And, inside, bin(ExprKind::LT, column(T - 1), OW));
      reduce = loop::ifThenElse(inside, reduction(false), reduction(true));
    }

    std::vector<Stmt> finish;
    for (int64_t t = 0; t < T; ++t) {
      std::vector<Stmt> stores;
      for (int64_t o = 0; o < O; ++o) {
        Exprs where = plain && !blockedOut
                          ? Exprs{n, outChannels(o), oh, column(t)}
                          : withDepth(Exprs{n, ocbOf(o), oh, column(t), lanes}, od);
        stores.push_back(c.storeOut(where, loop::load(acc, accAt(o, t))));
      }
      Stmt st = loop::seq(stores);
      finish.push_back(tail ? loop::ifThenElse(bin(ExprKind::LT, column(t), OW), st) : st);
    }
    return loop::allocate(acc, loop::seq({loop::seq(init), reduce, loop::seq(finish)}));
  };
  Stmt columns;
  if (staticExtents) {
    columns = c.loopOver(owo, tiles, LoopRole::Parallel, buildTile(false));
  } else {
    // Symbolic extents: the row in tiles of T, then of T/2, T/4, ... 1 for what it leaves (a
    // 7-wide row is not one masked 14-wide tile), each tile guarding only the tap columns that
    // reach past the input (reductionPerTap).
    const int64_t widest = T;
    std::vector<Stmt> parts;
    Expr done = imm(0); // the first column not yet covered
    for (T = widest;; T = std::max<int64_t>(1, T / 2)) {
      const Expr start = done;
      Expr count = bin(ExprKind::FloorDiv, OW - start, imm(T));
      column = [&, start](int64_t t) {
        Expr at = loop::var(owo) * imm(T) + imm(t);
        return start.asInt() == 0 ? at : start + at;
      };
      owo = c.newVar("owo");
      parts.push_back(c.loopOver(owo, count, LoopRole::Parallel, buildTile(true)));
      done = start.asInt() == 0 ? count * imm(T) : start + count * imm(T);
      if (T == 1)
        break;
    }
    T = widest;
    columns = stageWindows ? loop::allocate(window, loop::seq(parts)) : loop::seq(parts);
  }
  // The structure is final (unrolled columns, constant accumulator indices); whether q runs in
  // parallel is the schedule's choice, from the work recorded here.
  c.nest(q, {std::string(c.op.opName()),
             nominal(N) * OCB * B * nominal(OD) * nominal(OH) * nominal(OW) * ICB * BI * KD * KH * KW,
             true});
  if (!stageWeights)
    return c.loopOver(q, mulExtents(mulExtents(N, imm(groups)), outRows), LoopRole::Parallel,
                      columns);
  loop::Var f = c.newVar("f");
  Exprs tap = delinearize(loop::var(f), extentsOf({ICB, KH, KW}));
  std::vector<Stmt> copies;
  for (int64_t o = 0; o < O; ++o)
    copies.push_back(loop::store(staged, {imm(o), loop::var(f), lanes},
                                 loop::load(c.ins[1], {outChannels(o), tap[0], tap[1], tap[2]})));
  Stmt fill = c.loopOver(f, taps, LoopRole::Parallel, loop::seq(copies));
  // The last chunk's rows past OH are skipped.
  Stmt rows = c.loopOver(row, chunkRows, LoopRole::Parallel,
                         !ohStatic || *ohStatic % chunkRows
                             ? loop::ifThenElse(bin(ExprKind::LT, oh, OH), columns)
                             : columns);
  return c.loopOver(q, mulExtents(mulExtents(N, imm(groups)), chunks), LoopRole::Parallel,
                    loop::allocate(staged, loop::seq({fill, rows})));
}

} // namespace strata::lower
