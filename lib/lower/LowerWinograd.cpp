// The transforms of a Winograd F(m x m, 3 x 3) conv (graph/Winograd.h): one parallel loop over
// (image, tile row, tile column, channel block), each iteration transforming one tile of one
// channel block, the block's channels as one vector (blocked layouts; a plain layout computes
// one channel per iteration). The matrices are constants, so every product is unrolled into
// adds, subtracts and fused multiply-adds of whole vectors, skipping zero coefficients.
//
//   winograd_input:  d = the t x t input tile (zeros past the padded edge; interior tiles load
//                    directly, border tiles a clamped address selected against zero), then
//                    r = B^T d and r B stored as t^2 vectors of the result
//   winograd_output: the t^2 product vectors of a tile, r = A^T p, r A plus the bias, stored
//                    through storeOut (a fused kernel's epilogue runs on them in registers);
//                    outputs past the edge of a partial last tile are not stored
#include "LowerImpl.h"

#include "strata/graph/Winograd.h"

#include <functional>

namespace strata::lower {

namespace {

using loop::ExprKind;

// `v` as an f32 constant of `lanes` lanes.
Expr splat(double v, int lanes) {
  Expr f = loop::floatImm(v, DType::F32);
  return lanes > 1 ? loop::broadcast(f, lanes) : f;
}

// lo <= v < hi.
Expr within(const Expr &v, const Expr &lo, const Expr &hi) {
  return bin(ExprKind::And, bin(ExprKind::GE, v, lo), bin(ExprKind::LT, v, hi));
}

// sum over k < count of coef(k) * term(k), skipping zero coefficients: adds and subtracts for
// +-1, fused multiply-adds otherwise (every term a vector of `lanes`). A row of a constant
// matrix times a column of values, unrolled.
Expr combination(int64_t count, const std::function<double(int64_t)> &coef,
                 const std::function<Expr(int64_t)> &term, int lanes) {
  Expr acc;
  for (int64_t k = 0; k < count; ++k) {
    const double a = coef(k);
    if (a == 0)
      continue;
    const Expr e = term(k);
    if (!acc)
      acc = a == 1 ? e : splat(a, lanes) * e;
    else if (a == 1)
      acc = acc + e;
    else if (a == -1)
      acc = acc - e;
    else
      acc = loop::call(loop::Intrinsic::Fma, {splat(a, lanes), e, acc});
  }
  return acc ? acc : splat(0, lanes);
}

// One parallel loop over N x tilesH x tilesW x blocks, delinearized. Channel blocks fastest:
// consecutive iterations then write (input transform) or read (output transform) each of the
// t^2 planes of [N, t^2, tiles, C] contiguously, C channels of one tile after another.
struct TileLoop {
  LowerCtx &c;
  int64_t block, blocks;
  Expr tilesH, tilesW; // run-time extents for a symbolic image size
  int lanes;
  loop::Var p;
  Expr n, th, tw, cb;

  TileLoop(LowerCtx &ctx, int64_t block, int64_t blocks, Expr tilesH, Expr tilesW)
      : c(ctx), block(block), blocks(blocks), tilesH(std::move(tilesH)), tilesW(std::move(tilesW)),
        lanes(block ? static_cast<int>(block) : 1), p(ctx.newVar("p")) {
    Exprs idx = delinearize(loop::var(p), {c.inDims[0][0], this->tilesH, this->tilesW, imm(blocks)});
    n = idx[0];
    th = idx[1];
    tw = idx[2];
    cb = idx[3];
  }
  // The tile's index in the tiles dim, and the block's channels there (one vector; the one
  // channel of a plain layout).
  Expr tile() const { return th * tilesW + tw; }
  Expr channels() const {
    Expr first = block ? cb * imm(block) : cb;
    return lanes > 1 ? loop::ramp(first, imm(1), lanes) : first;
  }
  // Vector k of a local array of vectors.
  Expr at(int64_t k) const {
    return lanes > 1 ? loop::ramp(imm(k * lanes), imm(1), lanes) : imm(k);
  }
  loop::Buffer local(int64_t vectors) const {
    return localArray(c, "tile", DType::F32, vectors * lanes);
  }
  // The loop around `body`, which does `work` operations per lane and iteration.
  Stmt wrap(Stmt body, int64_t work) const {
    const Expr tiles = mulExtents(tilesH, tilesW);
    const Expr iterations = mulExtents(c.inDims[0][0], mulExtents(imm(blocks), tiles));
    // (Run-time extents counted as 64 tiles for the schedule's parallel decision.)
    c.nest(p, {std::string(c.op.opName()),
               iterations.asInt().value_or(blocks * tiles.asInt().value_or(64)) * lanes * work,
               true});
    return c.loopOver(p, iterations, LoopRole::Parallel, std::move(body));
  }
};

const winograd::Transform &transformOf(const LowerCtx &c, int64_t m) {
  const winograd::Transform *tr = winograd::transformFor(m);
  if (!tr || c.inTypes[0] != DType::F32)
    notLowered(c.op, "tile " + std::to_string(m) + " on " + std::string(dtypeName(c.inTypes[0])));
  return *tr;
}

// ceil(size / m): static, or computed at run time from a symbolic size's extent.
Expr tilesAlong(const Expr &size, int64_t m) {
  if (std::optional<int64_t> s = size.asInt())
    return imm(winograd::tilesAlong(*s, m));
  return bin(ExprKind::FloorDiv, size + imm(m - 1), imm(m));
}

} // namespace

Stmt lowerWinogradInput(LowerCtx &c) {
  const ops::WinogradInputOp attrs(c.op);
  const winograd::Transform &tr = transformOf(c, attrs.tile());
  const int64_t block = attrs.layout(), t = tr.t, m = tr.m;
  const Shape &x = c.inShapes[0], &out = c.outShapes[0];
  const std::vector<int64_t> &pads = attrs.pads();
  if (x.size() != (block ? 5u : 4u) || pads.size() != 4 || out.size() != 4)
    throw LowerError("winograd_input: operand " + shapeToString(x) + " and pads do not match");
  // The image's height and width: static, or run-time extents (then the tile counts too).
  const Expr h = c.inDims[0][2], w = c.inDims[0][3];
  auto padded = [](const Expr &size, int64_t extra) {
    return size.asInt() ? imm(*size.asInt() + extra) : size + imm(extra);
  };
  const TileLoop l(c, block, x[1], tilesAlong(padded(h, pads[0] + pads[2] - 2), m),
                   tilesAlong(padded(w, pads[1] + pads[3] - 2), m));
  loop::Buffer d = l.local(t * t), r = l.local(t * t);
  const Expr y0 = l.th * imm(m) - imm(pads[0]), x0 = l.tw * imm(m) - imm(pads[1]);
  auto source = [&](const Expr &yy, const Expr &xx) {
    return block ? Exprs{l.n, l.cb, yy, xx, l.at(0)} : Exprs{l.n, l.cb, yy, xx};
  };
  auto clamp = [&](const Expr &v, const Expr &size) {
    return bin(ExprKind::Max, bin(ExprKind::Min, v, padded(size, -1)), imm(0));
  };
  // The tile: loaded directly inside the input, else a clamped address selected against zero.
  std::vector<Stmt> direct, guarded;
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < t; ++j) {
      Expr yy = y0 + imm(i), xx = x0 + imm(j);
      direct.push_back(loop::store(d, {l.at(i * t + j)}, loop::load(c.ins[0], source(yy, xx))));
      Expr inside = bin(ExprKind::And, within(yy, imm(0), h), within(xx, imm(0), w));
      guarded.push_back(loop::store(d, {l.at(i * t + j)},
                                    loop::load(c.ins[0], source(clamp(yy, h), clamp(xx, w)))));
      guarded.push_back(
          loop::store(d, {l.at(i * t + j)},
                      loop::select(inside, loop::load(d, {l.at(i * t + j)}), splat(0, l.lanes))));
    }
  Expr interior = bin(ExprKind::And, within(y0, imm(0), padded(h, 1 - t)),
                      within(x0, imm(0), padded(w, 1 - t)));
  std::vector<Stmt> body = {loop::ifThenElse(interior, loop::seq(direct), loop::seq(guarded))};
  // r = B^T d, then the result's row a: r[a] B, one vector per (a, b).
  for (int64_t a = 0; a < t; ++a)
    for (int64_t j = 0; j < t; ++j)
      body.push_back(
          loop::store(r, {l.at(a * t + j)},
                      combination(
                          t, [&](int64_t i) { return tr.btAt(a, i); },
                          [&](int64_t i) { return loop::load(d, {l.at(i * t + j)}); }, l.lanes)));
  for (int64_t a = 0; a < t; ++a)
    for (int64_t b = 0; b < t; ++b)
      body.push_back(
          loop::store(c.outs[0], {l.n, imm(a * t + b), l.tile(), l.channels()},
                      combination(
                          t, [&](int64_t j) { return tr.btAt(b, j); },
                          [&](int64_t j) { return loop::load(r, {l.at(a * t + j)}); }, l.lanes)));
  return l.wrap(loop::allocate(d, loop::allocate(r, loop::seq(body))), 4 * t * t);
}

Stmt lowerWinogradOutput(LowerCtx &c) {
  const ops::WinogradOutputOp attrs(c.op);
  const winograd::Transform &tr = transformOf(c, attrs.tile());
  const int64_t block = attrs.layout(), t = tr.t, m = tr.m;
  const Shape &p = c.inShapes[0];
  const std::vector<Dim> size = attrs.output_size();
  if (p.size() != 4 || size.size() != 2)
    throw LowerError("winograd_output: operand " + shapeToString(p) + " and sizes do not match");
  // The output's height and width: static, or run-time extents (then the tile counts too).
  const Expr outH = c.dimExpr(size[0]), outW = c.dimExpr(size[1]);
  const int64_t k = p[3];
  const TileLoop l(c, block, block ? k / block : k, tilesAlong(outH, m), tilesAlong(outW, m));
  loop::Buffer r = l.local(m * t);
  const Expr ch = l.channels();
  std::vector<Stmt> body;
  // r = A^T p (m x t vectors), loading each product vector once per use.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t e = 0; e < t; ++e)
      body.push_back(
          loop::store(r, {l.at(i * t + e)},
                      combination(
                          t, [&](int64_t a) { return tr.atAt(i, a); },
                          [&](int64_t a) {
                            return loop::load(c.ins[0], {l.n, imm(a * t + e), l.tile(), ch});
                          },
                          l.lanes)));
  Expr bias;
  if (c.ins.size() > 1)
    bias = loop::load(c.ins[1], {ch});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) {
      Expr value = combination(
          t, [&](int64_t e) { return tr.atAt(j, e); },
          [&](int64_t e) { return loop::load(r, {l.at(i * t + e)}); }, l.lanes);
      if (bias)
        value = value + bias;
      const Expr oy = l.th * imm(m) + imm(i), ox = l.tw * imm(m) + imm(j);
      Stmt st =
          c.storeOut(block ? Exprs{l.n, l.cb, oy, ox, l.at(0)} : Exprs{l.n, l.cb, oy, ox}, value);
      // A partial last tile row or column: its outputs past the edge are dropped (a run-time
      // size: every row and column but a tile's first may be past it).
      auto past = [&](const Expr &size, int64_t at) {
        std::optional<int64_t> s = size.asInt();
        return s ? *s % m != 0 && at >= *s % m : at > 0;
      };
      Expr keep;
      if (past(outH, i))
        keep = bin(ExprKind::LT, oy, outH);
      if (past(outW, j)) {
        Expr kx = bin(ExprKind::LT, ox, outW);
        keep = keep ? bin(ExprKind::And, keep, kx) : kx;
      }
      body.push_back(keep ? loop::ifThenElse(keep, st) : st);
    }
  return l.wrap(loop::allocate(r, loop::seq(body)), 2 * t * (t + m));
}

} // namespace strata::lower
