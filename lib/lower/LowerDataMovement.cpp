// Data movement ops become pure index arithmetic: one loop nest over the result (per input for
// concat) whose body loads the source element at a computed index. Nothing is copied twice.
#include "LowerImpl.h"

#include "strata/graph/Layout.h"

#include <algorithm>

namespace strata::lower {
namespace {

using loop::ExprKind;

Expr bin(ExprKind k, Expr a, Expr b) { return loop::binary(k, std::move(a), std::move(b)); }

// Copies through `index`, which maps a result index to a source index of operand 0.
Stmt copyVia(LowerCtx &c, const std::function<Exprs(const Exprs &)> &index) {
  return loopNest(c, c.outShapes[0], [&](const Exprs &idx) {
    return loop::store(c.outs[0], idx, loop::load(c.ins[0], index(idx)));
  });
}

Exprs transposeSource(const Op &op, const Shape &in, const Exprs &idx) {
  std::vector<int64_t> perm = op.intsAttr("perm");
  if (perm.empty()) // ONNX default: reverse the dims
    for (int64_t d = static_cast<int64_t>(in.size()); d-- > 0;)
      perm.push_back(d);
  if (perm.size() != in.size())
    throw LowerError("transpose: perm length does not match the rank");
  Exprs src(perm.size());
  for (size_t d = 0; d < perm.size(); ++d)
    src[static_cast<size_t>(perm[d])] = idx[d];
  return src;
}

// ONNX Slice start per result axis (made non-negative, clamped as the interpreter does) and step.
Exprs sliceSource(const Op &op, const Shape &in, const Exprs &idx) {
  int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> starts = op.intsAttr("starts"), axes = op.intsAttr("axes"),
                       steps = op.intsAttr("steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    throw LowerError("slice: starts, axes and steps must have the same length");
  std::vector<int64_t> start(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t a = static_cast<size_t>(normalizeAxis(op, axes[i], rank));
    int64_t dim = in[a], s = starts[i];
    if (s < 0)
      s += dim;
    s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, std::max<int64_t>(dim - 1, 0));
    start[a] = s;
    step[a] = steps[i];
  }
  Exprs r;
  for (size_t d = 0; d < idx.size(); ++d)
    r.push_back(step[d] == 1 && start[d] == 0 ? idx[d] : imm(start[d]) + idx[d] * imm(step[d]));
  return r;
}

// relayout NCHW -> NCHW<c>c reads plain (n, cb*c + ci, s...) for blocked (n, cb, s..., ci);
// the inverse reads blocked (n, ch / c, s..., ch % c).
Exprs relayoutSource(const Op &op, const Shape &in, const Shape &out, const Exprs &idx) {
  std::optional<int64_t> from = parseChannelLayout(op.stringAttr("from", "")),
                         to = parseChannelLayout(op.stringAttr("to", ""));
  if (!from || !to || (*from == 0) == (*to == 0))
    throw LowerError("relayout: expected one plain and one blocked layout");
  if (*to) {
    if (in.size() < 2 || in[1] % *to != 0 || out.size() != in.size() + 1)
      throw LowerError("relayout: cannot block the channels");
    Exprs src = {idx[0], idx[1] * imm(*to) + idx.back()};
    src.insert(src.end(), idx.begin() + 2, idx.end() - 1);
    return src;
  }
  if (in.size() < 3 || in.back() != *from || out.size() + 1 != in.size())
    throw LowerError("relayout: operand is not blocked by " + std::to_string(*from));
  Exprs src = {idx[0], bin(ExprKind::FloorDiv, idx[1], imm(*from))};
  src.insert(src.end(), idx.begin() + 2, idx.end());
  src.push_back(bin(ExprKind::FloorMod, idx[1], imm(*from)));
  return src;
}

// One loop nest per input, each writing its slab of the result at its offset along the axis.
Stmt lowerConcat(LowerCtx &c) {
  const Shape &out = c.outShapes[0];
  size_t axis = static_cast<size_t>(normalizeAxis(c.op, c.op.intAttr("axis"), static_cast<int64_t>(out.size())));
  std::vector<Stmt> parts;
  int64_t offset = 0;
  for (size_t i = 0; i < c.ins.size(); ++i) {
    parts.push_back(loopNest(c, c.inShapes[i], [&](const Exprs &idx) {
      Exprs o = idx;
      if (offset)
        o[axis] = idx[axis] + imm(offset);
      return loop::store(c.outs[0], o, loop::load(c.ins[i], idx));
    }));
    offset += c.inShapes[i][axis];
  }
  return loop::seq(parts);
}

// The source coordinate along one axis for pad mode edge/reflect/wrap (lib/interp padSource):
// `u` is the result coordinate minus the leading pad; the axis keeps `kept` elements from `lo`
// (negative pads crop first).
Expr padSource(const Expr &u, int64_t lo, int64_t kept, const std::string &mode) {
  Expr k;
  if (mode == "edge") {
    k = loop::min(loop::max(u, imm(0)), imm(kept - 1));
  } else if (mode == "wrap") {
    k = bin(ExprKind::FloorMod, u, imm(kept));
  } else if (kept == 1) { // reflect of a single element
    k = imm(0);
  } else { // reflect: mirror without repeating the edge element (numpy 'reflect')
    int64_t period = 2 * (kept - 1);
    Expr m = bin(ExprKind::FloorMod, u, imm(period));
    k = loop::select(bin(ExprKind::GE, m, imm(kept)), imm(period) - m, m);
  }
  return lo ? k + imm(lo) : k;
}

// Constant mode: result element = source at (index - begin) when inside, else the value. The
// other modes read the source at a mirrored, clamped or wrapped coordinate.
Stmt lowerPad(LowerCtx &c) {
  std::string mode = c.op.stringAttr("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    throw LowerError("pad: unknown mode \"" + mode + "\"");
  std::vector<int64_t> pads = c.op.intsAttr("pads");
  const Shape &in = c.inShapes[0];
  size_t rank = in.size();
  if (pads.size() != 2 * rank)
    throw LowerError("pad: pads must have 2 * rank entries");
  if (mode != "constant")
    return loopNest(c, c.outShapes[0], [&](const Exprs &idx) {
      Exprs src;
      for (size_t d = 0; d < rank; ++d) {
        int64_t begin = pads[d], lo = std::max<int64_t>(0, -begin);
        int64_t kept = in[d] - lo - std::max<int64_t>(0, -pads[rank + d]);
        if (kept <= 0 && c.outShapes[0][d] > 0)
          throw LowerError("pad: cannot " + mode + "-pad axis " + std::to_string(d) +
                           ", which keeps no elements");
        kept = std::max<int64_t>(kept, 1); // an empty result never reads
        src.push_back(padSource(begin > 0 ? idx[d] - imm(begin) : idx[d], lo, kept, mode));
      }
      return loop::store(c.outs[0], idx, loop::load(c.ins[0], src));
    });
  return loopNest(c, c.outShapes[0], [&](const Exprs &idx) {
    Exprs src;
    Expr inside;
    for (size_t d = 0; d < rank; ++d) {
      Expr s = pads[d] ? idx[d] - imm(pads[d]) : idx[d];
      src.push_back(s);
      Expr ok = bin(ExprKind::And, bin(ExprKind::GE, s, imm(0)), bin(ExprKind::LT, s, imm(in[d])));
      inside = inside ? bin(ExprKind::And, inside, ok) : ok;
    }
    Stmt fill = loop::store(c.outs[0], idx, loop::load(c.ins[1], {}));
    if (!inside)
      return fill;
    return loop::ifThenElse(inside, loop::store(c.outs[0], idx, loop::load(c.ins[0], src)), fill);
  });
}

// An index loaded from an i32/i64 tensor, widened and wrapped once if negative.
Expr wrappedIndex(const Expr &raw, DType t, int64_t dim) {
  Expr i = t == DType::I64 ? raw : loop::cast(DType::I64, raw);
  return loop::select(bin(ExprKind::LT, i, imm(0)), i + imm(dim), i);
}

Stmt lowerGather(LowerCtx &c, bool elements) {
  const Shape &data = c.inShapes[0], &indices = c.inShapes[1];
  DType it = c.inTypes[1];
  if (it != DType::I32 && it != DType::I64)
    throw LowerError(std::string(c.op.opName()) + ": indices must be i32 or i64");
  size_t axis = static_cast<size_t>(normalizeAxis(c.op, c.op.intAttr("axis"), static_cast<int64_t>(data.size())));
  int64_t dim = data[axis];
  return copyVia(c, [&](const Exprs &idx) {
    if (elements) { // result index == indices index; the axis coordinate is read from indices
      Exprs src = idx;
      src[axis] = wrappedIndex(loop::load(c.ins[1], idx), it, dim);
      return src;
    }
    // result = data[:axis] ++ indices ++ data[axis+1:]
    Exprs ii(idx.begin() + static_cast<std::ptrdiff_t>(axis),
             idx.begin() + static_cast<std::ptrdiff_t>(axis + indices.size()));
    Exprs src(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(axis));
    src.push_back(wrappedIndex(loop::load(c.ins[1], ii), it, dim));
    src.insert(src.end(), idx.begin() + static_cast<std::ptrdiff_t>(axis + indices.size()), idx.end());
    return src;
  });
}

} // namespace

bool isIndexMapOp(OpKind k) {
  switch (k) {
  case OpKind::Reshape:
  case OpKind::Transpose:
  case OpKind::Expand:
  case OpKind::Slice:
  case OpKind::Relayout:
    return true;
  default:
    return false;
  }
}

Exprs indexMapSource(const Op &op, const Shape &in, const Shape &out, const Exprs &idx) {
  switch (op.kind()) {
  case OpKind::Reshape: // row-major order is kept: result index -> linear -> source index
    return delinearize(linearIndex(idx, out), in);
  case OpKind::Expand: return broadcastIndex(idx, out, in);
  case OpKind::Transpose: return transposeSource(op, in, idx);
  case OpKind::Slice: return sliceSource(op, in, idx);
  case OpKind::Relayout: return relayoutSource(op, in, out, idx);
  default: throw LowerError(std::string(op.opName()) + " is not an index map");
  }
}

bool isDataMovementFamily(OpKind k) {
  switch (k) {
  case OpKind::Relayout:
  case OpKind::Reshape:
  case OpKind::Transpose:
  case OpKind::Expand:
  case OpKind::Slice:
  case OpKind::Concat:
  case OpKind::Pad:
  case OpKind::Gather:
  case OpKind::GatherElements:
    return true;
  default:
    return false;
  }
}

Stmt lowerDataMovement(LowerCtx &c) {
  switch (c.op.kind()) {
  case OpKind::Reshape:
  case OpKind::Expand:
  case OpKind::Transpose:
  case OpKind::Slice:
  case OpKind::Relayout:
    return copyVia(c, [&](const Exprs &idx) {
      return indexMapSource(c.op, c.inShapes[0], c.outShapes[0], idx);
    });
  case OpKind::Concat: return lowerConcat(c);
  case OpKind::Pad: return lowerPad(c);
  case OpKind::Gather: return lowerGather(c, false);
  case OpKind::GatherElements: return lowerGather(c, true);
  default: notLowered(c.op);
  }
}

} // namespace strata::lower
