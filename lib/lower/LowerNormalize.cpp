// Per-row scans along one axis: arg_reduce, layer_norm and cumsum.
//
// Order and precision follow lib/interp/Reductions.cpp exactly (bit-identical results): every
// row (all dims but the scanned ones fixed) owns one-element local accumulators and walks the
// scanned dims in the interpreter's order; floats accumulate in f64 and round once at the end.
#include "LowerImpl.h"

namespace strata::lower {
namespace {

using loop::ExprKind;

// A nest over every dim of `shape` except `axis`; `body` gets the full index with a placeholder
// at `axis` (to be replaced by the caller's axis index) via `at(a)`.
Stmt rowNest(LowerCtx &c, const Exprs &shape, size_t axis,
             const std::function<Stmt(const std::function<Exprs(const Expr &)> &)> &body) {
  Exprs rows = shape;
  rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(axis));
  return loopNest(c, rows, LoopRole::Parallel, [&](const Exprs &r) {
    return body([&, r](const Expr &a) {
      Exprs full = r;
      full.insert(full.begin() + static_cast<std::ptrdiff_t>(axis), a);
      return full;
    });
  });
}

} // namespace

// arg_reduce: the interpreter's running (best, bestIdx) from element 0, with numpy's NaN rule
// (the first NaN wins; the last one with select_last_index) and ties to the last index with
// select_last_index.
Stmt lowerArgReduce(LowerCtx &c) {
  const Shape &in = c.inShapes[0];
  DType t = c.inTypes[0];
  if (t == DType::Bool)
    notLowered(c.op, "bool operand");
  const ops::ArgReduceOp argReduce(c.op);
  const bool isMax = argReduce.kind() == ArgKind::Max;
  bool selectLast = argReduce.select_last_index();
  bool keep = argReduce.keepdims();
  if (in.empty())
    throw LowerError("arg_reduce: operand must have rank >= 1");
  size_t axis = checkedAxis(c, argReduce.axis(), in.size());
  // A run-time axis length is at least 1: the plan checks it when the inputs are bound.
  const Expr n = c.inDims[0][axis];
  if (n.asInt() == 0) {
    if (!c.symbolic && numElements(c.outShapes[0]) > 0)
      throw LowerError(std::string("arg_reduce: cannot take arg ") + (isMax ? "max" : "min") +
                       " along an empty axis");
    if (!c.symbolic)
      return loop::seq({});
    throw LowerError("arg_reduce: cannot take an arg along an empty axis");
  }
  return rowNest(c, c.inDims[0], axis, [&](const auto &at) {
    Acc best = makeAcc(c, "best", t), idx = makeAcc(c, "idx", DType::I64);
    loop::Var a = c.newVar("a");
    Expr v = loop::load(c.ins[0], at(loop::var(a))), b = best.get();
    Expr better = bin(isMax ? ExprKind::GT : ExprKind::LT, v, b);
    if (selectLast)
      better = bin(ExprKind::Or, better, bin(ExprKind::EQ, v, b));
    if (isFloat(t)) {
      // NaN best: replaced only by a later NaN with select_last_index; a NaN v always wins.
      Expr whenBestNaN = selectLast ? isNaN(v) : loop::boolImm(false);
      better = loop::select(isNaN(b), whenBestNaN, bin(ExprKind::Or, isNaN(v), better));
    }
    c.role(a, LoopRole::Reduction);
    Expr rest = n.asInt() ? imm(*n.asInt() - 1) : n - imm(1);
    Stmt scan = loop::forLoop(a, imm(1), rest, loop::ForKind::Serial,
                              loop::ifThenElse(better, loop::seq({best.set(v), idx.set(loop::var(a))})));
    Exprs outIdx = at(imm(0));
    if (!keep)
      outIdx.erase(outIdx.begin() + static_cast<std::ptrdiff_t>(axis));
    Stmt body = loop::seq({best.set(loop::load(c.ins[0], at(imm(0)))), idx.set(imm(0)), scan,
                           loop::store(c.outs[0], outIdx, idx.get())});
    return loop::allocate(best.buf, loop::allocate(idx.buf, body));
  });
}

// layer_norm over dims [axis, rank): mean, then the mean-centred variance, both in f64;
// y = (x - mean) * (1 / sqrt(var + eps)) * scale + bias, rounded once. f32 rows along the last
// axis are vectorized instead (LowerRowVector.cpp).
Stmt lowerLayerNorm(LowerCtx &c) {
  const Shape &in = c.inShapes[0];
  DType t = c.inTypes[0];
  if (!isFloat(t))
    notLowered(c.op, std::string(dtypeName(t)) + " operand");
  for (size_t i = 1; i < c.inTypes.size(); ++i)
    if (c.inTypes[i] != t)
      throw LowerError("layer_norm: scale and bias must have the input's dtype");
  if (in.empty())
    throw LowerError("layer_norm: operand must have rank >= 1");
  if (canLowerVectorRows(c))
    return lowerVectorLayerNorm(c);
  if (c.symbolic)
    notLowered(c.op, "symbolic dims outside vectorized rows of a static length");
  const ops::LayerNormOp layerNorm(c.op);
  size_t axis = checkedAxis(c, layerNorm.axis(), in.size());
  double eps = layerNorm.epsilon();
  Shape outer(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(axis));
  Shape trailing(in.begin() + static_cast<std::ptrdiff_t>(axis), in.end());
  for (size_t i = 1; i < c.inShapes.size(); ++i)
    if (c.inShapes[i].size() > in.size())
      throw LowerError("layer_norm: scale/bias rank exceeds the input's");
  int64_t inner = numElements(trailing);
  const DType f64 = DType::F64;
  auto f = [&](double v) { return loop::floatImm(v, f64); };
  return loopNest(c, outer, LoopRole::Parallel, [&](const Exprs &o) {
    Acc mean = makeAcc(c, "mean", f64), var = makeAcc(c, "var", f64), inv = makeAcc(c, "invstd", f64);
    auto full = [&](const Exprs &r) {
      Exprs idx = o;
      idx.insert(idx.end(), r.begin(), r.end());
      return idx;
    };
    auto x = [&](const Exprs &r) { return loop::cast(f64, loop::load(c.ins[0], full(r))); };
    Stmt sum = loopNest(c, trailing, LoopRole::Reduction,
                        [&](const Exprs &r) { return mean.set(mean.get() + x(r)); });
    Stmt sq = loopNest(c, trailing, LoopRole::Reduction, [&](const Exprs &r) {
      Expr d = x(r) - mean.get();
      return var.set(var.get() + d * d);
    });
    auto operand = [&](size_t i, const Exprs &r) {
      return loop::cast(f64, loop::load(c.ins[i], broadcastIndex(full(r), c.inDims[0], c.inDims[i])));
    };
    Stmt write = loopNest(c, trailing, LoopRole::Parallel, [&](const Exprs &r) {
      Expr y = (x(r) - mean.get()) * inv.get();
      y = y * operand(1, r);
      if (c.ins.size() > 2)
        y = y + operand(2, r);
      return loop::store(c.outs[0], full(r), loop::cast(t, y));
    });
    Expr count = f(static_cast<double>(inner));
    Stmt body = loop::seq(
        {mean.set(f(0)), sum, mean.set(bin(ExprKind::Div, mean.get(), count)), var.set(f(0)), sq,
         var.set(bin(ExprKind::Div, var.get(), count)),
         inv.set(bin(ExprKind::Div, f(1), loop::call(loop::Intrinsic::Sqrt, {var.get() + f(eps)}))),
         write});
    return loop::allocate(mean.buf, loop::allocate(var.buf, loop::allocate(inv.buf, body)));
  });
}

// cumsum along `axis` (optionally reversed / exclusive): a running sum, f64 for floats, wrapping
// in the dtype for integers.
Stmt lowerCumSum(LowerCtx &c) {
  const Shape &in = c.inShapes[0];
  DType t = c.inTypes[0];
  if (t == DType::Bool)
    throw LowerError("cumsum: bool input is not supported");
  if (in.empty())
    throw LowerError("cumsum: operand must have rank >= 1");
  const ops::CumSumOp cumSum(c.op);
  size_t axis = checkedAxis(c, cumSum.axis(), in.size());
  bool exclusive = cumSum.exclusive();
  bool reverse = cumSum.reverse();
  const Expr n = c.inDims[0][axis];
  DType at = isFloat(t) ? DType::F64 : t;
  return rowNest(c, c.inDims[0], axis, [&](const auto &idxAt) {
    Acc run = makeAcc(c, "run", at);
    loop::Var step = c.newVar("s");
    Expr last = n.asInt() ? imm(*n.asInt() - 1) : n - imm(1);
    Expr a = reverse ? last - loop::var(step) : loop::var(step);
    Exprs idx = idxAt(a);
    Expr v = loop::load(c.ins[0], idx);
    if (at != t)
      v = loop::cast(at, v);
    Expr out = at != t ? loop::cast(t, run.get()) : run.get();
    Stmt add = run.set(run.get() + v), write = loop::store(c.outs[0], idx, out);
    Stmt scan = c.loopOver(step, n, LoopRole::Reduction,
                           exclusive ? loop::seq({write, add}) : loop::seq({add, write}));
    Expr zero = isFloat(t) ? loop::floatImm(0, at) : loop::intImm(0, at);
    return loop::allocate(run.buf, loop::seq({run.set(zero), scan}));
  });
}

} // namespace strata::lower
