#include "Decompose.h"

#include "strata/graph/NormalForm.h"
#include "strata/support/ShapeMath.h"

#include <algorithm>
#include <numeric>

namespace strata::onnx_import {

Value *add(Builder &b, Value *x, Value *y) { return b.value(OpKind::Add, {x, y}); }
Value *sub(Builder &b, Value *x, Value *y) { return b.value(OpKind::Sub, {x, y}); }
Value *mul(Builder &b, Value *x, Value *y) { return b.value(OpKind::Mul, {x, y}); }
Value *div(Builder &b, Value *x, Value *y) { return b.value(OpKind::Div, {x, y}); }
Value *maximum(Builder &b, Value *x, Value *y) { return b.value(OpKind::Max, {x, y}); }
Value *minimum(Builder &b, Value *x, Value *y) { return b.value(OpKind::Min, {x, y}); }
Value *unary(Builder &b, OpKind kind, Value *x) { return b.value(kind, {x}); }
Value *select(Builder &b, Value *cond, Value *ifTrue, Value *ifFalse) {
  return b.value(OpKind::Select, {cond, ifTrue, ifFalse});
}
Value *lessThan(Builder &b, Value *x, Value *y) { return b.value(OpKind::Lt, {x, y}); }

Value *scalarLike(Builder &b, Value *like, double v) { return b.scalar(like->type().dtype, v); }

Value *castTo(Builder &b, Value *x, DType dtype) {
  if (x->type().dtype == dtype)
    return x;
  return b.value(OpKind::Cast, {x}, {{"to", Attribute(dtype)}});
}

Value *reshape(Builder &b, Value *x, std::vector<int64_t> shape) {
  return b.value(OpKind::Reshape, {x}, {{"shape", Attribute(std::move(shape))}});
}

Value *transpose(Builder &b, Value *x, std::vector<int64_t> perm) {
  return b.value(OpKind::Transpose, {x}, {{"perm", Attribute(std::move(perm))}});
}

Value *slice(Builder &b, Value *x, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &ends, const std::vector<int64_t> &axes,
             const std::vector<int64_t> &steps) {
  auto attrs = sliceAttributes(x->type().rank(), starts, ends, axes, steps);
  if (!attrs)
    throw ConvertError(llvm::toString(attrs.takeError()));
  return b.value(OpKind::Slice, {x}, std::move(*attrs));
}

Value *reduce(Builder &b, Value *x, ReduceKind kind, std::vector<int64_t> axes, bool keepdims) {
  return b.value(OpKind::Reduce, {x},
                 {{"kind", ops::enumAttr(kind)},
                  {"axes", Attribute(std::move(axes))},
                  {"keepdims", Attribute(int64_t{keepdims ? 1 : 0})}});
}

Value *dimsOf(Builder &b, Value *x) {
  const TensorType &t = x->type();
  if (t.isStatic()) {
    std::vector<int64_t> dims = t.staticShape();
    return b.constant(Tensor::fromVector(DType::I64, {t.rank()}, dims));
  }
  return b.value(OpKind::Shape, {x}, {{"start", Attribute(int64_t{0})}, {"end", Attribute(t.rank())}});
}

Value *runtimeAxes(Builder &b, Value *axes, int64_t rank) {
  const TensorType &t = axes->type();
  if (t.rank() > 1 || isFloat(t.dtype) || t.dtype == DType::Bool)
    throw ConvertError("axes read from data must be an integer scalar or 1-D tensor, got " +
                       t.str());
  if (rank < 1)
    throw ConvertError("an axis read from data for a rank-0 tensor");
  std::vector<int64_t> all(static_cast<size_t>(rank));
  std::iota(all.begin(), all.end(), 0);
  Value *range = b.constant(Tensor::fromVector(DType::I64, {rank}, all));
  return b.value(OpKind::Gather, {range, castTo(b, axes, DType::I64)},
                 {{"axis", Attribute(int64_t{0})}});
}

Value *axisCounts(Builder &b, Value *normalizedAxes, int64_t rank) {
  std::vector<int64_t> all(static_cast<size_t>(rank));
  std::iota(all.begin(), all.end(), 0);
  Value *range = b.constant(Tensor::fromVector(DType::I64, {1, rank}, all));
  Value *column = b.value(OpKind::Reshape, {normalizedAxes},
                          {{"shape", Attribute(std::vector<int64_t>{-1, 1})}});
  Value *hits = castTo(b, b.value(OpKind::Eq, {column, range}), DType::I64); // [m, rank]
  return reduce(b, hits, ReduceKind::Sum, {0}, false);
}

Value *cumulativeSum(Builder &b, Value *v) {
  return b.value(OpKind::CumSum, {v},
                 {{"axis", Attribute(int64_t{0})},
                  {"exclusive", Attribute(int64_t{0})},
                  {"reverse", Attribute(int64_t{0})}});
}

std::vector<Dim> unnamedDims(ImportContext &ctx, Value *x, Value *counts, int64_t outRank,
                             const std::string &name, const std::string &invalid,
                             Value *alsoValid) {
  Builder &b = ctx.builder();
  Value *one = b.scalar(DType::I64, 1);
  Value *kept = sub(b, one, minimum(b, counts, one));
  Value *position = cumulativeSum(b, kept); // of each kept dim: 1, 2, ...
  Value *keptDims = mul(b, kept, dimsOf(b, x));
  Value *valid = eachAxisOnce(b, counts);
  if (alsoValid)
    valid = b.value(OpKind::And, {valid, alsoValid});
  std::vector<Dim> out;
  for (int64_t k = 0; k < outRank; ++k) {
    Value *isK = castTo(b, b.value(OpKind::Eq, {position, b.scalar(DType::I64, double(k + 1))}),
                        DType::I64);
    Value *size = reduce(b, mul(b, isK, keptDims), ReduceKind::Sum, {0}, false);
    const std::string symbol = name + "_" + std::to_string(k);
    out.push_back(k == 0 ? checkedDataDim(ctx, size, valid, symbol, invalid)
                         : dataDim(ctx, size, symbol));
  }
  return out;
}

Value *eachAxisOnce(Builder &b, Value *counts) {
  return b.value(OpKind::Le, {reduce(b, counts, ReduceKind::Max, {0}, false),
                              b.scalar(DType::I64, 1)});
}

Value *reshapeExactly(Builder &b, Value *x, const std::vector<Dim> &dims) {
  return b.value(OpKind::Reshape, {x},
                 {{"shape", Attribute::dims(dims)}, {"allowzero", Attribute(int64_t{1})}});
}

Dim checkedDataDim(ImportContext &ctx, Value *size, Value *valid, const std::string &name,
                   const std::string &invalid) {
  Builder &b = ctx.builder();
  return dataDim(ctx, select(b, valid, size, b.scalar(DType::I64, -1)), name, invalid);
}

Value *requireAtRun(ImportContext &ctx, Value *x, Value *ok, const std::string &name,
                    const std::string &invalid, Value *like) {
  Builder &b = ctx.builder();
  if (!like)
    like = x;
  Value *count = reduce(b, dimsOf(b, like), ReduceKind::Prod, {0}, false);
  Value *idx = dataArange(ctx, select(b, ok, count, b.scalar(DType::I64, -1)), name, invalid);
  Value *flat = b.value(OpKind::Reshape, {x}, {{"shape", Attribute(std::vector<int64_t>{-1})}});
  Value *picked = b.value(OpKind::Gather, {flat, idx}, {{"axis", Attribute(int64_t{0})}});
  return reshapeExactly(b, picked, like->type().dims);
}

Value *perChannel(Builder &b, Value *vec, int64_t rank) {
  if (rank <= 2)
    return vec; // [N, C] already broadcasts against [C]
  std::vector<int64_t> shape(static_cast<size_t>(rank - 1), 1);
  shape[0] = -1; // the channel count, whatever it is (also when symbolic)
  return reshape(b, vec, std::move(shape));
}

Value *log1p(Builder &b, Value *x) {
  // u = 1 + x rounds; log(u) * x / (u - 1) corrects for that rounding since u - 1 is exact.
  Value *one = scalarLike(b, x, 1.0);
  Value *u = add(b, one, x);
  Value *uMinusOne = sub(b, u, one);
  Value *corrected = div(b, mul(b, unary(b, OpKind::Log, u), x), uMinusOne);
  Value *uIsOne = b.value(OpKind::Eq, {u, one}); // x below half an ulp of 1: log1p(x) = x
  Value *uIsInf = b.value(OpKind::IsInf, {u}, {{"detect_negative", Attribute(int64_t{1})},
                                               {"detect_positive", Attribute(int64_t{1})}});
  return select(b, uIsOne, x, select(b, uIsInf, u, corrected));
}

Value *expm1(Builder &b, Value *x) {
  // u = exp(x); (u - 1) * x / log(u) cancels the rounding of u (Kahan).
  Value *one = scalarLike(b, x, 1.0);
  Value *u = unary(b, OpKind::Exp, x);
  Value *uMinusOne = sub(b, u, one);
  Value *corrected = div(b, mul(b, uMinusOne, x), unary(b, OpKind::Log, u));
  Value *uIsOne = b.value(OpKind::Eq, {u, one});
  // u == 0 (x very negative) gives 0/-inf = -0 * ...; u - 1 = -1 is the answer there, and for
  // u = inf the corrected form is inf/inf, so both ends use u - 1 directly.
  Value *useDirect = b.value(
      OpKind::Or, {b.value(OpKind::Le, {uMinusOne, scalarLike(b, x, -0.5)}),
                   b.value(OpKind::IsInf, {u}, {{"detect_negative", Attribute(int64_t{1})},
                                                {"detect_positive", Attribute(int64_t{1})}})});
  return select(b, uIsOne, x, select(b, useDirect, uMinusOne, corrected));
}

std::vector<int64_t> iota(int64_t lo, int64_t hi) {
  std::vector<int64_t> r;
  for (int64_t i = lo; i < hi; ++i)
    r.push_back(i);
  return r;
}

std::vector<int64_t> staticShape(Value *x, const char *what) {
  std::vector<int64_t> shape;
  for (const Dim &d : x->type().dims) {
    if (!d.isStatic())
      throw ConvertError(std::string(what) + " needs a static shape, but it is " +
                         x->type().str());
    shape.push_back(d.size);
  }
  return shape;
}

int64_t staticDim(Value *x, int64_t axis, const char *what) {
  const Dim &d = x->type().dims.at(static_cast<size_t>(axis));
  if (!d.isStatic())
    throw ConvertError(std::string(what) + " needs a static size for dim " +
                       std::to_string(axis) + ", but the type is " + x->type().str());
  return d.size;
}

bool outputRequested(const onnx::NodeProto &node, int i) {
  return i < node.output_size() && !node.output(i).empty();
}

Value *optionalInput(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  if (i >= node.input_size())
    return nullptr;
  return ctx.input(node, i);
}

Value *requiredInput(ImportContext &ctx, const onnx::NodeProto &node, int i, const char *what) {
  Value *v = optionalInput(ctx, node, i);
  if (!v)
    throw ConvertError(std::string("missing required input ") + std::to_string(i) + " (" + what +
                       ")");
  return v;
}

void requireRank(Value *x, int64_t minRank, const char *what) {
  if (x->type().rank() < minRank)
    throw ConvertError(std::string(what) + " must have rank >= " + std::to_string(minRank) +
                       ", got " + x->type().str());
}

std::vector<int64_t> spatialAttr(const onnx::NodeProto &node, const std::string &name,
                                 size_t count, int64_t dflt) {
  std::vector<int64_t> v = attrInts(node, name, std::vector<int64_t>(count, dflt));
  if (v.empty())
    v.assign(count, dflt);
  if (v.size() != count)
    throw ConvertError("attribute '" + name + "' has " + std::to_string(v.size()) +
                       " entries, expected one per spatial dim (" + std::to_string(count) + ")");
  return v;
}

std::vector<int64_t> resolveWindowPads(const onnx::NodeProto &node, Value *x,
                                       const std::vector<int64_t> &kernel,
                                       const std::vector<int64_t> &strides,
                                       const std::vector<int64_t> &dilations) {
  size_t n = kernel.size();
  std::string autoPad = attrString(node, "auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    std::vector<int64_t> pads = attrInts(node, "pads", std::vector<int64_t>(2 * n, 0));
    if (pads.empty())
      pads.assign(2 * n, 0);
    if (pads.size() != 2 * n)
      throw ConvertError("attribute 'pads' has " + std::to_string(pads.size()) +
                         " entries, expected " + std::to_string(2 * n));
    return pads;
  }
  if (autoPad == "VALID")
    return std::vector<int64_t>(2 * n, 0);
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    throw ConvertError("unsupported auto_pad '" + autoPad + "'");
  // SAME: output = ceil(input / stride); the padding that achieves it is split evenly, the odd
  // element going to the end (SAME_UPPER) or the beginning (SAME_LOWER).
  std::vector<int64_t> pads(2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = staticDim(x, static_cast<int64_t>(i) + 2, ("auto_pad " + autoPad).c_str());
    // The attributes come straight from the file, before the conv/pool op checks them: a zero
    // stride would divide by zero here, and kernel and dilation may overflow.
    if (strides[i] < 1)
      throw ConvertError("attribute 'strides' has an entry below 1");
    int64_t out = in / strides[i] + (in % strides[i] != 0 ? 1 : 0); // ceil, without in + stride
    std::optional<int64_t> window = shape::checkedSub(kernel[i], 1);
    if (window)
      window = shape::checkedMul(*window, dilations[i]);
    // (out - 1) * stride lies in [in - stride, in), so only the window can overflow.
    std::optional<int64_t> needed =
        window ? shape::checkedAdd(*window, (out - 1) * strides[i] + 1 - in) : std::nullopt;
    if (!needed)
      throw ConvertError("auto_pad " + autoPad + ": kernel " + std::to_string(kernel[i]) +
                         " with dilation " + std::to_string(dilations[i]) + " overflows int64");
    int64_t total = std::max<int64_t>(0, *needed);
    int64_t small = total / 2, large = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : large;
    pads[i + n] = autoPad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

} // namespace strata::onnx_import
