// A register-tiled micro-kernel for f32 matmul whose columns fill whole vectors (N a multiple of
// 8, vectors of the target's width where N allows): each tile of R rows x C vectors of columns
// keeps R * C vector accumulators in registers and is updated by rank-1 steps, one per k:
//
//   for p in [0, batches * colTiles * rowTiles)         (row tiles fastest: see tileOrder)
//     acc[R, C, 0:8] = bias columns, or the row's bias broadcast (or 0)
//     for k in [0, K)
//       b_c = b[.., k, j0 + 8c : +8]                      (C vector loads)
//       acc[r, c] = fma(broadcast(a[.., i0 + r, k]), b_c, acc[r, c])
//     out[.., i0 + r, j0 + 8c : +8] = acc[r, c]           (rows past M neither read nor stored)
//
// R = min(M, 4); C as wide as the target's registers allow next to the accumulators (R * C
// accumulators, C loads of b and one broadcast of a), at most 8: a small M (a GEMV, M = 1)
// gets many independent accumulators to hide the FMA latency, a large one more reuse of each
// broadcast. C divides the vectors of N where a divisor near the widest is found; otherwise the
// last column tile is clamped like the row tail (its extra vectors recomputed, not stored).
// With b in panels (b_panel = p, [N/p, K, p], written by pack-matmul-weights) a column tile is
// one panel, C = p / lanes, and its loads walk one contiguous block. A K whose panel would not
// stay in a core's cache is summed in blocks over groups of row tiles (kBlockFor):
//
//   for p in [0, batches * colTiles * rowGroups)
//     for kb in [0, K / kc), for g in [0, G)            (row tile mt = group * G + g)
//       acc = kb == 0 ? bias : partial[g]; sum k in [kb * kc, kb * kc + kc)
//       kb == last ? out[...] = acc : partial[g] = acc
//
// Rows and columns are unrolled in the IR so the accumulators have constant indices. The sum over
// k is in ascending order with fused multiply-adds, the bias first: the interpreter's terms in
// another rounding, like its blocked GEMM.
#include "LowerImpl.h"
#include "strata/graph/Layout.h"

#include <algorithm>

namespace strata::lower {

namespace {

using loop::ExprKind;

// The vector lanes for N columns: the target's f32 width when N fills such vectors (or, for an N
// no width divides, when it holds at least one), else 8.
int64_t lanesFor(const LowerCtx &c, int64_t n) {
  int64_t w = c.opts.vectorLanesF32;
  return w > 8 && (n % w == 0 || (n % 8 != 0 && n >= w)) ? w : 8;
}

// b's panel width (matmul's b_panel), 0 when b is a plain [.., K, N].
int64_t panelOf(const LowerCtx &c) { return ops::MatMulOp(c.op).b_panel(); }

// Columns of the product: b's last dim, or panels x width.
int64_t columnsOf(const LowerCtx &c) {
  const Shape &b = c.inShapes[1];
  int64_t panel = panelOf(c);
  return panel ? b[0] * panel : b.back();
}

// The vector lanes: as lanesFor, but a panel must hold whole vectors.
int64_t tileLanes(const LowerCtx &c, int64_t n) {
  int64_t lanes = lanesFor(c, n), panel = panelOf(c);
  return panel && panel % lanes != 0 ? 8 : lanes;
}

// K blocking: a column tile's panel of b (K x C vectors) is read once per row tile; while it
// fits a core's L2 (with a's rows beside it) that read is cheap, past it every row tile
// streams it from L3 or memory again (197 x 3072 x 768, a transformer's FFN down projection:
// 76% of the FMA roof against 90% at K = 768). A longer K is summed in blocks of kc: for each
// block, a group of row tiles accumulates its share, keeping partial sums in a local buffer
// between blocks, so the block's kc x C vectors of b stay cached for the whole group (BERT,
// GPT-2 and ViT layers ~10% faster; K = 768 at 6 vectors of 16 lanes, 295 KB, stays whole).
constexpr int64_t kPanelBudgetBytes = 320 * 1024, kRowsBudgetBytes = 128 * 1024,
                  kPartialBudgetBytes = 64 * 1024;

// kc for a panel of `columns` f32 columns and static K: the largest divisor of K whose block of
// b fits kPanelBudgetBytes, at least 64; 0 (no blocking) when the whole panel fits or no such
// divisor exists.
int64_t kBlockFor(int64_t k, int64_t columns) {
  const int64_t most = kPanelBudgetBytes / (columns * 4);
  if (k <= most)
    return 0;
  for (int64_t kc = most; kc >= 64; --kc)
    if (k % kc == 0)
      return kc;
  return 0;
}

} // namespace

bool canLowerTiledMatMul(const LowerCtx &c) {
  const Shape &a = c.inShapes[0], &b = c.inShapes[1], &out = c.outShapes[0];
  if (c.inTypes[0] != DType::F32 || a.size() < 2 || b.size() < 2 || out.size() < 2)
    return false;
  // N past its last whole vector (196 = 12 x 16 + 4) gets scalar tail columns; panels hold whole
  // vectors.
  int64_t n = columnsOf(c), panel = panelOf(c);
  // N static (a symbolic dim reads -1); rows, K and batch dims may be run-time extents.
  if (n < 8 || (panel && n % 8 != 0) || a.back() == 0 || a[a.size() - 2] == 0 || panel % 8 != 0)
    return false;
  // A bias per column ([N]) or, for an unbatched a, per row ([M, 1]: conv1x1-to-matmul's).
  return c.ins.size() < 3 || c.inShapes[2] == Shape{n} ||
         (a.size() == 2 && c.inShapes[2].size() == 2 && c.inShapes[2][1] == 1 &&
          loop::equal(c.inDims[2][0], c.inDims[0][0]));
}

Stmt lowerTiledMatMul(LowerCtx &c) {
  const Shape &bs = c.inShapes[1];
  // With an unbatched right operand, the left operand's batch dims are just more rows
  // ([S, 1, K] x [K, N] is one S x K by K x N product, not S products of one row).
  const int64_t panel = panelOf(c);
  const bool flat = bs.size() == 2 || panel != 0;
  const Exprs &ad = c.inDims[0], &od = c.outDims[0];
  // Rows (with an unbatched b, the left operand's batch dims too) and batch dims may be run-time
  // extents; K and N are static.
  Expr Mx = ad[ad.size() - 2];
  if (flat)
    for (size_t d = 0; d + 2 < ad.size(); ++d)
      Mx = mulExtents(Mx, ad[d]);
  const std::optional<int64_t> Ms = Mx.asInt();
  const Expr K = ad.back();
  const int64_t N = columnsOf(c), kLanes = tileLanes(c, N);
  const int64_t R = Ms ? std::min<int64_t>(*Ms, 4) : 4;
  const int64_t vectors = N / kLanes;
  // In panels, a column tile is one panel: its K x C vectors are contiguous.
  const int64_t C =
      panel ? panel / kLanes : matMulColumnVectors(vectors, R, c.opts.vectorRegisters);
  const int64_t colTiles = (vectors + C - 1) / C;
  const Expr rowTiles = ceilDivExtent(Mx, R);
  const bool rowTail = !Ms || *Ms % R != 0, colTail = vectors % C != 0;
  const Expr lastRow = Ms ? imm(*Ms - 1) : Mx - imm(1);
  Exprs batch = flat ? Exprs{} : Exprs(od.begin(), od.end() - 2);
  Exprs aBatch = flat ? Exprs{} : Exprs(ad.begin(), ad.end() - 2);
  Exprs bBatch = flat ? Exprs{} : Exprs(c.inDims[1].begin(), c.inDims[1].end() - 2);
  const Exprs aRows(ad.begin(), ad.end() - 1), outRows(od.begin(), od.end() - 1);
  Expr batches = imm(1);
  for (const Expr &d : batch)
    batches = mulExtents(batches, d);
  auto nominal = [](const Expr &e) { return e.asInt().value_or(64); };

  loop::Var p = c.newVar("p"), k = c.newVar("k");
  Expr pv = loop::var(p);
  // K in blocks of kc (kBlockFor), each summed over a group of G row tiles at a time.
  const std::optional<int64_t> Ks = K.asInt();
  const int64_t kc = Ks ? kBlockFor(*Ks, C * kLanes) : 0, kBlocks = kc ? *Ks / kc : 1;
  int64_t G = kc ? std::max<int64_t>(1, kRowsBudgetBytes / (R * kc * 4)) : 1;
  if (Ms)
    G = std::min(G, (*Ms + R - 1) / R);
  // The partial sums live on the stack: at most kPartialBudgetBytes of them.
  G = std::max<int64_t>(1, std::min(G, kPartialBudgetBytes / (R * C * kLanes * 4)));
  loop::Var kb = c.newVar("kb"), g = c.newVar("g");
  // Row tiles (or groups of them) fastest: consecutive tiles (one thread's share of p) reuse one
  // panel of b (K x C vectors) from cache while the rows of a stream past, instead of every row
  // tile reading all of b again.
  const Expr rowSteps = kc ? ceilDivExtent(rowTiles, G) : rowTiles;
  Expr mt = kc ? bin(ExprKind::FloorMod, pv, rowSteps) * imm(G) + loop::var(g)
               : bin(ExprKind::FloorMod, pv, rowTiles);
  Expr nt = bin(ExprKind::FloorMod, bin(ExprKind::FloorDiv, pv, rowSteps), imm(colTiles));
  Expr bt = bin(ExprKind::FloorDiv, pv, mulExtents(imm(colTiles), rowSteps));
  const Expr kAt = kc ? loop::var(kb) * imm(kc) + loop::var(k) : loop::var(k);
  Exprs bIdx = delinearize(bt, batch);
  Exprs aPre = broadcastIndex(bIdx, batch, aBatch), bPre = broadcastIndex(bIdx, batch, bBatch);
  auto with = [](Exprs v, std::initializer_list<Expr> more) {
    v.insert(v.end(), more);
    return v;
  };
  // Vector ci of the tile; in a clamped last tile, vectors past N repeat the last one.
  auto vectorAt = [&](int64_t ci) { return nt * imm(C) + imm(ci); };
  auto cols = [&](int64_t ci) {
    Expr v = colTail ? bin(ExprKind::Min, vectorAt(ci), imm(vectors - 1)) : vectorAt(ci);
    return loop::ramp(v * imm(kLanes), imm(1), static_cast<int>(kLanes));
  };
  auto row = [&](int64_t r) { return mt * imm(R) + imm(r); };
  loop::Buffer acc = loop::makeBuffer(c.newName("acc"), DType::F32, {imm(R), imm(C), imm(kLanes)},
                                      {}, loop::MemoryScope::Local);
  Expr lanes = loop::ramp(imm(0), imm(1), static_cast<int>(kLanes));
  auto accAt = [&](int64_t r, int64_t ci) { return Exprs{imm(r), imm(ci), lanes}; };

  std::vector<Stmt> init, update, finish;
  const bool rowBias = c.ins.size() > 2 && c.inShapes[2].size() == 2;
  auto biasAt = [&](int64_t r, int64_t ci) -> Expr {
    if (c.ins.size() < 3)
      return loop::broadcast(loop::floatImm(0, DType::F32), static_cast<int>(kLanes));
    if (!rowBias)
      return loop::load(c.ins[2], {cols(ci)});
    Expr i = rowTail ? bin(ExprKind::Min, row(r), lastRow) : row(r);
    return loop::broadcast(loop::load(c.ins[2], {i, imm(0)}), static_cast<int>(kLanes));
  };
  for (int64_t r = 0; r < R; ++r)
    for (int64_t ci = 0; ci < C; ++ci)
      init.push_back(loop::store(acc, accAt(r, ci), biasAt(r, ci)));
  std::vector<Expr> bv;
  for (int64_t ci = 0; ci < C; ++ci)
    bv.push_back(panel ? loop::load(c.ins[1], {nt, kAt,
                                               loop::ramp(imm(ci * kLanes), imm(1),
                                                          static_cast<int>(kLanes))})
                       : loop::load(c.ins[1], with(bPre, {kAt, cols(ci)})));
  for (int64_t r = 0; r < R; ++r) {
    Expr i = rowTail ? bin(ExprKind::Min, row(r), lastRow) : row(r);
    Exprs aIdx = flat ? with(delinearize(i, aRows), {kAt}) : with(aPre, {i, kAt});
    Expr av = loop::broadcast(loop::load(c.ins[0], aIdx), static_cast<int>(kLanes));
    for (int64_t ci = 0; ci < C; ++ci)
      update.push_back(loop::store(
          acc, accAt(r, ci), loop::call(loop::Intrinsic::Fma, {av, bv[ci], loop::load(acc, accAt(r, ci))})));
  }
  for (int64_t r = 0; r < R; ++r) {
    std::vector<Stmt> stores;
    for (int64_t ci = 0; ci < C; ++ci) {
      Stmt st = c.storeOut(
          flat ? with(delinearize(row(r), outRows), {cols(ci)}) : with(bIdx, {row(r), cols(ci)}),
          loop::load(acc, accAt(r, ci)));
      // Vector 0 of a tile always exists; the others of a clamped last tile may not.
      bool mayBePast = colTail && ci > 0 && (colTiles - 1) * C + ci >= vectors;
      stores.push_back(mayBePast ? loop::ifThenElse(bin(ExprKind::LT, vectorAt(ci), imm(vectors)), st) : st);
    }
    Stmt st = loop::seq(stores);
    // A clamped tail row computed row M-1 again: store only the real rows.
    finish.push_back(rowTail ? loop::ifThenElse(bin(ExprKind::LT, row(r), Mx), st) : st);
  }
  Stmt reduce = c.loopOver(k, kc ? imm(kc) : K, LoopRole::Reduction, loop::seq(update));
  // Blocked K: the first block starts from the bias, later ones from the partial sums the
  // previous block left in `partial`; only the last one stores (through the epilogue).
  loop::Buffer partial;
  if (kc) {
    partial = loop::makeBuffer(c.newName("partial"), DType::F32, {imm(G * R), imm(C), imm(kLanes)},
                               {}, loop::MemoryScope::Local);
    auto partialAt = [&](int64_t r, int64_t ci) {
      return Exprs{loop::var(g) * imm(R) + imm(r), imm(ci), lanes};
    };
    std::vector<Stmt> resume, keep;
    for (int64_t r = 0; r < R; ++r)
      for (int64_t ci = 0; ci < C; ++ci) {
        resume.push_back(loop::store(acc, accAt(r, ci), loop::load(partial, partialAt(r, ci))));
        keep.push_back(loop::store(partial, partialAt(r, ci), loop::load(acc, accAt(r, ci))));
      }
    Stmt first = loop::seq(init);
    init = {loop::ifThenElse(bin(ExprKind::EQ, loop::var(kb), imm(0)), first, loop::seq(resume))};
    Stmt last = loop::seq(finish);
    finish = {loop::ifThenElse(bin(ExprKind::EQ, loop::var(kb), imm(kBlocks - 1)), last,
                               loop::seq(keep))};
  }
  Stmt tile = loop::allocate(acc, loop::seq({loop::seq(init), reduce, loop::seq(finish)}));
  // Columns past the last whole vector: scalar accumulators, once per row tile, in the last
  // column tile (the same ascending sum over k, bias first).
  if (const int64_t tail = N - vectors * kLanes; tail > 0) {
    loop::Buffer accT = loop::makeBuffer(c.newName("tail"), DType::F32, {imm(R), imm(tail)}, {},
                                         loop::MemoryScope::Local);
    loop::Var kt = c.newVar("k");
    std::vector<Stmt> tInit, tUpdate, tFinish;
    for (int64_t r = 0; r < R; ++r) {
      Expr i = rowTail ? bin(ExprKind::Min, row(r), lastRow) : row(r);
      Exprs aIdx =
          flat ? with(delinearize(i, aRows), {loop::var(kt)}) : with(aPre, {i, loop::var(kt)});
      std::vector<Stmt> rowStores;
      for (int64_t t = 0; t < tail; ++t) {
        Expr col = imm(vectors * kLanes + t);
        Expr bias = c.ins.size() < 3 ? loop::floatImm(0, DType::F32)
                    : rowBias        ? loop::load(c.ins[2], {i, imm(0)})
                                     : loop::load(c.ins[2], {col});
        tInit.push_back(loop::store(accT, {imm(r), imm(t)}, bias));
        tUpdate.push_back(
            loop::store(accT, {imm(r), imm(t)},
                        loop::call(loop::Intrinsic::Fma,
                                   {loop::load(c.ins[0], aIdx),
                                    loop::load(c.ins[1], with(bPre, {loop::var(kt), col})),
                                    loop::load(accT, {imm(r), imm(t)})})));
        rowStores.push_back(
            c.storeOut(flat ? with(delinearize(row(r), outRows), {col}) : with(bIdx, {row(r), col}),
                       loop::load(accT, {imm(r), imm(t)})));
      }
      Stmt st = loop::seq(rowStores);
      tFinish.push_back(rowTail ? loop::ifThenElse(bin(ExprKind::LT, row(r), Mx), st) : st);
    }
    Stmt tReduce = c.loopOver(kt, K, LoopRole::Reduction, loop::seq(tUpdate));
    Stmt tailTile =
        loop::allocate(accT, loop::seq({loop::seq(tInit), tReduce, loop::seq(tFinish)}));
    Expr inLastTile = bin(ExprKind::EQ, nt, imm(colTiles - 1));
    if (kc) // its own sum over all of K, once, after the last block
      inLastTile = bin(ExprKind::And, inLastTile, bin(ExprKind::EQ, loop::var(kb), imm(kBlocks - 1)));
    tile = loop::seq({tile, loop::ifThenElse(inLastTile, tailTile)});
  }
  if (kc) {
    // A group past the last row tile (G not dividing the row tiles) computes nothing.
    const std::optional<int64_t> tilesStatic = rowTiles.asInt();
    if (!tilesStatic || *tilesStatic % G != 0)
      tile = loop::ifThenElse(bin(ExprKind::LT, mt, rowTiles), tile);
    tile = loop::allocate(
        partial, c.loopOver(kb, imm(kBlocks), LoopRole::Reduction,
                            c.loopOver(g, imm(G), LoopRole::Reduction, tile)));
  }
  // The structure is final; whether p runs in parallel is the schedule's choice.
  c.nest(p, {std::string(c.op.opName()),
             saturatingProduct({nominal(batches), nominal(Mx), N, nominal(K)}), true});
  return c.loopOver(p, mulExtents(mulExtents(batches, rowSteps), imm(colTiles)),
                    LoopRole::Parallel, tile);
}

} // namespace strata::lower
