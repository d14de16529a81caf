// Shape functions of the structured ops: matmul, conv, conv_transpose, pool, the reductions,
// softmax, layer_norm, cumsum, topk and resize. (einsum has its own file.)
#include "TypeInferenceImpl.h"

#include "strata/graph/ResizeMath.h"

#include "strata/support/ShapeMath.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::infer {

namespace {

std::string axisName(size_t i) { return "spatial axis " + std::to_string(i); }

TensorType matMulType(const InferContext &c) {
  const TensorType &a = c.operand(0), &b = c.operand(1);
  requireSameDType(c, 1, 0);
  requireRankAtLeast(c, 0, 1);
  requireRankAtLeast(c, 1, 1);
  // Rank-1 operands are promoted: a -> [1, K], b -> [K, 1]; the added dims are dropped below.
  std::vector<Dim> da = a.dims, db = b.dims;
  if (a.rank() == 1)
    da.insert(da.begin(), Dim(1));
  if (b.rank() == 1)
    db.push_back(Dim(1));
  const Dim &ka = da.back(), &kb = db[db.size() - 2];
  bool compatible = ka == kb || ka.isStatic() != kb.isStatic(); // symbol vs size: checked at run time
  if (!compatible)
    fail("contraction dims differ: operand 0 has " + ka.str() + " (shape " + dimsToString(a.dims) +
         ") but operand 1 has " + kb.str() + " (shape " + dimsToString(b.dims) + ")");
  std::vector<Dim> batchA(da.begin(), da.end() - 2), batchB(db.begin(), db.end() - 2);
  std::string why;
  auto batch = shape::broadcastShapes(batchA, batchB, &why);
  if (!batch)
    fail("batch dims " + dimsToString(batchA) + " and " + dimsToString(batchB) +
         " do not broadcast: " + why);
  std::vector<Dim> out = *batch;
  if (a.rank() >= 2)
    out.push_back(da[da.size() - 2]);
  if (b.rank() >= 2)
    out.push_back(db.back());
  if (c.numOperands() > 2) {
    // The bias is added to the finished product; it may broadcast but not grow the result.
    requireSameDType(c, 2, 0);
    const TensorType &bias = c.operand(2);
    auto sum = shape::broadcastShapes(out, bias.dims, &why);
    if (!sum || *sum != out)
      fail("operand 2 (bias) of shape " + dimsToString(bias.dims) +
           " does not broadcast to the product shape " + dimsToString(out));
  }
  return a.withDims(std::move(out));
}

// Strides, pads and dilations of a sliding-window op (one per spatial dim, pads for both sides:
// the normal form) as one WindowDim per spatial dim; `kernels` are the window sizes.
std::vector<shape::WindowDim> windowAttrs(const std::vector<int64_t> &strides,
                                          const std::vector<int64_t> &pads,
                                          const std::vector<int64_t> &dilations,
                                          const std::vector<int64_t> &kernels, size_t spatial) {
  auto check = [&](const char *name, const std::vector<int64_t> &v, size_t n, int64_t min) {
    if (v.size() != n)
      fail("attribute '" + std::string(name) + "' " + intsToString(v) + " must have " +
           std::to_string(n) + " entries for " + std::to_string(spatial) + " spatial dims");
    for (int64_t x : v)
      if (x < min)
        fail("attribute '" + std::string(name) + "' " + intsToString(v) + " has an entry below " +
             std::to_string(min));
  };
  check("strides", strides, spatial, 1);
  check("pads", pads, 2 * spatial, 0);
  check("dilations", dilations, spatial, 1);
  std::vector<shape::WindowDim> w(spatial);
  for (size_t i = 0; i < spatial; ++i)
    w[i] = {kernels[i], strides[i], pads[i], pads[i + spatial], dilations[i]};
  return w;
}

// Output size of one spatial dim of conv/pool, or an error when the window does not fit.
int64_t windowOutput(int64_t in, const shape::WindowDim &w, size_t i, bool ceilMode) {
  std::string why;
  std::optional<int64_t> out = shape::windowOutputSize(in, w, ceilMode, &why);
  if (!out)
    fail(why + " on " + axisName(i));
  return *out;
}

// Output size of one spatial dim of conv/pool over a dim that may be symbolic: the window formula
// as an expression (floor mode ⌊(in + pads - effective)/stride⌋ + 1; in ceil mode the last window
// must start inside the input or the begin padding, so the step count is also capped at
// ⌊(in + padBegin - 1)/stride⌋). Whether the window fits is checked when sizes are bound.
Dim windowOutputDim(const Dim &in, const shape::WindowDim &w, size_t i, bool ceilMode) {
  if (in.isStatic())
    return Dim(windowOutput(in.size, w, i, ceilMode));
  try { // strides >= 1: windowAttrs checked them
    SymExpr x = in.expr;
    SymExpr span = x + w.padBegin + w.padEnd - w.effectiveKernel();
    if (!ceilMode)
      return Dim::of(SymExpr::floorDiv(span, w.stride) + 1);
    if (w.padEnd >= w.effectiveKernel())
      fail("ceil_mode with an end padding of " + std::to_string(w.padEnd) +
           " >= the effective kernel " + std::to_string(w.effectiveKernel()) +
           " on symbolic dim " + in.str() + " (" + axisName(i) + ")");
    SymExpr steps = SymExpr::min(SymExpr::ceilDiv(span, w.stride),
                                 SymExpr::floorDiv(x + w.padBegin - 1, w.stride));
    return Dim::of(steps + 1);
  } catch (const SymExprError &e) {
    fail(std::string(e.what()) + " on " + axisName(i));
  }
}

void checkBias(const InferContext &c, const Dim &channels) {
  if (c.numOperands() < 3)
    return;
  requireSameDType(c, 2, 0);
  const TensorType &bias = c.operand(2);
  if (bias.rank() != 1 || !(bias.dims[0] == channels))
    fail("operand 2 (bias) has shape " + dimsToString(bias.dims) + "; expected [" +
         channels.str() + "]");
}

template <typename ConvView> TensorType convType(const InferContext &c, bool transposed) {
  const auto attrs = c.view<ConvView>();
  const TensorType &x = c.operand(0), &w = c.operand(1);
  requireSameDType(c, 1, 0);
  requireRankAtLeast(c, 0, 3);
  if (w.rank() != x.rank())
    fail("operand 1 (weight) has rank " + std::to_string(w.rank()) + " but operand 0 has rank " +
         std::to_string(x.rank()));
  size_t spatial = static_cast<size_t>(x.rank() - 2);
  std::vector<int64_t> kernels;
  for (size_t i = 0; i < spatial; ++i)
    kernels.push_back(staticDim(c, 1, static_cast<int64_t>(2 + i), "kernel dim"));
  std::vector<shape::WindowDim> win =
      windowAttrs(attrs.strides(), attrs.pads(), attrs.dilations(), kernels, spatial);
  int64_t group = attrs.group();
  if (group < 1)
    fail("attribute 'group' must be >= 1, got " + std::to_string(group));

  const Dim &channels = x.dims[1];
  Dim outChannels;
  if (!transposed) {
    // w: [C_out, C_in / group, k...]
    int64_t perGroup = staticDim(c, 1, 1, "weight input channels");
    std::optional<int64_t> inChannels = shape::checkedMul(perGroup, group);
    if (!inChannels) // `group` comes from the model file
      fail("operand 1 (weight) expects " + std::to_string(perGroup) + " x group " +
           std::to_string(group) + " input channels, past int64");
    if (channels.isStatic() && channels.size != *inChannels)
      fail("operand 0 has " + std::to_string(channels.size) +
           " channels but operand 1 (weight) expects " + std::to_string(perGroup) + " x group " +
           std::to_string(group));
    outChannels = w.dims[0];
    if (outChannels.isStatic() && outChannels.size % group != 0)
      fail("output channels " + outChannels.str() + " are not divisible by group " +
           std::to_string(group));
  } else {
    // w: [C_in, C_out / group, k...]
    // A symbol against a size is checked at run time; two sizes or two symbols must agree.
    if (!(w.dims[0] == channels) && channels.isStatic() == w.dims[0].isStatic())
      fail("operand 0 has " + channels.str() + " channels but operand 1 (weight) has " +
           w.dims[0].str());
    if (channels.isStatic() && channels.size % group != 0)
      fail("input channels " + channels.str() + " are not divisible by group " +
           std::to_string(group));
    int64_t perGroup = staticDim(c, 1, 1, "weight output channels");
    std::optional<int64_t> total = shape::checkedMul(perGroup, group);
    if (!total) // `group` comes from the model file
      fail("output channels " + std::to_string(perGroup) + " x group " + std::to_string(group) +
           " overflow int64");
    outChannels = Dim(*total);
  }
  checkBias(c, outChannels);

  std::vector<int64_t> outputPadding;
  if constexpr (std::is_same_v<ConvView, ops::ConvTransposeOp>) {
    outputPadding = attrs.output_padding();
    if (outputPadding.size() != spatial)
      fail("attribute 'output_padding' " + intsToString(outputPadding) + " must have " +
           std::to_string(spatial) + " entries");
  }

  std::vector<Dim> out = {x.dims[0], outChannels};
  for (size_t i = 0; i < spatial; ++i) {
    if (!transposed) {
      out.push_back(windowOutputDim(x.dims[2 + i], win[i], i, false));
      continue;
    }
    if (!x.dims[2 + i].isStatic()) {
      // stride * (in - 1) + output_padding + effective kernel - pads; >= 0 is checked at run time.
      try {
        const shape::WindowDim &wd = win[i];
        out.push_back(Dim::of((x.dims[2 + i].expr - 1) * wd.stride + outputPadding[i] +
                              wd.effectiveKernel() - wd.padBegin - wd.padEnd));
      } catch (const SymExprError &e) {
        fail(std::string(e.what()) + " on " + axisName(i));
      }
      continue;
    }
    int64_t in = x.dims[2 + i].size;
    std::optional<int64_t> size = shape::convTransposeOutputSize(in, win[i], outputPadding[i]);
    if (!size)
      fail("conv_transpose output on " + axisName(i) + " overflows int64");
    if (*size < 0)
      fail("conv_transpose output on " + axisName(i) + " would have negative size " +
           std::to_string(*size));
    out.push_back(Dim(*size));
  }
  return x.withDims(std::move(out));
}

TensorType poolType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const auto attrs = c.view<ops::PoolOp>();
  requireRankAtLeast(c, 0, 3);
  size_t spatial = static_cast<size_t>(x.rank() - 2);
  const std::vector<int64_t> &kernel = attrs.kernel();
  if (kernel.size() != spatial)
    fail("attribute 'kernel' " + intsToString(kernel) + " must have " + std::to_string(spatial) +
         " entries for an operand of rank " + std::to_string(x.rank()));
  for (int64_t k : kernel)
    if (k < 1)
      fail("attribute 'kernel' " + intsToString(kernel) + " has an entry below 1");
  std::vector<shape::WindowDim> win =
      windowAttrs(attrs.strides(), attrs.pads(), attrs.dilations(), kernel, spatial);
  std::vector<Dim> out = {x.dims[0], x.dims[1]};
  for (size_t i = 0; i < spatial; ++i) {
    out.push_back(windowOutputDim(x.dims[2 + i], win[i], i, attrs.ceil_mode()));
  }
  return x.withDims(std::move(out));
}

TensorType reduceType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const auto attrs = c.view<ops::ReduceOp>();
  bool keep = attrs.keepdims();
  std::vector<bool> reduced(x.dims.size(), false);
  for (int64_t a : attrs.axes()) // distinct, in range: the attribute's normal form
    reduced[a] = true;
  std::vector<Dim> out;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (!reduced[d])
      out.push_back(x.dims[d]);
    else if (keep)
      out.push_back(Dim(1));
  }
  return x.withDims(std::move(out));
}

TensorType argReduceType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const auto attrs = c.view<ops::ArgReduceOp>();
  requireRankAtLeast(c, 0, 1);
  int64_t axis = attrs.axis();
  bool keep = attrs.keepdims();
  std::vector<Dim> out = x.dims;
  if (keep)
    out[axis] = Dim(1);
  else
    out.erase(out.begin() + axis);
  return TensorType(DType::I64, std::move(out), x.device);
}

TensorType layerNormType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  requireDType(c, 0, isFloat(x.dtype), "a float dtype");
  int64_t axis = c.view<ops::LayerNormOp>().axis();
  std::vector<Dim> normalized(x.dims.begin() + axis, x.dims.end());
  for (unsigned i = 1; i < c.numOperands(); ++i) {
    requireSameDType(c, i, 0);
    const std::vector<Dim> &p = c.operand(i).dims;
    const char *what = i == 1 ? "scale" : "bias";
    bool ok = p.size() <= normalized.size();
    for (size_t k = 0; ok && k < p.size(); ++k) {
      const Dim &pd = p[p.size() - 1 - k], &xd = normalized[normalized.size() - 1 - k];
      ok = pd == xd || (pd.isStatic() && pd.size == 1) || (pd.isStatic() && !xd.isStatic());
    }
    if (!ok)
      fail("operand " + std::to_string(i) + " (" + what + ") shape " + dimsToString(p) +
           " does not broadcast to the normalized dims " + dimsToString(normalized));
  }
  return x;
}

TensorType topKValuesType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  requireRankAtLeast(c, 0, 1);
  const auto attrs = c.view<ops::TopKOp>();
  int64_t axis = attrs.axis();
  const Dim k = attrs.k(); // symbolic: >= 0 when bound, and at most the axis (checked then)
  const Dim &d = x.dims[axis];
  if (k.isStatic() && (k.size < 0 || (d.isStatic() && k.size > d.size)))
    fail("attribute 'k' = " + k.str() + " is out of range for axis " + std::to_string(axis) +
         " of size " + d.str());
  std::vector<Dim> out = x.dims;
  out[axis] = k;
  return x.withDims(std::move(out));
}

TensorType resizeType(const InferContext &c) {
  const TensorType &x = c.operand(0);
  const auto attrs = c.view<ops::ResizeOp>();
  const std::vector<Dim> dimSizes = attrs.sizes();
  // Static entries as sizes (-1: from the scale); a symbolic entry is that formula exactly.
  std::vector<int64_t> sizes;
  for (const Dim &d : dimSizes)
    sizes.push_back(d.isStatic() ? d.size : 0);
  const std::vector<double> &scales = attrs.scales();
  if (static_cast<int64_t>(sizes.size()) != x.rank())
    fail("attribute 'sizes' " + dimsToString(dimSizes) + " must have one entry per dim (rank " +
         std::to_string(x.rank()) + ")");
  if (c.numOperands() == 2) { // scales read from data: every size given
    const TensorType &s = c.operand(1);
    if (s.rank() != 1 || !isFloat(s.dtype) || s.dims[0] != Dim(x.rank()))
      fail("operand 1 (scales) must be 1-D float with one entry per dim (" +
           std::to_string(x.rank()) + "), got " + s.str());
    if (!scales.empty())
      fail("attribute 'scales' must be empty when operand 1 gives them");
    for (const Dim &d : dimSizes)
      if (d.isStatic() && d.size < 0)
        fail("attribute 'sizes' " + dimsToString(dimSizes) +
             " has a negative size; with scales read from data every size is given");
    return x.withDims(dimSizes);
  }
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != x.rank())
    fail("attribute 'scales' has " + std::to_string(scales.size()) +
         " entries; expected none or one per dim (rank " + std::to_string(x.rank()) + ")");
  for (double s : scales) {
    if (!(s > 0))
      fail("attribute 'scales' has a non-positive scale " + std::to_string(s));
    if (std::isinf(s)) // would map output coordinates to NaN (ResizeMath.h)
      fail("attribute 'scales' has an infinite scale");
  }
  // -1: the size follows from the scale, floor(in * scale) (a symbolic dim's formula).
  std::vector<Dim> out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!dimSizes[d].isStatic()) { // >= 0 when bound, as every dim
      out.push_back(dimSizes[d]);
      continue;
    }
    if (sizes[d] >= 0) {
      out.push_back(Dim(sizes[d]));
      continue;
    }
    if (sizes[d] != -1 || scales.empty())
      fail("attribute 'sizes' " + dimsToString(dimSizes) + " has a negative size" +
           (sizes[d] == -1 ? " and no scales to compute it from" : ""));
    const Dim &in = x.dims[d];
    if (in.isStatic()) {
      std::optional<int64_t> size = resizedSize(in.size, scales[d]);
      if (!size)
        fail("scale " + std::to_string(scales[d]) + " gives an absurd size for dim " +
             std::to_string(d));
      out.push_back(Dim(*size));
      continue;
    }
    std::optional<SymExpr> size = resizedSize(in.expr, scales[d]);
    if (!size)
      fail("scale " + std::to_string(scales[d]) + " of symbolic dim " + in.str() +
           " gives no exact size formula (an integral scale or 1/2^j does)");
    out.push_back(Dim::of(*size));
  }
  return x.withDims(out);
}

} // namespace

std::vector<TensorType> inferMatMul(const InferContext &c) {
  int64_t panel = c.view<ops::MatMulOp>().b_panel();
  if (panel == 0)
    return {matMulType(c)};
  // Panels [N/p, K, p]: the plain rule on b's [K, N] form.
  if (panel < 0)
    fail("b_panel must be positive (or absent), got " + std::to_string(panel));
  const TensorType &b = c.operand(1);
  if (b.rank() != 3 || !b.isStatic() || b.dims[2].size != panel)
    fail("operand 1 (b in panels of " + std::to_string(panel) + ") must be static [N/" +
         std::to_string(panel) + ", K, " + std::to_string(panel) + "], got " +
         dimsToString(b.dims));
  std::optional<int64_t> n = shape::checkedMul(b.dims[0].size, panel);
  if (!n)
    fail("operand 1 (b in panels) unpacks past int64 columns");
  std::vector<TensorType> plainOperands;
  for (size_t i = 0; i < c.numOperands(); ++i)
    plainOperands.push_back(c.operand(static_cast<unsigned>(i)));
  plainOperands[1] = b.withDims({b.dims[1], Dim(*n)});
  InferContext plain{c.kind, plainOperands, c.attrs, c.freshSymbols};
  return {matMulType(plain)};
}
std::vector<TensorType> inferConv(const InferContext &c) {
  if (int64_t block = c.view<ops::ConvOp>().layout())
    return inferBlockedConv(c, block);
  return inferPlainConv(c);
}
std::vector<TensorType> inferPlainConv(const InferContext &c) {
  return {convType<ops::ConvOp>(c, false)};
}
std::vector<TensorType> inferConvTranspose(const InferContext &c) {
  return {convType<ops::ConvTransposeOp>(c, true)};
}
std::vector<TensorType> inferPool(const InferContext &c) {
  if (int64_t block = c.view<ops::PoolOp>().layout())
    return inferBlockedPool(c, block);
  return {poolType(c)};
}
std::vector<TensorType> inferPlainPool(const InferContext &c) { return {poolType(c)}; }
std::vector<TensorType> inferReduce(const InferContext &c) { return {reduceType(c)}; }
std::vector<TensorType> inferArgReduce(const InferContext &c) { return {argReduceType(c)}; }
std::vector<TensorType> inferSoftmax(const InferContext &c) {
  requireDType(c, 0, isFloat(c.operand(0).dtype), "a float dtype");
  return {c.operand(0)};
}
std::vector<TensorType> inferAttention(const InferContext &c) {
  const TensorType &q = c.operand(0), &k = c.operand(1), &v = c.operand(2);
  requireDType(c, 0, isFloat(q.dtype), "a float dtype");
  // Compiled f32 kernels multiply by the scale in f32: it must be a finite f32.
  const double scale = c.view<ops::AttentionOp>().scale();
  if (!(std::fabs(scale) <= std::numeric_limits<float>::max()))
    fail("scale " + std::to_string(scale) + " is not a finite f32");
  for (unsigned i = 0; i < c.numOperands(); ++i) {
    requireSameDType(c, i, 0);
    if (i < 3)
      requireRankAtLeast(c, i, 2);
  }
  const Dim &dq = q.dims.back(), &dk = k.dims.back();
  const Dim &nk = k.dims[k.rank() - 2], &nv = v.dims[v.rank() - 2];
  if (dq != dk)
    fail("the head dims differ: q " + dimsToString(q.dims) + " and k " + dimsToString(k.dims));
  if (nk != nv)
    fail("the key counts differ: k " + dimsToString(k.dims) + " and v " + dimsToString(v.dims));
  std::string why;
  auto batchOf = [](const TensorType &t) {
    return std::vector<Dim>(t.dims.begin(), t.dims.end() - 2);
  };
  auto qk = shape::broadcastShapes(batchOf(q), batchOf(k), &why);
  auto batch = qk ? shape::broadcastShapes(*qk, batchOf(v), &why) : std::nullopt;
  if (!batch)
    fail("batch dims of q " + dimsToString(q.dims) + ", k " + dimsToString(k.dims) + " and v " +
         dimsToString(v.dims) + " do not broadcast: " + why);
  std::vector<Dim> scores = *batch, out = *batch;
  scores.insert(scores.end(), {q.dims[q.rank() - 2], nk});
  out.insert(out.end(), {q.dims[q.rank() - 2], v.dims.back()});
  if (c.numOperands() > 3) {
    auto sum = shape::broadcastShapes(scores, c.operand(3).dims, &why);
    if (!sum || *sum != scores)
      fail("operand 3 (bias) of shape " + dimsToString(c.operand(3).dims) +
           " does not broadcast to the scores " + dimsToString(scores));
  }
  return {q.withDims(std::move(out))};
}
std::vector<TensorType> inferLayerNorm(const InferContext &c) { return {layerNormType(c)}; }
std::vector<TensorType> inferCumSum(const InferContext &c) {
  requireDType(c, 0, c.operand(0).dtype != DType::Bool, "a numeric dtype");
  return {c.operand(0)};
}
std::vector<TensorType> inferTopK(const InferContext &c) {
  TensorType values = topKValuesType(c);
  return {values, values.withDType(DType::I64)};
}
std::vector<TensorType> inferResize(const InferContext &c) { return {resizeType(c)}; }
std::vector<TensorType> inferRoiAlign(const InferContext &c) {
  const TensorType &x = c.operand(0), &rois = c.operand(1), &batch = c.operand(2);
  requireDType(c, 0, x.dtype == DType::F32, "f32");
  requireDType(c, 1, rois.dtype == DType::F32, "f32");
  requireDType(c, 2, batch.dtype == DType::I64, "i64");
  if (x.rank() != 4 || rois.rank() != 2 || !(rois.dims[1] == Dim(4)) || batch.rank() != 1 ||
      !(rois.dims[0] == batch.dims[0]))
    fail("expected x [N, C, H, W], rois [R, 4] and batch_indices [R], got " + x.str() + ", " +
         rois.str() + " and " + batch.str());
  const auto attrs = c.view<ops::RoiAlignOp>();
  if (attrs.mode() != "avg" && attrs.mode() != "max")
    fail("mode must be 'avg' or 'max', got '" + attrs.mode() + "'");
  const int64_t oh = attrs.output_height(), ow = attrs.output_width();
  if (oh < 1 || ow < 1 || oh > (int64_t(1) << 20) || ow > (int64_t(1) << 20))
    fail("output_height and output_width must be in [1, 2^20], got " + std::to_string(oh) +
         " and " + std::to_string(ow));
  if (attrs.sampling_ratio() < 0 || attrs.sampling_ratio() > 1024)
    fail("sampling_ratio must be in [0, 1024], got " + std::to_string(attrs.sampling_ratio()));
  return {TensorType(DType::F32, {rois.dims[0], x.dims[1], Dim(oh), Dim(ow)})};
}

} // namespace strata::infer
