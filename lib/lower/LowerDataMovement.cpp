// Data movement ops become pure index arithmetic: one loop nest over the result (per input for
// concat) whose body loads the source element at a computed index. Nothing is copied twice.
#include "LowerImpl.h"

#include "strata/graph/Layout.h"

#include <algorithm>
#include <limits>

namespace strata::lower {
namespace {

using loop::ExprKind;

// Copies through `index`, which maps a result index to a source index of operand 0.
Stmt copyVia(LowerCtx &c, const std::function<Exprs(const Exprs &)> &index) {
  return loopNest(c, c.outDims[0], LoopRole::Parallel, [&](const Exprs &idx) {
    return loop::store(c.outs[0], idx, loop::load(c.ins[0], index(idx)));
  });
}

Exprs transposeSource(const Op &op, const Exprs &in, const Exprs &idx) {
  const std::vector<int64_t> &perm = ops::TransposeOp(op).perm();
  if (perm.size() != in.size())
    throw LowerError("transpose: perm length does not match the rank");
  Exprs src(perm.size());
  for (size_t d = 0; d < perm.size(); ++d)
    src[static_cast<size_t>(perm[d])] = idx[d];
  return src;
}

// ONNX Slice: result index i of each dim reads start + i * step (shape::sliceRange).
Exprs sliceSource(const Op &op, const Exprs &in, const Exprs &idx) {
  const ops::SliceOp slice(op);
  const std::vector<int64_t> &starts = slice.starts(), &ends = slice.ends(), &steps = slice.steps();
  if (starts.size() != in.size() || ends.size() != in.size() || steps.size() != in.size())
    throw LowerError("slice: starts, ends and steps must have one entry per dim");
  Exprs r;
  for (size_t d = 0; d < idx.size(); ++d) {
    std::optional<int64_t> size = in[d].asInt();
    if (!size) { // a run-time extent: the start clamped as shape::sliceRange does, at run time
      if (starts[d] == 0 && steps[d] == 1) {
        r.push_back(idx[d]);
        continue;
      }
      constexpr int64_t kFar = int64_t(1) << 60; // "from the end" / "from the start"
      const bool forward = steps[d] > 0;
      const int64_t i = starts[d];
      Expr start = forward ? (i >= kFar    ? in[d]
                              : i <= -kFar ? imm(0)
                              : i < 0      ? loop::max(in[d] + imm(i), imm(0))
                                           : loop::min(imm(i), in[d]))
                           : (i >= kFar    ? in[d] - imm(1)
                              : i <= -kFar ? imm(-1)
                              : i < 0      ? loop::max(in[d] + imm(i), imm(-1))
                                           : loop::min(imm(i), in[d] - imm(1)));
      r.push_back(steps[d] == 1 ? start + idx[d] : start + idx[d] * imm(steps[d]));
      continue;
    }
    shape::SliceRange range = shape::sliceRange(*size, starts[d], ends[d], steps[d]);
    r.push_back(range.step == 1 && range.start == 0 ? idx[d]
                                                    : imm(range.start) + idx[d] * imm(range.step));
  }
  return r;
}

// relayout NCHW -> NCHW<c>c reads plain (n, cb*c + ci, s...) for blocked (n, cb, s..., ci), the
// pad lanes of a last block past C reading channel C - 1 (finite, and in bounds); the inverse
// reads blocked (n, ch / c, s..., ch % c).
Exprs relayoutSource(const Op &op, const Exprs &inDims, const Exprs &outDims, const Exprs &idx) {
  const ops::RelayoutOp relayout(op);
  // Only the channel dim and the block are read: both are static.
  auto sizes = [](const Exprs &dims) {
    Shape r;
    for (const Expr &d : dims)
      r.push_back(d.asInt().value_or(-1));
    return r;
  };
  const Shape in = sizes(inDims), out = sizes(outDims);
  const int64_t from = relayout.from(), to = relayout.to();
  if ((from == 0) == (to == 0))
    throw LowerError("relayout: expected one plain and one blocked layout");
  if (to) {
    if (in.size() < 2 || in[1] < 1 || out.size() != in.size() + 1 || out[1] * to < in[1])
      throw LowerError("relayout: cannot block the channels");
    Expr channel = idx[1] * imm(to) + idx.back();
    if (in[1] % to != 0)
      channel = bin(ExprKind::Min, channel, imm(in[1] - 1));
    Exprs src = {idx[0], channel};
    src.insert(src.end(), idx.begin() + 2, idx.end() - 1);
    return src;
  }
  if (in.size() < 3 || in.back() != from || out.size() + 1 != in.size())
    throw LowerError("relayout: operand is not blocked by " + std::to_string(from));
  Exprs src = {idx[0], bin(ExprKind::FloorDiv, idx[1], imm(from))};
  src.insert(src.end(), idx.begin() + 2, idx.end());
  src.push_back(bin(ExprKind::FloorMod, idx[1], imm(from)));
  return src;
}

} // namespace

// One loop nest per input, each writing its slab of the result at its offset along the axis.
Stmt lowerConcat(LowerCtx &c) {
  size_t axis = static_cast<size_t>(ops::ConcatOp(c.op).axis());
  std::vector<Stmt> parts;
  // Run-time offsets of many operands (a detector's per-class selections: 90 data-dependent
  // lengths) are running sums kept in a local array, computed once: spelled out, operand j's
  // offset is a sum of j sizes in every loop and runtime check LLVM makes of it (quadratic code,
  // minutes of compile time).
  size_t symbolicOffsets = 0;
  for (size_t i = 0; i + 1 < c.ins.size(); ++i)
    symbolicOffsets += !c.inDims[i][axis].asInt();
  loop::Buffer offsets;
  std::vector<Stmt> sums;
  if (symbolicOffsets > 2) {
    offsets = localArray(c, "offsets", DType::I64, static_cast<int64_t>(c.ins.size()));
    sums.push_back(loop::store(offsets, {imm(0)}, imm(0)));
    for (size_t i = 1; i < c.ins.size(); ++i)
      sums.push_back(loop::store(offsets, {imm(static_cast<int64_t>(i))},
                                 loop::load(offsets, {imm(static_cast<int64_t>(i - 1))}) +
                                     c.inDims[i - 1][axis]));
  }
  Expr offset = imm(0);
  for (size_t i = 0; i < c.ins.size(); ++i) {
    Expr at = offsets && i > 0 ? loop::load(offsets, {imm(static_cast<int64_t>(i))}) : offset;
    parts.push_back(loopNest(c, c.inDims[i], LoopRole::Parallel, [&](const Exprs &idx) {
      Exprs o = idx;
      if (at.asInt() != 0)
        o[axis] = idx[axis] + at;
      return loop::store(c.outs[0], o, loop::load(c.ins[i], idx));
    }));
    offset = offset.asInt() == 0 ? c.inDims[i][axis] : offset + c.inDims[i][axis];
  }
  if (!offsets)
    return loop::seq(parts);
  sums.insert(sums.end(), parts.begin(), parts.end());
  return loop::allocate(offsets, loop::seq(sums));
}

// The source coordinate along one axis for pad mode edge/reflect/wrap (lib/interp padSource):
// `u` is the result coordinate minus the leading pad; the axis keeps `kept` elements from `lo`
// (negative pads crop first).
static Expr padSource(const Expr &u, int64_t lo, int64_t kept, PadMode mode) {
  Expr k;
  if (mode == PadMode::Edge) {
    k = loop::min(loop::max(u, imm(0)), imm(kept - 1));
  } else if (mode == PadMode::Wrap) {
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

// The same with `lo` and `kept` run-time extents (kept >= 1 whenever the result is not empty: the
// plan checks it): a reflect of one element reads it (the mirror's period, 0 there, is kept at
// least 1).
static Expr padSourceAtRunTime(const Expr &u, const Expr &lo, const Expr &kept, PadMode mode) {
  Expr k;
  if (mode == PadMode::Edge) {
    k = loop::min(loop::max(u, imm(0)), kept - imm(1));
  } else if (mode == PadMode::Wrap) {
    k = bin(ExprKind::FloorMod, u, loop::max(kept, imm(1)));
  } else {
    Expr period = loop::max(imm(2) * (kept - imm(1)), imm(1));
    Expr m = bin(ExprKind::FloorMod, u, period);
    k = loop::select(bin(ExprKind::LE, kept, imm(1)), imm(0),
                     loop::select(bin(ExprKind::GE, m, kept), period - m, m));
  }
  return lo.asInt() == 0 ? k : k + lo;
}

// Constant mode: result element = source at (index - begin) when inside, else the value. The
// other modes read the source at a mirrored, clamped or wrapped coordinate.
Stmt lowerPad(LowerCtx &c) {
  const ops::PadOp pad(c.op);
  const PadMode mode = pad.mode();
  const std::vector<Dim> padDims = pad.pads();
  const Shape &in = c.inShapes[0];
  size_t rank = in.size();
  if (padDims.size() != 2 * rank)
    throw LowerError("pad: pads must have 2 * rank entries");
  // Each entry's positive part (a shift) and negative part (a crop): static, or for a symbolic
  // entry that may be negative, each a size the plan computes passed plus one (the plan's sizes
  // are >= 0, and the index prover takes a kernel parameter to be an extent >= 1: a part of 0
  // passed as itself would let it fold a clamp away).
  auto partPlusOne = [&](const SymExpr &e) {
    return c.dimExpr(Dim::of(SymExpr::max(e, SymExpr(0)) + SymExpr(1))) - imm(1);
  };
  auto positivePart = [&](size_t i) {
    const Dim &p = padDims[i];
    if (p.isStatic())
      return imm(std::max<int64_t>(0, p.size));
    return p.expr.provablyNonNegative() ? c.dimExpr(p) : partPlusOne(p.expr);
  };
  auto cropPart = [&](size_t i) {
    const Dim &p = padDims[i];
    if (p.isStatic())
      return imm(std::max<int64_t>(0, -p.size));
    return p.expr.provablyNonNegative() ? imm(0) : partPlusOne(-p.expr);
  };
  if (mode != PadMode::Constant) {
    // Reflect, edge and wrap read the source at u = index - shift, mirrored, clamped or wrapped
    // within the kept elements [lo, in - crop): static, or read at run time (a symbolic pad or
    // axis).
    return loopNest(c, c.outDims[0], LoopRole::Parallel, [&](const Exprs &idx) {
      Exprs src;
      for (size_t d = 0; d < rank; ++d) {
        const bool symbolicPad = !padDims[d].isStatic() || !padDims[rank + d].isStatic();
        const Expr lo = cropPart(d), crop = cropPart(rank + d), shift = positivePart(d);
        const Expr u = shift.asInt() == 0 ? idx[d] : idx[d] - shift;
        const std::optional<int64_t> staticKept =
            in[d] >= 0 && lo.asInt() && crop.asInt()
                ? std::optional<int64_t>(in[d] - *lo.asInt() - *crop.asInt())
                : std::nullopt;
        if ((symbolicPad && in[d] == 0) ||
            (staticKept && *staticKept <= 0 && (symbolicPad || c.outShapes[0][d] > 0)))
          throw LowerError("pad: cannot " + std::string(enumName(mode)) + "-pad axis " +
                           std::to_string(d) + ", which keeps no elements");
        if (staticKept) { // an empty result never reads: kept at least 1
          src.push_back(padSource(u, *lo.asInt(), std::max<int64_t>(*staticKept, 1), mode));
          continue;
        }
        const Expr kept = crop.asInt() == 0 && lo.asInt() == 0 ? c.inDims[0][d]
                                                                : c.inDims[0][d] - lo - crop;
        src.push_back(padSourceAtRunTime(u, lo, kept, mode));
      }
      return loop::store(c.outs[0], idx, loop::load(c.ins[0], src));
    });
  }
  // Dims past the last padded one are copied or filled whole: the test of the padded dims'
  // indices runs once per row of them, outside the (vectorized) copy, not per element.
  size_t padded = 0;
  for (size_t d = 0; d < rank; ++d)
    if (!padDims[d].isStatic() || padDims[d].size != 0 || !padDims[rank + d].isStatic() ||
        padDims[rank + d].size != 0)
      padded = d + 1;
  const Exprs outer(c.outDims[0].begin(), c.outDims[0].begin() + static_cast<long>(padded)),
      inner(c.outDims[0].begin() + static_cast<long>(padded), c.outDims[0].end());
  auto with = [](Exprs head, const Exprs &tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  return loopNest(c, outer, LoopRole::Parallel, [&](const Exprs &at) {
    Exprs src;
    Expr inside;
    for (size_t d = 0; d < padded; ++d) {
      // index - begin: a symbolic begin as its shift and crop (the plan's sizes are >= 0)
      Expr s = at[d];
      if (!padDims[d].isStatic()) {
        const Expr shift = positivePart(d), crop = cropPart(d);
        s = crop.asInt() == 0 ? s - shift : s - shift + crop;
      } else if (padDims[d].size) {
        s = s - imm(padDims[d].size);
      }
      src.push_back(s);
      Expr ok = bin(ExprKind::And, bin(ExprKind::GE, s, imm(0)), bin(ExprKind::LT, s, c.inDims[0][d]));
      inside = inside ? bin(ExprKind::And, inside, ok) : ok;
    }
    Stmt copy = loopNest(c, inner, LoopRole::Parallel, [&](const Exprs &rest) {
      return loop::store(c.outs[0], with(at, rest), loop::load(c.ins[0], with(src, rest)));
    });
    if (!inside)
      return copy;
    Stmt fill = loopNest(c, inner, LoopRole::Parallel, [&](const Exprs &rest) {
      return loop::store(c.outs[0], with(at, rest), loop::load(c.ins[1], {}));
    });
    return loop::ifThenElse(inside, copy, fill);
  });
}

// gather_channels: result channel o copies channel sources[o] of the operands' concatenated
// channels. Blocked: one nest over images and spatial positions whose body copies every result
// lane, a run of consecutive channels within one block of the result and one block of an
// operand as one vector, and zeroes the pad lanes. Plain: one nest per run of consecutive
// channels from one operand, like a concat's slabs.
Stmt lowerGatherChannels(LowerCtx &c) {
  const ops::GatherChannelsOp attrs(c.op);
  const std::vector<int64_t> &channels = attrs.channels(), &sources = attrs.sources();
  const int64_t block = attrs.layout();
  if (channels.size() != c.ins.size() || sources.empty())
    throw LowerError("gather_channels: channels or sources do not match the operands");
  const int64_t outChannels = static_cast<int64_t>(sources.size());
  // The runs: [o, o + len) from operand j's channels [ch, ch + len).
  struct Run {
    int64_t o, len;
    size_t j;
    int64_t ch;
  };
  std::vector<Run> runs;
  for (int64_t o = 0; o < outChannels;) {
    const int64_t src = sources[static_cast<size_t>(o)];
    std::optional<ChannelOrigin> origin = concatenatedChannel(channels, src);
    if (!origin)
      throw LowerError("gather_channels: source channel out of range");
    const size_t j = origin->operand;
    const int64_t ch = origin->channel;
    int64_t len = 1;
    while (o + len < outChannels && sources[static_cast<size_t>(o + len)] == src + len &&
           ch + len < channels[j] &&
           (!block || ((o + len) / block == o / block && (ch + len) / block == ch / block)))
      ++len;
    runs.push_back({o, len, j, ch});
    o += len;
  }
  const Exprs &od = c.outDims[0];
  if (!block) {
    std::vector<Stmt> parts;
    for (const Run &run : runs) {
      Exprs extents = od;
      extents[1] = imm(run.len);
      parts.push_back(loopNest(c, extents, LoopRole::Parallel, [&](const Exprs &idx) {
        Exprs to = idx, from = idx;
        to[1] = idx[1] + imm(run.o);
        from[1] = idx[1] + imm(run.ch);
        return loop::store(c.outs[0], to, loop::load(c.ins[run.j], from));
      }));
    }
    return loop::seq(parts);
  }
  Exprs outer = {od[0]};
  outer.insert(outer.end(), od.begin() + 2, od.end() - 1);
  const DType t = c.outTypes[0];
  return loopNest(c, outer, LoopRole::Parallel, [&](const Exprs &idx) {
    auto at = [&](int64_t channel, int64_t len) {
      Exprs e = {idx[0], imm(channel / block)};
      e.insert(e.end(), idx.begin() + 1, idx.end());
      e.push_back(len == 1 ? imm(channel % block)
                           : loop::ramp(imm(channel % block), imm(1), static_cast<int>(len)));
      return e;
    };
    std::vector<Stmt> copies;
    for (const Run &run : runs)
      copies.push_back(loop::store(c.outs[0], at(run.o, run.len),
                                   loop::load(c.ins[run.j], at(run.ch, run.len))));
    if (const int64_t pad = (block - outChannels % block) % block; pad > 0) {
      Expr zero = isFloat(t) ? loop::floatImm(0, t) : loop::intImm(0, t);
      copies.push_back(loop::store(c.outs[0], at(outChannels, pad),
                                   pad == 1 ? zero : loop::broadcast(zero, static_cast<int>(pad))));
    }
    return loop::seq(copies);
  });
}

static Stmt lowerGather(LowerCtx &c, bool elements) {
  const Shape &data = c.inShapes[0], &indices = c.inShapes[1];
  DType it = c.inTypes[1];
  if (it != DType::I32 && it != DType::I64)
    throw LowerError(std::string(c.op.opName()) + ": indices must be i32 or i64");
  size_t axis = static_cast<size_t>(elements ? ops::GatherElementsOp(c.op).axis()
                                             : ops::GatherOp(c.op).axis());
  if (axis >= data.size())
    throw LowerError(std::string(c.op.opName()) + ": axis out of range");
  const Expr dim = c.inDims[0][axis]; // a run-time extent when symbolic
  // Whether some element is certainly read: then an axis of size 0 is refused here; with
  // symbolic dims the result may be empty when it runs (a split part of size 0 read from data),
  // so the index check at run time decides.
  const bool used = !c.symbolic && numElements(c.outShapes[0]) > 0;
  const std::string what = "indices into axis " + std::to_string(axis);
  return copyVia(c, [&](const Exprs &idx) {
    if (elements) { // result index == indices index; the axis coordinate is read from indices
      Exprs src = idx;
      src[axis] = checkedDataIndex(c, loop::load(c.ins[1], idx), it, dim, what, used);
      return src;
    }
    // result = data[:axis] ++ indices ++ data[axis+1:]
    Exprs ii(idx.begin() + static_cast<std::ptrdiff_t>(axis),
             idx.begin() + static_cast<std::ptrdiff_t>(axis + indices.size()));
    Exprs src(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(axis));
    src.push_back(checkedDataIndex(c, loop::load(c.ins[1], ii), it, dim, what, used));
    src.insert(src.end(), idx.begin() + static_cast<std::ptrdiff_t>(axis + indices.size()), idx.end());
    return src;
  });
}

// A reshape keeps row-major order: result index -> linear -> source index. Over the whole shape
// that divides by products of run-time extents at every element (a window partition's
// [n, 7h, 7w, c] -> [n, h, 7, w, 7, c] with symbolic h and w: 1 GB/s). So the dims are first cut
// into runs whose products agree (as formulas of the symbols, or as sizes): within each run the
// result's dims are linearized and the source's delinearized. A dim kept as it is maps to
// itself, a split multiplies, and a merge divides by its own inner dims only (7 above); a
// reshape whose products never agree before the end is one run, the whole-shape map.
Exprs reshapeSource(const Op &op, const Exprs &in, const Exprs &out, const Exprs &idx) {
  const std::vector<Dim> &inT = op.operand(0)->type().dims;
  const std::vector<Dim> &outT = op.result(0)->type().dims;
  auto hasZero = [](const std::vector<Dim> &dims) {
    return llvm::any_of(dims, [](const Dim &d) { return d.isStatic() && d.size == 0; });
  };
  if (inT.size() != in.size() || outT.size() != out.size() || hasZero(inT) || hasZero(outT))
    return delinearize(linearIndex(idx, out), in);
  auto isOne = [](const Dim &d) { return d.isStatic() && d.size == 1; };
  Exprs src;
  size_t i = 0, j = 0;
  const size_t p = inT.size(), q = outT.size();
  while (i < p || j < q) {
    if (i < p && isOne(inT[i])) { // a unit source dim: index 0
      src.push_back(imm(0));
      ++i;
      continue;
    }
    if (j < q && isOne(outT[j])) { // a unit result dim: its index is always 0
      ++j;
      continue;
    }
    // The first runs [i, i2) and [j, j2) with equal products (the fewest source dims).
    size_t bestI = p, bestJ = q;
    if (i < p && j < q) {
      try {
        bool found = false;
        SymExpr pi = 1;
        for (size_t i2 = i + 1; i2 <= p && !found; ++i2) {
          pi = pi * inT[i2 - 1].asExpr();
          SymExpr po = 1;
          for (size_t j2 = j + 1; j2 <= q; ++j2) {
            po = po * outT[j2 - 1].asExpr();
            if (po == pi) {
              bestI = i2, bestJ = j2, found = true;
              break;
            }
          }
        }
      } catch (const SymExprError &) { // a product past int64: the rest is one run
        bestI = p, bestJ = q;
      }
    }
    const Exprs outIdx(idx.begin() + static_cast<std::ptrdiff_t>(j),
                       idx.begin() + static_cast<std::ptrdiff_t>(bestJ));
    const Exprs outExt(out.begin() + static_cast<std::ptrdiff_t>(j),
                       out.begin() + static_cast<std::ptrdiff_t>(bestJ));
    const Exprs inExt(in.begin() + static_cast<std::ptrdiff_t>(i),
                      in.begin() + static_cast<std::ptrdiff_t>(bestI));
    if (inExt.size() == 1 && outExt.size() == 1) {
      src.push_back(outIdx[0]);
    } else {
      Exprs part = delinearize(linearIndex(outIdx, outExt), inExt);
      src.insert(src.end(), part.begin(), part.end());
    }
    i = bestI;
    j = bestJ;
  }
  return src;
}

Exprs indexMapSource(const Op &op, const Exprs &in, const Exprs &out, const Exprs &idx) {
  switch (op.kind()) {
  case OpKind::Reshape: return reshapeSource(op, in, out, idx);
  case OpKind::Expand: return broadcastIndex(idx, out, in);
  case OpKind::Transpose: return transposeSource(op, in, idx);
  case OpKind::Slice: return sliceSource(op, in, idx);
  case OpKind::Relayout: return relayoutSource(op, in, out, idx);
  default: throw LowerError(std::string(op.opName()) + " is not an index map");
  }
}

Stmt lowerIndexMap(LowerCtx &c) {
  return copyVia(c, [&](const Exprs &idx) {
    return indexMapSource(c.op, c.inDims[0], c.outDims[0], idx);
  });
}
// shape: one store per dim, its size or its run-time extent.
Stmt lowerShape(LowerCtx &c) {
  const ops::ShapeOp attrs(c.op);
  const int64_t start = attrs.start(), end = attrs.end();
  if (start < 0 || end < start || end > static_cast<int64_t>(c.inDims[0].size()))
    throw LowerError("shape: dims out of range");
  std::vector<Stmt> stores;
  for (int64_t i = start; i < end; ++i)
    stores.push_back(loop::store(c.outs[0], {imm(i - start)}, c.inDims[0][static_cast<size_t>(i)]));
  return loop::seq(stores);
}

// iota: out[i] = i over the result's (run-time) extent.
Stmt lowerIota(LowerCtx &c) {
  return loopNest(c, c.outDims[0], LoopRole::Parallel,
                  [&](const Exprs &idx) { return loop::store(c.outs[0], idx, idx[0]); });
}

Stmt lowerGather(LowerCtx &c) { return lowerGather(c, false); }
Stmt lowerGatherElements(LowerCtx &c) { return lowerGather(c, true); }

// nonzero: one serial pass over x in row-major order; each nonzero element's coordinates go
// to column k of the [rank, count] result, k counting up. The count is the result's dim 1, a
// run-time extent the plan bound from the count operand before this kernel runs (so every
// later kernel sees it too); columns past it are never written, and a count operand that is
// not the number found fails the run.
Stmt lowerNonZero(LowerCtx &c) {
  const Exprs &xd = c.inDims[0];
  const DType t = c.inTypes[0];
  if (c.outDims[0].size() != 2)
    throw LowerError("nonzero: the result must be [rank, count]");
  const Expr count = c.outDims[0][1];
  Acc k = makeAcc(c, "found", DType::I64);
  loop::Var i = c.newVar("i");
  Exprs idx = delinearize(loop::var(i), xd);
  Expr zero = isFloat(t) ? loop::floatImm(0, t) : loop::intImm(0, t);
  Expr nonzero = bin(loop::ExprKind::NE, loop::load(c.ins[0], idx), zero);
  std::vector<Stmt> writes;
  for (size_t d = 0; d < xd.size(); ++d)
    writes.push_back(loop::store(c.outs[0], {imm(static_cast<int64_t>(d)), k.get()}, idx[d]));
  Stmt body = loop::ifThenElse(
      nonzero, loop::seq({loop::ifThenElse(bin(loop::ExprKind::LT, k.get(), count),
                                           loop::seq(writes)),
                          k.set(k.get() + imm(1))}));
  Stmt scan = c.loopOver(i, product(xd), LoopRole::Reduction, body);
  c.nest(i, {std::string(c.op.opName()), -1, true});
  Stmt verify = requireCount(c, k.get(), count,
                             "the count operand minus the nonzero elements found (must be 0)");
  return loop::allocate(k.buf, loop::seq({k.set(imm(0)), scan, verify}));
}

} // namespace strata::lower
