// Converters for the remaining ONNX ops: constants and generators (folded at import), casts,
// TopK, CumSum, Resize/Upsample, Einsum, Where, OneHot, Hardmax and the window generators.
//
// NonZero, Compress, Unique and NonMaxSuppression have data-dependent output shapes: an op
// counts what they select (a reduce, unique_count, nms_count) and the graph's nonzero, unique or
// nms op, whose result dim is a symbol of its own bound to that count at run time, lists it.
#include "Decompose.h"
#include "strata/graph/ResizeMath.h"

#include "strata/support/ShapeMath.h"

#include <cmath>

namespace strata::onnx_import {
namespace {

using Node = onnx::NodeProto;
using Values = std::vector<Value *>;

// A scalar (or one-element tensor) input that must be known at import.
Tensor requireScalarInput(ImportContext &ctx, const Node &n, int i, const char *what) {
  Tensor t = ctx.requireConstantInput(n, i, what);
  if (t.numElements() != 1)
    throw ConvertError(std::string(what) + " must hold one element, got shape [" +
                       shapeToString(t.shape()) + "]");
  return t;
}

DType requireDType(int32_t onnxType, const char *what) {
  auto dt = dtypeFromOnnx(onnxType);
  if (!dt)
    throw ConvertError(std::string(what) + ": unsupported element type " +
                       (onnx::TensorProto::DataType_IsValid(onnxType)
                            ? onnx::TensorProto::DataType_Name(
                                  static_cast<onnx::TensorProto::DataType>(onnxType))
                            : std::to_string(onnxType)));
  return *dt;
}

// --- Constants and generators ------------------------------------------------------------------

Values convertConstant(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  if (n.attribute_size() != 1)
    throw ConvertError("Constant needs exactly one value attribute, got " +
                       std::to_string(n.attribute_size()));
  const onnx::AttributeProto &a = n.attribute(0);
  const std::string &key = a.name();
  if (key == "value")
    return {b.constant(tensorFromProto(a.t(), ctx.modelDir()))};
  if (key == "value_float")
    return {b.scalar(DType::F32, attrFloat(n, key, 0))};
  if (key == "value_int")
    return {b.scalar(DType::I64, static_cast<double>(attrInt(n, key, 0)))};
  if (key == "value_floats") {
    std::vector<float> v = attrFloats(n, key);
    return {b.constant(Tensor::fromVector(DType::F32, {static_cast<int64_t>(v.size())}, v))};
  }
  if (key == "value_ints") {
    std::vector<int64_t> v = attrInts(n, key);
    return {b.constant(Tensor::fromVector(DType::I64, {static_cast<int64_t>(v.size())}, v))};
  }
  if (key == "sparse_value" || key == "value_string" || key == "value_strings")
    throw ConvertError("Constant with '" + key + "' is unsupported");
  throw ConvertError("Constant has unknown attribute '" + key + "'");
}

// A shape computed from symbolic dims (torch's zero initial state [layers, batch, hidden], a
// detector's strides [h * w, 1]): the fill expanded to those dims as formulas (a negative one
// fails when bound).
Value *constantOfSymbolicShape(ImportContext &ctx, const Node &n, const Tensor &fill) {
  auto dims = ctx.symbolicInput(n, 0);
  if (!dims)
    return nullptr;
  if (!isFloat(fill.dtype()) && !isInteger(fill.dtype()))
    throw ConvertError("a ConstantOfShape over symbolic dims must fill numbers, not " +
                       std::string(dtypeName(fill.dtype())));
  std::vector<Dim> shape;
  for (const SymExpr &e : *dims) {
    if (std::optional<int64_t> c = e.constant(); c && *c < 0)
      throw ConvertError("negative dim " + std::to_string(*c) + " in shape");
    shape.push_back(Dim::of(e));
  }
  return ctx.builder().value(OpKind::Expand, {ctx.builder().constant(fill)},
                             {{"shape", Attribute::dims(shape)}});
}

Values convertConstantOfShape(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Tensor fill = Tensor::scalar(DType::F32, 0);
  if (const onnx::AttributeProto *a = findAttr(n, "value")) {
    fill = tensorFromProto(a->t(), ctx.modelDir());
    if (fill.numElements() != 1)
      throw ConvertError("attribute 'value' must hold one element");
    fill = fill.reshaped({});
  }
  if (!ctx.constantInput(n, 0)) {
    if (Value *v = constantOfSymbolicShape(ctx, n, fill))
      return {v};
    if (Value *shape = ctx.input(n, 0)) // sizes read from data when the model runs
      return {b.value(OpKind::Expand, {b.constant(fill)},
                      {{"shape", Attribute::dims(dataDims(ctx, shape, n.output(0)))}})};
  }
  std::vector<int64_t> shape = ctx.requireConstantInput(n, 0, "shape").toIntVector();
  for (int64_t d : shape)
    if (d < 0)
      throw ConvertError("negative dim " + std::to_string(d) + " in shape");
  // A broadcast scalar; folding materializes it when small enough.
  return {b.value(OpKind::Expand, {b.constant(fill)}, {{"shape", Attribute(shape)}})};
}

// Range(start, limit, delta) with integer start and delta known at import and a limit computed
// from symbolic dims: start + delta * iota over a length some input has as a dim.
Value *symbolicRange(ImportContext &ctx, const Node &n) {
  auto start = ctx.symbolicInput(n, 0), limit = ctx.symbolicInput(n, 1), delta = ctx.symbolicInput(n, 2);
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1)
    return nullptr;
  std::optional<int64_t> s = (*start)[0].constant(), d = (*delta)[0].constant();
  Value *limitValue = ctx.input(n, 1);
  if (!s || !d || *d <= 0 || !limitValue || isFloat(limitValue->type().dtype))
    return nullptr;
  try {
    // max(ceil((limit - start) / delta), 0): the count of the range (no max where the span is
    // a size: arange(x.shape[1])).
    const SymExpr span = (*limit)[0] - SymExpr(*s);
    SymExpr count = SymExpr::ceilDiv(span, SymExpr(*d));
    if (!ctx.knownNonNegative(span))
      count = SymExpr::max(count, 0);
    Value *i = countTo(ctx, count);
    if (!i)
      return nullptr;
    Builder &b = ctx.builder();
    if (*d != 1)
      i = b.value(OpKind::Mul, {i, b.scalar(DType::I64, static_cast<double>(*d))});
    if (*s != 0)
      i = b.value(OpKind::Add, {i, b.scalar(DType::I64, static_cast<double>(*s))});
    DType dt = limitValue->type().dtype;
    return dt == DType::I64 ? i : b.value(OpKind::Cast, {i}, {{"to", Attribute(dt)}});
  } catch (const SymExprError &) {
    return nullptr;
  }
}

// Range over values read from data: count = max(ceil((limit - start) / delta), 0) computed in
// f64 when the model runs (delta 0 gives a count past every limit: the run fails), then
// start + delta * arange(count) in the inputs' dtype.
Value *dataRange(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *ends[3];
  const char *names[3] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    Value *v = requiredInput(ctx, n, i, names[i]);
    std::optional<int64_t> count = v->type().staticNumElements();
    if (!count || *count != 1)
      throw ConvertError(std::string(names[i]) + " must hold one element, got " + v->type().str());
    if (i > 0 && v->type().dtype != ends[0]->type().dtype)
      throw ConvertError("start, limit and delta must share a type");
    ends[i] = reshapeTo(b, v, {});
  }
  const DType dt = ends[0]->type().dtype;
  if (!isFloat(dt) && !isInteger(dt))
    throw ConvertError("Range of " + std::string(dtypeName(dt)) + " is unsupported");
  auto f64 = [&](Value *v) { return castTo(b, v, DType::F64); };
  Value *steps = unary(b, OpKind::Ceil, div(b, sub(b, f64(ends[1]), f64(ends[0])), f64(ends[2])));
  Value *count = castTo(b, maximum(b, steps, b.scalar(DType::F64, 0)), DType::I64);
  Value *i = castTo(b, dataArange(ctx, count, n.output(0)), dt);
  return add(b, mul(b, i, ends[2]), ends[0]);
}

Values convertRange(ImportContext &ctx, const Node &n) {
  if (!ctx.constantInput(n, 1))
    if (Value *r = symbolicRange(ctx, n))
      return {r};
  if (!ctx.constantInput(n, 0) || !ctx.constantInput(n, 1) || !ctx.constantInput(n, 2))
    return {dataRange(ctx, n)};
  Tensor start = requireScalarInput(ctx, n, 0, "start");
  Tensor limit = requireScalarInput(ctx, n, 1, "limit");
  Tensor delta = requireScalarInput(ctx, n, 2, "delta");
  DType dt = start.dtype();
  if (limit.dtype() != dt || delta.dtype() != dt)
    throw ConvertError("start, limit and delta must share a type");
  Tensor out;
  constexpr double kMaxRange = double(int64_t(1) << 31);
  if (isFloat(dt)) {
    double s = start.getDouble(0), l = limit.getDouble(0), d = delta.getDouble(0);
    if (d == 0)
      throw ConvertError("delta is 0");
    double count = std::max(std::ceil((l - s) / d), 0.0);
    if (!(count <= kMaxRange))
      throw ConvertError("Range of " + std::to_string(count) + " elements is too large");
    out = Tensor(dt, {static_cast<int64_t>(count)});
    for (int64_t i = 0; i < out.numElements(); ++i)
      out.setDouble(i, s + static_cast<double>(i) * d);
  } else {
    int64_t s = start.getInt(0), l = limit.getInt(0), d = delta.getInt(0);
    if (d == 0)
      throw ConvertError("delta is 0");
    // ceil((l - s) / d) clamped at 0, exactly, in uint64: l - s need not fit in int64, and a count
    // from doubles could convert out of range (a span below -2^63) or be one too many.
    uint64_t count = 0;
    if (d > 0 ? l > s : l < s) {
      uint64_t span = d > 0 ? uint64_t(l) - uint64_t(s) : uint64_t(s) - uint64_t(l);
      uint64_t step = d > 0 ? uint64_t(d) : uint64_t(0) - uint64_t(d);
      count = span / step + (span % step != 0 ? 1 : 0);
    }
    if (count > static_cast<uint64_t>(kMaxRange))
      throw ConvertError("Range of " + std::to_string(count) + " elements is too large");
    out = Tensor(dt, {static_cast<int64_t>(count)});
    // s + i * d lies between s and l, but i * d alone may not fit: wrap in uint64, exact mod 2^64.
    for (uint64_t i = 0; i < count; ++i)
      out.setInt(static_cast<int64_t>(i), static_cast<int64_t>(uint64_t(s) + i * uint64_t(d)));
  }
  return {ctx.builder().constant(out)};
}

Values convertEyeLike(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "input");
  if (x->type().rank() != 2 || !x->type().isStatic())
    throw ConvertError("EyeLike needs a static 2-D input, got " + x->type().str());
  DType dt = hasAttr(n, "dtype") ? requireDType(static_cast<int32_t>(attrInt(n, "dtype", 1)), "dtype")
                                 : x->type().dtype;
  Shape shape = x->type().staticShape();
  int64_t k = attrInt(n, "k", 0);
  Tensor eye(dt, shape);
  for (int64_t i = 0; i < shape[0]; ++i)
    if (k >= -i && k < shape[1] - i) // column i + k is in range; k may be huge, so no i + k first
      eye.setDouble(i * shape[1] + i + k, 1);
  return {ctx.builder().constant(eye)};
}

// A constant [0, 1, ..., size-1] of i64 laid along `axis` of a rank-`rank` shape of ones.
Value *iotaAlong(Builder &b, int64_t size, int64_t axis, int64_t rank) {
  Shape shape(rank, 1);
  shape[axis] = size;
  Tensor t(DType::I64, shape);
  for (int64_t i = 0; i < size; ++i)
    t.setInt(i, i);
  return b.constant(t);
}

Values convertOneHot(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *indices = requiredInput(ctx, n, 0, "indices");
  Value *values = requiredInput(ctx, n, 2, "values");
  // A constant depth (getInt saturates a float one: 1e30, NaN, which a cast from double would
  // not), else a size read from data when the model runs.
  Value *depthValue = nullptr, *classes = nullptr;
  int64_t outRank = indices->type().rank() + 1;
  int64_t axis = normalizeAxis(attrInt(n, "axis", -1), outRank);
  if (ctx.constantInput(n, 1) || !ctx.input(n, 1)) {
    int64_t depth = requireScalarInput(ctx, n, 1, "depth").getInt(0);
    if (depth <= 0)
      throw ConvertError("depth must be positive, got " + std::to_string(depth));
    depthValue = b.scalar(DType::I64, static_cast<double>(depth));
    classes = iotaAlong(b, depth, axis, outRank);
  } else {
    Value *given = ctx.input(n, 1);
    auto count = given->type().staticNumElements();
    if (!count || *count != 1 || given->type().dtype == DType::Bool)
      throw ConvertError("depth must hold one number, got " + given->type().str());
    depthValue = scalarElement(b, given, 0);
    // (A depth of 0 or less is no depth: a negative size, failing the run.)
    Value *positive = lessThan(b, b.scalar(DType::I64, 0), depthValue);
    Value *range = dataArange(ctx, select(b, positive, depthValue, b.scalar(DType::I64, -1)),
                              n.output(0) + "_depth", "the depth is less than 1");
    std::vector<Dim> along(static_cast<size_t>(outRank), Dim(1));
    along[static_cast<size_t>(axis)] = range->type().dims[0];
    classes = reshapeTo(b, range, along);
  }
  auto numValues = values->type().staticNumElements();
  if (!numValues || *numValues != 2)
    throw ConvertError("values must hold [off_value, on_value], got " + values->type().str());

  // Integer indices, negatives counted from depth.
  Value *idx = indices;
  if (idx->type().dtype != DType::I64)
    idx = b.value(OpKind::Cast, {idx}, {{"to", Attribute(DType::I64)}});
  Value *isNegative = b.value(OpKind::Lt, {idx, b.scalar(DType::I64, 0)});
  Value *wrapped = b.value(OpKind::Add, {idx, depthValue});
  idx = b.value(OpKind::Select, {isNegative, wrapped, idx});
  std::vector<Dim> dims = idx->type().dims;
  dims.insert(dims.begin() + axis, Dim(1));
  idx = reshapeTo(b, idx, dims);

  Value *hot = b.value(OpKind::Eq, {idx, classes});
  Value *flat = reshapeTo(b, values, {Dim(2)});
  auto element = [&](int64_t i) {
    Value *s = slice(b, flat, {i}, {i + 1}, {0});
    return reshapeTo(b, s, {});
  };
  return {b.value(OpKind::Select, {hot, element(1), element(0)})};
}

// Generalized cosine windows: w[n] = a0 - a1 cos(2 pi n / N') + a2 cos(4 pi n / N'), where N' is
// N for a periodic window and N - 1 for a symmetric one.
ConvertFn cosineWindow(double a0, double a1, double a2) {
  return [=](ImportContext &ctx, const Node &n) -> Values {
    DType dt = requireDType(static_cast<int32_t>(attrInt(n, "output_datatype", 1)),
                            "attribute 'output_datatype'");
    const bool periodic = attrInt(n, "periodic", 1) != 0;
    if (Value *given = ctx.input(n, 0); given && !ctx.constantInput(n, 0)) {
      // A size read from data: the same formula over an arange of it, in f64, when it runs.
      Builder &b = ctx.builder();
      auto count = given->type().staticNumElements();
      if (!count || *count != 1 || isFloat(given->type().dtype) ||
          given->type().dtype == DType::Bool)
        throw ConvertError("size must be one integer, got " + given->type().str());
      Value *size = scalarElement(b, given, 0);
      Value *i = castTo(b, dataArange(ctx, size, n.output(0)), DType::F64);
      Value *denom = castTo(b, periodic ? size : sub(b, size, b.scalar(DType::I64, 1)), DType::F64);
      Value *zero = b.scalar(DType::F64, 0);
      Value *phase = select(b, lessThan(b, zero, denom),
                            div(b, mul(b, i, b.scalar(DType::F64, 2 * M_PI)), denom),
                            mul(b, i, zero));
      Value *w = sub(b, b.scalar(DType::F64, a0), mul(b, b.scalar(DType::F64, a1),
                                                      unary(b, OpKind::Cos, phase)));
      if (a2 != 0)
        w = add(b, w, mul(b, b.scalar(DType::F64, a2),
                          unary(b, OpKind::Cos, mul(b, phase, b.scalar(DType::F64, 2)))));
      return {castTo(b, w, dt)};
    }
    int64_t size = requireScalarInput(ctx, n, 0, "size").getInt(0);
    if (size < 0 || size > (int64_t(1) << 31))
      throw ConvertError("invalid window size " + std::to_string(size));
    double denom = static_cast<double>(periodic ? size : size - 1);
    Tensor w(dt, {size});
    for (int64_t i = 0; i < size; ++i) {
      double phase = denom > 0 ? 2 * M_PI * static_cast<double>(i) / denom : 0;
      w.setDouble(i, a0 - a1 * std::cos(phase) + a2 * std::cos(2 * phase));
    }
    return {ctx.builder().constant(w)};
  };
}

// --- Casts ---------------------------------------------------------------------------------------

Values convertCast(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "input");
  if (!hasAttr(n, "to"))
    throw ConvertError("missing required attribute 'to'");
  DType to = requireDType(static_cast<int32_t>(attrInt(n, "to", 0)), "attribute 'to'");
  if (to == x->type().dtype)
    return {x};
  return {ctx.builder().value(OpKind::Cast, {x}, {{"to", Attribute(to)}})};
}

Values convertCastLike(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "input");
  DType to = requiredInput(ctx, n, 1, "target_type")->type().dtype;
  if (to == x->type().dtype)
    return {x};
  return {ctx.builder().value(OpKind::Cast, {x}, {{"to", Attribute(to)}})};
}

// --- Structured ----------------------------------------------------------------------------------

Values convertTopK(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "X");
  // K a constant, or a formula of symbolic dims (torchvision's detectors take
  // min(candidates, count) of a data-dependent count: a size the plan binds at run time).
  Attribute k;
  if (ctx.opset() < 10) {
    k = Attribute(attrInt(n, "k", -1));
  } else if (ctx.constantInput(n, 1)) {
    k = Attribute(requireScalarInput(ctx, n, 1, "K").getInt(0));
  } else if (auto f = ctx.symbolicInput(n, 1); f && f->size() == 1) {
    if ((*f)[0].constant())
      k = Attribute(*(*f)[0].constant());
    else if (ctx.knownNonNegative((*f)[0]))
      k = Attribute::dims({Dim::of((*f)[0])});
    else
      throw ConvertError("K (input 1) is " + (*f)[0].str() + ", not known to be >= 0");
  } else if (Value *given = ctx.input(n, 1)) { // read from data when the model runs
    k = Attribute::dims(dataDims(ctx, given, n.output(0) + "_k"));
  } else {
    ctx.requireConstantInput(n, 1, "K"); // throws, naming the input
  }
  if (k.kind() == AttrKind::Int && k.getInt() < 0)
    throw ConvertError("k must be non-negative, got " + std::to_string(k.getInt()));
  int64_t axis = normalizeAxis(attrInt(n, "axis", -1), x->type().rank());
  Op *op = ctx.builder().create(OpKind::TopK, {x},
                                {{"axis", Attribute(axis)},
                                 {"k", k},
                                 {"largest", Attribute(attrInt(n, "largest", 1))},
                                 {"sorted", Attribute(attrInt(n, "sorted", 1))}});
  return {op->result(0), op->result(1)};
}

Values convertCumSum(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "x");
  const int64_t rank = x->type().rank();
  auto cumsum = [&](int64_t axis) {
    return b.value(OpKind::CumSum, {x},
                   {{"axis", Attribute(axis)},
                    {"exclusive", Attribute(attrInt(n, "exclusive", 0))},
                    {"reverse", Attribute(attrInt(n, "reverse", 0))}});
  };
  Value *given = ctx.input(n, 1);
  if (!given || ctx.constantInput(n, 1))
    return {cumsum(normalizeAxis(requireScalarInput(ctx, n, 1, "axis").getInt(0), rank))};
  // The axis read from data: the sum along each axis, the one it names selected when the model
  // runs (an axis out of range fails its normalizing gather). Axes are few; models with a data
  // axis are rare.
  auto count = given->type().staticNumElements();
  if (!count || *count != 1)
    throw ConvertError("axis must hold one integer, got " + given->type().str());
  Value *axis = runtimeAxes(b, scalarElement(b, given, 0), rank);
  Value *result = cumsum(rank - 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    result = select(b, b.value(OpKind::Eq, {axis, b.scalar(DType::I64, double(d))}), cumsum(d),
                    result);
  if (rank == 1) // the axis must still be 0 or -1 (its normalizing gather checks it)
    result = requireAtRun(ctx, result, b.value(OpKind::Eq, {axis, b.scalar(DType::I64, 0)}),
                          n.output(0) + "_0", "the axis is out of range");
  return {result};
}

// Sets dim `d` of `v` to `dim`: a data-dependent size gets a symbol of its own, named after the
// node's output (sanitizeSymbol(prefix + output)), where its shape function gave every op of a
// kind the same fresh one.
void setDim(Value *v, size_t d, const Dim &dim) {
  TensorType t = v->type();
  t.dims[d] = dim;
  v->setType(std::move(t));
}

// x's nonzero indices [rank, ?n] with `n` a symbol of its own, named after the node's output.
Value *nonzeroIndices(ImportContext &ctx, Value *x, const std::string &outputName) {
  Builder &b = ctx.builder();
  if (x->type().rank() == 0)
    throw ConvertError("NonZero of a rank-0 tensor is unsupported");
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x->type().rank(); ++d)
    all.push_back(d);
  Value *count = reduce(b, castTo(b, castTo(b, x, DType::Bool), DType::I64), ReduceKind::Sum,
                        all, false);
  Value *indices = b.value(OpKind::NonZero, {x, count});
  setDim(indices, 1, Dim::sym(sanitizeSymbol("nonzero_" + outputName)));
  return indices;
}

Values convertNonZero(ImportContext &ctx, const Node &n) {
  return {nonzeroIndices(ctx, requiredInput(ctx, n, 0, "X"), n.output(0))};
}

// Unique: unique_count finds how many distinct items there are, unique lists them (y,
// indices, inverse_indices, counts), the count dim of y, indices and counts one symbol.
Values convertUnique(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "X");
  const onnx::AttributeProto *axisAttr = findAttr(n, "axis");
  const int64_t axis = axisAttr ? normalizeAxis(axisAttr->i(), x->type().rank()) : 0;
  AttrMap attrs{{"axis", Attribute(axis)},
                {"has_axis", Attribute(int64_t{axisAttr ? 1 : 0})}};
  Value *count = b.value(OpKind::UniqueCount, {x}, attrs);
  attrs["sorted"] = Attribute(attrInt(n, "sorted", 1) != 0 ? int64_t{1} : int64_t{0});
  Op *op = b.create(OpKind::Unique, {x, count}, attrs);
  const Dim u = Dim::sym(sanitizeSymbol("unique_" + (n.output_size() > 0 ? n.output(0) : "")));
  setDim(op->result(0), axisAttr ? static_cast<size_t>(axis) : 0, u);
  setDim(op->result(1), 0, u);
  setDim(op->result(3), 0, u);
  return {op->result(0), op->result(1), op->result(2), op->result(3)};
}

// NonMaxSuppression: nms_count finds how many boxes the selection keeps, nms lists them; the
// thresholds and the per-class limit are constants at import (inputs: bound per value).
Values convertNonMaxSuppression(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *boxes = requiredInput(ctx, n, 0, "boxes");
  Value *scores = requiredInput(ctx, n, 1, "scores");
  auto given = [&](int i) { return n.input_size() > i && !n.input(i).empty(); };
  auto fromData = [&](int i) { return given(i) && !ctx.constantInput(n, i); };
  int64_t maxOutput = 0;
  double iou = 0.0, score = 0.0;
  Value *limits = nullptr;
  if (fromData(2) || fromData(3) || fromData(4)) {
    // Limits read from data: one f64 [3] operand (max_output clamped to [0, 2^40] here, each
    // threshold widened exactly), the attributes unused.
    auto scalar = [&](int i, const char *what) -> Value * {
      if (!given(i))
        return b.scalar(DType::F64, 0);
      Value *v = ctx.input(n, i);
      auto count = v->type().staticNumElements();
      if (!count || *count != 1 || v->type().dtype == DType::Bool)
        throw ConvertError(std::string(what) + " must hold one number, got " + v->type().str());
      return castTo(b, reshapeTo(b, v, {}), DType::F64);
    };
    Value *maxOut = scalar(2, "max_output_boxes_per_class");
    if (given(2) && !isFloat(ctx.input(n, 2)->type().dtype)) {
      Value *m = castTo(b, reshapeTo(b, ctx.input(n, 2), {}), DType::I64);
      m = minimum(b, maximum(b, m, b.scalar(DType::I64, 0)),
                  b.scalar(DType::I64, double(int64_t(1) << 40)));
      maxOut = castTo(b, m, DType::F64);
    }
    std::vector<Value *> parts;
    for (Value *v : {maxOut, scalar(3, "iou_threshold"), scalar(4, "score_threshold")})
      parts.push_back(reshapeTo(b, v, {Dim(1)}));
    limits = b.value(OpKind::Concat, parts, {{"axis", Attribute(int64_t{0})}});
  } else {
    if (given(2))
      maxOutput = std::max<int64_t>(
          requireScalarInput(ctx, n, 2, "max_output_boxes_per_class").getInt(0), 0);
    if (given(3))
      iou = requireScalarInput(ctx, n, 3, "iou_threshold").getDouble(0);
    if (given(4))
      score = requireScalarInput(ctx, n, 4, "score_threshold").getDouble(0);
  }
  AttrMap attrs{{"center_point_box", Attribute(attrInt(n, "center_point_box", 0))},
                {"max_output", Attribute(maxOutput)},
                {"iou_threshold", Attribute(iou)},
                {"score_threshold", Attribute(score)},
                {"has_score_threshold", Attribute(int64_t{given(4) ? 1 : 0})}};
  Values operands = {boxes, scores};
  if (limits)
    operands.push_back(limits);
  Value *count = b.value(OpKind::NmsCount, operands, attrs);
  operands.insert(operands.begin() + 2, count);
  Value *selected = b.value(OpKind::Nms, operands, attrs);
  setDim(selected, 0, Dim::sym(sanitizeSymbol("nms_" + n.output(0))));
  return {selected};
}

// RoiAlign: the coordinate mode is opset 16's attribute (half_pixel by default); opset 10's
// regions are output_half_pixel. batch_indices may be i32 (widened).
Values convertRoiAlign(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "X");
  Value *rois = requiredInput(ctx, n, 1, "rois");
  Value *batch = requiredInput(ctx, n, 2, "batch_indices");
  if (batch->type().dtype == DType::I32)
    batch = b.value(OpKind::Cast, {batch}, {{"to", Attribute(DType::I64)}});
  const std::string coords = attrString(n, "coordinate_transformation_mode",
                                        ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (coords != "half_pixel" && coords != "output_half_pixel")
    throw ConvertError("unknown coordinate_transformation_mode '" + coords + "'");
  AttrMap attrs{{"mode", Attribute(attrString(n, "mode", "avg"))},
                {"output_height", Attribute(attrInt(n, "output_height", 1))},
                {"output_width", Attribute(attrInt(n, "output_width", 1))},
                {"sampling_ratio", Attribute(attrInt(n, "sampling_ratio", 0))},
                {"spatial_scale", Attribute(static_cast<double>(attrFloat(n, "spatial_scale", 1.f)))},
                {"half_pixel", Attribute(int64_t{coords == "half_pixel" ? 1 : 0})}};
  return {b.value(OpKind::RoiAlign, {x, rois, batch}, attrs)};
}

// Compress: the slices along `axis` (of the flattened input without one) whose condition entry
// is true: a gather at the nonzero indices of the condition.
Values convertCompress(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "input");
  Value *condition = requiredInput(ctx, n, 1, "condition");
  if (condition->type().rank() != 1)
    throw ConvertError("condition must be 1-D, got " + condition->type().str());
  int64_t axis = 0;
  if (const onnx::AttributeProto *a = findAttr(n, "axis")) {
    axis = normalizeAxis(a->i(), x->type().rank());
  } else {
    std::optional<int64_t> elements = x->type().staticNumElements();
    if (!elements)
      throw ConvertError("Compress without an axis flattens its input, whose shape " +
                         x->type().str() + " is not static");
    x = reshape(b, x, {*elements});
  }
  Value *indices = nonzeroIndices(ctx, condition, n.output(0));
  Value *row = b.value(OpKind::Gather, {indices, b.constant(Tensor::scalar(DType::I64, 0.0))},
                       {{"axis", Attribute(int64_t{0})}});
  return {b.value(OpKind::Gather, {x, row}, {{"axis", Attribute(axis)}})};
}

Values convertEinsum(ImportContext &ctx, const Node &n) {
  Values inputs;
  for (int i = 0; i < n.input_size(); ++i)
    inputs.push_back(requiredInput(ctx, n, i, "operand"));
  std::string eq = attrString(n, "equation", "");
  if (eq.empty())
    throw ConvertError("missing required attribute 'equation'");
  return {ctx.builder().value(OpKind::Einsum, inputs, {{"equation", Attribute(eq)}})};
}

// One-hot of the first maximum along `axis` (the axis must be static).
Value *hardmaxAlong(Builder &b, Value *x, int64_t axis) {
  const Dim &d = x->type().dims[axis];
  if (!d.isStatic())
    throw ConvertError("Hardmax along symbolic dim " + d.str() + " is unsupported");
  Value *arg = b.value(OpKind::ArgReduce, {x},
                       {{"kind", ops::enumAttr(ArgKind::Max)},
                        {"axis", Attribute(axis)},
                        {"keepdims", Attribute(int64_t{1})},
                        {"select_last_index", Attribute(int64_t{0})}});
  Value *hot = b.value(OpKind::Eq, {arg, iotaAlong(b, d.size, axis, x->type().rank())});
  return b.value(OpKind::Cast, {hot}, {{"to", Attribute(x->type().dtype)}});
}

Values convertHardmax(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "input");
  int64_t rank = x->type().rank();
  if (rank < 1) // normalizeAxis lets a scalar keep axis -1; Hardmax needs an axis to take
    throw ConvertError("Hardmax needs an input of rank >= 1, got a scalar");
  if (ctx.opset() >= 13)
    return {hardmaxAlong(b, x, normalizeAxis(attrInt(n, "axis", -1), rank))};
  // Before opset 13 the input is coerced to 2-D at `axis` and the max taken per row.
  int64_t axis = attrInt(n, "axis", 1);
  if (axis < -rank || axis > rank)
    throw ConvertError("axis " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(rank));
  if (axis < 0)
    axis += rank;
  if (!x->type().isStatic())
    throw ConvertError("Hardmax before opset 13 needs a static shape, got " + x->type().str());
  Shape shape = x->type().staticShape();
  if (!strata::shape::strideExtent(shape)) // static dims need not be small (e.g. after Expand)
    throw ConvertError("Hardmax: the dims of " + x->type().str() + " have a product past int64");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= shape[i];
  Value *flat = reshapeTo(b, x, {Dim(outer), Dim(inner)});
  return {reshapeTo(b, hardmaxAlong(b, flat, 1), x->type().dims)};
}

// --- Resize --------------------------------------------------------------------------------------

struct ResizeParams {
  std::string mode = "nearest";
  std::string coordMode = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  double cubicA = -0.75;
  int64_t excludeOutside = 0;
  double extrapolation = 0;
};

// The resize op's attributes: output sizes, scales of all dims (or none), the modes.
AttrMap resizeAttrs(const ResizeParams &p, Attribute sizes, std::vector<double> scales) {
  return {{"sizes", std::move(sizes)},
          {"scales", Attribute(std::move(scales))},
          {"mode", Attribute(p.mode)},
          {"coordinate_transformation_mode", Attribute(p.coordMode)},
          {"nearest_mode", Attribute(p.nearestMode)},
          {"cubic_coeff_a", Attribute(p.cubicA)},
          {"exclude_outside", Attribute(p.excludeOutside)},
          {"extrapolation_value", Attribute(p.extrapolation)}};
}

// Output sizes and (when given) scales for all dims from per-axis scales or sizes.
Values buildResize(Builder &b, Value *x, const ResizeParams &p, std::vector<int64_t> axes,
                   std::vector<double> scales, std::vector<int64_t> sizes,
                   const std::string &aspectPolicy) {
  // Symbolic input dims: only with scales, each output size floor(in * scale) kept as a formula
  // (sizes -1; an integral scale or 1/2^j). Sizes given for them would be values read from data.
  const TensorType &xt = x->type();
  if (!xt.isStatic() && (scales.empty() || !sizes.empty()))
    throw ConvertError("Resize of symbolic dims " + xt.str() + " needs scales, not sizes");
  Shape in;
  for (const Dim &d : xt.dims)
    in.push_back(d.isStatic() ? d.size : 0);
  int64_t rank = static_cast<int64_t>(in.size());
  if (rank < 1) // normalizeAxis lets a scalar keep axis 0 / -1, which would index in[] below
    throw ConvertError("Resize needs an input of rank >= 1, got a scalar");
  if (axes.empty()) {
    axes.resize(rank);
    for (int64_t i = 0; i < rank; ++i)
      axes[i] = i;
  }
  for (int64_t &a : axes)
    a = normalizeAxis(a, rank);
  std::vector<int64_t> outSizes = in;
  std::vector<double> allScales;
  if (!scales.empty()) {
    if (scales.size() != axes.size())
      throw ConvertError(std::to_string(scales.size()) + " scales for " +
                         std::to_string(axes.size()) + " axes");
    allScales.assign(rank, 1.0);
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!(scales[i] > 0) || std::isinf(scales[i])) // inf * a size of 0 would be NaN
        throw ConvertError("scale " + std::to_string(scales[i]) + " must be positive and finite");
      allScales[axes[i]] = scales[i];
      std::optional<int64_t> out = resizedSize(in[axes[i]], scales[i]);
      if (!out)
        throw ConvertError("scale " + std::to_string(scales[i]) + " gives an absurd size");
      outSizes[axes[i]] = *out;
    }
  } else if (!sizes.empty()) {
    if (sizes.size() != axes.size())
      throw ConvertError(std::to_string(sizes.size()) + " sizes for " +
                         std::to_string(axes.size()) + " axes");
    for (int64_t s : sizes)
      if (s < 0 || s > (int64_t(1) << 31))
        throw ConvertError("invalid output size " + std::to_string(s));
    if (aspectPolicy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i)
        outSizes[axes[i]] = sizes[i];
    } else if (aspectPolicy == "not_larger" || aspectPolicy == "not_smaller") {
      // One scale for every listed axis, so the aspect ratio is kept.
      double scale = aspectPolicy == "not_larger" ? INFINITY : 0;
      for (size_t i = 0; i < axes.size(); ++i) {
        double s = static_cast<double>(sizes[i]) / static_cast<double>(in[axes[i]]);
        scale = aspectPolicy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
      }
      // An input dim of 0 makes sizes / in infinite; the sizes must then stay representable.
      if (!(scale > 0) || std::isinf(scale))
        throw ConvertError("keep_aspect_ratio_policy '" + aspectPolicy +
                           "' gives no positive finite scale");
      allScales.assign(rank, 1.0);
      for (int64_t a : axes) {
        allScales[a] = scale;
        double out = std::floor(scale * static_cast<double>(in[a]) + 0.5);
        if (out > double(int64_t(1) << 31)) // also before the conversion, undefined past int64
          throw ConvertError("scale " + std::to_string(scale) + " gives an absurd size");
        outSizes[a] = static_cast<int64_t>(out);
      }
    } else {
      throw ConvertError("unknown keep_aspect_ratio_policy '" + aspectPolicy + "'");
    }
  } else {
    throw ConvertError("Resize needs scales or sizes");
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (xt.dims[d].isStatic())
      continue;
    if (!resizedSize(xt.dims[d].expr, allScales[d]))
      throw ConvertError("scale " + std::to_string(allScales[d]) + " of symbolic dim " +
                         xt.dims[d].str() + " gives no exact size formula (an integral scale or "
                         "1/2^j does)");
    outSizes[d] = -1; // floor(in * scale), computed by the shape function
  }
  if (p.coordMode == "tf_crop_and_resize")
    throw ConvertError("coordinate_transformation_mode 'tf_crop_and_resize' is unsupported");
  return {b.value(OpKind::Resize, {x}, resizeAttrs(p, Attribute(outSizes), allScales))};
}

// Resize to `sizes` (per axis in `axes`, stretched) where the input or the sizes are symbolic:
// each listed axis takes its size exactly (a formula of the symbolic dims, e.g. another
// tensor's size read with Shape, or a constant), the others keep the input's dim; the
// coordinate scale is out / in when the extents are known.
Values buildResizeToSizes(Builder &b, Value *x, const ResizeParams &p, std::vector<int64_t> axes,
                          const std::vector<SymExpr> &sizes) {
  const TensorType &xt = x->type();
  const int64_t rank = xt.rank();
  if (rank < 1)
    throw ConvertError("Resize needs an input of rank >= 1, got a scalar");
  if (axes.empty()) {
    axes.resize(rank);
    for (int64_t i = 0; i < rank; ++i)
      axes[i] = i;
  }
  if (sizes.size() != axes.size())
    throw ConvertError(std::to_string(sizes.size()) + " sizes for " + std::to_string(axes.size()) +
                       " axes");
  std::vector<Dim> out = xt.dims;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalizeAxis(axes[i], rank);
    const Dim d = Dim::of(sizes[i]);
    if (d.isStatic() ? (d.size < 0 || d.size > (int64_t(1) << 31))
                     : !d.expr.provablyNonNegative())
      throw ConvertError("invalid output size " + d.str());
    out[a] = d;
  }
  if (p.coordMode == "tf_crop_and_resize")
    throw ConvertError("coordinate_transformation_mode 'tf_crop_and_resize' is unsupported");
  return {b.value(OpKind::Resize, {x}, resizeAttrs(p, Attribute::dims(out), {}))};
}

std::vector<double> toDoubles(const Tensor &t) { return t.toDoubleVector(); }

// Resize before opset 11 and Upsample: asymmetric coordinates, nearest rounds down when
// upsampling and up when downsampling (what these ops computed before nearest_mode existed).
ResizeParams legacyParams(const Node &n, const std::vector<double> &scales) {
  ResizeParams p;
  p.mode = attrString(n, "mode", "nearest");
  if (p.mode == "bilinear" || p.mode == "trilinear")
    p.mode = "linear";
  p.coordMode = "asymmetric";
  bool downsample = !scales.empty() && std::all_of(scales.begin(), scales.end(),
                                                   [](double s) { return s <= 1; });
  p.nearestMode = downsample ? "ceil" : "floor";
  return p;
}

// Resize by scales read from data (`given`: one per axis of `axes`, all axes when empty): each
// output size floor(in * scale) computed in f64 when the model runs, a size read from data (a
// non-positive, NaN or absurd product, past 2^31, makes it negative, failing the run); the
// scales go to the resize op, whose coordinate mapping reads them when it runs.
Value *resizeByDataScales(ImportContext &ctx, const Node &n, Value *x, const ResizeParams &p,
                          std::vector<int64_t> axes, Value *given) {
  Builder &b = ctx.builder();
  const TensorType &xt = x->type();
  const int64_t rank = xt.rank();
  if (rank < 1)
    throw ConvertError("Resize needs an input of rank >= 1, got a scalar");
  if (p.coordMode == "tf_crop_and_resize")
    throw ConvertError("coordinate_transformation_mode 'tf_crop_and_resize' is unsupported");
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  const TensorType &gt = given->type();
  if (gt.rank() != 1 || !isFloat(gt.dtype) || gt.dims[0] != Dim(static_cast<int64_t>(axes.size())))
    throw ConvertError("scales read from data must be 1-D float with " +
                       std::to_string(axes.size()) + " entries, got " + gt.str());
  std::vector<Value *> perDim(static_cast<size_t>(rank), nullptr);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalizeAxis(axes[i], rank);
    if (perDim[static_cast<size_t>(a)])
      throw ConvertError("axis " + std::to_string(axes[i]) + " is repeated");
    Value *e = slice(b, castTo(b, given, DType::F64), {static_cast<int64_t>(i)},
                     {static_cast<int64_t>(i) + 1}, {0});
    perDim[static_cast<size_t>(a)] = e;
  }
  Value *one = b.constant(Tensor::fromVector(DType::F64, {1}, std::vector<double>{1.0}));
  for (Value *&e : perDim)
    if (!e)
      e = one;
  Value *scales = rank == 1 ? perDim[0]
                            : b.value(OpKind::Concat, perDim, {{"axis", Attribute(int64_t{0})}});
  std::vector<Dim> out;
  for (int64_t d = 0; d < rank; ++d) {
    Value *scale = reshapeTo(b, perDim[static_cast<size_t>(d)], {});
    Value *product = mul(b, castTo(b, dimValue(b, x, d), DType::F64), scale);
    Value *zero = b.scalar(DType::F64, 0);
    Value *ok = b.value(OpKind::And,
                        {b.value(OpKind::And, {lessThan(b, zero, scale),
                                               b.value(OpKind::Le, {zero, product})}),
                         b.value(OpKind::Le, {product, b.scalar(DType::F64, double(int64_t(1) << 31))})});
    Value *size = castTo(b, unary(b, OpKind::Floor, select(b, ok, product, zero)), DType::I64);
    out.push_back(dataDim(ctx, select(b, ok, size, b.scalar(DType::I64, -1)),
                          n.output(0) + "_" + std::to_string(d),
                          "a scale is not positive or makes a size past 2^31"));
  }
  return b.value(OpKind::Resize, {x, scales}, resizeAttrs(p, Attribute::dims(out), {}));
}

// A Resize's or Upsample's scales input when it is data (not a constant at import).
Value *dataScales(ImportContext &ctx, const Node &n, int i) {
  Value *given = ctx.input(n, i);
  if (!given || ctx.constantInput(n, i) || given->type().staticNumElements() == 0)
    return nullptr;
  return given;
}

// Resize before opset 11 and Upsample with scales read from data: nearest rounds down when
// upsampling and up when downsampling (legacyParams), which the scales decide when the model
// runs: both, selected.
Value *legacyResizeByDataScales(ImportContext &ctx, const Node &n, Value *x, Value *given) {
  Builder &b = ctx.builder();
  ResizeParams p = legacyParams(n, {});
  if (p.mode != "nearest")
    return resizeByDataScales(ctx, n, x, p, {}, given);
  p.nearestMode = "floor";
  Value *up = resizeByDataScales(ctx, n, x, p, {}, given);
  AttrMap attrs = up->definingOp()->attrs();
  attrs["nearest_mode"] = Attribute(std::string("ceil"));
  Value *down = b.value(OpKind::Resize, {x, up->definingOp()->operand(1)}, std::move(attrs));
  // Downsampling: no scale above 1.
  Value *above = castTo(b, lessThan(b, b.scalar(DType::F64, 1), castTo(b, given, DType::F64)),
                        DType::I64);
  Value *allDown = b.value(OpKind::Eq, {reduce(b, above, ReduceKind::Max, {0}, false),
                                        b.scalar(DType::I64, 0)});
  return select(b, allDown, down, up);
}

Values convertResize(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "X");
  if (attrInt(n, "antialias", 0) != 0)
    throw ConvertError("antialias=1 is unsupported");
  if (ctx.opset() < 11) {
    if (Value *given = dataScales(ctx, n, 1))
      return {legacyResizeByDataScales(ctx, n, x, given)};
    std::vector<double> scales = toDoubles(ctx.requireConstantInput(n, 1, "scales"));
    return buildResize(b, x, legacyParams(n, scales), {}, scales, {}, "stretch");
  }
  ResizeParams p;
  p.mode = attrString(n, "mode", "nearest");
  p.coordMode = attrString(n, "coordinate_transformation_mode", "half_pixel");
  p.nearestMode = attrString(n, "nearest_mode", "round_prefer_floor");
  p.cubicA = attrFloat(n, "cubic_coeff_a", -0.75f);
  p.excludeOutside = attrInt(n, "exclude_outside", 0);
  p.extrapolation = attrFloat(n, "extrapolation_value", 0.f);
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (Value *given = dataScales(ctx, n, 2)) {
    if (ctx.input(n, 3) && ctx.input(n, 3)->type().staticNumElements() != 0)
      throw ConvertError("only one of scales and sizes may be given");
    return {resizeByDataScales(ctx, n, x, p, attrInts(n, "axes"), given)};
  }
  if (ctx.input(n, 2))
    scales = toDoubles(ctx.requireConstantInput(n, 2, "scales"));
  const std::string aspect = attrString(n, "keep_aspect_ratio_policy", "stretch");
  if (ctx.input(n, 3)) {
    std::optional<Tensor> constant = ctx.constantInput(n, 3);
    // Sizes computed from symbolic dims (`interpolate(x, size=skip.shape[2:])`), or constant
    // sizes for a symbolic input: exact output dims, the scale taken at run time.
    if (aspect == "stretch" && (!constant || !x->type().isStatic()) && scales.empty()) {
      if (auto symbolic = ctx.symbolicInput(n, 3))
        return buildResizeToSizes(b, x, p, attrInts(n, "axes"), *symbolic);
      if (Value *given = ctx.input(n, 3); given && !constant) { // sizes read from data
        std::vector<SymExpr> sizes;
        for (const Dim &d : dataDims(ctx, given, n.output(0)))
          sizes.push_back(d.asExpr());
        return buildResizeToSizes(b, x, p, attrInts(n, "axes"), sizes);
      }
    }
    sizes = ctx.requireConstantInput(n, 3, "sizes").toIntVector();
  }
  if (!scales.empty() && !sizes.empty())
    throw ConvertError("only one of scales and sizes may be given");
  return buildResize(b, x, p, attrInts(n, "axes"), scales, sizes, aspect);
}

Values convertUpsample(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "X");
  std::vector<double> scales;
  if (ctx.opset() < 9) {
    for (float f : attrFloats(n, "scales"))
      scales.push_back(f);
  } else if (Value *given = dataScales(ctx, n, 1)) {
    return {legacyResizeByDataScales(ctx, n, x, given)};
  } else {
    scales = toDoubles(ctx.requireConstantInput(n, 1, "scales"));
  }
  return buildResize(ctx.builder(), x, legacyParams(n, scales), {}, scales, {}, "stretch");
}

} // namespace

void registerMiscConverters(ConverterTable &t) {
  t["Constant"] = convertConstant;
  t["ConstantOfShape"] = convertConstantOfShape;
  t["Range"] = convertRange;
  t["EyeLike"] = convertEyeLike;
  t["OneHot"] = convertOneHot;
  t["Cast"] = convertCast;
  t["CastLike"] = convertCastLike;
  t["TopK"] = convertTopK;
  t["CumSum"] = convertCumSum;
  t["NonZero"] = convertNonZero;
  t["Compress"] = convertCompress;
  t["NonMaxSuppression"] = convertNonMaxSuppression;
  t["RoiAlign"] = convertRoiAlign;
  t["Unique"] = convertUnique;
  t["Einsum"] = convertEinsum;
  t["Hardmax"] = convertHardmax;
  t["Resize"] = convertResize;
  t["Upsample"] = convertUpsample;
  t["HannWindow"] = cosineWindow(0.5, 0.5, 0);
  t["HammingWindow"] = cosineWindow(25.0 / 46, 21.0 / 46, 0);
  t["BlackmanWindow"] = cosineWindow(0.42, 0.5, 0.08);
}

} // namespace strata::onnx_import
