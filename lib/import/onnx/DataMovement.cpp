// Converters for ONNX shape and data-movement ops: reshapes, transposes, slicing, padding,
// gathers and scatters, and the shape queries (which fold to constants).
#include "Decompose.h"

#include "strata/support/Limits.h"
#include "strata/support/ShapeMath.h"

#include <numeric>

namespace strata::onnx_import {
namespace {

using Node = onnx::NodeProto;
using Values = std::vector<Value *>;

std::vector<int64_t> ints(const Tensor &t) { return t.toIntVector(); }

Shape requireStaticShape(Value *v, const char *why) {
  if (!v->type().isStatic())
    throw ConvertError(std::string(why) + " needs a static input shape, got " + v->type().str());
  return v->type().staticShape();
}

// Axes from the `axes` attribute (before `inputFromOpset`) or from input 1 (from then on).
std::optional<std::vector<int64_t>> axesAttrOrInput(ImportContext &ctx, const Node &n,
                                                    int64_t inputFromOpset) {
  if (ctx.opset() < inputFromOpset) {
    if (!hasAttr(n, "axes"))
      return std::nullopt;
    return attrInts(n, "axes");
  }
  if (!ctx.input(n, 1))
    return std::nullopt;
  return ints(ctx.requireConstantInput(n, 1, "axes"));
}

// --- Reshaping -----------------------------------------------------------------------------------

// A shape given as formulas of the symbolic dims (ImportContext::symbolicInput) as the ints of a
// reshape: a constant entry as it is (0 copies, -1 infers), a symbolic one copied (0) where x
// has it at the same position, otherwise inferred (-1, at most one). Nullopt when not expressible.
std::optional<std::vector<int64_t>> symbolicReshape(const TensorType &x,
                                                    const std::vector<SymExpr> &target) {
  std::vector<int64_t> shape;
  bool inferred = false;
  for (const SymExpr &e : target)
    inferred |= e.constant() == -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (std::optional<int64_t> c = target[i].constant()) {
      shape.push_back(*c);
    } else if (i < x.dims.size() && x.dims[i].asExpr() == target[i]) {
      shape.push_back(0);
    } else if (!inferred) {
      shape.push_back(-1);
      inferred = true;
    } else {
      return std::nullopt;
    }
  }
  return shape;
}

// Reshape to a shape read from data, ONNX's rules computed when the model runs: 0 copies x's
// dim there (unless allowzero), one -1 takes what is left of the element count; each entry then
// a size read from data (a count that does not match fails the run's element-count check).
Value *reshapeToData(ImportContext &ctx, const Node &n, Value *x, Value *given) {
  Builder &b = ctx.builder();
  const TensorType &xt = x->type();
  std::optional<int64_t> length = given->type().staticNumElements();
  if (given->type().rank() != 1 || !length || isFloat(given->type().dtype))
    throw ConvertError("shape (input 1) read from data must be a 1-D integer tensor of static "
                       "length, got " + given->type().str());
  if (*length > processLimits().maxRank)
    throw ConvertError("a shape of " + std::to_string(*length) + " entries, " +
                       overLimit(&Limits::maxRank, processLimits().maxRank));
  auto i64 = [&](int64_t v) { return b.scalar(DType::I64, static_cast<double>(v)); };
  Value *xShape = xt.isStatic() ? nullptr
                                : b.value(OpKind::Shape, {x},
                                          {{"start", Attribute(int64_t{0})},
                                           {"end", Attribute(xt.rank())}});
  auto dimOfX = [&](int64_t i) {
    const Dim &d = xt.dims[static_cast<size_t>(i)];
    return d.isStatic() ? i64(d.size) : scalarElement(b, xShape, i);
  };
  Value *total = i64(1);
  for (int64_t i = 0; i < xt.rank(); ++i)
    total = mul(b, total, dimOfX(i));
  const bool allowZero = attrInt(n, "allowzero", 0) != 0;
  std::vector<Value *> entries;
  Value *known = i64(1);
  for (int64_t i = 0; i < *length; ++i) {
    Value *e = scalarElement(b, given, i);
    if (!allowZero && i < xt.rank())
      e = select(b, b.value(OpKind::Eq, {e, i64(0)}), dimOfX(i), e);
    known = mul(b, known, select(b, b.value(OpKind::Eq, {e, i64(-1)}), i64(1), e));
    entries.push_back(e);
  }
  Value *inferred = div(b, total, maximum(b, known, i64(1)));
  std::vector<Dim> dims;
  for (int64_t i = 0; i < *length; ++i)
    dims.push_back(dataDim(ctx, select(b, b.value(OpKind::Eq, {entries[i], i64(-1)}), inferred,
                                       entries[i]),
                           n.output(0) + "_" + std::to_string(i)));
  return reshapeExactly(b, x, dims);
}

Values convertReshape(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  Attribute shape;
  if (std::optional<Tensor> t = ctx.constantInput(n, 1)) {
    shape = ints(*t);
  } else if (auto target = ctx.symbolicInput(n, 1)) {
    // As ints where 0 and one -1 say it; otherwise the formulas themselves (a channel shuffle's
    // [n, 2, c / 2, h, w] moves h and w): each symbolic entry is that dim exactly.
    auto encoded = symbolicReshape(x->type(), *target);
    if (encoded && !attrInt(n, "allowzero", 0)) {
      shape = *encoded;
    } else {
      std::vector<Dim> dims;
      for (const SymExpr &e : *target)
        dims.push_back(Dim::of(e));
      shape = Attribute::dims(dims);
    }
  } else if (Value *given = ctx.input(n, 1)) {
    return {reshapeToData(ctx, n, x, given)};
  } else {
    shape = ints(ctx.requireConstantInput(n, 1, "shape"));
  }
  AttrMap attrs{{"shape", shape}};
  if (int64_t allowZero = attrInt(n, "allowzero", 0))
    attrs["allowzero"] = Attribute(allowZero);
  return {ctx.builder().value(OpKind::Reshape, {x}, std::move(attrs))};
}

// Product of dims [from, to) as a Dim (a formula when some are symbolic); nullopt when the
// formula grows past what SymExpr keeps.
std::optional<Dim> productDim(const std::vector<Dim> &dims, size_t from, size_t to) {
  int64_t p = 1;
  SymExpr symbolic(1);
  for (size_t i = from; i < to; ++i) {
    if (dims[i].isStatic()) {
      std::optional<int64_t> product = shape::checkedMul(p, dims[i].size);
      if (!product) // static dims may be huge (e.g. after Expand), not bounded by real data
        throw ConvertError("the product of dims " + std::to_string(from) + " to " +
                           std::to_string(to) + " overflows int64");
      p = *product;
    } else {
      try {
        symbolic = symbolic * dims[i].expr;
      } catch (const SymExprError &) {
        return std::nullopt;
      }
    }
  }
  try {
    return Dim::of(symbolic * p);
  } catch (const SymExprError &) {
    return std::nullopt;
  }
}

// Flattens to 2-D at `axis`: [prod(d[:axis]), prod(d[axis:])].
Value *flatten2D(Builder &b, Value *x, int64_t axis) {
  const auto &dims = x->type().dims;
  auto outer = productDim(dims, 0, axis), inner = productDim(dims, axis, dims.size());
  if (outer && inner)
    return reshapeTo(b, x, {*outer, *inner});
  if (outer && outer->isStatic())
    return b.value(OpKind::Reshape, {x}, {{"shape", Attribute(std::vector<int64_t>{outer->size, -1})}});
  if (inner && inner->isStatic())
    return b.value(OpKind::Reshape, {x}, {{"shape", Attribute(std::vector<int64_t>{-1, inner->size})}});
  throw ConvertError("cannot flatten " + x->type().str() + " at axis " + std::to_string(axis) +
                     ": too many symbolic dims");
}

Values convertFlatten(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "input");
  int64_t rank = x->type().rank();
  int64_t axis = attrInt(n, "axis", 1);
  if (axis < -rank || axis > rank)
    throw ConvertError("axis " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(rank));
  if (axis < 0)
    axis += rank;
  return {flatten2D(ctx.builder(), x, axis)};
}

// Axes given as data when the model runs (opset 13's input 1, not a constant): nullptr otherwise.
Value *axesFromData(ImportContext &ctx, const Node &n) {
  if (ctx.opset() < 13 || !ctx.input(n, 1) || ctx.constantInput(n, 1))
    return nullptr;
  return ctx.input(n, 1);
}

// The number of axes a 1-D (or scalar) axes tensor names, which must be static.
int64_t axesLength(Value *axes) {
  std::optional<int64_t> m = axes->type().staticNumElements();
  if (!m)
    throw ConvertError("axes read from data must have a static length, got " + axes->type().str());
  return *m;
}

// Squeeze with axes read from data: the dims of x no axis names, computed when the model runs
// (a named axis of size other than 1 fails the reshape's count check).
Value *squeezeData(ImportContext &ctx, const Node &n, Value *x, Value *axes) {
  Builder &b = ctx.builder();
  const int64_t rank = x->type().rank(), m = axesLength(axes);
  if (m > rank)
    throw ConvertError("Squeeze of " + std::to_string(m) + " axes from a rank-" +
                       std::to_string(rank) + " tensor");
  Value *counts = axisCounts(b, runtimeAxes(b, reshapeTo(b, axes, {Dim(m)}), rank), rank);
  // Every named axis must have size 1 (also in an empty tensor, whose count check cannot tell).
  Value *one = b.scalar(DType::I64, 1);
  Value *notOne = castTo(b, b.value(OpKind::Not, {b.value(OpKind::Eq, {dimsOf(b, x), one})}),
                         DType::I64);
  Value *squeezable = b.value(OpKind::Eq, {reduce(b, mul(b, counts, notOne), ReduceKind::Sum, {0},
                                                  false),
                                           b.scalar(DType::I64, 0)});
  if (rank == m) // to a scalar: when every axis is named once and is 1
    return reshapeTo(b, requireAtRun(ctx, x,
                                     b.value(OpKind::And, {eachAxisOnce(b, counts), squeezable}),
                                     n.output(0) + "_0",
                                     "the axes name an axis twice or one whose size is not 1"),
                     {});
  return reshapeExactly(b, x, unnamedDims(ctx, x, counts, rank - m, n.output(0),
                                          "the axes name an axis twice or one whose size is not 1",
                                          squeezable));
}

// Unsqueeze with axes read from data: output dim j is 1 where an axis names it, else x's next
// dim, computed when the model runs (an axis named twice makes the first size negative).
Value *unsqueezeData(ImportContext &ctx, const Node &n, Value *x, Value *axes) {
  Builder &b = ctx.builder();
  const int64_t rank = x->type().rank(), m = axesLength(axes), outRank = rank + m;
  if (outRank > processLimits().maxRank)
    throw ConvertError("Unsqueeze to rank " + std::to_string(outRank) + ", " +
                       overLimit(&Limits::maxRank, processLimits().maxRank));
  if (outRank == 0)
    return x;
  Value *counts = axisCounts(b, runtimeAxes(b, reshapeTo(b, axes, {Dim(m)}), outRank), outRank);
  Value *valid = eachAxisOnce(b, counts);
  if (rank == 0) { // every output dim is 1; only a repeated axis is wrong
    std::vector<Dim> ones(static_cast<size_t>(outRank), Dim(1));
    ones[0] = checkedDataDim(ctx, b.scalar(DType::I64, 1), valid, n.output(0) + "_0",
                             "the axes name an axis twice");
    return reshapeExactly(b, x, ones);
  }
  Value *inserted = minimum(b, counts, b.scalar(DType::I64, 1));
  std::vector<int64_t> all(static_cast<size_t>(outRank));
  std::iota(all.begin(), all.end(), 0);
  Value *j = b.constant(Tensor::fromVector(DType::I64, {outRank}, all));
  // Output dim j (not inserted) is x's dim j - (insertions up to j).
  Value *source = sub(b, j, cumulativeSum(b, inserted));
  source = minimum(b, maximum(b, source, b.scalar(DType::I64, 0)),
                   b.scalar(DType::I64, double(rank - 1)));
  Value *fromX = b.value(OpKind::Gather, {dimsOf(b, x), source}, {{"axis", Attribute(int64_t{0})}});
  Value *sizes = select(b, b.value(OpKind::Eq, {inserted, b.scalar(DType::I64, 1)}),
                        b.scalar(DType::I64, 1), fromX);
  std::vector<Dim> out;
  for (int64_t k = 0; k < outRank; ++k) {
    const std::string name = n.output(0) + "_" + std::to_string(k);
    Value *size = scalarElement(b, sizes, k);
    out.push_back(k == 0 ? checkedDataDim(ctx, size, valid, name, "the axes name an axis twice")
                         : dataDim(ctx, size, name));
  }
  return reshapeExactly(b, x, out);
}

Values convertSqueeze(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  if (Value *axes = axesFromData(ctx, n))
    return {squeezeData(ctx, n, x, axes)};
  const auto &dims = x->type().dims;
  int64_t rank = x->type().rank();
  std::vector<bool> drop(rank, false);
  if (auto axes = axesAttrOrInput(ctx, n, 13)) {
    if (rank < 1 && !axes->empty()) // normalizeAxis lets a scalar keep axis 0 / -1: dims[ax] below
      throw ConvertError("Squeeze of a scalar takes no axes");
    for (int64_t a : *axes) {
      int64_t ax = normalizeAxis(a, rank);
      if (dims[ax].isStatic() && dims[ax].size != 1)
        throw ConvertError("cannot squeeze axis " + std::to_string(a) + " of size " +
                           dims[ax].str());
      drop[ax] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = dims[i].isStatic() && dims[i].size == 1;
  }
  std::vector<Dim> out;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      out.push_back(dims[i]);
  return {reshapeTo(ctx.builder(), x, out)};
}

Values convertUnsqueeze(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  if (Value *axes = axesFromData(ctx, n))
    return {unsqueezeData(ctx, n, x, axes)};
  auto axes = axesAttrOrInput(ctx, n, 13);
  if (!axes)
    throw ConvertError("Unsqueeze needs axes");
  int64_t outRank = x->type().rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(outRank, false);
  for (int64_t a : *axes) {
    int64_t ax = normalizeAxis(a, outRank);
    if (inserted[ax])
      throw ConvertError("axis " + std::to_string(a) + " is repeated");
    inserted[ax] = true;
  }
  std::vector<Dim> out;
  size_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    out.push_back(inserted[i] ? Dim(1) : x->type().dims[next++]);
  return {reshapeTo(ctx.builder(), x, out)};
}

Values convertTranspose(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  int64_t rank = x->type().rank();
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0); // default: reverse the dims
  perm = attrInts(n, "perm", perm);
  return {ctx.builder().value(OpKind::Transpose, {x}, {{"perm", Attribute(perm)}})};
}

// --- Joining and splitting ----------------------------------------------------------------------

Values convertConcat(ImportContext &ctx, const Node &n) {
  Values inputs;
  for (int i = 0; i < n.input_size(); ++i)
    if (Value *v = ctx.input(n, i))
      inputs.push_back(v);
  if (inputs.empty())
    throw ConvertError("Concat needs at least one input");
  if (!hasAttr(n, "axis"))
    throw ConvertError("missing required attribute 'axis'");
  int64_t axis = normalizeAxis(attrInt(n, "axis", 0), inputs[0]->type().rank());
  if (inputs.size() == 1)
    return {inputs[0]};
  return {ctx.builder().value(OpKind::Concat, inputs, {{"axis", Attribute(axis)}})};
}

Value *sliceAxis(Builder &b, Value *x, int64_t axis, int64_t start, int64_t end) {
  return slice(b, x, {start}, {end}, {axis});
}

// Split with sizes read from data: output i is a gather of start_i + arange(size_i) along the
// axis (start_i the sizes before it); sizes that do not add up to the dim make the last size
// negative, which fails the run.
Values splitData(ImportContext &ctx, const Node &n, Value *x, int64_t axis, Value *given) {
  Builder &b = ctx.builder();
  const int64_t parts = axesLength(given);
  if (parts != n.output_size())
    throw ConvertError(std::to_string(parts) + " split sizes for " +
                       std::to_string(n.output_size()) + " outputs");
  if (given->type().rank() != 1 || isFloat(given->type().dtype) || given->type().dtype == DType::Bool)
    throw ConvertError("split read from data must be a 1-D integer tensor, got " +
                       given->type().str());
  // Every part checks that the sizes are >= 0 and add up to the dim (any part may be unused).
  Value *total = b.scalar(DType::I64, 0), *least = b.scalar(DType::I64, 0);
  std::vector<Value *> sizes;
  for (int64_t i = 0; i < parts; ++i) {
    sizes.push_back(scalarElement(b, given, i));
    total = add(b, total, sizes.back());
    least = minimum(b, least, sizes.back());
  }
  Value *whole = b.value(OpKind::And, {b.value(OpKind::Eq, {total, dimValue(b, x, axis)}),
                                       b.value(OpKind::Le, {b.scalar(DType::I64, 0), least})});
  Values results;
  Value *start = b.scalar(DType::I64, 0);
  for (int64_t i = 0; i < parts; ++i) {
    const std::string name = n.output(static_cast<int>(i)).empty()
                                 ? n.output(0) + "_part" + std::to_string(i)
                                 : n.output(static_cast<int>(i));
    Value *size = select(b, whole, sizes[i], b.scalar(DType::I64, -1));
    Value *idx = add(b, start, dataArange(ctx, size, name,
                                          "the split sizes are negative or do not add up to "
                                          "the axis' length"));
    results.push_back(b.value(OpKind::Gather, {x, idx}, {{"axis", Attribute(axis)}}));
    start = add(b, start, sizes[i]);
  }
  return results;
}

Values convertSplit(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "input");
  if (x->type().rank() < 1) // normalizeAxis lets a scalar keep axis 0 / -1: dims[axis] below
    throw ConvertError("Split needs an input of rank >= 1, got a scalar");
  int64_t axis = normalizeAxis(attrInt(n, "axis", 0), x->type().rank());
  int64_t outputs = n.output_size();
  std::vector<int64_t> sizes;
  if (ctx.opset() < 13)
    sizes = attrInts(n, "split");
  else if (Value *given = ctx.input(n, 1); given && !ctx.constantInput(n, 1))
    return splitData(ctx, n, x, axis, given);
  else if (given)
    sizes = ints(ctx.requireConstantInput(n, 1, "split"));
  if (sizes.empty()) {
    const Dim &d = x->type().dims[axis];
    if (!d.isStatic())
      throw ConvertError("splitting symbolic dim " + d.str() + " needs explicit split sizes");
    int64_t parts = ctx.opset() >= 18 && hasAttr(n, "num_outputs") ? attrInt(n, "num_outputs", 1)
                                                                   : outputs;
    if (parts <= 0)
      throw ConvertError("cannot split into " + std::to_string(parts) + " parts");
    if (parts != outputs) // before one size per part is made: num_outputs can be huge
      throw ConvertError("num_outputs " + std::to_string(parts) + " for " +
                         std::to_string(outputs) + " outputs");
    // Equal parts; from opset 18 the last one may be smaller (ceil division, without d + parts).
    int64_t each = d.size / parts + (ctx.opset() >= 18 && d.size % parts != 0 ? 1 : 0);
    if (ctx.opset() < 18 && d.size % parts != 0)
      throw ConvertError("dim " + d.str() + " does not split evenly into " +
                         std::to_string(parts) + " parts");
    for (int64_t i = 0, left = d.size; i < parts; ++i, left -= each)
      sizes.push_back(std::min(each, std::max<int64_t>(left, 0)));
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    throw ConvertError(std::to_string(sizes.size()) + " split sizes for " +
                       std::to_string(outputs) + " outputs");
  Values results;
  int64_t start = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      throw ConvertError("negative split size " + std::to_string(s));
    std::optional<int64_t> end = shape::checkedAdd(start, s); // sizes come from the file
    if (!end)
      throw ConvertError("split sizes add up past int64");
    results.push_back(sliceAxis(ctx.builder(), x, axis, start, *end));
    start = *end;
  }
  return results;
}

// Slice whose ends (or starts) are computed from symbolic dims, steps 1, starts non-negative:
// along each such axis, a gather of the elements start, start + 1, ... over a length some input
// has as a dim (iota), so the result has that symbolic dim; an end past the axis is an index
// error at run time naming the node (ONNX would clamp it). Other axes as a plain slice.
Value *symbolicSlice(ImportContext &ctx, const Node &n) {
  if (ctx.constantInput(n, 1) && ctx.constantInput(n, 2))
    return nullptr;
  auto starts = ctx.symbolicInput(n, 1), ends = ctx.symbolicInput(n, 2);
  if (!starts || !ends || starts->size() != ends->size())
    return nullptr;
  Value *x = requiredInput(ctx, n, 0, "data");
  const int64_t rank = x->type().rank();
  std::vector<int64_t> axes;
  if (ctx.input(n, 3)) {
    auto a = ctx.constantInput(n, 3);
    if (!a)
      return nullptr;
    axes = ints(*a);
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  }
  if (ctx.input(n, 4)) {
    auto st = ctx.constantInput(n, 4);
    if (!st)
      return nullptr;
    for (int64_t step : ints(*st))
      if (step != 1)
        return nullptr;
  }
  if (axes.size() != starts->size())
    return nullptr;
  std::vector<int64_t> cStarts, cEnds, cAxes;
  std::vector<std::pair<int64_t, Value *>> gathers; // (axis, indices)
  Builder &b = ctx.builder();
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = normalizeAxis(axes[i], rank);
    std::optional<int64_t> s = (*starts)[i].constant(), e = (*ends)[i].constant();
    if (s && e) {
      cStarts.push_back(*s);
      cEnds.push_back(*e);
      cAxes.push_back(axis);
      continue;
    }
    // A start that is a formula too (torchvision splits its heads' outputs per level at running
    // sums of the levels' sizes) is added as the run-time value the starts tensor holds.
    if (s ? *s < 0 : !ctx.knownNonNegative((*starts)[i]))
      return nullptr;
    Value *idx = nullptr;
    try {
      idx = countTo(ctx, (*ends)[i] - (*starts)[i]);
    } catch (const SymExprError &) {
      return nullptr;
    }
    if (!idx)
      return nullptr;
    if (!s) {
      Value *start = b.value(OpKind::Gather,
                             {ctx.input(n, 1), b.scalar(DType::I64, static_cast<double>(i))},
                             {{"axis", Attribute(int64_t{0})}});
      if (start->type().dtype != DType::I64)
        start = b.value(OpKind::Cast, {start}, {{"to", Attribute(DType::I64)}});
      idx = b.value(OpKind::Add, {idx, start});
    } else if (*s != 0) {
      idx = b.value(OpKind::Add, {idx, b.scalar(DType::I64, static_cast<double>(*s))});
    }
    gathers.push_back({axis, idx});
  }
  Value *y = cAxes.empty() ? x : slice(b, x, cStarts, cEnds, cAxes, {});
  for (auto [axis, idx] : gathers)
    y = b.value(OpKind::Gather, {y, idx}, {{"axis", Attribute(axis)}});
  return y;
}

// Slice with starts, ends, axes or steps read from data: per sliced axis, ONNX's clamping
// computed when the model runs, then a gather of start + step * arange(count) along it (count a
// size read from data). Axes read from data: every axis of x gets its start, end and step from
// the entry naming it (none: the whole axis), an entry out of range failing its normalizing
// gather and an axis named twice making the first count negative.
Value *dataSlice(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  Value *starts = requiredInput(ctx, n, 1, "starts"), *ends = requiredInput(ctx, n, 2, "ends");
  const TensorType &xt = x->type();
  const int64_t rank = xt.rank();
  std::optional<int64_t> count = starts->type().staticNumElements();
  if (starts->type().rank() != 1 || !count || ends->type() != starts->type())
    throw ConvertError("starts and ends read from data must be 1-D of one static length, got " +
                       starts->type().str() + " and " + ends->type().str());
  if (rank == 0)
    throw ConvertError("Slice of a scalar");
  Builder &b = ctx.builder();
  auto i64 = [&](int64_t v) { return b.scalar(DType::I64, static_cast<double>(v)); };
  auto vectorInput = [&](int i, const char *what) -> Value * {
    Value *v = ctx.input(n, i);
    if (!v || ctx.constantInput(n, i))
      return nullptr;
    if (v->type().rank() != 1 || v->type().staticNumElements() != count ||
        isFloat(v->type().dtype) || v->type().dtype == DType::Bool)
      throw ConvertError(std::string(what) + " read from data must be a 1-D integer tensor of " +
                         std::to_string(*count) + " entries, got " + v->type().str());
    return v;
  };
  Value *axesData = vectorInput(3, "axes"), *stepsData = vectorInput(4, "steps");
  std::vector<int64_t> axes, steps(static_cast<size_t>(*count), 1);
  if (axesData) {
    // (filled per axis below)
  } else if (ctx.input(n, 3)) {
    axes = ints(ctx.requireConstantInput(n, 3, "axes"));
  } else {
    for (int64_t i = 0; i < *count; ++i)
      axes.push_back(i);
  }
  if (!stepsData && ctx.input(n, 4))
    steps = ints(ctx.requireConstantInput(n, 4, "steps"));
  if ((!axesData && static_cast<int64_t>(axes.size()) != *count) ||
      static_cast<int64_t>(steps.size()) != *count)
    throw ConvertError("starts, ends, axes and steps differ in length");
  for (int64_t step : steps)
    if (!stepsData && step == 0)
      throw ConvertError("slice step 0");
  auto stepValue = [&](int64_t i) {
    return stepsData ? scalarElement(b, stepsData, i) : i64(steps[static_cast<size_t>(i)]);
  };
  Value *xShape = nullptr;
  auto dimOf = [&](int64_t axis) {
    const Dim &dim = xt.dims[static_cast<size_t>(axis)];
    if (dim.isStatic())
      return i64(dim.size);
    if (!xShape)
      xShape = b.value(OpKind::Shape, {x}, {{"start", Attribute(int64_t{0})},
                                            {"end", Attribute(rank)}});
    return scalarElement(b, xShape, axis);
  };
  // Gathers [from, to) by `step` along `axis` of y, ONNX's clamping applied. A step known at
  // import keeps its sign out of the graph; one read from data selects both ways (0 fails).
  auto sliceAlong = [&](Value *y, int64_t axis, Value *start, Value *end, Value *step,
                        std::optional<int64_t> knownStep, Value *valid) {
    Value *d = dimOf(axis);
    Value *up = knownStep ? nullptr : lessThan(b, i64(0), step);
    auto pick = [&](Value *ifUp, Value *ifDown) {
      return knownStep ? (*knownStep > 0 ? ifUp : ifDown) : select(b, up, ifUp, ifDown);
    };
    // From the end when negative, then clamped: going up, both to [0, d]; going down, the start
    // to [0, d - 1] and the end to [-1, d - 1].
    Value *last = pick(d, sub(b, d, i64(1)));
    auto bound = [&](Value *v, Value *lo) {
      v = select(b, lessThan(b, v, i64(0)), add(b, v, d), v);
      return minimum(b, maximum(b, v, lo), last);
    };
    Value *from = bound(start, i64(0));
    Value *to = bound(end, pick(i64(0), i64(-1)));
    // |step|, capped where every stride takes one element of any dim (dims stay below 2^40).
    const int64_t cap = int64_t(1) << 40;
    Value *stride;
    if (knownStep)
      stride = i64(*knownStep > 0 ? std::min(*knownStep, cap)
                                  : (*knownStep < -cap ? cap : -*knownStep));
    else
      stride = minimum(b, select(b, up, step, sub(b, i64(0), maximum(b, step, i64(-cap)))),
                       i64(cap));
    // ceil(span / stride) for span > 0 as (span - 1) / stride + 1: no overflow.
    Value *span = pick(sub(b, to, from), sub(b, from, to));
    Value *taken = select(b, lessThan(b, i64(0), span),
                          add(b, div(b, sub(b, span, i64(1)), maximum(b, stride, i64(1))), i64(1)),
                          i64(0));
    Value *ok = knownStep ? valid : b.value(OpKind::Not, {b.value(OpKind::Eq, {step, i64(0)})});
    if (valid && ok != valid)
      ok = b.value(OpKind::And, {ok, valid});
    if (ok)
      taken = select(b, ok, taken, i64(-1));
    Value *idx = dataArange(ctx, taken, n.output(0) + "_" + std::to_string(axis),
                            ok ? "the axes name an axis twice or a step is 0" : "");
    if (!knownStep || *knownStep != 1)
      idx = mul(b, idx, stride);
    idx = knownStep ? (*knownStep > 0 ? add(b, from, idx) : sub(b, from, idx))
                    : select(b, up, add(b, from, idx), sub(b, from, idx));
    return b.value(OpKind::Gather, {y, idx}, {{"axis", Attribute(axis)}});
  };
  Value *y = x;
  if (!axesData) {
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t axis = normalizeAxis(axes[i], rank);
      const auto e = static_cast<int64_t>(i);
      y = sliceAlong(y, axis, scalarElement(b, starts, e), scalarElement(b, ends, e),
                     stepValue(e), stepsData ? std::nullopt : std::optional<int64_t>(steps[i]),
                     nullptr);
    }
    return y;
  }
  Value *named = runtimeAxes(b, axesData, rank);
  Value *valid = eachAxisOnce(b, axisCounts(b, named, rank));
  for (int64_t axis = 0; axis < rank; ++axis) {
    Value *start = i64(0), *end = i64(int64_t(1) << 62), *step = i64(1);
    for (int64_t i = 0; i < *count; ++i) {
      Value *here = b.value(OpKind::Eq, {scalarElement(b, named, i), i64(axis)});
      start = select(b, here, scalarElement(b, starts, i), start);
      end = select(b, here, scalarElement(b, ends, i), end);
      step = select(b, here, stepValue(i), step);
    }
    y = sliceAlong(y, axis, start, end, step, std::nullopt, axis == 0 ? valid : nullptr);
  }
  return y;
}

Values convertSlice(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  int64_t rank = x->type().rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = attrInts(n, "starts");
    ends = attrInts(n, "ends");
    axes = attrInts(n, "axes");
  } else if (Value *r = symbolicSlice(ctx, n)) {
    return {r};
  } else if (!ctx.constantInput(n, 1) || !ctx.constantInput(n, 2) ||
             (ctx.input(n, 3) && !ctx.constantInput(n, 3)) ||
             (ctx.input(n, 4) && !ctx.constantInput(n, 4))) {
    return {dataSlice(ctx, n)};
  } else {
    starts = ints(ctx.requireConstantInput(n, 1, "starts"));
    ends = ints(ctx.requireConstantInput(n, 2, "ends"));
    if (ctx.input(n, 3))
      axes = ints(ctx.requireConstantInput(n, 3, "axes"));
    if (ctx.input(n, 4))
      steps = ints(ctx.requireConstantInput(n, 4, "steps"));
  }
  if (starts.size() != ends.size())
    throw ConvertError("starts and ends differ in length");
  for (int64_t &a : axes)
    a = normalizeAxis(a, rank);
  for (int64_t s : steps)
    if (s == 0)
      throw ConvertError("slice step 0");
  return {slice(ctx.builder(), x, starts, ends, axes, steps)};
}

// --- Padding and tiling ------------------------------------------------------------------------

// A pad read from data (ONNX: a negative one crops) as a pad entry: a size can only be >= 0, so the
// size read is what that side leaves of the axis, `len + pad` (< 0 where the crop takes more than
// the axis holds, or `valid` is false: the run fails saying `invalid`), and the entry is that
// size minus the axis' length. A pad past 2^62 is taken as 2^62 (a size over every limit).
Dim signedDataPad(ImportContext &ctx, Value *x, int64_t axis, Value *pad, const std::string &name,
                  Value *valid, std::string invalid) {
  Builder &b = ctx.builder();
  const Dim &len = x->type().dims[static_cast<size_t>(axis)];
  Value *lenValue =
      len.isStatic()
          ? b.scalar(DType::I64, double(len.size))
          : scalarElement(b, b.value(OpKind::Shape, {x}, {{"start", Attribute(axis)},
                                                          {"end", Attribute(axis + 1)}}), 0);
  Value *left = add(b, lenValue, minimum(b, pad, b.scalar(DType::I64, double(int64_t(1) << 62))));
  invalid = invalid.empty() ? "a pad crops more than its axis holds"
                            : invalid + " or a pad crops more than its axis holds";
  const Dim size = valid ? checkedDataDim(ctx, left, valid, name, invalid)
                         : dataDim(ctx, left, name, invalid);
  return Dim::of(size.asExpr() - len.asExpr());
}

// Pads read from data for `axes` (normalized, known at import): begins then ends, or a formula
// where shape arithmetic knows one (either sign: the plan checks the crops); each entry read
// from data as signedDataPad.
std::vector<Dim> signedDataPads(ImportContext &ctx, const Node &n, Value *x, Value *given,
                                const std::vector<int64_t> &axes) {
  const auto m = static_cast<int64_t>(axes.size());
  const TensorType &type = given->type();
  if (type.rank() != 1 || type.dims[0] != Dim(2 * m) || isFloat(type.dtype) ||
      type.dtype == DType::Bool)
    throw ConvertError("pads must be a 1-D integer tensor of " + std::to_string(2 * m) +
                       " entries for " + std::to_string(m) + " axes, got " + type.str());
  std::vector<Dim> pads;
  for (int64_t j = 0; j < 2 * m; ++j) {
    if (std::optional<SymExpr> f = ctx.elementFormula(given, j)) {
      pads.push_back(Dim::of(*f));
      continue;
    }
    pads.push_back(signedDataPad(ctx, x, axes[static_cast<size_t>(j % m)],
                                 scalarElement(ctx.builder(), given, j),
                                 n.output(0) + "_pad" + std::to_string(j), nullptr, ""));
  }
  return pads;
}

// Pad with axes read from data: each axis' begin and end pads taken from the entry naming it
// (none: 0), all read from data as signedDataPad (an axis named twice fails the run).
std::vector<Dim> padsForDataAxes(ImportContext &ctx, const Node &n, Value *x, Value *axes) {
  Builder &b = ctx.builder();
  const int64_t rank = x->type().rank(), m = axesLength(axes);
  Value *given = requiredInput(ctx, n, 1, "pads");
  if (given->type().rank() != 1 || given->type().dims[0] != Dim(2 * m) ||
      isFloat(given->type().dtype) || given->type().dtype == DType::Bool)
    throw ConvertError("pads must be a 1-D integer tensor of " + std::to_string(2 * m) +
                       " entries for " + std::to_string(m) + " axes, got " + given->type().str());
  Value *named = runtimeAxes(b, reshapeTo(b, axes, {Dim(m)}), rank);
  Value *once = eachAxisOnce(b, axisCounts(b, named, rank));
  std::vector<Value *> full(static_cast<size_t>(2 * rank));
  for (int64_t d = 0; d < rank; ++d) {
    Value *begin = b.scalar(DType::I64, 0), *end = begin;
    for (int64_t i = 0; i < m; ++i) {
      Value *here = b.value(OpKind::Eq, {scalarElement(b, named, i), b.scalar(DType::I64, double(d))});
      begin = select(b, here, scalarElement(b, given, i), begin);
      end = select(b, here, scalarElement(b, given, i + m), end);
    }
    full[static_cast<size_t>(d)] = begin;
    full[static_cast<size_t>(d + rank)] = end;
  }
  std::vector<Dim> pads;
  for (int64_t j = 0; j < 2 * rank; ++j)
    pads.push_back(signedDataPad(ctx, x, j % rank, full[static_cast<size_t>(j)],
                                 n.output(0) + "_pad" + std::to_string(j), j == 0 ? once : nullptr,
                                 j == 0 ? "the axes name an axis twice" : ""));
  return pads;
}

Values convertPad(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "data");
  int64_t rank = x->type().rank();
  DType dt = x->type().dtype;
  std::string mode = attrString(n, "mode", "constant");
  std::vector<Dim> pads;
  Value *value = nullptr;
  if (ctx.opset() < 11) {
    for (int64_t p : attrInts(n, "pads"))
      pads.emplace_back(p);
    value = b.scalar(dt, attrFloat(n, "value", 0.f));
  } else {
    // The axes the pads are for: all, in order, unless given (known at import, or read from data).
    const bool constantAxes = ctx.input(n, 3) && ctx.constantInput(n, 3);
    std::vector<int64_t> axes;
    if (constantAxes) {
      axes = ints(ctx.requireConstantInput(n, 3, "axes"));
      if (rank < 1 && !axes.empty()) // normalizeAxis lets a scalar keep axis 0 / -1
        throw ConvertError("Pad of a scalar takes no axes");
      for (int64_t &a : axes)
        a = normalizeAxis(a, rank);
    } else {
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    }
    if (Value *dataAxes = ctx.input(n, 3); dataAxes && !constantAxes) {
      pads = padsForDataAxes(ctx, n, x, dataAxes);
    } else if (ctx.constantInput(n, 1) || ctx.symbolicInput(n, 1)) {
      // Constants, or formulas of the symbolic dims (a window's remainder, (7 - w % 7) % 7).
      pads = requireDimsInput(ctx, n, 1, "pads");
    } else {
      pads = signedDataPads(ctx, n, x, requiredInput(ctx, n, 1, "pads"), axes);
    }
    if (Value *v = ctx.input(n, 2)) {
      if (v->type().dtype != dt)
        throw ConvertError("constant_value is " + v->type().str() + " but data is " +
                           x->type().str());
      auto n1 = v->type().staticNumElements();
      if (!n1 || *n1 != 1)
        throw ConvertError("constant_value must hold one element, got " + v->type().str());
      value = v->type().rank() == 0 ? v : reshapeTo(b, v, {});
    } else {
      value = b.scalar(dt, 0);
    }
    if (constantAxes) {
      if (pads.size() != 2 * axes.size())
        throw ConvertError("pads has " + std::to_string(pads.size()) + " entries for " +
                           std::to_string(axes.size()) + " axes");
      std::vector<Dim> full(2 * rank, Dim(0));
      for (size_t i = 0; i < axes.size(); ++i) {
        full[axes[i]] = pads[i];
        full[axes[i] + rank] = pads[i + axes.size()];
      }
      pads = full;
    }
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    throw ConvertError("pads has " + std::to_string(pads.size()) + " entries for rank " +
                       std::to_string(rank));
  if (!parseEnum<PadMode>(mode))
    throw ConvertError("unsupported pad mode '" + mode + "'");
  return {b.value(OpKind::Pad, {x, value},
                  {{"pads", Attribute::dims(pads)}, {"mode", Attribute(mode)}})};
}

Values convertTile(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "input");
  const auto &dims = x->type().dims;
  if (!ctx.constantInput(n, 1))
    if (Value *given = ctx.input(n, 1)) {
      // Repeats read from data: [d0, ...] -> [1, d0, ...] -> expand to [r0, d0, ...] -> [r0*d0, ...]
      std::vector<Dim> reps = dataDims(ctx, given, n.output(0));
      if (reps.size() != dims.size())
        throw ConvertError("repeats has " + std::to_string(reps.size()) + " entries for rank " +
                           std::to_string(dims.size()));
      std::vector<Dim> interleaved, expanded, result;
      for (size_t a = 0; a < dims.size(); ++a) {
        interleaved.insert(interleaved.end(), {Dim(1), dims[a]});
        expanded.insert(expanded.end(), {reps[a], dims[a]});
        result.push_back(Dim::of(reps[a].asExpr() * dims[a].asExpr()));
      }
      Value *v = b.value(OpKind::Expand, {reshapeTo(b, x, interleaved)},
                         {{"shape", Attribute::dims(expanded)}});
      return {reshapeExactly(b, v, result)};
    }
  std::vector<int64_t> repeats = ints(ctx.requireConstantInput(n, 1, "repeats"));
  if (static_cast<int64_t>(repeats.size()) != x->type().rank())
    throw ConvertError("repeats has " + std::to_string(repeats.size()) + " entries for rank " +
                       std::to_string(x->type().rank()));
  for (int64_t r : repeats)
    if (r < 0)
      throw ConvertError("negative repeat " + std::to_string(r));
  if (std::all_of(repeats.begin(), repeats.end(), [](int64_t r) { return r == 1; }))
    return {x};
  if (!x->type().isStatic()) {
    // Symbolic dims: concatenate copies axis by axis.
    Value *v = x;
    for (size_t a = 0; a < repeats.size(); ++a) {
      if (repeats[a] == 1)
        continue;
      if (repeats[a] == 0)
        throw ConvertError("repeat 0 of a symbolic shape is unsupported");
      // A concat of `repeats` operands: bounded before that many are made.
      if (const int64_t limit = processLimits().maxOps; repeats[a] > limit)
        throw ConvertError("repeat " + std::to_string(repeats[a]) + " of a symbolic shape, " +
                           overLimit(&Limits::maxOps, limit));
      Values copies(repeats[a], v);
      v = b.value(OpKind::Concat, copies, {{"axis", Attribute(static_cast<int64_t>(a))}});
    }
    return {v};
  }
  // [d0, d1, ...] -> [1, d0, 1, d1, ...] -> expand to [r0, d0, r1, d1, ...] -> [r0*d0, ...]
  std::vector<Dim> interleaved;
  std::vector<int64_t> expanded, result;
  for (size_t a = 0; a < dims.size(); ++a) {
    interleaved.push_back(Dim(1));
    interleaved.push_back(dims[a]);
    expanded.push_back(repeats[a]);
    expanded.push_back(dims[a].size);
    std::optional<int64_t> tiled = shape::checkedMul(repeats[a], dims[a].size);
    if (!tiled) // repeats come from the file
      throw ConvertError("repeat " + std::to_string(repeats[a]) + " of dim " +
                         std::to_string(dims[a].size) + " overflows int64");
    result.push_back(*tiled);
  }
  Value *v = reshapeTo(b, x, interleaved);
  v = b.value(OpKind::Expand, {v}, {{"shape", Attribute(expanded)}});
  return {b.value(OpKind::Reshape, {v}, {{"shape", Attribute(result)}, {"allowzero", Attribute(int64_t{1})}})};
}

// Expand to a shape read from data: each target entry broadcast with x's dim there, which must
// be static (1: the entry; another size: kept, the entry being 1 or that size).
Value *expandToData(ImportContext &ctx, const Node &n, Value *x, Value *given) {
  const auto &dims = x->type().dims;
  std::vector<Dim> shape = dataDims(ctx, given, n.output(0));
  if (shape.size() < dims.size()) // a shorter shape broadcasts as if led by 1s
    shape.insert(shape.begin(), dims.size() - shape.size(), Dim(1));
  const size_t lead = shape.size() - dims.size();
  for (size_t i = lead; i < shape.size(); ++i) {
    const Dim &d = dims[i - lead];
    if (!d.isStatic())
      throw ConvertError("an Expand to a shape read from data needs static input dims, got " +
                         x->type().str());
    if (d.size != 1)
      shape[i] = d;
  }
  return ctx.builder().value(OpKind::Expand, {x}, {{"shape", Attribute::dims(shape)}});
}

Values convertExpand(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "input");
  // A symbolic target dim that x has there is kept (1); another one is broadcast to from a dim
  // of 1 (x must have 1 there when bound: the plan checks it).
  const auto &dims = x->type().dims;
  if (!ctx.constantInput(n, 1) && !ctx.symbolicInput(n, 1))
    if (Value *given = ctx.input(n, 1))
      return {expandToData(ctx, n, x, given)};
  std::vector<Dim> shape = requireDimsInput(ctx, n, 1, "shape");
  const size_t lead = shape.size() - std::min(shape.size(), dims.size());
  for (size_t i = lead; i < shape.size(); ++i)
    if (!shape[i].isStatic() && shape[i] == dims[i - lead])
      shape[i] = Dim(1);
  return {ctx.builder().value(OpKind::Expand, {x}, {{"shape", Attribute::dims(shape)}})};
}

// --- Gathers and scatters ------------------------------------------------------------------------

Values convertGather(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  Value *idx = requiredInput(ctx, n, 1, "indices");
  int64_t axis = normalizeAxis(attrInt(n, "axis", 0), x->type().rank());
  return {ctx.builder().value(OpKind::Gather, {x, idx}, {{"axis", Attribute(axis)}})};
}

Values convertGatherElements(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  Value *idx = requiredInput(ctx, n, 1, "indices");
  int64_t axis = normalizeAxis(attrInt(n, "axis", 0), x->type().rank());
  return {ctx.builder().value(OpKind::GatherElements, {x, idx}, {{"axis", Attribute(axis)}})};
}

Values convertGatherND(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  Value *idx = requiredInput(ctx, n, 1, "indices");
  return {ctx.builder().value(OpKind::GatherND, {x, idx},
                              {{"batch_dims", Attribute(attrInt(n, "batch_dims", 0))}})};
}

Values convertScatterElements(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  Value *idx = requiredInput(ctx, n, 1, "indices");
  Value *upd = requiredInput(ctx, n, 2, "updates");
  int64_t axis = normalizeAxis(attrInt(n, "axis", 0), x->type().rank());
  std::string reduction = attrString(n, "reduction", "none");
  return {ctx.builder().value(OpKind::ScatterElements, {x, idx, upd},
                              {{"axis", Attribute(axis)}, {"reduction", Attribute(reduction)}})};
}

Values convertScatterND(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  Value *idx = requiredInput(ctx, n, 1, "indices");
  Value *upd = requiredInput(ctx, n, 2, "updates");
  std::string reduction = attrString(n, "reduction", "none");
  return {ctx.builder().value(OpKind::ScatterND, {x, idx, upd},
                              {{"reduction", Attribute(reduction)}})};
}

// Reverses the first sequence_lens[b] steps of each batch entry: a gather_elements along the time
// axis at t' = len - 1 - t for t < len (len clamped to [0, T]), else t, computed when the model
// runs (the lengths may be data, the dims symbolic).
Values convertReverseSequence(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "input");
  Value *lens = requiredInput(ctx, n, 1, "sequence_lens");
  const TensorType &xt = x->type();
  int64_t rank = xt.rank();
  if (rank < 2)
    throw ConvertError("ReverseSequence needs rank >= 2, got " + xt.str());
  int64_t timeAxis = normalizeAxis(attrInt(n, "time_axis", 0), rank);
  int64_t batchAxis = normalizeAxis(attrInt(n, "batch_axis", 1), rank);
  if (timeAxis == batchAxis)
    throw ConvertError("time_axis and batch_axis must differ");
  if (lens->type().rank() != 1 || isFloat(lens->type().dtype) || lens->type().dtype == DType::Bool)
    throw ConvertError("sequence_lens must be a 1-D integer tensor, got " + lens->type().str());
  const Dim &batch = xt.dims[static_cast<size_t>(batchAxis)];
  if (lens->type().dims[0].isStatic() && batch.isStatic() && lens->type().dims[0] != batch)
    throw ConvertError("sequence_lens has " + lens->type().dims[0].str() +
                       " entries for a batch of " + batch.str());
  auto along = [&](Value *v, int64_t axis) {
    std::vector<Dim> dims(static_cast<size_t>(rank), Dim(1));
    dims[static_cast<size_t>(axis)] = v->type().dims[0];
    return reshapeTo(b, v, dims);
  };
  Value *t = along(b.value(OpKind::Iota, {x}, {{"axis", Attribute(timeAxis)}}), timeAxis);
  Value *steps = dimValue(b, x, timeAxis);
  // Each batch entry's length, gathered at its index: lengths fewer than the batch fail the
  // gather's index check.
  Value *len = b.value(OpKind::Gather,
                       {castTo(b, lens, DType::I64),
                        b.value(OpKind::Iota, {x}, {{"axis", Attribute(batchAxis)}})},
                       {{"axis", Attribute(int64_t{0})}});
  len = minimum(b, maximum(b, len, b.scalar(DType::I64, 0)), steps);
  len = along(len, batchAxis);
  Value *reversed = sub(b, sub(b, len, b.scalar(DType::I64, 1)), t);
  Value *idx = select(b, lessThan(b, t, len), reversed, t);
  idx = b.value(OpKind::Expand, {idx}, {{"shape", Attribute::dims(xt.dims)}});
  return {b.value(OpKind::GatherElements, {x, idx}, {{"axis", Attribute(timeAxis)}})};
}

// --- Depth <-> space --------------------------------------------------------------------------

struct NCHW {
  Dim n;
  int64_t c;
  Dim h, w; // symbolic in a model run at any image size
};

NCHW nchw(Value *x, const char *op) {
  const auto &d = x->type().dims;
  if (d.size() != 4 || !d[1].isStatic())
    throw ConvertError(std::string(op) + " needs a 4-D input with static channels, got " +
                       x->type().str());
  return {d[0], d[1].size, d[2], d[3]};
}

// dim * factor (factor >= 1), or nullopt where a static product overflows int64.
std::optional<Dim> scaledDim(const Dim &d, int64_t factor) {
  if (!d.isStatic())
    return Dim::of(d.expr * SymExpr(factor)); // symbolic sizes stay far below 2^62
  std::optional<int64_t> v = shape::checkedMul(d.size, factor);
  return v ? std::optional<Dim>(Dim(*v)) : std::nullopt;
}

Values convertDepthToSpace(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "input");
  NCHW s = nchw(x, "DepthToSpace");
  int64_t bs = attrInt(n, "blocksize", 0);
  std::optional<int64_t> square = bs > 0 ? shape::checkedMul(bs, bs) : std::nullopt;
  if (!square || s.c % *square != 0)
    throw ConvertError("blocksize " + std::to_string(bs) + " does not divide channels " +
                       std::to_string(s.c));
  std::optional<Dim> h = scaledDim(s.h, bs), w = scaledDim(s.w, bs);
  if (!h || !w) // static H and W need not be small (e.g. after Expand)
    throw ConvertError("blocksize " + std::to_string(bs) + " makes H or W overflow int64");
  std::string mode = attrString(n, "mode", "DCR");
  int64_t c = s.c / *square;
  Value *v;
  if (mode == "DCR") {
    v = reshapeTo(b, x, {s.n, bs, bs, c, s.h, s.w});
    v = b.value(OpKind::Transpose, {v}, {{"perm", Attribute(std::vector<int64_t>{0, 3, 4, 1, 5, 2})}});
  } else if (mode == "CRD") {
    v = reshapeTo(b, x, {s.n, c, bs, bs, s.h, s.w});
    v = b.value(OpKind::Transpose, {v}, {{"perm", Attribute(std::vector<int64_t>{0, 1, 4, 2, 5, 3})}});
  } else {
    throw ConvertError("unknown DepthToSpace mode '" + mode + "'");
  }
  return {reshapeTo(b, v, {s.n, c, *h, *w})};
}

Values convertSpaceToDepth(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "input");
  NCHW s = nchw(x, "SpaceToDepth");
  int64_t bs = attrInt(n, "blocksize", 0);
  if (bs <= 0 || (s.h.isStatic() && s.h.size % bs != 0) || (s.w.isStatic() && s.w.size % bs != 0))
    throw ConvertError("blocksize " + std::to_string(bs) + " does not divide H and W");
  std::optional<int64_t> c = shape::checkedMul(s.c, bs); // bs divides H = W = 0 whatever it is
  if (c)
    c = shape::checkedMul(*c, bs);
  if (!c)
    throw ConvertError("blocksize " + std::to_string(bs) + " makes the channels overflow int64");
  // A symbolic H or W is split as H / bs blocks of bs: the reshape's element count, checked when
  // bound, fails an H that bs does not divide.
  auto blocks = [&](const Dim &d) {
    return d.isStatic() ? Dim(d.size / bs) : Dim::of(SymExpr::floorDiv(d.expr, SymExpr(bs)));
  };
  const Dim hb = blocks(s.h), wb = blocks(s.w);
  Value *v = reshapeTo(b, x, {s.n, s.c, hb, bs, wb, bs});
  v = b.value(OpKind::Transpose, {v}, {{"perm", Attribute(std::vector<int64_t>{0, 3, 5, 1, 2, 4})}});
  return {reshapeTo(b, v, {s.n, *c, hb, wb})};
}

// --- Identity-like ---------------------------------------------------------------------------

Values convertIdentity(ImportContext &ctx, const Node &n) {
  return {requiredInput(ctx, n, 0, "input")};
}

// Inference-mode Dropout: the data passes through; the mask is all true.
Values convertDropout(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  if (ctx.opset() >= 12 && ctx.input(n, 2)) {
    // Training with ratio 0 drops nothing, so it is still the identity.
    std::optional<Tensor> ratio = ctx.constantInput(n, 1);
    const bool dropsNothing = ratio && ratio->numElements() == 1 && ratio->getDouble(0) == 0;
    if (std::optional<Tensor> training = ctx.constantInput(n, 2)) {
      if (training->numElements() > 0 && training->getInt(0) != 0 && !dropsNothing &&
          (ratio || !ctx.input(n, 1)))
        throw ConvertError("training_mode=true is unsupported (inference only)");
    }
    if (!dropsNothing) {
      // Training mode or the ratio read from data: the identity while nothing is dropped
      // (not training, or a ratio of 0); dropping needs random numbers, which strata has no op
      // for, so then the run fails (a size that goes negative, named for why).
      Builder &b = ctx.builder();
      Value *training = scalarElement(b, requiredInput(ctx, n, 2, "training_mode"), 0);
      Value *rate = ctx.input(n, 1) ? castTo(b, reshapeTo(b, ctx.input(n, 1), {}), DType::F64)
                                    : b.scalar(DType::F64, 0.5);
      Value *drops = b.value(OpKind::And,
                             {b.value(OpKind::Not, {b.value(OpKind::Eq, {training,
                                                                         b.scalar(DType::I64, 0)})}),
                              b.value(OpKind::Not, {b.value(OpKind::Eq, {rate,
                                                                         b.scalar(DType::F64, 0)})})});
      x = requireAtRun(ctx, x, b.value(OpKind::Not, {drops}), n.output(0) + "_training",
                       "training mode with a nonzero ratio drops elements at random, which "
                       "strata does not support");
    }
  }
  if (ctx.opset() < 7 && attrInt(n, "is_test", 0) == 0)
    throw ConvertError("training-mode Dropout is unsupported");
  Values results{x};
  if (n.output_size() > 1 && !n.output(1).empty() && !x->type().isStatic()) {
    // All true in x's (symbolic) shape: c or not c, c any bool of x's elements.
    Builder &b = ctx.builder();
    Value *c = b.value(OpKind::Cast, {x}, {{"to", Attribute(DType::Bool)}});
    results.push_back(b.value(OpKind::Or, {c, b.value(OpKind::Not, {c})}));
  } else if (n.output_size() > 1 && !n.output(1).empty()) {
    Shape shape = requireStaticShape(x, "Dropout's mask output");
    Tensor mask(DType::Bool, shape);
    for (int64_t i = 0; i < mask.numElements(); ++i)
      mask.setInt(i, 1);
    results.push_back(ctx.builder().constant(mask));
  }
  return results;
}

Values convertShape(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  int64_t rank = x->type().rank();
  int64_t start = attrInt(n, "start", 0), end = attrInt(n, "end", rank);
  auto clampAxis = [rank](int64_t a) {
    if (a < 0)
      a += rank;
    return std::clamp<int64_t>(a, 0, rank);
  };
  start = clampAxis(start);
  end = clampAxis(end);
  std::vector<int64_t> dims;
  bool symbolic = false;
  for (int64_t i = start; i < end; ++i) {
    const Dim &d = x->type().dims[i];
    symbolic |= !d.isStatic();
    dims.push_back(d.size);
  }
  // Symbolic dims: a run-time value (the importer also knows it as formulas: symbolicInput).
  if (symbolic)
    return {ctx.builder().value(OpKind::Shape, {x},
                                {{"start", Attribute(start)}, {"end", Attribute(std::max(start, end))}})};
  return {ctx.builder().constant(
      Tensor::fromVector(DType::I64, {static_cast<int64_t>(dims.size())}, dims))};
}

Values convertSize(ImportContext &ctx, const Node &n) {
  Value *x = requiredInput(ctx, n, 0, "data");
  auto count = x->type().staticNumElements();
  if (!count)
    throw ConvertError("the size of dynamic shape " + x->type().str() + " is unsupported");
  return {ctx.builder().scalar(DType::I64, static_cast<double>(*count))};
}

// Trilu keeps the upper (or lower) triangle of the last two dims: a select whose mask compares
// column - row with k, all computed when the model runs (k may be data; the dims symbolic).
Values convertTrilu(ImportContext &ctx, const Node &n) {
  Builder &b = ctx.builder();
  Value *x = requiredInput(ctx, n, 0, "input");
  const int64_t rank = x->type().rank();
  if (rank < 2)
    throw ConvertError("Trilu needs rank >= 2, got " + x->type().str());
  Value *k = b.scalar(DType::I64, 0);
  if (Value *given = ctx.input(n, 1)) {
    auto count = given->type().staticNumElements();
    if (!count || *count != 1 || isFloat(given->type().dtype) || given->type().dtype == DType::Bool)
      throw ConvertError("k must be one integer, got " + given->type().str());
    k = scalarElement(b, given, 0);
  }
  Value *rows = b.value(OpKind::Iota, {x}, {{"axis", Attribute(rank - 2)}});
  rows = reshapeTo(b, rows, {x->type().dims[rank - 2], Dim(1)});
  Value *cols = b.value(OpKind::Iota, {x}, {{"axis", Attribute(rank - 1)}});
  Value *diagonal = sub(b, cols, rows); // j - i, [rows, cols]
  Value *keep = attrInt(n, "upper", 1) != 0 ? b.value(OpKind::Le, {k, diagonal})
                                            : b.value(OpKind::Le, {diagonal, k});
  return {b.value(OpKind::Select, {keep, x, b.scalar(x->type().dtype, 0)})};
}

} // namespace

void registerDataMovementConverters(ConverterTable &t) {
  t["Reshape"] = convertReshape;
  t["Flatten"] = convertFlatten;
  t["Squeeze"] = convertSqueeze;
  t["Unsqueeze"] = convertUnsqueeze;
  t["Transpose"] = convertTranspose;
  t["Concat"] = convertConcat;
  t["Split"] = convertSplit;
  t["Slice"] = convertSlice;
  t["Pad"] = convertPad;
  t["Tile"] = convertTile;
  t["Expand"] = convertExpand;
  t["Gather"] = convertGather;
  t["GatherElements"] = convertGatherElements;
  t["GatherND"] = convertGatherND;
  t["ScatterElements"] = convertScatterElements;
  t["Scatter"] = convertScatterElements; // deprecated alias (opset 9-10), no reduction
  t["ScatterND"] = convertScatterND;
  t["ReverseSequence"] = convertReverseSequence;
  t["DepthToSpace"] = convertDepthToSpace;
  t["SpaceToDepth"] = convertSpaceToDepth;
  t["Identity"] = convertIdentity;
  t["Dropout"] = convertDropout;
  t["Shape"] = convertShape;
  t["Size"] = convertSize;
  t["Trilu"] = convertTrilu;
}

} // namespace strata::onnx_import
