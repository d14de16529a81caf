// resolve-broadcast-dims: broadcasting two different symbolic dims (an upsampled feature map
// added to its skip connection: conv_transpose's 2*fdiv(h+3,4) against the skip's fdiv(h+1,2))
// types the result with a fresh symbol, since at run time either dim may be 1 (the interpreter
// binds it when it computes the result). The compiled engines index an elementwise kernel by
// its result's extents and check, when the inputs are bound, that every operand dim that is not
// a static 1 equals the result's: there a symbolic dim never broadcasts, so the fresh symbol is
// the operands' common size. This pass names it by the first operand's formula over the input
// symbols, in every type that mentions it; the plan then checks the other operands against it
// (a run-time error naming the op when they differ, never a wrong-size write).
#include "strata/graph/Specialize.h"
#include "strata/graph/ValueSymbols.h"
#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"

#include <set>

namespace strata {
namespace {

void substituteEverywhere(Graph &g, const std::string &symbol, const SymExpr &value) {
  auto lookup = [&](const std::string &n) -> std::optional<SymExpr> {
    return n == symbol ? std::optional<SymExpr>(value) : std::nullopt;
  };
  auto retype = [&](Value *v) {
    TensorType t = v->type();
    bool changed = false;
    for (Dim &d : t.dims) {
      if (d.isStatic())
        continue;
      std::set<std::string> used;
      d.expr.collectSymbols(used);
      if (!used.count(symbol))
        continue;
      d = Dim::of(d.expr.substitute(lookup));
      changed = true;
    }
    if (changed)
      v->setType(std::move(t));
  };
  forEachGraph(
      g,
      [&](Graph &graph) {
        for (Value *in : graph.inputs())
          retype(in);
        for (Op &op : graph.ops()) {
          for (unsigned r = 0; r < op.numResults(); ++r)
            retype(op.result(r));
          substituteAttributeDims(op, lookup);
        }
      },
      KernelRegions::Visit);
}

class ResolveBroadcastDimsPass final : public Pass {
public:
  std::string_view name() const override { return "resolve-broadcast-dims"; }
  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    // Symbols with a binding of their own: the inputs' and the data-dependent counts'.
    std::set<std::string> bound;
    for (const Value *in : g.inputs())
      for (const Dim &d : in->type().dims)
        if (const std::string *s = d.symbolName())
          bound.insert(*s);
    forEachOp(g, [&](const Op &op) {
      for (const ValueBoundDim &vb : dataDependentDims(op))
        if (const std::string *s = dataDependentSymbol(op, vb))
          bound.insert(*s);
    });
    auto isBound = [&](const Dim &d) {
      std::set<std::string> used;
      d.expr.collectSymbols(used);
      for (const std::string &u : used)
        if (!bound.count(u))
          return false;
      return true;
    };
    int64_t resolved = 0;
    for (Op &op : g.ops()) {
      if (!op.hasTrait(T_ELEMENTWISE) || op.numResults() != 1)
        continue;
      const size_t rank = op.result(0)->type().dims.size();
      for (size_t d = 0; d < rank; ++d) {
        const Dim dim = op.result(0)->type().dims[d]; // a copy: substitution retypes the result
        const std::string *fresh = dim.symbolName();
        if (!fresh || bound.count(*fresh))
          continue;
        // The operands' dims at d (right-aligned): the first symbolic one over bound symbols.
        for (const Value *v : op.operands()) {
          const auto &dims = v->type().dims;
          if (dims.size() + d < rank)
            continue; // v has no dim here: broadcast over it
          const Dim &od = dims[dims.size() + d - rank];
          if (od.isStatic() || !isBound(od))
            continue;
          substituteEverywhere(g, *fresh, od.expr);
          ++resolved;
          break;
        }
      }
    }
    if (resolved)
      ctx.stats.add("resolve-broadcast-dims.resolved", resolved);
    return resolved > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createResolveBroadcastDimsPass() {
  return std::make_unique<ResolveBroadcastDimsPass>();
}

} // namespace strata
