// Binding symbolic dims to sizes (see Specialize.h).
#include "strata/graph/Specialize.h"

#include "strata/graph/Clone.h"
#include "strata/graph/ControlFlow.h"
#include "strata/graph/TypeInference.h"
#include "strata/support/Error.h"

#include <set>

namespace strata {

namespace {

std::optional<int64_t> evaluateDim(const Dim &d, const std::map<std::string, int64_t> &sizes) {
  if (d.isStatic())
    return d.size;
  return d.expr.evaluate([&](const std::string &n) {
    auto it = sizes.find(n);
    return it == sizes.end() ? std::nullopt : std::optional<int64_t>(it->second);
  });
}

// The size of each bound symbol as an expression, for SymExpr::substitute.
std::function<std::optional<SymExpr>(const std::string &)>
sizeOf(const std::map<std::string, int64_t> &sizes) {
  return [&sizes](const std::string &n) -> std::optional<SymExpr> {
    auto it = sizes.find(n);
    return it == sizes.end() ? std::nullopt : std::optional<SymExpr>(SymExpr(it->second));
  };
}

Dim substituteDim(const Dim &d, const std::map<std::string, int64_t> &sizes) {
  return d.isStatic() ? d : Dim::of(d.expr.substitute(sizeOf(sizes)));
}

// Re-infers the result types of `g`'s ops from its (re-typed) inputs; an if/loop types its
// regions' inputs from its operands, re-infers them, and takes its results from them.
llvm::Error retypeOps(Graph &g, const std::map<std::string, int64_t> &sizes) {
  std::vector<TensorType> operandTypes;
  for (Op &op : g.ops()) {
    if (isControlFlow(op)) {
      substituteAttributeDims(op, sizeOf(sizes)); // a loop's max_trips
      for (unsigned r = 0; r < op.numResults(); ++r) { // a loop's scan length
        TensorType t = op.result(r)->type();
        for (Dim &d : t.dims)
          d = substituteDim(d, sizes);
        op.result(r)->setType(std::move(t));
      }
      typeRegionInputs(op);
      for (unsigned r = 0; r < op.numRegions(); ++r)
        if (llvm::Error err = retypeOps(op.region(r), sizes))
          return err;
      if (llvm::Error err = setResultTypes(op))
        return makeError(diagnose(op, "at the bound sizes: " + llvm::toString(std::move(err))));
      continue;
    }
    if (op.numRegions() != 0)
      return makeError(diagnose(op, "cannot bind symbolic dims inside a region"));
    substituteAttributeDims(op, sizeOf(sizes));
    operandTypes.clear();
    for (const Value *v : op.operands())
      operandTypes.push_back(v->type());
    auto types = inferResultTypes(op.kind(), operandTypes, op.attrs());
    if (!types)
      return makeError(diagnose(op, "at the bound sizes: " + llvm::toString(types.takeError())));
    for (unsigned r = 0; r < op.numResults() && r < types->size(); ++r) {
      // A dim the shape function leaves to a fresh symbol (a data-dependent size, a
      // broadcast of two symbols) keeps the symbol the graph named it by: a fresh name is
      // the same for every op of a kind, the graph's are its own.
      TensorType t = std::move((*types)[r]);
      const TensorType &old = op.result(r)->type();
      if (old.rank() == t.rank())
        for (size_t d = 0; d < t.dims.size(); ++d)
          if (const std::string *sym = t.dims[d].symbolName();
              sym && !sizes.count(*sym) && old.dims[d].symbolName())
            t.dims[d] = old.dims[d];
      op.result(r)->setType(std::move(t));
    }
  }
  return llvm::Error::success();
}

} // namespace

void substituteAttributeDims(
    Op &op, const std::function<std::optional<SymExpr>(const std::string &)> &lookup) {
  std::vector<std::pair<std::string, Attribute>> changed;
  for (const auto &[name, attr] : op.attrs()) {
    if (attr.kind() != AttrKind::Dims)
      continue;
    std::vector<Dim> dims = attr.getDims();
    for (Dim &d : dims)
      if (!d.isStatic())
        d = Dim::of(d.expr.substitute(lookup));
    const AttrSpec *spec = opInfo(op.kind()).findAttr(name);
    if (spec && spec->form == AttrForm::Dim && dims.size() == 1 && dims[0].isStatic())
      changed.emplace_back(name, Attribute(dims[0].size)); // a single dim's normal form
    else
      changed.emplace_back(name, Attribute::dims(dims));
  }
  for (auto &[name, attr] : changed)
    op.setAttr(name, std::move(attr));
}

bool needsShapeSpecialization(const Graph &g) {
  // The compiled engines bind one plain symbol, a leading batch; anything else (a symbolic
  // dim further in, a formula, two different batch symbols or a fresh one no input binds, as
  // an elementwise op of [?n, 4] and [?m, 4] makes) is compiled per input shape.
  std::set<std::string> batchSymbols;
  auto needs = [&](const Value &v) {
    const auto &dims = v.type().dims;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d].isStatic())
        continue;
      const std::string *sym = dims[d].symbolName();
      if (d != 0 || !sym)
        return true;
      batchSymbols.insert(*sym);
    }
    return batchSymbols.size() > 1;
  };
  for (const Value *in : g.inputs())
    if (needs(*in))
      return true;
  for (const Op &op : g.ops())
    for (unsigned r = 0; r < op.numResults(); ++r)
      if (needs(*op.result(r)))
        return true;
  return false;
}

llvm::Expected<std::map<std::string, int64_t>> bindInputSymbols(const Graph &g,
                                                                const std::vector<Shape> &shapes) {
  std::vector<std::pair<std::string, TensorType>> inputs;
  for (unsigned i = 0; i < g.numInputs(); ++i)
    inputs.emplace_back(g.input(i)->name(), g.input(i)->type());
  return bindInputSymbols(inputs, shapes);
}

llvm::Expected<std::map<std::string, int64_t>>
bindInputSymbols(const std::vector<std::pair<std::string, TensorType>> &inputs,
                 const std::vector<Shape> &shapes) {
  auto label = [&](size_t i) {
    return "input '" + (inputs[i].first.empty() ? "#" + std::to_string(i) : inputs[i].first) +
           "'";
  };
  if (shapes.size() != inputs.size())
    return makeError("expected " + std::to_string(inputs.size()) + " inputs, got " +
                     std::to_string(shapes.size()));
  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::string> boundBy;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType &t = inputs[i].second;
    if (static_cast<int64_t>(shapes[i].size()) != t.rank())
      return makeError(label(i) + ": expected rank " + std::to_string(t.rank()) + ", got " +
                       std::to_string(shapes[i].size()) + " (shape [" +
                       shapeToString(shapes[i]) + "])");
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      const Dim &dim = t.dims[d];
      const std::string *name = dim.symbolName();
      if (!name)
        continue;
      auto [it, inserted] = sizes.try_emplace(*name, shapes[i][d]);
      if (inserted)
        boundBy[*name] = label(i);
      else if (it->second != shapes[i][d])
        return makeError(label(i) + ": dim " + std::to_string(d) + " expected " + dim.str() +
                         " = " + std::to_string(it->second) + " (bound by " + boundBy[*name] +
                         "), got " + std::to_string(shapes[i][d]));
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType &t = inputs[i].second;
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      if (t.dims[d].symbolName())
        continue;
      std::optional<int64_t> want = evaluateDim(t.dims[d], sizes);
      if (!want)
        return makeError(label(i) + ": dim " + std::to_string(d) + " is " + t.dims[d].str() +
                         ", which uses a symbol no input dim binds");
      if (*want != shapes[i][d])
        return makeError(label(i) + ": expected dim " + std::to_string(d) + " = " +
                         (t.dims[d].isStatic() ? "" : t.dims[d].str() + " = ") +
                         std::to_string(*want) + ", got " + std::to_string(shapes[i][d]));
    }
  }
  return sizes;
}

llvm::Expected<std::unique_ptr<Graph>> specializeGraph(const Graph &g,
                                                       const std::map<std::string, int64_t> &sizes) {
  std::unique_ptr<Graph> copy = cloneGraph(g);
  try {
    for (Value *in : copy->inputs()) {
      TensorType t = in->type();
      for (Dim &d : t.dims)
        d = substituteDim(d, sizes);
      in->setType(std::move(t));
    }
    if (llvm::Error err = retypeOps(*copy, sizes))
      return std::move(err);
  } catch (const SymExprError &e) {
    return makeError(std::string("binding symbolic dims: ") + e.what());
  }
  return copy;
}

} // namespace strata
