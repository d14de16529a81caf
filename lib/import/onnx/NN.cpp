// ONNX neural-network ops: MatMul, Gemm, convolutions, pooling and normalizations. Conv, pool,
// matmul and layer_norm stay whole (structured ops); the other normalizations decompose into
// reduces and elementwise math, with ONNX padding conventions resolved to explicit pads here.
#include "Decompose.h"

#include "strata/support/ShapeMath.h"

namespace strata::onnx_import {
namespace {

std::vector<Value *> convertMatMul(ImportContext &ctx, const onnx::NodeProto &node) {
  return {ctx.builder().value(OpKind::MatMul, {requiredInput(ctx, node, 0, "A"),
                                               requiredInput(ctx, node, 1, "B")})};
}

std::vector<Value *> convertGemm(ImportContext &ctx, const onnx::NodeProto &node) {
  // alpha * A' B' + beta * C, kept as matmul (+ scaling) + add so fusion sees a matmul epilogue.
  Builder &b = ctx.builder();
  Value *a = requiredInput(ctx, node, 0, "A");
  Value *bm = requiredInput(ctx, node, 1, "B");
  Value *c = optionalInput(ctx, node, 2);
  if (a->type().rank() != 2 || bm->type().rank() != 2)
    throw ConvertError("Gemm needs 2-D A and B, got " + a->type().str() + " and " +
                       bm->type().str());
  if (attrInt(node, "transA", 0))
    a = transpose(b, a, {1, 0});
  if (attrInt(node, "transB", 0))
    bm = transpose(b, bm, {1, 0});
  double alpha = attrFloat(node, "alpha", 1.0f);
  double beta = attrFloat(node, "beta", 1.0f);
  Value *y = b.value(OpKind::MatMul, {a, bm});
  if (alpha != 1.0)
    y = mul(b, y, scalarLike(b, y, alpha));
  if (c && beta != 0.0) {
    c = castTo(b, c, y->type().dtype);
    if (beta != 1.0)
      c = mul(b, c, scalarLike(b, c, beta));
    y = add(b, y, c);
  }
  return {y};
}

// Kernel spatial dims: the kernel_shape attribute, or the weight's dims [2, rank).
std::vector<int64_t> kernelShape(const onnx::NodeProto &node, Value *w, size_t spatial) {
  if (hasAttr(node, "kernel_shape"))
    return spatialAttr(node, "kernel_shape", spatial, 1);
  if (w->type().rank() != static_cast<int64_t>(spatial) + 2)
    throw ConvertError("weight rank " + std::to_string(w->type().rank()) +
                       " does not match the input's " + std::to_string(spatial) +
                       " spatial dims");
  std::vector<int64_t> k;
  for (size_t i = 0; i < spatial; ++i)
    k.push_back(staticDim(w, static_cast<int64_t>(i) + 2, "kernel shape from weights"));
  return k;
}

std::vector<Value *> convertConv(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "X");
  Value *w = requiredInput(ctx, node, 1, "W");
  Value *bias = optionalInput(ctx, node, 2);
  requireRank(x, 3, "Conv input");
  size_t spatial = static_cast<size_t>(x->type().rank() - 2);
  std::vector<int64_t> kernel = kernelShape(node, w, spatial);
  std::vector<int64_t> strides = spatialAttr(node, "strides", spatial, 1);
  std::vector<int64_t> dilations = spatialAttr(node, "dilations", spatial, 1);
  std::vector<int64_t> pads = resolveWindowPads(node, x, kernel, strides, dilations);
  std::vector<Value *> operands = {x, w};
  if (bias)
    operands.push_back(bias);
  return {b.value(OpKind::Conv, operands,
                  {{"strides", Attribute(strides)},
                   {"pads", Attribute(pads)},
                   {"dilations", Attribute(dilations)},
                   {"group", Attribute(attrInt(node, "group", 1))}})};
}

std::vector<Value *> convertConvTranspose(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "X");
  Value *w = requiredInput(ctx, node, 1, "W");
  Value *bias = optionalInput(ctx, node, 2);
  requireRank(x, 3, "ConvTranspose input");
  size_t n = static_cast<size_t>(x->type().rank() - 2);
  std::vector<int64_t> kernel = kernelShape(node, w, n);
  std::vector<int64_t> strides = spatialAttr(node, "strides", n, 1);
  std::vector<int64_t> dilations = spatialAttr(node, "dilations", n, 1);
  std::vector<int64_t> outputPadding = spatialAttr(node, "output_padding", n, 0);
  std::string autoPad = attrString(node, "auto_pad", "NOTSET");
  std::vector<int64_t> outputShape = attrInts(node, "output_shape");
  if (outputShape.size() == n + 2) // may include the N and C dims
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (!outputShape.empty() && outputShape.size() != n)
    throw ConvertError("output_shape has " + std::to_string(outputShape.size()) +
                       " entries, expected " + std::to_string(n));

  std::vector<int64_t> pads(2 * n, 0);
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (!outputShape.empty() || same) {
    // Pads that produce the requested output size (ONNX's formula); SAME targets input * stride.
    // The odd unit goes to the end for SAME_UPPER, to the beginning otherwise. A negative total
    // (output larger than the full transposed conv) appends zeros at the end, as output_padding.
    for (size_t i = 0; i < n; ++i) {
      int64_t in = staticDim(x, static_cast<int64_t>(i) + 2, "ConvTranspose output_shape/auto_pad");
      // Every term but `in` comes from the file, so each step is checked.
      std::optional<int64_t> target =
          outputShape.empty() ? shape::checkedMul(in, strides[i]) : outputShape[i];
      std::optional<int64_t> full = shape::convTransposeOutputSize(
          in, {kernel[i], strides[i], 0, 0, dilations[i]}, outputPadding[i]);
      std::optional<int64_t> total =
          target && full ? shape::checkedSub(*full, *target) : std::nullopt;
      if (total && *total < 0) {
        std::optional<int64_t> padding = shape::checkedSub(outputPadding[i], *total);
        total = padding ? std::optional<int64_t>(0) : std::nullopt;
        if (padding)
          outputPadding[i] = *padding;
      }
      if (!total)
        throw ConvertError("ConvTranspose output size on spatial dim " + std::to_string(i) +
                           " overflows int64");
      int64_t half = *total / 2;
      pads[i] = autoPad == "SAME_UPPER" ? half : *total - half;
      pads[i + n] = *total - pads[i];
    }
  } else if (autoPad == "NOTSET") {
    pads = attrInts(node, "pads", pads);
    if (pads.empty())
      pads.assign(2 * n, 0);
    if (pads.size() != 2 * n)
      throw ConvertError("attribute 'pads' has " + std::to_string(pads.size()) +
                         " entries, expected " + std::to_string(2 * n));
  } else if (autoPad != "VALID") {
    throw ConvertError("unsupported auto_pad '" + autoPad + "'");
  }
  std::vector<Value *> operands = {x, w};
  if (bias)
    operands.push_back(bias);
  return {b.value(OpKind::ConvTranspose, operands,
                  {{"strides", Attribute(strides)},
                   {"pads", Attribute(pads)},
                   {"dilations", Attribute(dilations)},
                   {"group", Attribute(attrInt(node, "group", 1))},
                   {"output_padding", Attribute(outputPadding)}})};
}

Value *pool(Builder &b, Value *x, PoolKind kind, const std::vector<int64_t> &kernel,
            const std::vector<int64_t> &strides, const std::vector<int64_t> &pads,
            const std::vector<int64_t> &dilations, int64_t ceilMode, int64_t countIncludePad,
            int64_t p) {
  return b.value(OpKind::Pool, {x},
                 {{"kind", ops::enumAttr(kind)},
                  {"kernel", Attribute(kernel)},
                  {"strides", Attribute(strides)},
                  {"pads", Attribute(pads)},
                  {"dilations", Attribute(dilations)},
                  {"ceil_mode", Attribute(ceilMode)},
                  {"count_include_pad", Attribute(countIncludePad)},
                  {"p", Attribute(p)}});
}

ConvertFn convertPool(PoolKind kind) {
  return [kind](ImportContext &ctx, const onnx::NodeProto &node) -> std::vector<Value *> {
    Value *x = requiredInput(ctx, node, 0, "X");
    requireRank(x, 3, "pool input");
    if (kind == PoolKind::Max && outputRequested(node, 1))
      throw ConvertError("MaxPool's Indices output is not supported");
    size_t n = static_cast<size_t>(x->type().rank() - 2);
    if (!hasAttr(node, "kernel_shape"))
      throw ConvertError("pool needs the kernel_shape attribute");
    std::vector<int64_t> kernel = spatialAttr(node, "kernel_shape", n, 1);
    std::vector<int64_t> strides = spatialAttr(node, "strides", n, 1);
    std::vector<int64_t> dilations = spatialAttr(node, "dilations", n, 1);
    std::vector<int64_t> pads = resolveWindowPads(node, x, kernel, strides, dilations);
    int64_t p = kind == PoolKind::Lp ? attrInt(node, "p", 2) : 2;
    return {pool(ctx.builder(), x, kind, kernel, strides, pads, dilations,
                 attrInt(node, "ceil_mode", 0), attrInt(node, "count_include_pad", 0), p)};
  };
}

// (sum |x|^p)^(1/p) over `axes` (keepdims), with the common p = 1, 2 special-cased.
Value *lpNorm(Builder &b, Value *x, int64_t p, const std::vector<int64_t> &axes) {
  if (p == 1)
    return reduce(b, unary(b, OpKind::Abs, x), ReduceKind::Sum, axes, true);
  if (p == 2)
    return unary(b, OpKind::Sqrt, reduce(b, mul(b, x, x), ReduceKind::Sum, axes, true));
  if (p <= 0)
    throw ConvertError("p must be positive, got " + std::to_string(p));
  Value *powered = b.value(OpKind::Pow, {unary(b, OpKind::Abs, x), scalarLike(b, x, double(p))});
  return b.value(OpKind::Pow, {reduce(b, powered, ReduceKind::Sum, axes, true),
                               scalarLike(b, x, 1.0 / double(p))});
}

// GlobalMaxPool / GlobalAveragePool are reductions over the spatial dims, GlobalLpPool
// (reduction = nullopt) an Lp norm over them.
ConvertFn convertGlobalPool(std::optional<ReduceKind> reduction) {
  return [reduction](ImportContext &ctx, const onnx::NodeProto &node) -> std::vector<Value *> {
    Value *x = requiredInput(ctx, node, 0, "X");
    requireRank(x, 3, "global pool input");
    std::vector<int64_t> axes = iota(2, x->type().rank());
    if (!reduction)
      return {lpNorm(ctx.builder(), x, attrInt(node, "p", 2), axes)};
    return {reduce(ctx.builder(), x, *reduction, axes, true)};
  };
}

// (x - mean) and var = mean((x - mean)^2) over `axes` (kept), shared by the normalizations.
std::pair<Value *, Value *> centeredAndVariance(Builder &b, Value *x,
                                                const std::vector<int64_t> &axes) {
  Value *centered = sub(b, x, reduce(b, x, ReduceKind::Mean, axes, true));
  Value *var = reduce(b, mul(b, centered, centered), ReduceKind::Mean, axes, true);
  return {centered, var};
}

// Training mode (opset 14+): normalized with the batch's own mean and (population) variance over
// every axis but the channels; outputs 1 and 2 are the running statistics updated with them,
// input * momentum + batch * (1 - momentum).
std::vector<Value *> batchNormTraining(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "X");
  requireRank(x, 2, "BatchNormalization input");
  DType dt = x->type().dtype;
  int64_t rank = x->type().rank();
  Value *scale = castTo(b, requiredInput(ctx, node, 1, "scale"), dt);
  Value *bias = castTo(b, requiredInput(ctx, node, 2, "B"), dt);
  Value *runningMean = requiredInput(ctx, node, 3, "input_mean");
  Value *runningVar = requiredInput(ctx, node, 4, "input_var");
  double eps = attrFloat(node, "epsilon", 1e-5f);
  double momentum = attrFloat(node, "momentum", 0.9f);
  std::vector<int64_t> axes = iota(1, rank);
  axes[0] = 0; // every axis but 1
  auto [centered, var] = centeredAndVariance(b, x, axes);
  Value *stdDev = unary(b, OpKind::Sqrt, add(b, var, scalarLike(b, var, eps)));
  Value *y = add(b, mul(b, div(b, centered, stdDev), perChannel(b, scale, rank)),
                 perChannel(b, bias, rank));
  std::vector<Value *> outs = {y};
  auto update = [&](Value *running, Value *batch) {
    Value *r = castTo(b, running, dt);
    Value *v = add(b, mul(b, r, scalarLike(b, r, momentum)),
                   mul(b, batch, scalarLike(b, batch, 1.0 - momentum)));
    return castTo(b, v, running->type().dtype);
  };
  if (outputRequested(node, 1) || outputRequested(node, 2)) {
    Value *batchMean = reduce(b, x, ReduceKind::Mean, axes, false);
    Value *batchVar = reduce(b, var, ReduceKind::Mean, axes, false); // [1,C,1..] -> [C]
    outs.push_back(update(runningMean, batchMean));
    outs.push_back(update(runningVar, batchVar));
  }
  return outs;
}

std::vector<Value *> convertBatchNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  // Inference form: (x - mean) * (scale / sqrt(var + eps)) + bias, per channel.
  Builder &b = ctx.builder();
  if (ctx.opset() >= 14 && attrInt(node, "training_mode", 0) != 0)
    return batchNormTraining(ctx, node);
  for (int i = 1; i < node.output_size(); ++i)
    if (outputRequested(node, i))
      throw ConvertError("BatchNormalization's running mean/variance outputs (training) are "
                         "not supported");
  Value *x = requiredInput(ctx, node, 0, "X");
  requireRank(x, 2, "BatchNormalization input");
  DType dt = x->type().dtype;
  Value *scale = castTo(b, requiredInput(ctx, node, 1, "scale"), dt);
  Value *bias = castTo(b, requiredInput(ctx, node, 2, "B"), dt);
  Value *mean = castTo(b, requiredInput(ctx, node, 3, "input_mean"), dt);
  Value *var = castTo(b, requiredInput(ctx, node, 4, "input_var"), dt);
  double eps = attrFloat(node, "epsilon", 1e-5f);
  Value *factor = div(b, scale, unary(b, OpKind::Sqrt, add(b, var, scalarLike(b, var, eps))));
  int64_t rank = x->type().rank();
  // spatial=0 (opsets < 9) gives per-activation params [C, D1, ...] that broadcast as they are.
  bool spatial = ctx.opset() >= 9 || attrInt(node, "spatial", 1) != 0;
  auto bcast = [&](Value *v) { return spatial ? perChannel(b, v, rank) : v; };
  Value *y = mul(b, sub(b, x, bcast(mean)), bcast(factor));
  return {add(b, y, bcast(bias))};
}

std::vector<Value *> convertInstanceNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  requireRank(x, 3, "InstanceNormalization input");
  int64_t rank = x->type().rank();
  Value *scale = castTo(b, requiredInput(ctx, node, 1, "scale"), x->type().dtype);
  Value *bias = castTo(b, requiredInput(ctx, node, 2, "B"), x->type().dtype);
  double eps = attrFloat(node, "epsilon", 1e-5f);
  auto [centered, var] = centeredAndVariance(b, x, iota(2, rank));
  Value *stdDev = unary(b, OpKind::Sqrt, add(b, var, scalarLike(b, var, eps)));
  Value *normalized = div(b, centered, stdDev);
  return {add(b, mul(b, normalized, perChannel(b, scale, rank)), perChannel(b, bias, rank))};
}

std::vector<Value *> convertLayerNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "X");
  int64_t rank = x->type().rank();
  int64_t axis = normalizeAxis(attrInt(node, "axis", -1), rank);
  double eps = attrFloat(node, "epsilon", 1e-5f);
  std::vector<Value *> operands = {x, castTo(b, requiredInput(ctx, node, 1, "Scale"),
                                             x->type().dtype)};
  if (Value *bias = optionalInput(ctx, node, 2))
    operands.push_back(castTo(b, bias, x->type().dtype));
  std::vector<Value *> results = {b.value(
      OpKind::LayerNorm, operands, {{"axis", Attribute(axis)}, {"epsilon", Attribute(eps)}})};
  if (outputRequested(node, 1) || outputRequested(node, 2)) {
    // The statistics outputs (shape [d0..d(axis-1), 1, ...]) in the stash type.
    auto stash = dtypeFromOnnx(static_cast<int32_t>(attrInt(node, "stash_type", 1)));
    if (!stash)
      throw ConvertError("unsupported LayerNormalization stash_type");
    std::vector<int64_t> axes = iota(axis, rank);
    Value *mean = reduce(b, x, ReduceKind::Mean, axes, true);
    Value *centered = sub(b, x, mean);
    Value *var = reduce(b, mul(b, centered, centered), ReduceKind::Mean, axes, true);
    Value *invStdDev = div(b, scalarLike(b, var, 1.0),
                           unary(b, OpKind::Sqrt, add(b, var, scalarLike(b, var, eps))));
    results.push_back(outputRequested(node, 1) ? castTo(b, mean, *stash) : nullptr);
    results.push_back(outputRequested(node, 2) ? castTo(b, invStdDev, *stash) : nullptr);
  }
  return results;
}

std::vector<Value *> convertLRN(ImportContext &ctx, const onnx::NodeProto &node) {
  // y = x / (bias + alpha / size * window_sum(x^2))^beta, the window running over channels
  // [c - floor((size-1)/2), c + ceil((size-1)/2)]. The window sum is an lp pool (p = 1, of
  // non-negative values: an exact sum) over [N, 1, C, rest] with a [size, 1] kernel.
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "X");
  requireRank(x, 2, "LRN input");
  int64_t size = attrInt(node, "size", 0);
  if (size <= 0)
    throw ConvertError("LRN needs a positive 'size' attribute");
  double alpha = attrFloat(node, "alpha", 1e-4f);
  double beta = attrFloat(node, "beta", 0.75f);
  double bias = attrFloat(node, "bias", 1.0f);
  int64_t rank = x->type().rank();
  std::vector<int64_t> restoreShape = {0}; // 0: keep the (maybe symbolic) batch dim
  for (int64_t i = 1; i < rank; ++i)
    restoreShape.push_back(staticDim(x, i, "LRN"));
  int64_t channels = restoreShape[1];

  Value *squared = mul(b, x, x);
  Value *grid = reshape(b, squared, {0, 1, channels, -1});
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  Value *windowSum = pool(b, grid, PoolKind::Lp, {size, 1}, {1, 1}, {before, 0, after, 0}, {1, 1},
                          /*ceilMode=*/0, /*countIncludePad=*/0, /*p=*/1);
  windowSum = reshape(b, windowSum, restoreShape);
  Value *base = add(b, scalarLike(b, x, bias),
                    mul(b, windowSum, scalarLike(b, x, alpha / double(size))));
  return {div(b, x, b.value(OpKind::Pow, {base, scalarLike(b, x, beta)}))};
}

std::vector<Value *> convertMVN(ImportContext &ctx, const onnx::NodeProto &node) {
  // (x - E[x]) / (sqrt(E[(x - E[x])^2]) + 1e-9), the epsilon as in ONNX's function body.
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "X");
  int64_t rank = x->type().rank();
  std::vector<int64_t> axes;
  for (int64_t a : attrInts(node, "axes", {0, 2, 3}))
    axes.push_back(normalizeAxis(a, rank));
  auto [centered, var] = centeredAndVariance(b, x, axes);
  Value *stdDev = add(b, unary(b, OpKind::Sqrt, var), scalarLike(b, var, 1e-9));
  return {div(b, centered, stdDev)};
}

std::vector<Value *> convertLpNormalization(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "input");
  int64_t axis = normalizeAxis(attrInt(node, "axis", -1), x->type().rank());
  int64_t p = attrInt(node, "p", 2);
  if (p != 1 && p != 2)
    throw ConvertError("LpNormalization p must be 1 or 2, got " + std::to_string(p));
  return {div(b, x, lpNorm(b, x, p, {axis}))};
}

} // namespace

void registerNNConverters(ConverterTable &t) {
  t["MatMul"] = convertMatMul;
  t["Gemm"] = convertGemm;
  t["Conv"] = convertConv;
  t["ConvTranspose"] = convertConvTranspose;
  t["MaxPool"] = convertPool(PoolKind::Max);
  t["AveragePool"] = convertPool(PoolKind::Avg);
  t["LpPool"] = convertPool(PoolKind::Lp);
  t["GlobalAveragePool"] = convertGlobalPool(ReduceKind::Mean);
  t["GlobalMaxPool"] = convertGlobalPool(ReduceKind::Max);
  t["GlobalLpPool"] = convertGlobalPool(std::nullopt);
  t["BatchNormalization"] = convertBatchNorm;
  t["InstanceNormalization"] = convertInstanceNorm;
  t["LayerNormalization"] = convertLayerNorm;
  t["LRN"] = convertLRN;
  t["MeanVarianceNormalization"] = convertMVN;
  t["LpNormalization"] = convertLpNormalization;
}

} // namespace strata::onnx_import
