// Converters for ONNX's linear quantization ops, decomposed into elementwise graph ops in f32:
// QuantizeLinear, DequantizeLinear (per tensor or per axis) and DynamicQuantizeLinear. Integer
// kernels (QLinearConv, MatMulInteger, ...) are not here: they need integer GEMMs of their own.
#include "Decompose.h"

namespace strata::onnx_import {
namespace {

using Node = onnx::NodeProto;
using Values = std::vector<Value *>;

// The representable range of a quantized element type.
std::pair<double, double> quantizedRange(DType dt) {
  switch (dt) {
  case DType::U8: return {0, 255};
  case DType::I8: return {-128, 127};
  case DType::I32: return {-2147483648.0, 2147483647.0};
  default:
    throw ConvertError("quantized element type " + std::string(dtypeName(dt)) +
                       " is not supported (expected u8, i8 or i32)");
  }
}

// A scale or zero point of x (rank r): a scalar broadcasts as it is; a 1-D tensor runs along
// `axis` (per-axis quantization), so it becomes [1, .., C, .., 1].
Value *alongAxis(Builder &b, Value *param, Value *x, int64_t axis, const char *what) {
  int64_t rank = x->type().rank();
  if (param->type().rank() == 0)
    return param;
  if (param->type().rank() != 1)
    throw ConvertError(std::string(what) + " must be a scalar or 1-D, got rank " +
                       std::to_string(param->type().rank()));
  int64_t a = normalizeAxis(axis, rank);
  int64_t n = staticDim(param, 0, what);
  if (x->type().dims[a].isStatic() && x->type().dims[a].size != n)
    throw ConvertError(std::string(what) + " has " + std::to_string(n) +
                       " elements but the input's axis " + std::to_string(a) + " has " +
                       std::to_string(x->type().dims[a].size));
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(a)] = n;
  return reshape(b, param, shape);
}

// saturate(round_half_even(x / scale) + zeroPoint) in `dt`; x, scale and zeroPoint in f32.
Value *quantize(Builder &b, Value *x, Value *scale, Value *zeroPoint, DType dt) {
  auto [lo, hi] = quantizedRange(dt);
  Value *q = unary(b, OpKind::Round, div(b, x, scale));
  if (zeroPoint)
    q = add(b, q, zeroPoint);
  q = minimum(b, maximum(b, q, scalarLike(b, q, lo)), scalarLike(b, q, hi));
  return castTo(b, q, dt);
}

Values convertQuantizeLinear(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "x");
  Value *scale = requiredInput(ctx, n, 1, "y_scale");
  Value *zeroPoint = optionalInput(ctx, n, 2);
  DType dt = zeroPoint ? zeroPoint->type().dtype : DType::U8;
  if (hasAttr(n, "output_dtype") || hasAttr(n, "block_size"))
    throw ConvertError("QuantizeLinear's output_dtype and block_size (opset 21) are not supported");
  int64_t axis = attrInt(n, "axis", 1);
  Value *xf = castTo(b, x, DType::F32);
  Value *s = alongAxis(b, castTo(b, scale, DType::F32), x, axis, "y_scale");
  Value *z = zeroPoint ? alongAxis(b, castTo(b, zeroPoint, DType::F32), x, axis, "y_zero_point")
                       : nullptr;
  return {quantize(b, xf, s, z, dt)};
}

Values convertDequantizeLinear(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "x");
  Value *scale = requiredInput(ctx, n, 1, "x_scale");
  Value *zeroPoint = optionalInput(ctx, n, 2);
  quantizedRange(x->type().dtype); // the input's type must be a quantized one
  if (hasAttr(n, "block_size"))
    throw ConvertError("DequantizeLinear's block_size (opset 21) is not supported");
  int64_t axis = attrInt(n, "axis", 1);
  DType out = scale->type().dtype;
  Value *y = castTo(b, x, DType::F32);
  if (zeroPoint)
    y = sub(b, y, alongAxis(b, castTo(b, zeroPoint, DType::F32), x, axis, "x_zero_point"));
  y = mul(b, y, alongAxis(b, castTo(b, scale, DType::F32), x, axis, "x_scale"));
  return {castTo(b, y, out)};
}

// u8 quantization of x over its own range (which always includes 0): scale = (max - min) / 255,
// zero point = saturate(round(-min / scale)).
Values convertDynamicQuantizeLinear(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = castTo(b, requiredInput(ctx, n, 0, "x"), DType::F32);
  std::vector<int64_t> all = iota(0, x->type().rank());
  Value *zero = b.scalar(DType::F32, 0);
  Value *lo = minimum(b, reduce(b, x, ReduceKind::Min, all, false), zero);
  Value *hi = maximum(b, reduce(b, x, ReduceKind::Max, all, false), zero);
  Value *scale = div(b, sub(b, hi, lo), b.scalar(DType::F32, 255));
  Value *zeroPoint = quantize(b, sub(b, zero, lo), scale, nullptr, DType::U8);
  Value *y = quantize(b, x, scale, castTo(b, zeroPoint, DType::F32), DType::U8);
  return {y, scale, zeroPoint};
}

} // namespace

void registerQuantizationConverters(ConverterTable &t) {
  t["QuantizeLinear"] = convertQuantizeLinear;
  t["DequantizeLinear"] = convertDequantizeLinear;
  t["DynamicQuantizeLinear"] = convertDynamicQuantizeLinear;
}

} // namespace strata::onnx_import
