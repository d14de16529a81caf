// Which ops have a data-dependent result dim (ValueSymbols.h).
#include "strata/graph/ValueSymbols.h"

#include "strata/graph/ControlFlow.h"
#include "strata/graph/Ops.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace strata {

std::optional<ValueBoundDim> valueBoundDim(const Op &op) {
  if (op.kind() == OpKind::NonZero && op.numOperands() == 2) {
    SymExpr n(1);
    for (const Dim &d : op.operand(0)->type().dims)
      n = n * d.asExpr();
    return ValueBoundDim{0, 1, 1, n};
  }
  if (op.kind() == OpKind::Unique && op.numOperands() == 2) {
    const ops::UniqueOp attrs(op);
    const auto &x = op.operand(0)->type().dims;
    SymExpr items(1);
    if (attrs.has_axis() && attrs.axis() >= 0 && attrs.axis() < static_cast<int64_t>(x.size()))
      items = x[static_cast<size_t>(attrs.axis())].asExpr();
    else
      for (const Dim &d : x)
        items = items * d.asExpr();
    return ValueBoundDim{0, attrs.has_axis() ? static_cast<size_t>(attrs.axis()) : 0, 1, items};
  }
  if (op.kind() == OpKind::Nms && (op.numOperands() == 3 || op.numOperands() == 4)) {
    const auto &boxes = op.operand(0)->type().dims, &scores = op.operand(1)->type().dims;
    if (boxes.size() != 3 || scores.size() != 3)
      return std::nullopt;
    // At most max_output per class (read from data with a limits operand: the boxes' count).
    SymExpr perClass = op.numOperands() == 4
                           ? boxes[1].asExpr()
                           : SymExpr::min(SymExpr(ops::NmsOp(op).max_output()), boxes[1].asExpr());
    return ValueBoundDim{0, 0, 2, scores[0].asExpr() * scores[1].asExpr() * perClass};
  }
  if (op.kind() == OpKind::Arange && op.numOperands() == 1)
    return ValueBoundDim{0, 0, 0, std::nullopt};
  return std::nullopt;
}

namespace {

// `e` with every data-dependent size defined inside `g` (its ops and their regions) replaced by
// that size's bound, itself so replaced; none when one of them has no bound.
std::optional<SymExpr> boundIn(const Graph &g, const SymExpr &e) {
  std::map<std::string, std::optional<SymExpr>> bounds;
  std::function<void(const Graph &)> collect = [&](const Graph &region) {
    for (const Op &op : region.ops()) {
      for (const ValueBoundDim &vb : dataDependentDims(op))
        if (const std::string *s = dataDependentSymbol(op, vb))
          bounds.emplace(*s, vb.bound);
      for (unsigned r = 0; r < op.numRegions(); ++r)
        collect(op.region(r));
    }
  };
  collect(g);
  SymExpr r = e;
  // A bound may name earlier data-dependent sizes: replace until none is left (each pass
  // removes one level; a graph nests them no deeper than its ops).
  for (size_t pass = 0; pass <= bounds.size(); ++pass) {
    std::set<std::string> used;
    r.collectSymbols(used);
    bool replaced = false;
    for (const std::string &u : used) {
      auto it = bounds.find(u);
      if (it != bounds.end() && !it->second)
        return std::nullopt;
      replaced |= it != bounds.end();
    }
    if (!replaced)
      break;
    r = r.substitute([&](const std::string &name) -> std::optional<SymExpr> {
      auto it = bounds.find(name);
      return it == bounds.end() ? std::nullopt : it->second;
    });
  }
  return r;
}

void countMentions(const Value &v, std::map<std::string, int64_t> &out) {
  std::set<std::string> used;
  for (const Dim &d : v.type().dims)
    if (!d.isStatic())
      d.expr.collectSymbols(used);
  for (const std::string &s : used)
    ++out[s];
}

void countMentions(const Graph &g, std::map<std::string, int64_t> &out) {
  for (const Value *in : g.inputs())
    countMentions(*in, out);
  for (const Op &op : g.ops()) {
    for (unsigned r = 0; r < op.numResults(); ++r)
      countMentions(*op.result(r), out);
    for (unsigned r = 0; r < op.numRegions(); ++r)
      countMentions(op.region(r), out);
  }
}

} // namespace

std::map<std::string, int64_t> symbolMentions(const Graph &g) {
  std::map<std::string, int64_t> out;
  countMentions(g, out);
  return out;
}

bool definesMentionedSize(const Op &op, const std::map<std::string, int64_t> &mentions) {
  std::map<std::string, int64_t> own; // the op's own results' mentions
  for (unsigned r = 0; r < op.numResults(); ++r)
    countMentions(*op.result(r), own);
  for (const ValueBoundDim &vb : dataDependentDims(op)) {
    const std::string *s = dataDependentSymbol(op, vb);
    if (!s)
      continue;
    auto it = mentions.find(*s);
    if (it != mentions.end() && it->second > own[*s])
      return true;
  }
  return false;
}

std::set<std::string> sizesDecidedIn(const Graph &g) {
  std::set<std::string> decided;
  for (const Op &op : g.ops()) {
    for (const ValueBoundDim &vb : dataDependentDims(op))
      if (const std::string *s = dataDependentSymbol(op, vb))
        decided.insert(*s);
    for (unsigned r = 0; r < op.numRegions(); ++r) {
      std::set<std::string> inner = sizesDecidedIn(op.region(r));
      decided.insert(inner.begin(), inner.end());
    }
  }
  return decided;
}

bool readsAnyOf(const Dim &d, const std::set<std::string> &sizes) {
  if (d.isStatic())
    return false;
  std::set<std::string> used;
  d.expr.collectSymbols(used);
  return std::any_of(used.begin(), used.end(),
                     [&](const std::string &u) { return sizes.count(u) != 0; });
}

std::vector<unsigned> sizeDecidingInputs(const Graph &g) {
  std::set<const Value *> seen;
  std::vector<const Value *> work;
  std::function<void(const Graph &)> collect = [&](const Graph &graph) {
    for (const Op &op : graph.ops()) {
      if (op.kind() == OpKind::Arange)
        work.push_back(op.operand(0));
      for (unsigned r = 0; r < op.numRegions(); ++r)
        collect(op.region(r));
    }
  };
  collect(g);
  std::vector<unsigned> inputs;
  while (!work.empty()) {
    const Value *v = work.back();
    work.pop_back();
    if (!seen.insert(v).second)
      continue;
    if (v->isGraphInput()) {
      const Graph *owner = v->ownerGraph();
      if (owner == &g) {
        inputs.push_back(v->resultIndex());
      } else if (const Op *op = owner ? owner->parentOp() : nullptr) {
        // A region input: the operand binding it, and for a loop's carried value also what
        // the body gives the next iteration.
        const unsigned at = firstBoundOperand(*op) + v->resultIndex();
        if (at < op->numOperands())
          work.push_back(op->operand(at));
        if (op->kind() == OpKind::Loop && v->resultIndex() >= 2) {
          auto layout = loopLayout(*op);
          if (!layout)
            llvm::consumeError(layout.takeError());
          else if (v->resultIndex() < 2 + layout->numCarried &&
                   v->resultIndex() - 1 < owner->numOutputs())
            work.push_back(owner->output(v->resultIndex() - 1));
        }
      }
      continue;
    }
    const OpKind k = v->definingOp()->kind();
    if (k == OpKind::Shape || k == OpKind::Iota)
      continue; // they read dims, not values
    for (const Value *o : v->definingOp()->operands())
      work.push_back(o);
  }
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

std::vector<ValueBoundDim> controlFlowResultDims(const Op &op) {
  std::vector<ValueBoundDim> dims;
  if (op.kind() == OpKind::Loop) {
    // With max_trips or early_exit, each scan result's dim 0 (a symbol) counts the iterations
    // run (bound: max_trips, none without it); a scan entry's dim that reads a size the body
    // decides is a symbol of the result's own, set from the first entry (every entry must
    // agree), with no bound before the loop runs.
    const std::optional<Dim> maxTrips = ops::LoopOp(op).max_trips();
    const bool counted = maxTrips || ops::LoopOp(op).early_exit();
    auto layout = loopLayout(op);
    if (!layout || op.numRegions() != 1)
      return dims;
    const Graph &body = op.region(0);
    std::set<std::string> decided;
    bool decidedKnown = false;
    for (unsigned k = 0; k < layout->numScans; ++k) {
      const unsigned r = layout->numCarried + k;
      if (r >= op.numResults() || op.result(r)->type().rank() == 0)
        continue;
      const TensorType &t = op.result(r)->type();
      if (counted && t.dims[0].symbolName())
        dims.push_back(ValueBoundDim{
            r, 0, 0, maxTrips ? std::optional<SymExpr>(maxTrips->asExpr()) : std::nullopt});
      const Value *entry = 1 + r < body.numOutputs() ? body.output(1 + r) : nullptr;
      if (!entry || entry->type().rank() + 1 != t.rank())
        continue;
      for (size_t d = 1; d < t.dims.size(); ++d) {
        const Dim &e = entry->type().dims[d - 1];
        if (e.isStatic() || !t.dims[d].symbolName() || e == t.dims[d])
          continue;
        if (!decidedKnown) {
          decided = sizesDecidedIn(body);
          decidedKnown = true;
        }
        if (readsAnyOf(e, decided))
          dims.push_back(ValueBoundDim{r, d, 0, std::nullopt});
      }
    }
    return dims;
  }
  if (op.kind() != OpKind::If || op.numRegions() != 2)
    return dims;
  const Graph &then = op.region(0), &other = op.region(1);
  for (unsigned i = 0; i < op.numResults() && i < then.numOutputs() && i < other.numOutputs();
       ++i) {
    const TensorType &a = then.output(i)->type(), &b = other.output(i)->type();
    const TensorType &t = op.result(i)->type();
    if (a.rank() != t.rank() || b.rank() != t.rank())
      continue;
    for (size_t d = 0; d < t.dims.size(); ++d)
      if (a.dims[d] != b.dims[d] && t.dims[d].symbolName()) {
        std::optional<SymExpr> ba = boundIn(then, a.dims[d].asExpr()),
                               bb = boundIn(other, b.dims[d].asExpr());
        dims.push_back(ValueBoundDim{
            i, d, 0, ba && bb ? std::optional<SymExpr>(SymExpr::max(*ba, *bb)) : std::nullopt});
      }
  }
  return dims;
}

std::vector<ValueBoundDim> dataDependentDims(const Op &op) {
  std::vector<ValueBoundDim> dims = controlFlowResultDims(op);
  if (std::optional<ValueBoundDim> vb = valueBoundDim(op))
    dims.push_back(*vb);
  return dims;
}

const std::string *dataDependentSymbol(const Op &op, const ValueBoundDim &vb) {
  return op.result(vb.result)->type().dims.at(vb.dim).symbolName();
}

} // namespace strata
