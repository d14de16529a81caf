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

Stmt lowerResize(LowerCtx &c) {
  const Shape &in = c.inShapes[0];
  DType t = c.inTypes[0];
  int64_t rank = static_cast<int64_t>(in.size());
  if (t == DType::Bool)
    throw LowerError("resize: bool input is not supported");
  const ops::ResizeOp resize(c.op);
  const ResizeParams p = ResizeParams::of(resize);
  const std::vector<int64_t> &sizes = resize.sizes();
  const std::vector<double> &scales = resize.scales();
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != rank)
    throw LowerError("resize: scales rank mismatch");
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
  // Converts the final f64 to the result dtype like the interpreter: floats round; integers
  // clamp to [min, nextafter(2^bits, 0)], then truncate (NaN -> 0 via the cast).
  auto convert = [&](Expr v) {
    if (isFloat(t))
      return loop::cast(t, v);
    int bits = static_cast<int>(dtypeSize(t) * 8) - (isSigned(t) ? 1 : 0);
    Expr hi = loop::floatImm(std::nextafter(std::ldexp(1.0, bits), 0.0), f64);
    Expr lo = loop::floatImm(isSigned(t) ? -std::ldexp(1.0, bits) : 0.0, f64);
    v = loop::select(loop::binary(ExprKind::GT, v, hi), hi, v);
    v = loop::select(loop::binary(ExprKind::LT, v, lo), lo, v);
    return loop::cast(t, v);
  };
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
      Expr acc = loop::floatImm(0, f64);
      for (int64_t j = 0; j < at.count; ++j) {
        Expr w = loop::load(wT, {idx[d], imm(j)});
        Exprs from = idx;
        from[d] = loop::load(idxT, {idx[d], imm(j)});
        acc = loop::select(loop::binary(ExprKind::NE, w, loop::floatImm(0, f64)), acc + w * prev(from), acc);
      }
      return last ? loop::store(c.outs[0], idx, convert(acc)) : loop::store(dst, idx, acc);
    }));
    if (!last)
      src = [dst](const Exprs &idx) { return loop::load(dst, idx); };
  }
  Stmt body = loop::seq(stmts);
  for (size_t i = allocs.size(); i-- > 0;)
    body = loop::allocate(allocs[i], body);
  return body;
}

} // namespace strata::lower
