// gather_nd, scatter_elements and scatter_nd (lib/interp/GatherScatter.cpp). Indices (i32/i64)
// are checked against [-dim, dim) (an index out of range fails the run, as in the interpreter,
// and no access leaves its buffer) and wrapped once when negative. Scatters copy `data` into the
// result, then combine every update in the interpreter's order (row-major over `updates`: later
// duplicates win for reduction none; add, mul, max and min accumulate).
#include "LowerImpl.h"

namespace strata::lower {
namespace {

using loop::ExprKind;

// max/min as the interpreter's MaxFn/MinFn: or/and on bool; on floats a NaN (the old value's
// first) propagates.
Expr combineMinMax(bool isMax, const Expr &old, const Expr &v, DType t) {
  if (t == DType::Bool)
    return bin(isMax ? ExprKind::Or : ExprKind::And, old, v);
  if (!isFloat(t))
    return bin(isMax ? ExprKind::Max : ExprKind::Min, old, v);
  Expr pick = isMax ? loop::select(bin(ExprKind::LT, old, v), v, old)
                    : loop::select(bin(ExprKind::LT, v, old), v, old);
  return loop::select(bin(ExprKind::NE, old, old), old, loop::select(bin(ExprKind::NE, v, v), v, pick));
}

void requireIndexType(const LowerCtx &c) {
  if (c.inTypes[1] != DType::I32 && c.inTypes[1] != DType::I64)
    throw LowerError(std::string(c.op.opName()) + ": indices must be i32 or i64");
}

// The coordinates of index tuple `tuple` (all but the last indices dim) into data dims
// [first, first + k), checked; `used`: whether any iteration reads them.
Exprs tupleCoords(const LowerCtx &c, const Exprs &tuple, int64_t first, int64_t k, bool used) {
  Exprs r;
  for (int64_t j = 0; j < k; ++j) {
    Exprs ii = tuple;
    ii.push_back(imm(j));
    size_t d = static_cast<size_t>(first + j);
    r.push_back(checkedDataIndex(c, loop::load(c.ins[1], ii), c.inTypes[1], c.inDims[0][d],
                                 "indices into axis " + std::to_string(d), used));
  }
  return r;
}

} // namespace

// Extents may be run-time ones (the number of index tuples a nonzero found), except the tuple
// length, the indices' last dim.
Stmt lowerGatherNd(LowerCtx &c) {
  requireIndexType(c);
  const Shape &data = c.inShapes[0], &ind = c.inShapes[1];
  int64_t q = static_cast<int64_t>(ind.size()), b = ops::GatherNDOp(c.op).batch_dims();
  if (q < 1 || b < 0 || b >= q || b > static_cast<int64_t>(data.size()))
    throw LowerError("gather_nd: bad batch_dims or indices rank");
  int64_t k = ind.back();
  if (k < 0)
    notLowered(c.op, "a run-time index tuple length");
  const std::optional<int64_t> outElements = product(c.outDims[0]).asInt();
  return loopNest(c, c.outDims[0], LoopRole::Parallel, [&](const Exprs &o) {
    Exprs tuple(o.begin(), o.begin() + (q - 1));
    Exprs src(o.begin(), o.begin() + b);
    Exprs coords = tupleCoords(c, tuple, b, k, outElements.value_or(1) > 0);
    src.insert(src.end(), coords.begin(), coords.end());
    src.insert(src.end(), o.begin() + (q - 1), o.end());
    return loop::store(c.outs[0], o, loop::load(c.ins[0], src));
  });
}

// result = data, then result[target(u)] = combine(result[target(u)], updates[u]) for every
// updates index u, row-major.
static Stmt scatter(LowerCtx &c, const std::function<Exprs(const Exprs &)> &target) {
  DType t = c.inTypes[0];
  if (c.inTypes[2] != t)
    throw LowerError(std::string(c.op.opName()) + ": updates dtype differs from data dtype");
  const ScatterReduction red = c.op.kind() == OpKind::ScatterND
                                   ? ops::ScatterNDOp(c.op).reduction()
                                   : ops::ScatterElementsOp(c.op).reduction();
  Stmt copy = loopNest(c, c.inDims[0], LoopRole::Parallel, [&](const Exprs &i) {
    return loop::store(c.outs[0], i, loop::load(c.ins[0], i));
  });
  Stmt updates = loopNest(c, c.inDims[2], LoopRole::Reduction, [&](const Exprs &u) {
    Exprs dst = target(u); // checked indices: within the result
    Expr v = loop::load(c.ins[2], u), old = loop::load(c.outs[0], dst);
    if (red == ScatterReduction::Add)
      v = t == DType::Bool ? bin(ExprKind::Or, old, v) : old + v;
    else if (red == ScatterReduction::Mul)
      v = t == DType::Bool ? bin(ExprKind::And, old, v) : old * v;
    else if (red != ScatterReduction::None)
      v = combineMinMax(red == ScatterReduction::Max, old, v, t);
    return loop::store(c.outs[0], dst, v);
  });
  return loop::seq({copy, updates});
}

Stmt lowerScatterElements(LowerCtx &c) {
  requireIndexType(c);
  const Shape &data = c.inShapes[0];
  if (data.empty() || c.inShapes[1] != c.inShapes[2] || c.inShapes[1].size() != data.size())
    throw LowerError("scatter_elements: indices and updates must match and have data's rank");
  size_t axis = checkedAxis(c, ops::ScatterElementsOp(c.op).axis(), data.size());
  const bool used = product(c.inDims[2]).asInt().value_or(1) > 0;
  return scatter(c, [&](const Exprs &u) {
    Exprs dst = u;
    dst[axis] = checkedDataIndex(c, loop::load(c.ins[1], u), c.inTypes[1], c.inDims[0][axis],
                                 "indices into axis " + std::to_string(axis), used);
    return dst;
  });
}

Stmt lowerScatterNd(LowerCtx &c) {
  requireIndexType(c);
  const Shape &data = c.inShapes[0], &ind = c.inShapes[1];
  int64_t q = static_cast<int64_t>(ind.size());
  if (q >= 1 && ind.back() < 0)
    notLowered(c.op, "a run-time index tuple length");
  if (q < 1 || ind.back() < 1 || ind.back() > static_cast<int64_t>(data.size()))
    throw LowerError("scatter_nd: bad indices shape");
  int64_t k = ind.back();
  const bool used = product(c.inDims[2]).asInt().value_or(1) > 0;
  return scatter(c, [&](const Exprs &u) {
    Exprs dst = tupleCoords(c, Exprs(u.begin(), u.begin() + (q - 1)), 0, k, used);
    dst.insert(dst.end(), u.begin() + (q - 1), u.end());
    return dst;
  });
}

} // namespace strata::lower
