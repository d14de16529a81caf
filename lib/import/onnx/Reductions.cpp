// ONNX reductions (Reduce*, ArgMax/ArgMin) and Softmax/LogSoftmax. Composite reductions
// (L1, L2, LogSum, LogSumExp, SumSquare) become an elementwise prologue, a `reduce` op and an
// elementwise epilogue, so fusion can still see the reduction.
#include "Decompose.h"

#include "strata/support/ShapeMath.h"

#include <algorithm>
#include <set>

namespace strata::onnx_import {
namespace {

// The reduction axes of a Reduce* node, normalized and sorted. `noop` is set when the axes are
// empty and noop_with_empty_axes asks for no reduction at all.
struct ReduceSpec {
  std::vector<int64_t> axes; // empty: all axes
  bool keepdims = true;
  bool noop = false;
  // Axes read from data when the model runs: how often each axis is named (axisCounts), the
  // number of entries, and the name their sizes take; per axis of x, the indices a gather takes
  // from concat(y, reduce(y)) along it: the reduced slice where the axis is named, else the whole
  // axis (one arange per axis for the node, so every reduction of it has the same result dims).
  // Then `axes` is unused.
  Value *counts = nullptr;
  int64_t named = 0;
  std::string name;
  std::vector<Value *> isNamed, pick; // per axis of x: whether an entry names it (bool [])
};

ReduceSpec readReduceSpec(ImportContext &ctx, const onnx::NodeProto &node, Value *x,
                          int axesInputSince) {
  ReduceSpec spec;
  spec.keepdims = attrInt(node, "keepdims", 1) != 0;
  std::vector<int64_t> axes;
  if (ctx.opset() >= axesInputSince) {
    Value *given = optionalInput(ctx, node, 1);
    if (given && !ctx.constantInput(node, 1) && given->type().staticNumElements() != 0) {
      std::optional<int64_t> m = given->type().staticNumElements();
      if (!m)
        throw ConvertError("axes read from data must have a static length, got " +
                           given->type().str());
      Builder &b = ctx.builder();
      const int64_t rank = x->type().rank();
      spec.counts = axisCounts(b, runtimeAxes(b, reshapeTo(b, given, {Dim(*m)}), rank), rank);
      spec.named = *m;
      spec.name = node.output_size() > 0 ? node.output(0) : "reduce";
      for (int64_t d = 0; d < rank; ++d) {
        Value *named = lessThan(b, b.scalar(DType::I64, 0), scalarElement(b, spec.counts, d));
        spec.isNamed.push_back(named);
        Value *length = dimValue(b, x, d);
        Value *count = select(b, named, b.scalar(DType::I64, 1), length);
        Value *first = select(b, named, length, b.scalar(DType::I64, 0));
        spec.pick.push_back(add(b, dataArange(ctx, count, spec.name + "_" + std::to_string(d)),
                                first));
      }
      return spec;
    }
    if (given && given->type().staticNumElements() != 0) // (no entries: no values to read)
      axes = ctx.requireConstantInput(node, 1, "axes").toIntVector();
    spec.noop = axes.empty() && attrInt(node, "noop_with_empty_axes", 0) != 0;
  } else {
    axes = attrInts(node, "axes");
  }
  std::set<int64_t> unique;
  for (int64_t a : axes)
    unique.insert(normalizeAxis(a, x->type().rank()));
  if (axes.empty()) // ONNX: no axes reduce every axis (unless noop_with_empty_axes)
    for (int64_t a = 0; a < x->type().rank(); ++a)
      unique.insert(a);
  spec.axes.assign(unique.begin(), unique.end());
  return spec;
}

// ReduceSum takes its axes as an input from opset 13, the other reductions from opset 18.
int axesInputSince(const std::string &opType) { return opType == "ReduceSum" ? 13 : 18; }

// Axes read from data: x reduced along each named axis in turn, each result broadcast back to
// x's dims (so the next axis can be chosen the same way), keeping x's shape (a shift for
// ReduceLogSumExp).
Value *reducedInPlace(Builder &b, Value *x, ReduceKind kind, const ReduceSpec &spec) {
  Value *y = x;
  const Attribute dims = Attribute::dims(x->type().dims);
  for (int64_t d = 0; d < x->type().rank(); ++d) {
    Value *along = b.value(OpKind::Expand, {reduce(b, y, kind, {d}, true)}, {{"shape", dims}});
    y = select(b, spec.isNamed[static_cast<size_t>(d)], along, y);
  }
  return y;
}

// Axes read from data: along each axis in turn, the reduction appended to y, then the gather of
// spec.pick: the reduced slice where the axis is named (also of an empty axis: the identity),
// else the whole axis; the named axes then dropped unless keepdims.
Value *reduceAlongData(ImportContext &ctx, Value *x, ReduceKind kind, const ReduceSpec &spec) {
  Builder &b = ctx.builder();
  Value *y = x;
  for (int64_t d = 0; d < x->type().rank(); ++d) {
    Value *joined = b.value(OpKind::Concat, {y, reduce(b, y, kind, {d}, true)},
                            {{"axis", Attribute(d)}});
    y = b.value(OpKind::Gather, {joined, spec.pick[static_cast<size_t>(d)]},
                {{"axis", Attribute(d)}});
  }
  return y;
}

Value *dropNamed(ImportContext &ctx, Value *x, Value *reduced, const ReduceSpec &spec) {
  if (spec.keepdims)
    return reduced;
  return reshapeExactly(ctx.builder(), reduced,
                        unnamedDims(ctx, x, spec.counts, x->type().rank() - spec.named,
                                    spec.name + "_kept", "the axes name an axis twice"));
}

Value *applyReduce(ImportContext &ctx, Value *x, ReduceKind kind, const ReduceSpec &spec) {
  if (spec.noop)
    return x;
  if (spec.counts)
    return dropNamed(ctx, x, reduceAlongData(ctx, x, kind, spec), spec);
  return reduce(ctx.builder(), x, kind, spec.axes, spec.keepdims);
}

// Reduce{Sum,Mean,Max,Min,Prod}: one reduce op.
ConvertFn plainReduce(ReduceKind k) {
  return [k](ImportContext &ctx, const onnx::NodeProto &node) -> std::vector<Value *> {
    Value *x = requiredInput(ctx, node, 0, "data");
    ReduceSpec spec = readReduceSpec(ctx, node, x, axesInputSince(node.op_type()));
    return {applyReduce(ctx, x, k, spec)};
  };
}

std::vector<Value *> convertReduceL1(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "data");
  ReduceSpec spec = readReduceSpec(ctx, node, x, 18);
  return {applyReduce(ctx, unary(b, OpKind::Abs, x), ReduceKind::Sum, spec)};
}

std::vector<Value *> convertReduceL2(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "data");
  ReduceSpec spec = readReduceSpec(ctx, node, x, 18);
  return {unary(b, OpKind::Sqrt, applyReduce(ctx, mul(b, x, x), ReduceKind::Sum, spec))};
}

std::vector<Value *> convertReduceSumSquare(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "data");
  ReduceSpec spec = readReduceSpec(ctx, node, x, 18);
  return {applyReduce(ctx, mul(b, x, x), ReduceKind::Sum, spec)};
}

std::vector<Value *> convertReduceLogSum(ImportContext &ctx, const onnx::NodeProto &node) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "data");
  ReduceSpec spec = readReduceSpec(ctx, node, x, 18);
  return {unary(b, OpKind::Log, applyReduce(ctx, x, ReduceKind::Sum, spec))};
}

// An infinite max (an all -inf or +inf slice) would make x - max NaN; shift by 0 there instead.
Value *finiteOrZero(Builder &b, Value *m) {
  if (!isFloat(m->type().dtype))
    return m;
  Value *notFinite = unary(b, OpKind::IsNaN, sub(b, m, m));
  return select(b, notFinite, scalarLike(b, m, 0.0), m);
}

std::vector<Value *> convertReduceLogSumExp(ImportContext &ctx, const onnx::NodeProto &node) {
  // max + log(sum(exp(x - max))): exp cannot overflow. The max is computed with keepdims=1 to
  // broadcast against x, and once more in the requested form to add back.
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, node, 0, "data");
  ReduceSpec spec = readReduceSpec(ctx, node, x, 18);
  if (spec.noop)
    return {x};
  if (spec.counts) { // axes read from data: the shift in x's shape, added back reduced
    Value *shift = finiteOrZero(b, reducedInPlace(b, x, ReduceKind::Max, spec));
    Value *sumExp = reduceAlongData(ctx, unary(b, OpKind::Exp, sub(b, x, shift)), ReduceKind::Sum,
                                    spec);
    Value *back = finiteOrZero(b, reduceAlongData(ctx, shift, ReduceKind::Max, spec));
    return {dropNamed(ctx, x, add(b, unary(b, OpKind::Log, sumExp), back), spec)};
  }
  Value *maxKept = finiteOrZero(b, reduce(b, x, ReduceKind::Max, spec.axes, true));
  Value *sumExp = reduce(b, unary(b, OpKind::Exp, sub(b, x, maxKept)), ReduceKind::Sum, spec.axes,
                         spec.keepdims);
  Value *shift =
      spec.keepdims ? maxKept : finiteOrZero(b, reduce(b, x, ReduceKind::Max, spec.axes, false));
  return {add(b, unary(b, OpKind::Log, sumExp), shift)};
}

ConvertFn argReduce(ArgKind k) {
  return [k](ImportContext &ctx, const onnx::NodeProto &node) -> std::vector<Value *> {
    Value *x = requiredInput(ctx, node, 0, "data");
    int64_t axis = normalizeAxis(attrInt(node, "axis", 0), x->type().rank());
    return {ctx.builder().value(
        OpKind::ArgReduce, {x},
        {{"kind", ops::enumAttr(k)},
         {"axis", Attribute(axis)},
         {"keepdims", Attribute(attrInt(node, "keepdims", 1))},
         {"select_last_index", Attribute(attrInt(node, "select_last_index", 0))}})};
  };
}

// Softmax/LogSoftmax over the flattened dims [axis, rank) with reduces, for the pre-13 semantics
// when shapes are not static enough to reshape.
Value *softmaxOverTrailingDims(Builder &b, Value *x, int64_t axis, bool logarithmic) {
  std::vector<int64_t> axes = iota(axis, x->type().rank());
  Value *shifted = sub(b, x, reduce(b, x, ReduceKind::Max, axes, true));
  Value *sumExp = reduce(b, unary(b, OpKind::Exp, shifted), ReduceKind::Sum, axes, true);
  if (logarithmic)
    return sub(b, shifted, unary(b, OpKind::Log, sumExp));
  return div(b, unary(b, OpKind::Exp, shifted), sumExp);
}

ConvertFn softmaxLike(OpKind kind) {
  return [kind](ImportContext &ctx, const onnx::NodeProto &node) -> std::vector<Value *> {
    Builder &b = ctx.builder();
    Value *x = requiredInput(ctx, node, 0, "input");
    int64_t rank = x->type().rank();
    if (ctx.opset() >= 13) {
      int64_t axis = normalizeAxis(attrInt(node, "axis", -1), rank);
      return {b.value(kind, {x}, {{"axis", Attribute(axis)}})};
    }
    // Before opset 13 the input is coerced to 2-D [prod(dims < axis), prod(dims >= axis)] and
    // normalized along the second dim.
    int64_t axis = normalizeAxis(attrInt(node, "axis", 1), std::max<int64_t>(rank, 1));
    if (axis == rank - 1 || rank == 0)
      return {b.value(kind, {x}, {{"axis", Attribute(std::max<int64_t>(axis, 0))}})};
    if (!x->type().isStatic())
      return {softmaxOverTrailingDims(b, x, axis, kind == OpKind::LogSoftmax)};
    Shape shape = x->type().staticShape();
    if (!strata::shape::strideExtent(shape)) // static dims need not be small (e.g. after Expand)
      throw ConvertError("the dims of " + x->type().str() + " have a product past int64");
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? outer : inner) *= shape[static_cast<size_t>(i)];
    Value *flat = reshapeTo(b, x, {Dim(outer), Dim(inner)});
    Value *y = b.value(kind, {flat}, {{"axis", Attribute(int64_t{1})}});
    return {reshapeTo(b, y, x->type().dims)};
  };
}

} // namespace

void registerReductionConverters(ConverterTable &t) {
  t["ReduceSum"] = plainReduce(ReduceKind::Sum);
  t["ReduceMean"] = plainReduce(ReduceKind::Mean);
  t["ReduceMax"] = plainReduce(ReduceKind::Max);
  t["ReduceMin"] = plainReduce(ReduceKind::Min);
  t["ReduceProd"] = plainReduce(ReduceKind::Prod);
  t["ReduceL1"] = convertReduceL1;
  t["ReduceL2"] = convertReduceL2;
  t["ReduceLogSum"] = convertReduceLogSum;
  t["ReduceLogSumExp"] = convertReduceLogSumExp;
  t["ReduceSumSquare"] = convertReduceSumSquare;
  t["ArgMax"] = argReduce(ArgKind::Max);
  t["ArgMin"] = argReduce(ArgKind::Min);
  t["Softmax"] = softmaxLike(OpKind::Softmax);
  t["LogSoftmax"] = softmaxLike(OpKind::LogSoftmax);
}

} // namespace strata::onnx_import
