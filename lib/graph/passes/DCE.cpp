// dce: erases ops none of whose results is used by an op or a graph output. Every op is pure,
// so an unused result is dead; regions are cleaned the same way (their outputs stay live). An op
// defining a data-dependent size that other values still mention stays (ValueSymbols.h).
#include "strata/graph/ValueSymbols.h"
#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"

#include <unordered_set>

namespace strata {
namespace {

// One reverse walk erases whole dead chains: an op's users come after it in topological order,
// so by the time it is visited they are already gone. Returns the number of ops erased. Nested
// graphs are cleaned by the caller's walk (a kernel's region is sealed and stays as formed).
int64_t eraseDeadOps(Graph &g, const std::map<std::string, int64_t> &mentions) {
  std::unordered_set<const Value *> outputs;
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    outputs.insert(g.output(i));
  int64_t erased = 0;
  std::vector<Op *> ops = g.opList();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Op *op = *it;
    bool live = false;
    for (unsigned r = 0; r < op->numResults() && !live; ++r)
      live = op->result(r)->hasUses() || outputs.count(op->result(r));
    // A data-dependent size other values mention stays defined (counted before this walk: a
    // later round erases it once those values are gone).
    if (live || definesMentionedSize(*op, mentions))
      continue;
    g.eraseOp(op);
    ++erased;
  }
  return erased;
}

class DCEPass final : public Pass {
public:
  std::string_view name() const override { return "dce"; }
  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    int64_t total = 0;
    // A region's dead ops can keep outer values alive, so repeat until nothing more dies.
    for (int64_t erased = 1; erased;) {
      erased = 0;
      const std::map<std::string, int64_t> mentions = symbolMentions(g);
      forEachGraph(g, [&](Graph &graph) { erased += eraseDeadOps(graph, mentions); });
      total += erased;
    }
    if (total)
      ctx.stats.add("dce.erased", total);
    return total > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createDCEPass() { return std::make_unique<DCEPass>(); }

} // namespace strata
