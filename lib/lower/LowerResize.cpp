// resize (ONNX Resize: nearest | linear | cubic, N-d), following lib/interp/Resize.cpp exactly:
// separable 1-D passes from the innermost axis outwards, all in f64. Shapes are static, so each
// axis's taps (clamped input index, weight) are computed here, at lowering time, with the
// interpreter's formulas, and become constant tables filled by stores; a pass sums, per output
// element, `w * src[tap]` over the non-zero taps in order starting from 0.0. Identity axes are
// skipped like the interpreter does; the last pass converts to the result dtype.
#include "LowerImpl.h"

#include <algorithm>
#include <cmath>

namespace strata::lower {
namespace {

using loop::ExprKind;

struct Params {
  std::string mode, coordinateMode, nearestMode;
  double cubicA = -0.75;
  bool excludeOutside = false;
};

double originalCoordinate(const std::string &mode, double x, double scale, int64_t inSize) {
  double outWidth = scale * static_cast<double>(inSize);
  if (mode == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel")
    return outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (mode == "align_corners")
    return outWidth == 1 ? 0.0 : x * static_cast<double>(inSize - 1) / (outWidth - 1);
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "half_pixel_symmetric") {
    double adjustment = std::floor(outWidth) / outWidth;
    double offset = static_cast<double>(inSize) / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  throw LowerError("resize: unsupported coordinate_transformation_mode '" + mode + "'");
}

std::vector<double> coefficients(const Params &p, double ratio) {
  if (p.mode == "nearest") {
    if (ratio == 1.0)
      return {0, 1};
    const std::string &m = p.nearestMode;
    if (m == "round_prefer_floor")
      return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (m == "round_prefer_ceil")
      return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (m == "floor")
      return {1, 0};
    if (m == "ceil")
      return {0, 1};
    throw LowerError("resize: unknown nearest_mode '" + m + "'");
  }
  if (p.mode == "linear")
    return {1 - ratio, ratio};
  if (p.mode == "cubic") {
    double a = p.cubicA, r = ratio, s = 1 - ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
  }
  throw LowerError("resize: unknown mode '" + p.mode + "'");
}

// taps[o] = (index, weight) per neighbour; zero weights are kept (and skipped at run time) so
// that every output position has the same tap count.
struct AxisTaps {
  int64_t count = 0; // taps per output position
  std::vector<int64_t> index;
  std::vector<double> weight;
  bool identity = true;
};

AxisTaps tapsForAxis(const Params &p, int64_t inSize, int64_t outSize, double scale) {
  AxisTaps t;
  for (int64_t o = 0; o < outSize; ++o) {
    double xOri = originalCoordinate(p.coordinateMode, static_cast<double>(o), scale, inSize);
    double floorX = std::floor(xOri);
    double ratio = xOri == floorX ? 1.0 : xOri - floorX;
    int64_t base = static_cast<int64_t>(floorX) - (xOri == floorX ? 1 : 0);
    std::vector<double> coeffs = coefficients(p, ratio);
    int64_t n = static_cast<int64_t>(coeffs.size());
    int64_t first = base - n / 2 + 1;
    if (p.excludeOutside) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        if (first + j < 0 || first + j >= inSize)
          coeffs[j] = 0;
        sum += coeffs[j];
      }
      for (double &c : coeffs)
        c /= sum;
    }
    t.count = n;
    int nonZero = 0;
    for (int64_t j = 0; j < n; ++j) {
      int64_t idx = std::clamp<int64_t>(first + j, 0, inSize - 1);
      t.index.push_back(idx);
      t.weight.push_back(coeffs[j]);
      if (coeffs[j] != 0) {
        ++nonZero;
        if (idx != o || coeffs[j] != 1.0)
          t.identity = false;
      }
    }
    if (nonZero != 1)
      t.identity = false;
  }
  if (outSize != inSize)
    t.identity = false;
  return t;
}

} // namespace

Stmt lowerResize(LowerCtx &c) {
  const Shape &in = c.inShapes[0];
  DType t = c.inTypes[0];
  int64_t rank = static_cast<int64_t>(in.size());
  if (t == DType::Bool)
    throw LowerError("resize: bool input is not supported");
  Params p;
  p.mode = c.op.stringAttr("mode", "nearest");
  p.coordinateMode = c.op.stringAttr("coordinate_transformation_mode", "half_pixel");
  p.nearestMode = c.op.stringAttr("nearest_mode", "round_prefer_floor");
  p.cubicA = c.op.floatAttr("cubic_coeff_a", -0.75);
  p.excludeOutside = c.op.intAttr("exclude_outside", 0) != 0;
  std::vector<int64_t> sizes = c.op.intsAttr("sizes");
  std::vector<double> scales = c.op.floatsAttr("scales");
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != rank)
    throw LowerError("resize: scales rank mismatch");
  if (sizes.empty() && !scales.empty())
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * scales[d])));
  if (static_cast<int64_t>(sizes.size()) != rank || Shape(sizes) != c.outShapes[0])
    throw LowerError("resize: sizes do not match the result shape");
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || (in[d] == 0 && sizes[d] > 0))
      throw LowerError("resize: bad size for dim " + std::to_string(d));
    double scale = scales.empty() ? static_cast<double>(sizes[d]) / static_cast<double>(in[d]) : scales[d];
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
  std::vector<AxisTaps> taps(static_cast<size_t>(rank));
  for (int64_t d = rank - 1; d >= 0; --d) {
    double scale = scales.empty() ? static_cast<double>(sizes[d]) / static_cast<double>(in[d]) : scales[d];
    taps[d] = tapsForAxis(p, in[d], sizes[d], scale);
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
    return loopNest(c, in, [&](const Exprs &idx) { return loop::store(c.outs[0], idx, convert(src(idx))); });

  for (size_t k = 0; k < passes.size(); ++k) {
    int64_t d = passes[k];
    const AxisTaps &at = taps[d];
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
    stmts.push_back(loopNest(c, shape, [&](const Exprs &idx) {
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
