// Region ops that run at run time (see ControlFlow.h).
#include "strata/graph/ControlFlow.h"

#include "strata/graph/Clone.h"
#include "strata/graph/Ops.h"
#include "strata/graph/ValueSymbols.h"
#include "strata/support/Error.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace strata {

namespace {

// One element of `dt`, as [] or [1].
bool isOne(const TensorType &t, DType dt) {
  if (t.dtype != dt || t.rank() > 1)
    return false;
  for (const Dim &d : t.dims)
    if (!(d.isStatic() && d.size == 1))
      return false;
  return true;
}

// Region `r`'s input `i` against the type it binds.
llvm::Error checkInput(const Op &op, unsigned r, unsigned i, const TensorType &want) {
  const Graph &g = op.region(r);
  if (g.input(i)->type() != want)
    return makeError("region " + std::to_string(r) + " input " + std::to_string(i) + " has type " +
                     g.input(i)->type().str() + " but binds " + want.str());
  return llvm::Error::success();
}

bool definedIn(const Value *v, const Graph &g) {
  return v->isGraphInput() ? v->ownerGraph() == &g : v->definingOp()->parentGraph() == &g;
}

} // namespace

llvm::Expected<LoopLayout> loopLayout(const Op &loop) {
  if (loop.numRegions() != 1)
    return makeError("a loop has one region (its body), this one has " +
                     std::to_string(loop.numRegions()));
  const Graph &body = loop.region(0);
  if (!loop.hasAttr("num_carried") || loop.attr("num_carried").kind() != AttrKind::Int)
    return makeError("a loop needs its int attribute 'num_carried'");
  const int64_t carried = ops::LoopOp(loop).num_carried();
  const int64_t operands = loop.numOperands(), outputs = body.numOutputs();
  if (carried < 0 || 2 + carried > operands)
    return makeError("num_carried " + std::to_string(carried) + " does not fit " +
                     std::to_string(operands) + " operands");
  if (1 + carried > outputs)
    return makeError("the body has " + std::to_string(outputs) +
                     " outputs; expected the condition and " + std::to_string(carried) +
                     " carried values first");
  LoopLayout l;
  l.numCarried = static_cast<unsigned>(carried);
  l.numCaptures = static_cast<unsigned>(operands - 2 - carried);
  l.numScans = static_cast<unsigned>(outputs - 1 - carried);
  return l;
}

llvm::Expected<unsigned> firstCapture(const Op &op) {
  if (op.kind() == OpKind::If)
    return 1;
  auto layout = loopLayout(op);
  if (!layout)
    return layout.takeError();
  return 2 + layout->numCarried;
}

llvm::Expected<std::vector<TensorType>> controlFlowResultTypes(const Op &op) {
  std::vector<TensorType> types;
  if (op.kind() == OpKind::If) {
    if (op.numRegions() != 2)
      return makeError("an if has two regions (then, else), this one has " +
                       std::to_string(op.numRegions()));
    const Graph &then = op.region(0), &other = op.region(1);
    if (then.numOutputs() != other.numOutputs())
      return makeError("the then branch has " + std::to_string(then.numOutputs()) +
                       " outputs but the else branch " + std::to_string(other.numOutputs()));
    for (unsigned i = 0; i < then.numOutputs(); ++i) {
      if (!then.output(i) || !other.output(i))
        return makeError("branch output " + std::to_string(i) + " is missing");
      const TensorType &a = then.output(i)->type(), &b = other.output(i)->type();
      if (a == b) {
        types.push_back(a);
        continue;
      }
      // Dims the branches give differently: the result's own symbol there (a data-dependent
      // size the branch taken binds, ValueSymbols.h), used by neither branch's dim.
      const TensorType *now = i < op.numResults() ? &op.result(i)->type() : nullptr;
      bool ok = a.dtype == b.dtype && a.rank() == b.rank() && now && now->rank() == a.rank();
      TensorType t = a;
      for (size_t d = 0; ok && d < a.dims.size(); ++d) {
        if (a.dims[d] == b.dims[d])
          continue;
        const std::string *sym = now->dims[d].symbolName();
        std::set<std::string> used;
        for (const Dim *branchDim : {&a.dims[d], &b.dims[d]})
          if (!branchDim->isStatic())
            branchDim->expr.collectSymbols(used);
        ok = sym && !used.count(*sym);
        t.dims[d] = now->dims[d];
      }
      if (!ok)
        return makeError("branch output " + std::to_string(i) + " has type " + a.str() +
                         " in the then branch but " + b.str() +
                         " in the else branch (branches may differ in dims only, each a symbol "
                         "of the result's own)");
      types.push_back(std::move(t));
    }
    return types;
  }
  auto layout = loopLayout(op);
  if (!layout)
    return layout.takeError();
  const Graph &body = op.region(0);
  for (unsigned k = 0; k < layout->numCarried; ++k) {
    const Value *out = body.output(1 + k);
    if (!out)
      return makeError("the body's carried output " + std::to_string(k) + " is missing");
    if (out->type() != body.input(2 + k)->type())
      return makeError("loop-carried value " + std::to_string(k) + " enters the body as " +
                       body.input(2 + k)->type().str() + " but leaves it as " + out->type().str() +
                       " (values that change shape across iterations are not supported yet)");
    types.push_back(out->type());
  }
  for (unsigned k = 0; k < layout->numScans; ++k) {
    const Value *out = body.output(1 + layout->numCarried + k);
    if (!out)
      return makeError("the body's scan output " + std::to_string(k) + " is missing");
    const unsigned r = layout->numCarried + k;
    const TensorType *now = r < op.numResults() ? &op.result(r)->type() : nullptr;
    Dim trips = now && now->rank() > 0 ? now->dims[0] : Dim(0);
    std::vector<Dim> dims{trips};
    // An entry dim reading a size the body decides (each iteration anew): the result's own
    // symbol there (a data-dependent size the first entry sets; ValueSymbols.h).
    std::optional<std::set<std::string>> decided;
    const std::vector<Dim> &entry = out->type().dims;
    for (size_t d = 0; d < entry.size(); ++d) {
      std::set<std::string> used;
      if (!entry[d].isStatic())
        entry[d].expr.collectSymbols(used);
      if (!used.empty() && !decided)
        decided = sizesDecidedIn(body);
      if (std::none_of(used.begin(), used.end(),
                       [&](const std::string &u) { return decided->count(u) != 0; })) {
        dims.push_back(entry[d]);
        continue;
      }
      const bool aligned = now && static_cast<size_t>(now->rank()) == entry.size() + 1;
      const std::string *sym = aligned ? now->dims[d + 1].symbolName() : nullptr;
      if (!sym || used.count(*sym) || decided->count(*sym))
        return makeError("the body's scan output " + std::to_string(k) + " has dim " +
                         std::to_string(d) + " = " + entry[d].str() +
                         ", a size the body decides: the result needs a symbol of its own there");
      dims.push_back(now->dims[d + 1]);
    }
    types.push_back(out->type().withDims(std::move(dims)));
  }
  return types;
}

llvm::Error checkControlFlow(const Op &op) {
  std::vector<TensorType> inputs; // what the regions' inputs bind, in order
  if (op.kind() == OpKind::If) {
    if (!isOne(op.operand(0)->type(), DType::Bool))
      return makeError("the condition must be one bool, has type " + op.operand(0)->type().str());
    for (unsigned i = 1; i < op.numOperands(); ++i)
      inputs.push_back(op.operand(i)->type());
  } else {
    auto layout = loopLayout(op);
    if (!layout)
      return layout.takeError();
    if (!isOne(op.operand(0)->type(), DType::I64))
      return makeError("the trip count must be one i64, has type " + op.operand(0)->type().str());
    if (!isOne(op.operand(1)->type(), DType::Bool))
      return makeError("the condition must be one bool, has type " + op.operand(1)->type().str());
    inputs.push_back(TensorType(DType::I64, {}));
    inputs.push_back(TensorType(DType::Bool, {}));
    for (unsigned i = 2; i < op.numOperands(); ++i)
      inputs.push_back(op.operand(i)->type());
    const Graph &body = op.region(0);
    if (body.numOutputs() == 0 || !body.output(0) ||
        body.output(0)->type() != TensorType(DType::Bool, {}))
      return makeError("the body's first output must be its condition, a bool []");
    if (op.numResults() != layout->numCarried + layout->numScans)
      return makeError("has " + std::to_string(op.numResults()) + " results; the body gives " +
                       std::to_string(layout->numCarried) + " carried and " +
                       std::to_string(layout->numScans) + " scan outputs");
  }
  for (unsigned r = 0; r < op.numRegions(); ++r) {
    const Graph &g = op.region(r);
    if (g.numInputs() != inputs.size())
      return makeError("region " + std::to_string(r) + " has " + std::to_string(g.numInputs()) +
                       " inputs; the op binds " + std::to_string(inputs.size()));
    for (unsigned i = 0; i < inputs.size(); ++i)
      if (auto err = checkInput(op, r, i, inputs[i]))
        return err;
  }
  auto types = controlFlowResultTypes(op);
  if (!types)
    return types.takeError();
  if (types->size() != op.numResults())
    return makeError("has " + std::to_string(op.numResults()) + " results but its regions give " +
                     std::to_string(types->size()));
  for (unsigned i = 0; i < types->size(); ++i)
    if ((*types)[i] != op.result(i)->type())
      return makeError("result " + std::to_string(i) + " has type " + op.result(i)->type().str() +
                       " but its region gives " + (*types)[i].str());
  return llvm::Error::success();
}

void typeRegionInputs(Op &op) {
  const unsigned first = firstBoundOperand(op);
  // A loop's iteration and condition inputs have fixed types (its first two operands may be
  // [1] where they are []).
  const unsigned typed = op.kind() == OpKind::If ? 1 : 2;
  for (unsigned r = 0; r < op.numRegions(); ++r) {
    Graph &g = op.region(r);
    for (unsigned i = typed; i < op.numOperands() && i - first < g.numInputs(); ++i)
      g.input(i - first)->setType(op.operand(i)->type());
  }
}

llvm::Error setResultTypes(Op &op) {
  auto types = controlFlowResultTypes(op);
  if (!types)
    return types.takeError();
  if (types->size() != op.numResults())
    return makeError("its regions give " + std::to_string(types->size()) + " results, the op has " +
                     std::to_string(op.numResults()));
  for (unsigned i = 0; i < types->size(); ++i)
    op.result(i)->setType((*types)[i]);
  return llvm::Error::success();
}

void inlineIfBranch(Op &op, unsigned r) {
  Graph &parent = *op.parentGraph();
  const Graph &region = op.region(r);
  ValueMap map;
  for (unsigned i = 0; i < region.numInputs(); ++i)
    map[region.input(i)] = op.operand(firstBoundOperand(op) + i);
  // cloneOp appends; move each copy before the op to keep the graph's order.
  for (const Op &inner : region.ops()) {
    Op *copy = cloneOp(parent, inner, map);
    parent.moveBefore(copy, &op);
  }
  for (unsigned i = 0; i < op.numResults(); ++i)
    op.result(i)->replaceAllUsesWith(map.at(region.output(i)));
  parent.eraseOp(&op);
}

int64_t sinkConstantCaptures(Op &op) {
  if (!isControlFlow(op))
    return 0;
  // A loop's carried values change from iteration to iteration: only captures are sunk.
  auto captures = firstCapture(op);
  if (!captures) {
    llvm::consumeError(captures.takeError());
    return 0;
  }
  const unsigned first = firstBoundOperand(op);
  int64_t sunk = 0;
  for (unsigned i = *captures; i < op.numOperands(); ++i) {
    const Op *def = op.operand(i)->definingOp();
    if (!def || def->kind() != OpKind::Constant)
      continue;
    for (unsigned r = 0; r < op.numRegions(); ++r) {
      Graph &g = op.region(r);
      Value *in = i - first < g.numInputs() ? g.input(i - first) : nullptr;
      if (!in || (!in->hasUses() && !in->isGraphOutput()))
        continue;
      Op *before = g.numOps() ? &*g.ops().begin() : nullptr;
      Op *copy = g.createOp(OpKind::Constant, {}, {def->result()->type()}, def->attrs(), before);
      copy->setLocation(def->location());
      in->replaceAllUsesWith(copy->result());
      ++sunk;
    }
  }
  return sunk;
}

std::vector<Value *> captureOuterValues(const std::vector<Graph *> &regions) {
  std::vector<Value *> captured;
  std::unordered_set<Value *> seen;
  auto note = [&](Value *v, const Graph &g) {
    if (v && !definedIn(v, g) && seen.insert(v).second)
      captured.push_back(v);
  };
  for (Graph *g : regions) {
    for (Op &op : g->ops())
      for (Value *v : op.operands())
        note(v, *g);
    for (unsigned i = 0; i < g->numOutputs(); ++i)
      note(g->output(i), *g);
  }
  for (Graph *g : regions) {
    std::unordered_map<Value *, Value *> inner;
    for (Value *v : captured)
      inner[v] = g->addInput(v->type(), v->name());
    for (Op &op : g->ops())
      for (unsigned i = 0; i < op.numOperands(); ++i)
        if (auto it = inner.find(op.operand(i)); it != inner.end() && !definedIn(op.operand(i), *g))
          op.setOperand(i, it->second);
    for (unsigned i = 0; i < g->numOutputs(); ++i)
      if (auto it = inner.find(g->output(i)); it != inner.end() && !definedIn(g->output(i), *g))
        g->setOutput(i, it->second);
  }
  return captured;
}

} // namespace strata
