// resize (ONNX Resize: nearest | linear | cubic, N-d), following lib/interp/Resize.cpp exactly:
// separable 1-D passes from the innermost axis outwards, all in f64. Shapes are static, so each
// axis's taps (clamped input index, weight) are computed here, at lowering time, by the same
// ResizeMath.h functions the interpreter uses, and become constant tables filled by stores; a
// pass sums, per output element, `w * src[tap]` over the non-zero taps in order starting from
// 0.0. Identity axes are skipped like the interpreter does; the last pass converts to the result
// dtype.
#include "LowerImpl.h"

#include "strata/graph/ResizeMath.h"

#include <algorithm>
#include <cmath>

namespace strata::lower {

using loop::ExprKind;

namespace {

// One output element of a pass along axis d: the sum, from 0.0, of weight * source over the
// taps whose weight is non-zero, in tap order (the interpreter's order); `tap(j)` gives tap j's
// (weight, input index along d).
Expr sumOfTaps(const Exprs &idx, size_t d, int64_t count,
               const std::function<std::pair<Expr, Expr>(int64_t)> &tap,
               const std::function<Expr(const Exprs &)> &src) {
  Expr acc = loop::floatImm(0, DType::F64);
  for (int64_t j = 0; j < count; ++j) {
    auto [w, at] = tap(j);
    Exprs from = idx;
    from[d] = at;
    acc = loop::select(loop::binary(ExprKind::NE, w, loop::floatImm(0, DType::F64)),
                       acc + w * src(from), acc);
  }
  return acc;
}

// `stmts` in sequence inside the allocations of `allocs` (the passes' temporaries and tables).
Stmt allocateAround(const std::vector<loop::Buffer> &allocs, const std::vector<Stmt> &stmts) {
  Stmt body = loop::seq(stmts);
  for (size_t i = allocs.size(); i-- > 0;)
    body = loop::allocate(allocs[i], body);
  return body;
}

// Resize with run-time extents (symbolic dims): the same separable f64 passes, with each output
// coordinate's two taps computed in the loop from the input size, exactly as resizeTaps does
// (the same double operations in the same order), instead of constant tables. Nearest and
// linear (two taps) and cubic (four); the scales are given (the shape function requires them
// for symbolic dims) or out / in.
Stmt lowerResizeAtRunTime(LowerCtx &c, const ResizeParams &p, const std::vector<double> &scales,
                          const std::function<Expr(Expr)> &convert) {
  const DType f64 = DType::F64;
  if (p.coordinateMode == CoordinateMode::TfCropAndResize)
    notLowered(c.op, "tf_crop_and_resize");
  const Exprs &inDims = c.inDims[0], &outDims = c.outDims[0];
  const size_t rank = inDims.size();
  if (!scales.empty() && scales.size() != rank)
    throw LowerError("resize: scales rank mismatch");
  // Scales read from data (operand 1) are loaded when the kernel runs.
  const bool scalesOperand = c.ins.size() > 1;
  // An empty static axis has nothing to interpolate from (a symbolic one: the plan checks it).
  for (size_t d = 0; d < rank; ++d)
    if (c.inShapes[0][d] == 0 && !(outDims[d].asInt() && *outDims[d].asInt() == 0))
      throw LowerError("resize: input dim " + std::to_string(d) + " is empty but its output "
                       "dim may not be");
  auto f = [&](double v) { return loop::floatImm(v, f64); };
  auto fb = [&](const Expr &cond) { return loop::select(cond, f(1), f(0)); };
  std::vector<loop::Buffer> allocs;
  std::vector<Stmt> stmts;
  std::function<Expr(const Exprs &)> src = [&](const Exprs &idx) {
    return loop::cast(f64, loop::load(c.ins[0], idx));
  };
  Exprs shape = inDims;
  std::vector<size_t> passes;
  for (size_t d = rank; d-- > 0;)
    if (scalesOperand ||
        !((scales.empty() || scales[d] == 1.0) && loop::equal(inDims[d], outDims[d])))
      passes.push_back(d);
  if (passes.empty())
    return loopNest(c, inDims, LoopRole::Parallel, [&](const Exprs &idx) {
      return loop::store(c.outs[0], idx, convert(src(idx)));
    });
  for (size_t k = 0; k < passes.size(); ++k) {
    const size_t d = passes[k];
    shape[d] = outDims[d];
    const bool last = k + 1 == passes.size();
    loop::Buffer dst;
    if (!last) {
      dst = loop::makeBuffer(c.newName("resized"), f64, shape);
      allocs.push_back(dst);
    }
    // Without scales, out / in (ONNX), computed when the extents are known.
    const Expr inSize = inDims[d], inF = loop::cast(f64, inSize),
               scale = scalesOperand
                           ? loop::cast(f64, loop::load(c.ins[1], {imm(static_cast<int64_t>(d))}))
                       : scales.empty() ? bin(ExprKind::Div, loop::cast(f64, outDims[d]), inF)
                                        : f(scales[d]);
    auto prev = src;
    stmts.push_back(loopNest(c, shape, LoopRole::Parallel, [&](const Exprs &idx) {
      const Expr o = loop::cast(f64, idx[d]);
      const Expr outWidth = scale * inF;
      const Expr halfPixel = bin(ExprKind::Div, o + f(0.5), scale) - f(0.5);
      Expr x;
      switch (p.coordinateMode) {
      case CoordinateMode::HalfPixel: x = halfPixel; break;
      case CoordinateMode::PytorchHalfPixel:
        x = loop::select(bin(ExprKind::EQ, outWidth, f(1)), f(-0.5), halfPixel);
        break;
      case CoordinateMode::AlignCorners:
        x = loop::select(bin(ExprKind::EQ, outWidth, f(1)), f(0),
                         bin(ExprKind::Div, o * loop::cast(f64, inSize - imm(1)), outWidth - f(1)));
        break;
      case CoordinateMode::Asymmetric: x = bin(ExprKind::Div, o, scale); break;
      case CoordinateMode::HalfPixelSymmetric: {
        Expr adjustment = bin(ExprKind::Div, loop::call(loop::Intrinsic::Floor, {outWidth}), outWidth);
        Expr offset = bin(ExprKind::Div, inF, f(2)) * (f(1) - adjustment);
        x = offset + halfPixel;
        break;
      }
      case CoordinateMode::TfCropAndResize: break;
      }
      // Clamped to [-8, in + 8] (NaN reads 0), as resizeTaps does.
      x = loop::select(isNaN(x), f(0),
                       loop::select(bin(ExprKind::LT, x, f(-8)), f(-8),
                                    loop::select(bin(ExprKind::GT, x, inF + f(8)), inF + f(8), x)));
      const Expr floorX = loop::call(loop::Intrinsic::Floor, {x});
      const Expr integral = bin(ExprKind::EQ, x, floorX);
      const Expr ratio = loop::select(integral, f(1), x - floorX);
      const Expr base = loop::cast(DType::I64, floorX) - loop::select(integral, imm(1), imm(0));
      Expr w0, w1;
      Exprs w, at;
      if (p.mode == ResizeMode::Cubic) { // coefficients() in ResizeMath.cpp, the same operations
        const Expr a = f(p.cubicA), r = ratio, sr = f(1) - ratio;
        auto outer = [&](const Expr &t) {
          return ((a * (t + f(1)) - f(5) * a) * (t + f(1)) + f(8) * a) * (t + f(1)) - f(4) * a;
        };
        auto inner = [&](const Expr &t) {
          return ((a + f(2)) * t - (a + f(3))) * t * t + f(1);
        };
        w = {outer(r), inner(r), inner(sr), outer(sr)};
        at = {base - imm(1), base, base + imm(1), base + imm(2)};
      } else if (p.mode == ResizeMode::Linear) {
        w0 = f(1) - ratio;
        w1 = ratio;
      } else {
        Expr m0, m1;
        switch (p.nearestMode) {
        case NearestMode::RoundPreferFloor:
          m0 = fb(bin(ExprKind::LE, ratio, f(0.5)));
          m1 = fb(bin(ExprKind::GT, ratio, f(0.5)));
          break;
        case NearestMode::RoundPreferCeil:
          m0 = fb(bin(ExprKind::LT, ratio, f(0.5)));
          m1 = fb(bin(ExprKind::GE, ratio, f(0.5)));
          break;
        case NearestMode::Floor: m0 = f(1); m1 = f(0); break;
        case NearestMode::Ceil: m0 = f(0); m1 = f(1); break;
        }
        const Expr one = bin(ExprKind::EQ, ratio, f(1));
        w0 = loop::select(one, f(0), m0);
        w1 = loop::select(one, f(1), m1);
      }
      if (w.empty()) {
        at = {base, base + imm(1)};
        w = {w0, w1};
      }
      if (p.excludeOutside) {
        Expr sum = f(0);
        for (size_t j = 0; j < w.size(); ++j) {
          w[j] = loop::select(bin(ExprKind::Or, bin(ExprKind::LT, at[j], imm(0)),
                                  bin(ExprKind::GE, at[j], inSize)),
                              f(0), w[j]);
          sum = sum + w[j];
        }
        for (Expr &wj : w)
          wj = bin(ExprKind::Div, wj, sum);
      }
      Expr acc = sumOfTaps(idx, d, static_cast<int64_t>(w.size()), [&](int64_t j) {
        return std::pair{w[j], loop::max(loop::min(at[j], inSize - imm(1)), imm(0))};
      }, prev);
      return last ? loop::store(c.outs[0], idx, convert(acc)) : loop::store(dst, idx, acc);
    }));
    if (!last)
      src = [dst](const Exprs &idx) { return loop::load(dst, idx); };
  }
  return allocateAround(allocs, stmts);
}

} // namespace

Stmt lowerResize(LowerCtx &c) {
  const Shape &in = c.inShapes[0];
  DType t = c.inTypes[0];
  int64_t rank = static_cast<int64_t>(in.size());
  if (t == DType::Bool)
    throw LowerError("resize: bool input is not supported");
  const ops::ResizeOp resize(c.op);
  const ResizeParams p = ResizeParams::of(resize);
  const std::vector<double> &scales = resize.scales();
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != rank)
    throw LowerError("resize: scales rank mismatch");
  // -1: floor(in * scale) (a dim that was symbolic when imported).
  std::vector<int64_t> sizes; // static entries (a symbolic one means run-time extents below)
  for (const Dim &d : resize.sizes())
    sizes.push_back(d.isStatic() ? d.size : -2);
  for (size_t d = 0; d < sizes.size() && d < in.size(); ++d)
    if (sizes[d] == -1 && !scales.empty() && in[d] >= 0)
      sizes[d] = resizedSize(in[d], scales[d]).value_or(-1); // -1: refused below
  // Converts the final f64 to the result dtype like the interpreter: floats round; integers
  // clamp to [min, nextafter(2^bits, 0)], then truncate (NaN -> 0 via the cast).
  auto convert = [&](Expr v) {
    if (isFloat(t))
      return loop::cast(t, v);
    int bits = static_cast<int>(dtypeSize(t) * 8) - (isSigned(t) ? 1 : 0);
    Expr hi = loop::floatImm(std::nextafter(std::ldexp(1.0, bits), 0.0), DType::F64);
    Expr lo = loop::floatImm(isSigned(t) ? -std::ldexp(1.0, bits) : 0.0, DType::F64);
    v = loop::select(loop::binary(ExprKind::GT, v, hi), hi, v);
    v = loop::select(loop::binary(ExprKind::LT, v, lo), lo, v);
    return loop::cast(t, v);
  };
  if (c.symbolic || c.ins.size() > 1)
    return lowerResizeAtRunTime(c, p, scales, convert);
  if (static_cast<int64_t>(sizes.size()) != rank || Shape(sizes) != c.outShapes[0])
    throw LowerError("resize: sizes do not match the result shape");
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || (in[d] == 0 && sizes[d] > 0))
      throw LowerError("resize: bad size for dim " + std::to_string(d));
    double scale = resizeScale(scales, d, in[d], sizes[d]);
    if (sizes[d] > 0 && !(scale > 0))
      throw LowerError("resize: scale for dim " + std::to_string(d) + " must be positive");
  }
  if (numElements(c.outShapes[0]) == 0)
    return loop::seq({});

  const DType f64 = DType::F64;
  std::vector<loop::Buffer> allocs; // temporaries and tables, allocated around the whole body
  std::vector<Stmt> stmts;
  // Reads the current data (f64) at index idx.
  std::function<Expr(const Exprs &)> src = [&](const Exprs &idx) {
    return loop::cast(f64, loop::load(c.ins[0], idx));
  };
  Shape shape = in;
  std::vector<int64_t> passes;
  std::vector<ResizeTaps> taps(static_cast<size_t>(rank));
  for (int64_t d = rank - 1; d >= 0; --d) {
    taps[d] = resizeTaps(p, in[d], sizes[d], resizeScale(scales, d, in[d], sizes[d]));
    if (!taps[d].identity)
      passes.push_back(d);
  }
  if (passes.empty())
    return loopNest(c, in, LoopRole::Parallel, [&](const Exprs &idx) {
      return loop::store(c.outs[0], idx, convert(src(idx)));
    });

  for (size_t k = 0; k < passes.size(); ++k) {
    int64_t d = passes[k];
    const ResizeTaps &at = taps[d];
    int64_t outSize = sizes[d];
    loop::Buffer idxT = loop::makeBuffer(c.newName("tapidx"), DType::I64, {imm(outSize), imm(at.count)});
    loop::Buffer wT = loop::makeBuffer(c.newName("tapw"), f64, {imm(outSize), imm(at.count)});
    allocs.push_back(idxT);
    allocs.push_back(wT);
    for (int64_t o = 0; o < outSize; ++o)
      for (int64_t j = 0; j < at.count; ++j) {
        stmts.push_back(loop::store(idxT, {imm(o), imm(j)}, imm(at.index[o * at.count + j])));
        stmts.push_back(loop::store(wT, {imm(o), imm(j)}, loop::floatImm(at.weight[o * at.count + j], f64)));
      }
    shape[d] = outSize;
    bool last = k + 1 == passes.size();
    loop::Buffer dst;
    if (!last) {
      Exprs dims;
      for (int64_t s : shape)
        dims.push_back(imm(s));
      dst = loop::makeBuffer(c.newName("resized"), f64, dims);
      allocs.push_back(dst);
    }
    auto prev = src;
    stmts.push_back(loopNest(c, shape, LoopRole::Parallel, [&](const Exprs &idx) {
      Expr acc = sumOfTaps(idx, static_cast<size_t>(d), at.count, [&](int64_t j) {
        return std::pair{loop::load(wT, {idx[d], imm(j)}), loop::load(idxT, {idx[d], imm(j)})};
      }, prev);
      return last ? loop::store(c.outs[0], idx, convert(acc)) : loop::store(dst, idx, acc);
    }));
    if (!last)
      src = [dst](const Exprs &idx) { return loop::load(dst, idx); };
  }
  return allocateAround(allocs, stmts);
}

} // namespace strata::lower
