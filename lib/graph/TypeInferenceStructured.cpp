// Type inference for structured ops: matmul, conv, conv_transpose, pool, the reductions,
// softmax, layer_norm, cumsum, topk and resize. (einsum has its own file.)
#include "TypeInferenceImpl.h"

#include <algorithm>

namespace strata::infer {

namespace {

std::string axisName(size_t i) { return "spatial axis " + std::to_string(i); }

TensorType inferMatMul(const InferContext &c) {
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
  auto batch = broadcastDims(batchA, batchB, &why);
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
    auto sum = broadcastDims(out, bias.dims, &why);
    if (!sum || *sum != out)
      fail("operand 2 (bias) of shape " + dimsToString(bias.dims) +
           " does not broadcast to the product shape " + dimsToString(out));
  }
  return a.withDims(std::move(out));
}

// Strides, pads and dilations of a sliding-window op; empty lists mean the ONNX defaults.
struct Window {
  std::vector<int64_t> strides, pads, dilations;
};

Window windowAttrs(const InferContext &c, size_t spatial) {
  Window w{c.intsAttr("strides"), c.intsAttr("pads"), c.intsAttr("dilations")};
  if (w.strides.empty())
    w.strides.assign(spatial, 1);
  if (w.pads.empty())
    w.pads.assign(2 * spatial, 0);
  if (w.dilations.empty())
    w.dilations.assign(spatial, 1);
  auto check = [&](const char *name, const std::vector<int64_t> &v, size_t n, int64_t min) {
    if (v.size() != n)
      fail("attribute '" + std::string(name) + "' " + intsToString(v) + " must have " +
           std::to_string(n) + " entries for " + std::to_string(spatial) + " spatial dims");
    for (int64_t x : v)
      if (x < min)
        fail("attribute '" + std::string(name) + "' " + intsToString(v) + " has an entry below " +
             std::to_string(min));
  };
  check("strides", w.strides, spatial, 1);
  check("pads", w.pads, 2 * spatial, 0);
  check("dilations", w.dilations, spatial, 1);
  return w;
}

// Output size of one spatial dim of conv/pool (floor mode), or an error when the window does
// not fit even once.
int64_t windowOutput(int64_t in, int64_t kernel, const Window &w, size_t i, size_t spatial,
                     bool ceilMode) {
  int64_t effectiveKernel = (kernel - 1) * w.dilations[i] + 1;
  int64_t padded = in + w.pads[i] + w.pads[i + spatial];
  if (padded < effectiveKernel)
    fail("window of effective size " + std::to_string(effectiveKernel) + " does not fit padded " +
         axisName(i) + " of size " + std::to_string(padded));
  int64_t span = padded - effectiveKernel, stride = w.strides[i];
  if (!ceilMode)
    return span / stride + 1;
  int64_t out = (span + stride - 1) / stride + 1;
  // ONNX: with ceil_mode the last window must start inside the input or the begin padding.
  if ((out - 1) * stride >= in + w.pads[i])
    --out;
  return out;
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

TensorType inferConv(const InferContext &c, bool transposed) {
  const TensorType &x = c.operand(0), &w = c.operand(1);
  requireSameDType(c, 1, 0);
  requireRankAtLeast(c, 0, 3);
  if (w.rank() != x.rank())
    fail("operand 1 (weight) has rank " + std::to_string(w.rank()) + " but operand 0 has rank " +
         std::to_string(x.rank()));
  size_t spatial = static_cast<size_t>(x.rank() - 2);
  Window win = windowAttrs(c, spatial);
  int64_t group = c.intAttr("group");
  if (group < 1)
    fail("attribute 'group' must be >= 1, got " + std::to_string(group));

  const Dim &channels = x.dims[1];
  Dim outChannels;
  if (!transposed) {
    // w: [C_out, C_in / group, k...]
    int64_t perGroup = staticDim(c, 1, 1, "weight input channels");
    if (channels.isStatic() && channels.size != perGroup * group)
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
    outChannels = Dim(staticDim(c, 1, 1, "weight output channels") * group);
  }
  checkBias(c, outChannels);

  std::vector<int64_t> outputPadding;
  if (transposed) {
    outputPadding = c.intsAttr("output_padding");
    if (outputPadding.empty())
      outputPadding.assign(spatial, 0);
    if (outputPadding.size() != spatial)
      fail("attribute 'output_padding' " + intsToString(outputPadding) + " must have " +
           std::to_string(spatial) + " entries");
  }

  std::vector<Dim> out = {x.dims[0], outChannels};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t in = staticDim(c, 0, 2 + i, "input spatial dim");
    int64_t k = staticDim(c, 1, 2 + i, "kernel dim");
    if (!transposed) {
      out.push_back(Dim(windowOutput(in, k, win, i, spatial, false)));
      continue;
    }
    int64_t size = win.strides[i] * (in - 1) + outputPadding[i] + (k - 1) * win.dilations[i] + 1 -
                   win.pads[i] - win.pads[i + spatial];
    if (size < 0)
      fail("conv_transpose output on " + axisName(i) + " would have negative size " +
           std::to_string(size));
    out.push_back(Dim(size));
  }
  return x.withDims(std::move(out));
}

TensorType inferPool(const InferContext &c) {
  const TensorType &x = c.operand(0);
  c.enumAttr("kind", {"max", "avg", "lp"});
  requireRankAtLeast(c, 0, 3);
  size_t spatial = static_cast<size_t>(x.rank() - 2);
  std::vector<int64_t> kernel = c.intsAttr("kernel");
  if (kernel.size() != spatial)
    fail("attribute 'kernel' " + intsToString(kernel) + " must have " + std::to_string(spatial) +
         " entries for an operand of rank " + std::to_string(x.rank()));
  for (int64_t k : kernel)
    if (k < 1)
      fail("attribute 'kernel' " + intsToString(kernel) + " has an entry below 1");
  Window win = windowAttrs(c, spatial);
  bool ceilMode = c.flagAttr("ceil_mode");
  c.flagAttr("count_include_pad");
  std::vector<Dim> out = {x.dims[0], x.dims[1]};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t in = staticDim(c, 0, 2 + i, "input spatial dim");
    out.push_back(Dim(windowOutput(in, kernel[i], win, i, spatial, ceilMode)));
  }
  return x.withDims(std::move(out));
}

TensorType inferReduce(const InferContext &c) {
  const TensorType &x = c.operand(0);
  c.enumAttr("kind", {"sum", "prod", "max", "min", "mean"});
  bool keep = c.flagAttr("keepdims");
  std::vector<int64_t> axes = c.intsAttr("axes");
  std::vector<bool> reduced(x.dims.size(), axes.empty());
  for (int64_t a : axes) {
    int64_t axis = normalizeAxis(a, x.rank(), "attribute 'axes' entry");
    if (reduced[axis])
      fail("attribute 'axes' " + intsToString(axes) + " repeats axis " + std::to_string(axis));
    reduced[axis] = true;
  }
  std::vector<Dim> out;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (!reduced[d])
      out.push_back(x.dims[d]);
    else if (keep)
      out.push_back(Dim(1));
  }
  return x.withDims(std::move(out));
}

TensorType inferArgReduce(const InferContext &c) {
  const TensorType &x = c.operand(0);
  c.enumAttr("kind", {"max", "min"});
  requireRankAtLeast(c, 0, 1);
  int64_t axis = c.axisAttr("axis", x.rank());
  bool keep = c.flagAttr("keepdims");
  c.flagAttr("select_last_index");
  std::vector<Dim> out = x.dims;
  if (keep)
    out[axis] = Dim(1);
  else
    out.erase(out.begin() + axis);
  return TensorType(DType::I64, std::move(out), x.device);
}

TensorType inferLayerNorm(const InferContext &c) {
  const TensorType &x = c.operand(0);
  requireDType(c, 0, isFloat(x.dtype), "a float dtype");
  int64_t axis = c.axisAttr("axis", x.rank());
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

TensorType inferTopKValues(const InferContext &c) {
  const TensorType &x = c.operand(0);
  requireRankAtLeast(c, 0, 1);
  int64_t axis = c.axisAttr("axis", x.rank());
  int64_t k = c.intAttr("k");
  c.flagAttr("largest");
  c.flagAttr("sorted");
  const Dim &d = x.dims[axis];
  if (k < 0 || (d.isStatic() && k > d.size))
    fail("attribute 'k' = " + std::to_string(k) + " is out of range for axis " +
         std::to_string(axis) + " of size " + d.str());
  std::vector<Dim> out = x.dims;
  out[axis] = Dim(k);
  return x.withDims(std::move(out));
}

TensorType inferResize(const InferContext &c) {
  const TensorType &x = c.operand(0);
  c.enumAttr("mode", {"nearest", "linear", "cubic"});
  c.enumAttr("coordinate_transformation_mode",
             {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
              "asymmetric", "tf_crop_and_resize"});
  c.enumAttr("nearest_mode", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  c.flagAttr("exclude_outside");
  std::vector<int64_t> sizes = c.intsAttr("sizes");
  std::vector<double> scales = c.floatsAttr("scales");
  if (static_cast<int64_t>(sizes.size()) != x.rank())
    fail("attribute 'sizes' " + intsToString(sizes) + " must have one entry per dim (rank " +
         std::to_string(x.rank()) + ")");
  for (int64_t s : sizes)
    if (s < 0)
      fail("attribute 'sizes' " + intsToString(sizes) + " has a negative size");
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != x.rank())
    fail("attribute 'scales' has " + std::to_string(scales.size()) +
         " entries; expected none or one per dim (rank " + std::to_string(x.rank()) + ")");
  for (double s : scales)
    if (!(s > 0))
      fail("attribute 'scales' has a non-positive scale " + std::to_string(s));
  return x.withDims(std::vector<Dim>(sizes.begin(), sizes.end()));
}

} // namespace

std::vector<TensorType> inferStructured(const InferContext &c) {
  const TensorType &x = c.operand(0);
  switch (c.kind) {
  case OpKind::MatMul: return {inferMatMul(c)};
  case OpKind::Conv: return {inferConv(c, false)};
  case OpKind::ConvTranspose: return {inferConv(c, true)};
  case OpKind::Pool: return {inferPool(c)};
  case OpKind::Reduce: return {inferReduce(c)};
  case OpKind::ArgReduce: return {inferArgReduce(c)};
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    requireDType(c, 0, isFloat(x.dtype), "a float dtype");
    c.axisAttr("axis", x.rank());
    return {x};
  case OpKind::LayerNorm: return {inferLayerNorm(c)};
  case OpKind::CumSum:
    requireDType(c, 0, x.dtype != DType::Bool, "a numeric dtype");
    c.axisAttr("axis", x.rank());
    c.flagAttr("exclusive");
    c.flagAttr("reverse");
    return {x};
  case OpKind::TopK: {
    TensorType values = inferTopKValues(c);
    return {values, values.withDType(DType::I64)};
  }
  case OpKind::Resize: return {inferResize(c)};
  default:
    fail("no type inference rule for op '" + std::string(opInfo(c.kind).name) + "'");
  }
}

} // namespace strata::infer
