// Shape arithmetic on the elements of small integer tensors (ImportContext::symbolicInput): the
// row-major element moves of Transpose and Slice and the element-wise combination of two such
// tensors, for the importer's propagation of formulas (OnnxImporter.cpp, propagateSymbolic).
#include "ShapeValues.h"

#include "strata/support/ShapeMath.h"

#include <algorithm>

namespace strata::onnx_import {

std::optional<std::vector<SymExpr>>
pairwise(const std::optional<std::vector<SymExpr>> &a, const std::optional<std::vector<SymExpr>> &b,
         const std::function<std::optional<SymExpr>(const SymExpr &, const SymExpr &)> &fn) {
  if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1))
    return std::nullopt;
  std::vector<SymExpr> r;
  for (size_t k = 0; k < std::max(a->size(), b->size()); ++k) {
    std::optional<SymExpr> v = fn((*a)[a->size() == 1 ? 0 : k], (*b)[b->size() == 1 ? 0 : k]);
    if (!v)
      return std::nullopt;
    r.push_back(std::move(*v));
  }
  return r;
}

std::optional<std::vector<SymExpr>> transposeElements(const std::vector<SymExpr> &data,
                                                      const Shape &shape,
                                                      const std::vector<int64_t> &perm) {
  const size_t rank = shape.size();
  if (numElements(shape) != static_cast<int64_t>(data.size()))
    return std::nullopt;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)])
      return std::nullopt;
    seen[static_cast<size_t>(p)] = true;
  }
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  std::vector<SymExpr> out;
  std::vector<int64_t> idx(rank, 0); // index into the result
  for (size_t n = 0; n < data.size(); ++n) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d)
      src += idx[d] * strides[static_cast<size_t>(perm[d])];
    out.push_back(data[static_cast<size_t>(src)]);
    for (size_t d = rank; d-- > 0;) { // next result index, last dim fastest
      if (++idx[d] < shape[static_cast<size_t>(perm[d])])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

std::optional<std::vector<SymExpr>> sliceElements(ImportContext &ctx, const onnx::NodeProto &node,
                                                  const TensorType &type) {
  auto data = ctx.symbolicInput(node, 0);
  if (!data || !type.isStatic())
    return std::nullopt;
  const Shape shape = type.staticShape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (numElements(shape) != static_cast<int64_t>(data->size()))
    return std::nullopt;
  auto ints = [&](int i) -> std::optional<std::vector<int64_t>> {
    std::optional<Tensor> t = i < node.input_size() ? ctx.constantInput(node, i) : std::nullopt;
    if (!t)
      return std::nullopt;
    return t->toIntVector();
  };
  auto starts = ints(1), ends = ints(2);
  if (!starts || !ends || starts->size() != ends->size())
    return std::nullopt;
  std::vector<int64_t> axes(starts->size()), steps(starts->size(), 1);
  for (size_t i = 0; i < axes.size(); ++i)
    axes[i] = static_cast<int64_t>(i);
  if (node.input_size() > 3 && !node.input(3).empty()) {
    auto a = ints(3);
    if (!a || a->size() != axes.size())
      return std::nullopt;
    axes = *a;
  }
  if (node.input_size() > 4 && !node.input(4).empty()) {
    auto s = ints(4);
    if (!s || s->size() != steps.size())
      return std::nullopt;
    steps = *s;
  }
  std::vector<shape::SliceRange> ranges;
  for (int64_t d = 0; d < rank; ++d)
    ranges.push_back({0, shape[static_cast<size_t>(d)], 1});
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank || steps[i] == 0)
      return std::nullopt;
    ranges[static_cast<size_t>(a)] =
        shape::sliceRange(shape[static_cast<size_t>(a)], (*starts)[i], (*ends)[i], steps[i]);
  }
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  for (size_t d = static_cast<size_t>(rank); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  std::vector<SymExpr> out;
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  int64_t total = 1;
  for (const auto &range : ranges)
    total *= range.length;
  for (int64_t n = 0; n < total; ++n) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (ranges[d].start + idx[d] * ranges[d].step) * strides[d];
    out.push_back((*data)[static_cast<size_t>(src)]);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < ranges[d].length)
        break;
      idx[d] = 0;
    }
  }
  return out;
}

std::optional<SymExpr> reduceElements(const std::string &op, const std::vector<SymExpr> &data) {
  const bool prod = op == "ReduceProd", sum = op == "ReduceSum", min = op == "ReduceMin";
  if (!prod && !sum && !min && op != "ReduceMax")
    return std::nullopt;
  if (data.empty()) // an empty product or sum; no min or max
    return prod || sum ? std::optional<SymExpr>(SymExpr(prod ? 1 : 0)) : std::nullopt;
  SymExpr acc = data[0];
  for (size_t e = 1; e < data.size(); ++e)
    acc = prod  ? acc * data[e]
          : sum ? acc + data[e]
          : min ? SymExpr::min(acc, data[e])
                : SymExpr::max(acc, data[e]);
  return acc;
}

std::optional<std::vector<SymFloatRef>> floatShapeValues(
    const onnx::NodeProto &node, bool wide,
    const std::function<std::optional<std::vector<SymFloatRef>>(int)> &floats,
    const std::function<std::optional<std::vector<SymExpr>>(int)> &ints) {
  const std::string &type = node.op_type();
  using Elements = std::vector<SymFloatRef>;
  if (type == "Cast") {
    if (auto f = floats(0)) {
      for (SymFloatRef &e : *f)
        e = SymFloat::unary(SymFloat::Convert, e, wide);
      return f;
    }
    auto i = ints(0);
    if (!i)
      return std::nullopt;
    Elements r;
    for (const SymExpr &e : *i)
      r.push_back(SymFloat::fromInt(e, wide));
    return r;
  }
  if (type == "Identity" || type == "Unsqueeze" || type == "Squeeze" || type == "Reshape" ||
      type == "Flatten")
    return floats(0);
  if (type == "Concat") { // along axis 0: the operands' elements one after another
    for (const auto &a : node.attribute())
      if (a.name() == "axis" && a.i() != 0)
        return std::nullopt; // blocks interleave (not modelled)
    Elements r;
    for (int i = 0; i < node.input_size(); ++i) {
      auto part = floats(i);
      if (!part)
        return std::nullopt;
      r.insert(r.end(), part->begin(), part->end());
    }
    return r;
  }
  if (type == "Gather") {
    auto data = floats(0);
    auto idx = ints(1);
    if (!data || !idx)
      return std::nullopt;
    for (const auto &a : node.attribute())
      if (a.name() == "axis" && a.i() != 0)
        return std::nullopt;
    Elements r;
    const int64_t n = static_cast<int64_t>(data->size());
    for (const SymExpr &e : *idx) {
      std::optional<int64_t> k = e.constant();
      if (!k || *k < -n || *k >= n)
        return std::nullopt;
      r.push_back((*data)[static_cast<size_t>(*k < 0 ? *k + n : *k)]);
    }
    return r;
  }
  static const std::pair<const char *, SymFloat::Op> kUnary[] = {
      {"Floor", SymFloat::Floor}, {"Ceil", SymFloat::Ceil}, {"Round", SymFloat::Round}};
  for (const auto &[name, op] : kUnary)
    if (type == name) {
      auto a = floats(0);
      if (!a)
        return std::nullopt;
      for (SymFloatRef &e : *a)
        e = SymFloat::unary(op, e, wide);
      return a;
    }
  if ((type == "ReduceMax" || type == "ReduceMin") && node.input_size() == 1) {
    for (const auto &a : node.attribute())
      if (a.name() == "axes")
        return std::nullopt; // every element (a vector's only axis), or nothing known
    auto a = floats(0);
    if (!a || a->empty())
      return std::nullopt;
    SymFloatRef acc = (*a)[0];
    for (size_t k = 1; k < a->size(); ++k)
      acc = SymFloat::binary(type == "ReduceMax" ? SymFloat::Max : SymFloat::Min, acc, (*a)[k]);
    return Elements{acc};
  }
  if (type == "Reciprocal") {
    auto a = floats(0);
    if (!a)
      return std::nullopt;
    for (SymFloatRef &e : *a)
      e = SymFloat::binary(SymFloat::Div, SymFloat::constant(1, wide), e);
    return a;
  }
  static const std::pair<const char *, SymFloat::Op> kBinary[] = {
      {"Add", SymFloat::Add}, {"Sub", SymFloat::Sub}, {"Mul", SymFloat::Mul},
      {"Div", SymFloat::Div}, {"Min", SymFloat::Min}, {"Max", SymFloat::Max}};
  for (const auto &[name, op] : kBinary)
    if (type == name && node.input_size() == 2) {
      auto a = floats(0), b = floats(1);
      if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1))
        return std::nullopt;
      Elements r;
      for (size_t k = 0; k < std::max(a->size(), b->size()); ++k)
        r.push_back(SymFloat::binary(op, (*a)[a->size() == 1 ? 0 : k], (*b)[b->size() == 1 ? 0 : k]));
      return r;
    }
  return std::nullopt;
}

std::optional<Tensor> constantOfElements(const TensorType &type,
                                         const std::vector<SymExpr> &elements) {
  if (!type.isStatic() || !(isInteger(type.dtype) || type.dtype == DType::Bool))
    return std::nullopt;
  Tensor t(type.dtype, type.staticShape());
  if (t.numElements() != static_cast<int64_t>(elements.size()))
    return std::nullopt;
  for (size_t e = 0; e < elements.size(); ++e) {
    std::optional<int64_t> k = elements[e].constant();
    if (!k)
      return std::nullopt;
    t.setInt(static_cast<int64_t>(e), *k);
  }
  return t;
}

std::optional<std::vector<SymFloatRef>> floatElements(const Tensor &t) {
  if (t.dtype() != DType::F32 && t.dtype() != DType::F64)
    return std::nullopt;
  std::vector<SymFloatRef> r;
  for (double x : t.toDoubleVector())
    r.push_back(SymFloat::constant(x, t.dtype() == DType::F64));
  return r;
}

std::optional<SymExpr>
elementFormula(const Value *v, int64_t i,
               const std::function<std::optional<std::vector<SymExpr>>(const Value *)> &whole) {
  for (int depth = 0; v && depth < 64; ++depth) {
    const TensorType &t = v->type();
    std::optional<int64_t> n = t.staticNumElements();
    if (!n || i < 0 || i >= *n || isFloat(t.dtype))
      return std::nullopt;
    if (auto all = whole(v))
      return i < static_cast<int64_t>(all->size()) ? std::optional<SymExpr>((*all)[i])
                                                   : std::nullopt;
    const Op *def = v->isGraphInput() ? nullptr : v->definingOp();
    if (!def)
      return std::nullopt;
    switch (def->kind()) {
    case OpKind::Cast: // to an integer at least as wide: the same value
      if (!isInteger(t.dtype) || !isInteger(def->operand(0)->type().dtype) ||
          dtypeSize(t.dtype) < dtypeSize(def->operand(0)->type().dtype))
        return std::nullopt;
      v = def->operand(0);
      continue;
    case OpKind::Reshape: // the same element in row-major order
      v = def->operand(0);
      continue;
    case OpKind::Concat: {
      if (t.rank() != 1)
        return std::nullopt;
      const Value *holder = nullptr;
      for (const Value *o : def->operands()) {
        std::optional<int64_t> len = o->type().staticNumElements();
        if (!len)
          return std::nullopt;
        if (i < *len) {
          holder = o;
          break;
        }
        i -= *len;
      }
      v = holder;
      continue;
    }
    case OpKind::Slice: {
      const ops::SliceOp slice(*def);
      const TensorType &in = def->operand(0)->type();
      if (in.rank() != 1 || !in.dims[0].isStatic())
        return std::nullopt;
      const shape::SliceRange range = shape::sliceRange(in.dims[0].size, slice.starts()[0],
                                                        slice.ends()[0], slice.steps()[0]);
      if (i >= range.length)
        return std::nullopt;
      i = range.start + i * range.step;
      v = def->operand(0);
      continue;
    }
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<std::vector<SymExpr>>
integerShapeValues(ImportContext &ctx, const onnx::NodeProto &node, const TensorType &outType,
                   const std::function<std::optional<std::vector<SymExpr>>(int)> &in,
                   const std::function<void(const SymExpr &)> &markSize) {
  const std::string &type = node.op_type();
  std::optional<std::vector<SymExpr>> r;
  if (type == "Identity" || type == "Cast" || type == "Unsqueeze" || type == "Squeeze" ||
      type == "Reshape" || type == "Flatten") {
    r = in(0);
  } else if (type == "Equal") {
    // torch's expand writes Where(Equal(shape, -1), ones, shape): decided per element where
    // the difference is a constant, or a size is compared with a negative constant.
    auto negative = [](const SymExpr &e) { return e.constant() && *e.constant() < 0; };
    r = pairwise(in(0), in(1), [&](const SymExpr &x, const SymExpr &y) -> std::optional<SymExpr> {
      if (std::optional<int64_t> diff = (x - y).constant())
        return SymExpr(*diff == 0 ? 1 : 0);
      if ((ctx.knownNonNegative(x) && negative(y)) || (ctx.knownNonNegative(y) && negative(x)))
        return SymExpr(0);
      return std::nullopt;
    });
    if (!r)
      return std::nullopt;
  } else if (type == "Where") {
    auto c = in(0), a = in(1), b = in(2);
    if (!c || !a || !b)
      return std::nullopt;
    const size_t n = std::max({c->size(), a->size(), b->size()});
    for (const auto *v : {&*c, &*a, &*b})
      if (v->size() != n && v->size() != 1)
        return std::nullopt;
    r.emplace();
    for (size_t k = 0; k < n; ++k) {
      std::optional<int64_t> pick = (*c)[c->size() == 1 ? 0 : k].constant();
      if (!pick)
        return std::nullopt;
      r->push_back(*pick ? (*a)[a->size() == 1 ? 0 : k] : (*b)[b->size() == 1 ? 0 : k]);
    }
  } else if (type == "Transpose") {
    auto data = in(0);
    const TensorType &t = ctx.input(node, 0)->type();
    if (!data || !t.isStatic())
      return std::nullopt;
    const Shape shape = t.staticShape();
    std::vector<int64_t> perm(shape.size());
    for (size_t i = 0; i < perm.size(); ++i)
      perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
    perm = attrInts(node, "perm", perm);
    if (perm.size() != shape.size())
      return std::nullopt;
    r = transposeElements(*data, shape, perm);
    if (!r)
      return std::nullopt;
  } else if (type == "Gather") {
    auto data = in(0), idx = in(1);
    if (data && idx && attrInt(node, "axis", 0) == 0) {
      r.emplace();
      const int64_t n = static_cast<int64_t>(data->size());
      for (const SymExpr &e : *idx) {
        std::optional<int64_t> k = e.constant();
        if (!k || *k < -n || *k >= n)
          return std::nullopt;
        r->push_back((*data)[static_cast<size_t>(*k < 0 ? *k + n : *k)]);
      }
    }
  } else if (type == "Concat") {
    // Row-major blocks: per index before the axis, each part's slab in turn.
    const int64_t rank = outType.rank();
    const int64_t axis = attrInt(node, "axis", 0);
    if (rank < 1 || axis < -rank || axis >= rank)
      return std::nullopt;
    const Shape outShape = outType.staticShape();
    int64_t outer = 1;
    for (int64_t d = 0; d < (axis < 0 ? axis + rank : axis); ++d)
      outer *= outShape[static_cast<size_t>(d)];
    std::vector<std::vector<SymExpr>> parts;
    for (int i = 0; i < node.input_size(); ++i) {
      auto part = in(i);
      if (!part || (outer > 0 && part->size() % static_cast<size_t>(outer) != 0))
        return std::nullopt;
      parts.push_back(std::move(*part));
    }
    r.emplace();
    for (int64_t o = 0; o < outer; ++o)
      for (const auto &part : parts) {
        const size_t slab = part.size() / static_cast<size_t>(outer);
        r->insert(r->end(), part.begin() + o * slab, part.begin() + (o + 1) * slab);
      }
  } else if (type == "Slice" && ctx.input(node, 0)->type().rank() > 1) {
    r = sliceElements(ctx, node, ctx.input(node, 0)->type());
    if (!r)
      return std::nullopt;
  } else if (type == "Slice") {
    auto data = in(0), starts = in(1), ends = in(2);
    std::optional<std::vector<SymExpr>> steps = node.input_size() > 4 ? in(4) : std::nullopt;
    if (!data || !starts || !ends || starts->size() != 1 || ends->size() != 1)
      return std::nullopt;
    auto constant = [](const std::optional<std::vector<SymExpr>> &v) -> std::optional<int64_t> {
      return v && v->size() == 1 ? (*v)[0].constant() : std::nullopt;
    };
    std::optional<int64_t> b = constant(starts), e = constant(ends);
    int64_t step = steps ? constant(steps).value_or(0) : 1;
    if (!b || !e || step == 0)
      return std::nullopt;
    shape::SliceRange range =
        shape::sliceRange(static_cast<int64_t>(data->size()), *b, *e, step);
    r.emplace();
    for (int64_t k = 0; k < range.length; ++k)
      r->push_back((*data)[static_cast<size_t>(range.start + k * range.step)]);
  } else if (type.rfind("Reduce", 0) == 0 && node.input_size() <= 1 &&
             !hasAttr(node, "axes")) { // every element (a 1-D vector's only axis)
    auto v = in(0);
    std::optional<SymExpr> acc = v ? reduceElements(type, *v) : std::nullopt;
    if (!acc)
      return std::nullopt;
    r = std::vector<SymExpr>{*acc};
  } else if (type == "Add" || type == "Sub" || type == "Mul" || type == "Div" ||
             type == "Mod" || type == "Min" || type == "Max") {
    r = pairwise(in(0), in(1), [&](const SymExpr &x, const SymExpr &y) -> std::optional<SymExpr> {
      std::optional<SymExpr> v;
      if (type == "Add")
        v = x + y;
      else if (type == "Sub")
        v = x - y;
      else if (type == "Mul")
        v = x * y;
      else if (type == "Min")
        v = SymExpr::min(x, y);
      else if (type == "Max")
        v = SymExpr::max(x, y);
      else if (type == "Mod") { // fmod=0: the divisor's sign, floor modulo (SymExpr::mod)
        std::optional<int64_t> d = y.constant();
        if (!d || *d <= 0 || (attrInt(node, "fmod", 0) && !ctx.knownNonNegative(x)))
          return std::nullopt;
        v = SymExpr::mod(x, y);
      } else if (std::optional<int64_t> d = y.constant();
                 (d ? *d > 0 : ctx.knownNonNegative(y)) && ctx.knownNonNegative(x)) {
        v = SymExpr::floorDiv(x, y); // truncation = floor for sizes (a batch of windows
                                     // over the window count: n*k / k)
      } else {
        return std::nullopt;
      }
      // Sizes combined by + * / min max stay sizes; a floor modulo by a positive constant
      // is one too.
      if ((type != "Sub" && ctx.knownNonNegative(x) && ctx.knownNonNegative(y)) || type == "Mod")
        markSize(*v);
      return v;
    });
    if (!r)
      return std::nullopt;
  }
  return r;
}

} // namespace strata::onnx_import
