// Vectorized f32 row normalizations: softmax, log_softmax and layer_norm along the last axis
// (layer_norm: over its trailing dims, the last one vectorized and the ones between its axis and
// the last walked by serial loops, e.g. an instance norm's H x W; scale and bias broadcast
// along those).
//
// One row per iteration of a single outer loop (the nest's root, parallel when the schedule says
// so). Every pass over the row runs whole vectors of the target's f32 width (8 lanes when the row
// is shorter than that) plus a scalar tail; a sum or max keeps one accumulator per lane, folded by
// halving (lane l with lane l + h) at the end, a tree that also keeps the rounding error of long
// rows small. Everything stays in f32, as ONNX Runtime computes it; the interpreter's f64 results
// differ within a few ulps (the differential tests' tolerance). Rows shorter than 8 keep the
// scalar lowerings, which follow the interpreter exactly.
//
//   softmax:     m = max(x); e = exp(x - m) stored while s = sum(e); y = e * (1 / s)
//   log_softmax: m = max(x); s = sum(exp(x - m)); y = (x - m) - log(s)
//   layer_norm:  mean = sum(x) / n; var = sum((x - mean)^2) / n; y = (x - mean) * rstd * scale +
//   bias
#include "LowerImpl.h"

#include <cmath>

namespace strata::lower {
namespace {

using loop::ExprKind;

Expr f32(double v) { return loop::floatImm(v, DType::F32); }

// The row geometry: `rows` rows, each `inner` lines of `length` contiguous f32 elements, `lanes`
// per vector, `vectors` whole vectors covering `whole` elements of a line (the rest is the scalar
// tail). The length is static, or a run-time extent.
struct Rows {
  Exprs outer; // the dims above the row: may be symbolic
  Expr rows;   // their product
  Exprs inner; // the row's dims above its last (layer_norm over several axes): may be symbolic
  int64_t lanes = 8;
  Expr length, vectors, whole, tail;
};

// `axis`: the row's first dim (the last one but for layer_norm).
Rows rowsOf(const LowerCtx &c, size_t axis) {
  const Exprs &in = c.inDims[0];
  Rows r;
  r.outer.assign(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(axis));
  r.inner.assign(in.begin() + static_cast<std::ptrdiff_t>(axis), in.end() - 1);
  r.rows = product(r.outer);
  r.length = in.back();
  const int64_t w = c.opts.vectorLanesF32;
  if (std::optional<int64_t> n = r.length.asInt()) {
    r.lanes = w > 8 && *n >= w ? w : 8;
    r.vectors = imm(*n / r.lanes);
    r.whole = imm(*n / r.lanes * r.lanes);
    r.tail = imm(*n - *n / r.lanes * r.lanes);
  } else {
    r.lanes = std::max<int64_t>(w, 8);
    r.vectors = bin(ExprKind::FloorDiv, r.length, imm(r.lanes));
    r.whole = r.vectors * imm(r.lanes);
    r.tail = r.length - r.whole;
  }
  return r;
}

// One row's worth of loops and accumulators, built inside the outer loop over rows.
struct RowBuilder {
  LowerCtx &c;
  const Rows &g;
  Exprs rowIdx;   // the outer index of this row
  Exprs innerIdx; // the line's index within the row (set while a pass over the lines is built)

  // The index of line elements [base, base + lanes) (lanes 1: the element at base).
  Exprs at(const Expr &base, int lanes) const {
    Exprs idx = rowIdx;
    idx.insert(idx.end(), innerIdx.begin(), innerIdx.end());
    idx.push_back(lanes > 1 ? loop::ramp(base, imm(1), lanes) : base);
    return idx;
  }
  // `perLine()` inside serial loops over the row's lines (none for a one-line row; a static dim
  // of 1 indexed at 0), innerIdx naming the line while it is built.
  Stmt overLines(LoopRole role, const std::function<Stmt()> &perLine) {
    std::vector<std::pair<loop::Var, Expr>> loops;
    innerIdx.clear();
    for (const Expr &d : g.inner) {
      if (d.asInt() == 1) {
        innerIdx.push_back(imm(0));
        continue;
      }
      loops.push_back({c.newVar("line"), d});
      innerIdx.push_back(loop::var(loops.back().first));
    }
    Stmt body = perLine();
    for (auto it = loops.rbegin(); it != loops.rend(); ++it)
      body = c.loopOver(it->first, it->second, role, std::move(body));
    return body;
  }
  // A pass over the row: `body(base, lanes)` for each whole vector, then for each tail element.
  Stmt pass(const std::function<Stmt(const Expr &base, int lanes)> &body, LoopRole role) {
    return overLines(role, [&] {
      std::vector<Stmt> s;
      if (g.vectors.asInt() != 0) {
        loop::Var v = c.newVar("v");
        s.push_back(c.loopOver(v, g.vectors, role,
                               body(loop::var(v) * imm(g.lanes), static_cast<int>(g.lanes))));
      }
      if (g.tail.asInt() != 0) {
        loop::Var t = c.newVar("t");
        c.role(t, role);
        s.push_back(
            loop::forLoop(t, g.whole, g.tail, loop::ForKind::Serial, body(loop::var(t), 1)));
      }
      return loop::seq(s);
    });
  }

  // The fold of `value(base, lanes)` over the row with `combine`, from `identity`, into the
  // one-element local `result`: per-lane accumulators, a halving fold, then the tail. `before`,
  // when given, runs first at each step (a store that `value` reads back).
  Stmt reduce(const loop::Buffer &result, double identity,
              const std::function<Expr(const Expr &, const Expr &)> &combine,
              const std::function<Expr(const Expr &base, int lanes)> &value,
              const std::function<Stmt(const Expr &base, int lanes)> &before = nullptr) {
    const int w = static_cast<int>(g.lanes);
    loop::Buffer acc = localArray(c, "lanes", DType::F32, w);
    auto accLanes = [&](int64_t from, int lanes) {
      return lanes > 1 ? loop::ramp(imm(from), imm(1), lanes) : imm(from);
    };
    auto step = [&](Stmt update, const Expr &base, int lanes) {
      return before ? loop::seq({before(base, lanes), std::move(update)}) : update;
    };
    std::vector<Stmt> s;
    s.push_back(loop::store(acc, {accLanes(0, w)}, loop::broadcast(f32(identity), w)));
    if (g.vectors.asInt() != 0)
      s.push_back(overLines(LoopRole::Reduction, [&] {
        loop::Var v = c.newVar("v");
        Expr cur = loop::load(acc, {accLanes(0, w)}), base = loop::var(v) * imm(g.lanes);
        return c.loopOver(
            v, g.vectors, LoopRole::Reduction,
            step(loop::store(acc, {accLanes(0, w)}, combine(cur, value(base, w))), base, w));
      }));
    s.push_back(foldLanes(c, acc, w, combine, result));
    if (g.tail.asInt() != 0)
      s.push_back(overLines(LoopRole::Reduction, [&] {
        loop::Var t = c.newVar("t");
        c.role(t, LoopRole::Reduction);
        Expr cur = loop::load(result, {imm(0)});
        return loop::forLoop(
            t, g.whole, g.tail, loop::ForKind::Serial,
            step(loop::store(result, {imm(0)}, combine(cur, value(loop::var(t), 1))), loop::var(t),
                 1));
      }));
    return loop::allocate(acc, loop::seq(s));
  }
};

Expr addF(const Expr &a, const Expr &b) { return a + b; }
// std::max(a, b) as the interpreter writes it: (a < b) ? b : a.
Expr maxF(const Expr &a, const Expr &b) { return loop::select(bin(ExprKind::LT, a, b), b, a); }

// `scalar` as a value of `lanes` lanes.
Expr splat(const Expr &scalar, int lanes) {
  return lanes > 1 ? loop::broadcast(scalar, lanes) : scalar;
}

// The outer loop over rows, with `perRow` building one row's statement; registered as a final
// nest (only its parallelism is open) doing `workPerElement` operations per element.
Stmt overRows(LowerCtx &c, const Rows &g, int64_t workPerElement,
              const std::function<Stmt(RowBuilder &)> &perRow) {
  loop::Var p = c.newVar("row");
  RowBuilder rb{c, g, delinearize(loop::var(p), g.outer), {}};
  Stmt body = perRow(rb);
  // (Run-time extents counted as 64 for the schedule's parallel decision.)
  int64_t work = g.length.asInt().value_or(64) * workPerElement;
  for (const Expr &d : g.inner)
    work *= d.asInt().value_or(64);
  c.nest(p, {std::string(c.op.opName()), g.rows.asInt().value_or(64) * work, true});
  return c.loopOver(p, g.rows, LoopRole::Parallel, body);
}

} // namespace

bool canLowerVectorRows(const LowerCtx &c) {
  // Rows of a static length (>= 8); the dims above them may be symbolic.
  const Shape &in = c.inShapes[0];
  const bool runTimeRow = !in.empty() && in.back() < 0; // softmax rows of a symbolic length
  if (in.empty() || (in.back() < 8 && !runTimeRow))
    return false;
  for (DType t : c.inTypes)
    if (t != DType::F32)
      return false;
  switch (c.op.kind()) {
  case OpKind::Softmax:
    return ops::SoftmaxOp(c.op).axis() == static_cast<int64_t>(in.size()) - 1;
  case OpKind::LogSoftmax:
    return ops::LogSoftmaxOp(c.op).axis() == static_cast<int64_t>(in.size()) - 1;
  case OpKind::LayerNorm: {
    int64_t axis = ops::LayerNormOp(c.op).axis();
    if (axis < 0 || axis >= static_cast<int64_t>(in.size()))
      return false;
    // Scale and bias index the row by its last dim (or broadcast one value along it); static
    // but for a last dim that is the run-time row's own; 1 (broadcast) along the row's dims
    // above its last (a line loop's index does not reach them).
    for (size_t i = 1; i < c.inShapes.size(); ++i) {
      const Shape &s = c.inShapes[i];
      if (s.size() > in.size())
        return false;
      for (size_t d = 0; d < s.size(); ++d) {
        const bool last = d + 1 == s.size();
        const size_t inDim = in.size() - s.size() + d;
        if (!last && inDim >= static_cast<size_t>(axis) && s[d] != 1)
          return false;
        if (last && s[d] < 0 ? !loop::equal(c.inDims[i].back(), c.inDims[0].back())
                             : s[d] < 0 || (last && s[d] != in.back() && s[d] != 1))
          return false;
      }
    }
    return true;
  }
  default:
    return false;
  }
}

Stmt lowerVectorSoftmax(LowerCtx &c, bool logarithm) {
  const Rows g = rowsOf(c, c.inDims[0].size() - 1);
  // exp dominates: about a dozen operations per element in the vector math.
  return overRows(c, g, 16, [&](RowBuilder &rb) {
    loop::Buffer mx = localArray(c, "max", DType::F32), sum = localArray(c, "sum", DType::F32);
    auto x = [&](const Expr &base, int lanes) { return loop::load(c.ins[0], rb.at(base, lanes)); };
    auto m = [&](int lanes) { return splat(loop::load(mx, {imm(0)}), lanes); };
    auto shiftedExp = [&](const Expr &base, int lanes) {
      return loop::call(loop::Intrinsic::Exp, {x(base, lanes) - m(lanes)});
    };
    std::vector<Stmt> s;
    s.push_back(rb.reduce(mx, -INFINITY, maxF, x));
    if (logarithm) {
      s.push_back(rb.reduce(sum, 0, addF, shiftedExp));
      Expr logSum = loop::call(loop::Intrinsic::Log, {loop::load(sum, {imm(0)})});
      s.push_back(loop::store(sum, {imm(0)}, logSum));
      s.push_back(rb.pass(
          [&](const Expr &base, int lanes) {
            return loop::store(c.outs[0], rb.at(base, lanes),
                               (x(base, lanes) - m(lanes)) -
                                   splat(loop::load(sum, {imm(0)}), lanes));
          },
          LoopRole::Parallel));
    } else {
      // The exponentials are stored as they are summed (and read back: the store forwards to
      // the load), then scaled in place.
      auto storeExp = [&](const Expr &base, int lanes) {
        return loop::store(c.outs[0], rb.at(base, lanes), shiftedExp(base, lanes));
      };
      s.push_back(rb.reduce(
          sum, 0, addF,
          [&](const Expr &base, int lanes) { return loop::load(c.outs[0], rb.at(base, lanes)); },
          storeExp));
      s.push_back(
          loop::store(sum, {imm(0)}, bin(ExprKind::Div, f32(1), loop::load(sum, {imm(0)}))));
      s.push_back(rb.pass(
          [&](const Expr &base, int lanes) {
            return loop::store(c.outs[0], rb.at(base, lanes),
                               loop::load(c.outs[0], rb.at(base, lanes)) *
                                   splat(loop::load(sum, {imm(0)}), lanes));
          },
          LoopRole::Parallel));
    }
    return loop::allocate(mx, loop::allocate(sum, loop::seq(s)));
  });
}

Stmt lowerVectorLayerNorm(LowerCtx &c) {
  const Exprs &in = c.inDims[0];
  const Rows g = rowsOf(c, static_cast<size_t>(ops::LayerNormOp(c.op).axis()));
  const double eps = ops::LayerNormOp(c.op).epsilon();
  return overRows(c, g, 6, [&](RowBuilder &rb) {
    loop::Buffer mean = localArray(c, "mean", DType::F32), rstd = localArray(c, "rstd", DType::F32);
    auto x = [&](const Expr &base, int lanes) { return loop::load(c.ins[0], rb.at(base, lanes)); };
    auto mu = [&](int lanes) { return splat(loop::load(mean, {imm(0)}), lanes); };
    // Scale or bias at the row's elements: by the last index, or one value broadcast.
    auto operand = [&](size_t i, const Expr &base, int lanes) {
      const Shape &s = c.inShapes[i];
      Exprs idx = broadcastIndex(rb.at(base, lanes), in, c.inDims[i]);
      bool along = !s.empty() && (s.back() < 0 || s.back() == g.length.asInt());
      return along ? loop::load(c.ins[i], idx) : splat(loop::load(c.ins[i], idx), lanes);
    };
    // The element count in f32 (a run-time row's converted once per row).
    std::optional<int64_t> n = g.length.asInt();
    for (const Expr &d : g.inner)
      n = n && d.asInt() ? std::optional<int64_t>(*n * *d.asInt()) : std::nullopt;
    const Expr count = n ? f32(static_cast<double>(*n))
                         : loop::cast(DType::F32, g.inner.empty() ? g.length
                                                                  : product(g.inner) * g.length);
    std::vector<Stmt> s;
    s.push_back(rb.reduce(mean, 0, addF, x));
    s.push_back(loop::store(mean, {imm(0)}, bin(ExprKind::Div, loop::load(mean, {imm(0)}), count)));
    s.push_back(rb.reduce(rstd, 0, addF, [&](const Expr &base, int lanes) {
      Expr d = x(base, lanes) - mu(lanes);
      return d * d;
    }));
    Expr var = bin(ExprKind::Div, loop::load(rstd, {imm(0)}), count);
    s.push_back(loop::store(
        rstd, {imm(0)},
        bin(ExprKind::Div, f32(1), loop::call(loop::Intrinsic::Sqrt, {var + f32(eps)}))));
    s.push_back(rb.pass(
        [&](const Expr &base, int lanes) {
          Expr y = (x(base, lanes) - mu(lanes)) * splat(loop::load(rstd, {imm(0)}), lanes);
          y = y * operand(1, base, lanes);
          if (c.ins.size() > 2)
            y = y + operand(2, base, lanes);
          return loop::store(c.outs[0], rb.at(base, lanes), y);
        },
        LoopRole::Parallel));
    return loop::allocate(mean, loop::allocate(rstd, loop::seq(s)));
  });
}

} // namespace strata::lower
