// attention(q, k, v[, bias]) (OpTable.def) as one kernel that never writes the scores:
//
//   for p in [0, batches * groups)                    (a batch's query rows, in groups of tiles)
//     kt[D, Np] = k[b]^T (pad columns 0);  vl[N, Dv] = v[b]         (packed once per item)
//     for each tile of R query rows i in the group:
//       ql[R, D] = q[b, i, :]
//       s[R, Np] = scale * ql @ kt          (R x C vector accumulators, rank-1 steps over D)
//       s[r, :N] += bias[b, i, :];  s[r, N:Np] = -inf
//       m = max s[r];  s[r] = exp(s[r] - m);  inv[r] = 1 / sum s[r]
//       out[b, i, :] = (s[r, :N] @ vl) * inv[r]  (R x C2 vector accumulators, steps over N)
//
// The scores of R rows (R x Np floats) stay in a local buffer the softmax reads in cache; the
// packed kt and vl serve every tile of the item (a batch, usually one head, split into groups of
// row tiles only when there are too few batches to keep every thread busy). Operands are read by
// scalar loads in the packing loops only, so a fused kernel inlines the index maps that cut q, k
// and v out of one projection (slice -> reshape -> transpose) instead of copying them first.
// Sums run in f32 (the interpreter's in f64): ascending over D and over N with fused
// multiply-adds, the softmax's max and sum with one accumulator per lane folded by halving.
// Other dtypes and v's last dim not a multiple of 8 take a scalar row-at-a-time nest.
#include "LowerImpl.h"
#include "strata/graph/Layout.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::lower {
namespace {

using loop::ExprKind;

// Work items below this many split a batch's rows into groups (two threads, or more, then all
// get work on a single-head or single-image attention).
constexpr int64_t kMinItems = 8;

Expr f32(double v) { return loop::floatImm(v, DType::F32); }
Expr vecAt(const Expr &base, int64_t lanes) {
  return loop::ramp(base, imm(1), static_cast<int>(lanes));
}
Exprs with(Exprs v, std::initializer_list<Expr> more) {
  v.insert(v.end(), more);
  return v;
}
Exprs batchOf(const Exprs &d) { return Exprs(d.begin(), d.end() - 2); }
Expr maxF(const Expr &a, const Expr &b) { return stdMax(a, b); }


// An R x C tile of `lanes`-wide vector accumulators summed by rank-1 steps over `k` in
// [0, extent): acc[r, ci] = fma(broadcast(a(r)), b(ci), acc[r, ci]) from 0, then `storeRow(r,
// values)` for each row's C accumulators (b's loads are built once per step, shared by the rows).
Stmt rankOneTile(LowerCtx &c, const std::string &hint, int64_t R, int64_t C, int64_t lanes,
                 const loop::Var &k, const Expr &extent,
                 const std::function<Expr(int64_t r)> &a, const std::function<Expr(int64_t ci)> &b,
                 const std::function<Stmt(int64_t r, const Exprs &values)> &storeRow) {
  loop::Buffer acc = loop::makeBuffer(c.newName(hint), DType::F32, {imm(R), imm(C), imm(lanes)},
                                      {}, loop::MemoryScope::Local);
  const Expr all = vecAt(imm(0), lanes);
  auto at = [&](int64_t r, int64_t ci) { return Exprs{imm(r), imm(ci), all}; };
  std::vector<Stmt> init, update, finish;
  std::vector<Expr> bv;
  for (int64_t ci = 0; ci < C; ++ci)
    bv.push_back(b(ci));
  for (int64_t r = 0; r < R; ++r) {
    Expr av = loop::broadcast(a(r), static_cast<int>(lanes));
    for (int64_t ci = 0; ci < C; ++ci) {
      init.push_back(loop::store(acc, at(r, ci), loop::broadcast(f32(0), static_cast<int>(lanes))));
      update.push_back(loop::store(
          acc, at(r, ci), loop::call(loop::Intrinsic::Fma, {av, bv[ci], loop::load(acc, at(r, ci))})));
    }
  }
  for (int64_t r = 0; r < R; ++r) {
    Exprs values;
    for (int64_t ci = 0; ci < C; ++ci)
      values.push_back(loop::load(acc, at(r, ci)));
    finish.push_back(storeRow(r, values));
  }
  return loop::allocate(
      acc, loop::seq({loop::seq(init), c.loopOver(k, extent, LoopRole::Reduction, loop::seq(update)),
                      loop::seq(finish)}));
}

Stmt lowerTiledAttention(LowerCtx &c) {
  const Exprs &qd = c.inDims[0], &kd = c.inDims[1], &vd = c.inDims[2], &od = c.outDims[0];
  const Exprs batch = batchOf(od);
  const Expr M = od[od.size() - 2], D = qd.back(), N = kd[kd.size() - 2];
  const int64_t Dv = c.outShapes[0].back(), w = c.opts.vectorLanesF32;
  const std::optional<int64_t> Ms = M.asInt(), Ns = N.asInt();
  // Score vectors of the target's width (8 lanes for a row shorter than that); result vectors
  // of that width where Dv holds whole ones.
  const int64_t L = w > 8 && (!Ns || *Ns >= w) ? w : 8, Lv = Dv % w == 0 ? w : 8;
  const Expr nv = ceilDivExtent(N, L), Np = mulExtents(nv, imm(L));
  const int64_t R = Ms ? std::clamp<int64_t>(*Ms, 1, 4) : 4;
  const Expr rowTiles = ceilDivExtent(M, R), batches = product(batch);
  const bool rowTail = !Ms || *Ms % R != 0;
  const int64_t regs = c.opts.vectorRegisters;
  const int64_t C = nv.asInt() ? matMulColumnVectors(*nv.asInt(), R, regs, nullptr)
                               : std::clamp<int64_t>((regs - 1) / (R + 1), 1, 8);
  const Expr colTiles = ceilDivExtent(nv, C);
  const bool colTail = !nv.asInt() || *nv.asInt() % C != 0;
  const int64_t dvv = Dv / Lv, C2 = matMulColumnVectors(dvv, R, regs, nullptr);
  const int64_t colTiles2 = (dvv + C2 - 1) / C2;
  const bool colTail2 = dvv % C2 != 0;
  const double scale = ops::AttentionOp(c.op).scale();

  // Items: one per batch, or a batch's row tiles in groups when batches are few.
  Expr tilesPerGroup = rowTiles, groups = imm(1);
  const std::optional<int64_t> Bs = batches.asInt(), Ts = rowTiles.asInt();
  if (Bs && *Bs < kMinItems) {
    if (Ts) {
      // (No rows: one empty group.)
      int64_t g = std::max<int64_t>(1, std::min(*Ts, (kMinItems + *Bs - 1) / std::max<int64_t>(*Bs, 1)));
      int64_t tpg = std::max<int64_t>(1, (*Ts + g - 1) / g);
      tilesPerGroup = imm(tpg);
      groups = imm((*Ts + tpg - 1) / std::max<int64_t>(tpg, 1));
    } else {
      tilesPerGroup = imm(16);
      groups = ceilDivExtent(rowTiles, 16);
    }
  }

  loop::Var p = c.newVar("p");
  Expr pv = loop::var(p);
  const bool grouped = groups.asInt() != 1;
  Expr b = grouped ? bin(ExprKind::FloorDiv, pv, groups) : pv;
  Expr g = grouped ? bin(ExprKind::FloorMod, pv, groups) : imm(0);
  const Exprs bIdx = delinearize(b, batch);
  const Exprs qPre = broadcastIndex(bIdx, batch, batchOf(qd)),
              kPre = broadcastIndex(bIdx, batch, batchOf(kd)),
              vPre = broadcastIndex(bIdx, batch, batchOf(vd));

  auto local = [&](const std::string &hint, Exprs shape) {
    return loop::makeBuffer(c.newName(hint), DType::F32, std::move(shape), {},
                            loop::MemoryScope::Local);
  };
  loop::Buffer kt = local("kt", {D, Np}), vl = local("vl", {N, imm(Dv)});
  std::vector<Stmt> item;
  { // Packing: scalar loads of k and v (index maps of a fused kernel inline into them). kt is
    // written along its rows (k read down a column): LLVM vectorizes that with gathers, where
    // the other order took scatters at several times their cost.
    loop::Var j1 = c.newVar("j"), d = c.newVar("d"), j2 = c.newVar("j"), e = c.newVar("e");
    item.push_back(c.loopOver(
        d, D, LoopRole::Parallel,
        c.loopOver(j1, N, LoopRole::Parallel,
                   loop::store(kt, {loop::var(d), loop::var(j1)},
                               loop::load(c.ins[1], with(kPre, {loop::var(j1), loop::var(d)}))))));
    item.push_back(c.loopOver(
        j2, N, LoopRole::Parallel,
        c.loopOver(e, imm(Dv), LoopRole::Parallel,
                   loop::store(vl, {loop::var(j2), loop::var(e)},
                               loop::load(c.ins[2], with(vPre, {loop::var(j2), loop::var(e)}))))));
  }

  // One tile of R query rows.
  loop::Var t = c.newVar("t");
  const Expr mt = grouped ? g * tilesPerGroup + loop::var(t) : loop::var(t);
  auto rowAt = [&](const Expr &r) { return mt * imm(R) + r; };
  auto clampedRow = [&](const Expr &r) {
    return rowTail ? bin(ExprKind::Min, rowAt(r), M - imm(1)) : rowAt(r);
  };
  loop::Buffer ql = local("ql", {imm(R), D}), s = local("s", {imm(R), Np}),
               inv = local("inv", {imm(R)});
  std::vector<Stmt> tile;
  {
    loop::Var d = c.newVar("d");
    std::vector<Stmt> rows;
    for (int64_t r = 0; r < R; ++r)
      rows.push_back(loop::store(ql, {imm(r), loop::var(d)},
                                 loop::load(c.ins[0], with(qPre, {clampedRow(imm(r)), loop::var(d)}))));
    tile.push_back(c.loopOver(d, D, LoopRole::Parallel, loop::seq(rows)));
  }
  { // Scores: s = scale * ql @ kt, C vectors of columns at a time.
    loop::Var ct = c.newVar("ct"), d = c.newVar("d");
    auto column = [&](int64_t ci) {
      Expr v = loop::var(ct) * imm(C) + imm(ci);
      return vecAt((colTail ? bin(ExprKind::Min, v, nv - imm(1)) : v) * imm(L), L);
    };
    Stmt body = rankOneTile(
        c, "acc", R, C, L, d, D, [&](int64_t r) { return loop::load(ql, {imm(r), loop::var(d)}); },
        [&](int64_t ci) { return loop::load(kt, {loop::var(d), column(ci)}); },
        [&](int64_t r, const Exprs &values) {
          std::vector<Stmt> stores;
          for (int64_t ci = 0; ci < C; ++ci) {
            Expr value = values[ci];
            if (scale != 1)
              value = value * loop::broadcast(f32(scale), static_cast<int>(L));
            // A clamped last tile stores its repeated vectors again: the same values.
            stores.push_back(loop::store(s, {imm(r), column(ci)}, value));
          }
          return loop::seq(stores);
        });
    tile.push_back(c.loopOver(ct, colTiles, LoopRole::Parallel, body));
  }
  { // Per row: bias, pad columns, softmax (the exponentials in place, 1 / sum in inv).
    loop::Var r = c.newVar("r");
    Expr rv = loop::var(r), i = clampedRow(rv);
    std::vector<Stmt> row;
    const Expr whole = mulExtents(bin(ExprKind::FloorDiv, N, imm(L)), imm(L));
    if (c.ins.size() > 3) {
      const Exprs &bd = c.inDims[3];
      Exprs scoreDims = with(batch, {M, N});
      // Along the row unless the bias broadcasts one value over it.
      const bool along = !bd.empty() && !(bd.back().asInt() == 1 && Ns != 1);
      auto biasAt = [&](const Expr &j) {
        return loop::load(c.ins[3], broadcastIndex(with(bIdx, {i, j}), scoreDims, bd));
      };
      loop::Var v = c.newVar("v"), j = c.newVar("j");
      Expr base = loop::var(v) * imm(L);
      Expr add = along ? biasAt(vecAt(base, L))
                       : loop::broadcast(biasAt(imm(0)), static_cast<int>(L));
      if (whole.asInt() != 0)
        row.push_back(c.loopOver(
            v, bin(ExprKind::FloorDiv, N, imm(L)), LoopRole::Parallel,
            loop::store(s, {rv, vecAt(base, L)}, loop::load(s, {rv, vecAt(base, L)}) + add)));
      c.role(j, LoopRole::Parallel);
      if (!Ns || *Ns % L != 0)
        row.push_back(loop::forLoop(
            j, whole, N - whole, loop::ForKind::Serial,
            loop::store(s, {rv, loop::var(j)},
                        loop::load(s, {rv, loop::var(j)}) + biasAt(along ? loop::var(j) : imm(0)))));
    }
    if (!Ns || *Ns % L != 0) {
      loop::Var j = c.newVar("j");
      c.role(j, LoopRole::Parallel);
      row.push_back(loop::forLoop(j, N, Np - N, loop::ForKind::Serial,
                                  loop::store(s, {rv, loop::var(j)}, f32(-INFINITY))));
    }
    loop::Buffer lanes = local("lanes", {imm(L)}), mx = local("max", {imm(1)}),
                 sum = local("sum", {imm(1)});
    Expr all = vecAt(imm(0), L);
    loop::Var v1 = c.newVar("v"), v2 = c.newVar("v");
    auto sAt = [&](const loop::Var &v) { return Exprs{rv, vecAt(loop::var(v) * imm(L), L)}; };
    row.push_back(loop::store(lanes, {all}, loop::broadcast(f32(-INFINITY), static_cast<int>(L))));
    row.push_back(c.loopOver(v1, nv, LoopRole::Reduction,
                             loop::store(lanes, {all}, maxF(loop::load(lanes, {all}),
                                                             loop::load(s, sAt(v1))))));
    row.push_back(foldLanes(c, lanes, L, maxF, mx));
    row.push_back(loop::store(lanes, {all}, loop::broadcast(f32(0), static_cast<int>(L))));
    Expr shifted = loop::call(loop::Intrinsic::Exp,
                              {loop::load(s, sAt(v2)) -
                               loop::broadcast(loop::load(mx, {imm(0)}), static_cast<int>(L))});
    row.push_back(c.loopOver(
        v2, nv, LoopRole::Reduction,
        loop::seq({loop::store(s, sAt(v2), shifted),
                   loop::store(lanes, {all}, loop::load(lanes, {all}) + loop::load(s, sAt(v2)))})));
    row.push_back(foldLanes(c, lanes, L, [](const Expr &a, const Expr &b) { return a + b; }, sum));
    // No keys: the weighted sum is empty, 0 (as matmul(softmax, v) gives), not 0 / 0.
    Expr reciprocal = bin(ExprKind::Div, f32(1), loop::load(sum, {imm(0)}));
    if (!Ns || *Ns == 0)
      reciprocal = loop::select(bin(ExprKind::LT, imm(0), N), reciprocal, f32(0));
    row.push_back(loop::store(inv, {rv}, reciprocal));
    tile.push_back(c.loopOver(r, imm(R), LoopRole::Parallel,
                              loop::allocate(lanes, loop::allocate(mx, loop::allocate(sum, loop::seq(row))))));
  }
  { // out = (s @ vl) * inv, C2 vectors of Dv at a time, rows past M not stored.
    loop::Var ct = c.newVar("ct"), j = c.newVar("j");
    auto vectorAt = [&](int64_t ci) { return loop::var(ct) * imm(C2) + imm(ci); };
    auto column = [&](int64_t ci) {
      Expr v = colTail2 ? bin(ExprKind::Min, vectorAt(ci), imm(dvv - 1)) : vectorAt(ci);
      return vecAt(v * imm(Lv), Lv);
    };
    Stmt body = rankOneTile(
        c, "acc", R, C2, Lv, j, N, [&](int64_t r) { return loop::load(s, {imm(r), loop::var(j)}); },
        [&](int64_t ci) { return loop::load(vl, {loop::var(j), column(ci)}); },
        [&](int64_t r, const Exprs &values) {
          std::vector<Stmt> stores;
          for (int64_t ci = 0; ci < C2; ++ci) {
            Stmt st = c.storeOut(with(bIdx, {rowAt(imm(r)), column(ci)}),
                                 values[ci] * loop::broadcast(loop::load(inv, {imm(r)}),
                                                              static_cast<int>(Lv)));
            // Vector 0 of a tile always exists; the others of a clamped last tile may not.
            if (colTail2 && ci > 0 && (colTiles2 - 1) * C2 + ci >= dvv)
              st = loop::ifThenElse(bin(ExprKind::LT, vectorAt(ci), imm(dvv)), st);
            stores.push_back(st);
          }
          Stmt st = loop::seq(stores);
          return rowTail ? loop::ifThenElse(bin(ExprKind::LT, rowAt(imm(r)), M), st) : st;
        });
    tile.push_back(c.loopOver(ct, imm(colTiles2), LoopRole::Parallel, body));
  }
  Stmt tileBody = loop::allocate(ql, loop::allocate(s, loop::allocate(inv, loop::seq(tile))));
  // A last group past the final row tile (groups not dividing the tiles) stops there.
  if (grouped && (!Ts || *Ts % *tilesPerGroup.asInt() != 0))
    tileBody = loop::ifThenElse(bin(ExprKind::LT, mt, rowTiles), tileBody);
  item.push_back(c.loopOver(t, tilesPerGroup, LoopRole::Parallel, tileBody));

  auto nominal = [](const Expr &e) { return e.asInt().value_or(64); };
  const int64_t work =
      saturatingProduct({nominal(batches), nominal(M), nominal(N), nominal(D) + Dv, 2});
  c.nest(p, {std::string(c.op.opName()), work, true});
  return c.loopOver(p, mulExtents(batches, groups), LoopRole::Parallel,
                    loop::allocate(kt, loop::allocate(vl, loop::seq(item))));
}

// Any float dtype, any Dv: one query row per iteration, scalar loops in the operands' dtype.
Stmt lowerScalarAttention(LowerCtx &c) {
  const Exprs &qd = c.inDims[0], &kd = c.inDims[1], &vd = c.inDims[2], &od = c.outDims[0];
  const Exprs batch = batchOf(od);
  const Expr M = od[od.size() - 2], D = qd.back(), N = kd[kd.size() - 2], Dv = od.back();
  const DType dt = c.outTypes[0];
  auto num = [&](double x) { return loop::floatImm(x, dt); };
  loop::Var p = c.newVar("row");
  const Exprs rowIdx = delinearize(loop::var(p), with(batch, {M}));
  const Exprs bIdx(rowIdx.begin(), rowIdx.end() - 1);
  const Expr i = rowIdx.back();
  const Exprs qPre = broadcastIndex(bIdx, batch, batchOf(qd)),
              kPre = broadcastIndex(bIdx, batch, batchOf(kd)),
              vPre = broadcastIndex(bIdx, batch, batchOf(vd));
  loop::Buffer s = loop::makeBuffer(c.newName("s"), dt, {N}, {}, loop::MemoryScope::Local);
  Acc acc = makeAcc(c, "acc", dt), mx = makeAcc(c, "max", dt), sum = makeAcc(c, "sum", dt);
  loop::Var j1 = c.newVar("j"), d = c.newVar("d"), j2 = c.newVar("j"), j3 = c.newVar("j"),
            e = c.newVar("e"), j4 = c.newVar("j");
  Expr score = acc.get() * num(ops::AttentionOp(c.op).scale());
  if (c.ins.size() > 3)
    score = score + loop::load(c.ins[3], broadcastIndex(with(bIdx, {i, loop::var(j1)}),
                                                         with(batch, {M, N}), c.inDims[3]));
  // No keys: the weighted sum is empty, 0 (as matmul(softmax, v) gives), not 0 / 0.
  Expr weighted = bin(ExprKind::Div, acc.get(), sum.get());
  if (N.asInt().value_or(0) == 0)
    weighted = loop::select(bin(ExprKind::LT, imm(0), N), weighted, num(0));
  std::vector<Stmt> row;
  row.push_back(c.loopOver(
      j1, N, LoopRole::Parallel,
      loop::seq({acc.set(num(0)),
                 c.loopOver(d, D, LoopRole::Reduction,
                            acc.set(acc.get() +
                                    loop::load(c.ins[0], with(qPre, {i, loop::var(d)})) *
                                        loop::load(c.ins[1], with(kPre, {loop::var(j1), loop::var(d)})))),
                 loop::store(s, {loop::var(j1)}, score)})));
  row.push_back(mx.set(num(-INFINITY)));
  row.push_back(c.loopOver(j2, N, LoopRole::Reduction,
                           mx.set(stdMax(mx.get(), loop::load(s, {loop::var(j2)})))));
  row.push_back(sum.set(num(0)));
  row.push_back(c.loopOver(
      j3, N, LoopRole::Reduction,
      loop::seq({loop::store(s, {loop::var(j3)},
                             loop::call(loop::Intrinsic::Exp, {loop::load(s, {loop::var(j3)}) - mx.get()})),
                 sum.set(sum.get() + loop::load(s, {loop::var(j3)}))})));
  row.push_back(c.loopOver(
      e, Dv, LoopRole::Parallel,
      loop::seq({acc.set(num(0)),
                 c.loopOver(j4, N, LoopRole::Reduction,
                            acc.set(acc.get() + loop::load(s, {loop::var(j4)}) *
                                                    loop::load(c.ins[2], with(vPre, {loop::var(j4), loop::var(e)})))),
                 c.storeOut(with(bIdx, {i, loop::var(e)}), weighted)})));
  Stmt body = loop::allocate(
      s, loop::allocate(acc.buf, loop::allocate(mx.buf, loop::allocate(sum.buf, loop::seq(row)))));
  return c.loopOver(p, mulExtents(product(batch), M), LoopRole::Parallel, body);
}

} // namespace

bool attentionUsesTiledKernel(const Op &op) {
  for (const Value *v : op.operands())
    if (v->type().dtype != DType::F32)
      return false;
  const Dim &dv = op.result(0)->type().dims.back();
  return op.numOperands() >= 3 && dv.isStatic() && dv.size > 0 && dv.size % 8 == 0;
}

Stmt lowerAttention(LowerCtx &c) {
  if (c.ins.size() < 3 || c.inDims[0].size() < 2 || c.inDims[1].size() < 2 ||
      c.inDims[2].size() < 2 || c.outDims[0].size() < 2)
    throw LowerError("attention: q, k and v must have rank >= 2");
  for (const Expr &d : c.outDims[0])
    if (d.asInt() == 0)
      return loop::seq({}); // an empty result: nothing to compute (nor scratch to allocate)
  return attentionUsesTiledKernel(c.op) ? lowerTiledAttention(c) : lowerScalarAttention(c);
}

} // namespace strata::lower
