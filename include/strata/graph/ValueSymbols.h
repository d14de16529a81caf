// Data-dependent sizes in the graph IR: ops whose result has a dim that is a symbol no input
// binds, set at run time to the value of one of their operands (a rank-0 i64 count an earlier op
// computed), and at most a bound the operands' dims give. The compiled engines size buffers and
// outputs by the bound and bind the symbol before the op's kernel runs (docs/runtime.md,
// "Data-dependent sizes"); every rung asks this one place which ops those are.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/support/SymExpr.h"

#include <map>
#include <optional>
#include <set>
#include <string>

namespace strata {

struct ValueBoundDim {
  unsigned result = 0;       // the result holding the dim
  size_t dim = 0;            // which dim of it
  unsigned countOperand = 0; // the operand whose value it takes
  // The most it can be, over the operands' dims; none where nothing before the run bounds it
  // (arange's count: a size read from data), so buffers of that size are allocated when it is
  // bound.
  std::optional<SymExpr> bound;
};

// The data-dependent dim of `op`, or none: nonzero's dim 1 (bound: its operand's element
// count), unique's items dim of result 0 (the number of items; results 1 and 3 share its
// symbol), nms's dim 0 (batches x classes x min(max_output, boxes)), arange's dim 0 (no bound).
std::optional<ValueBoundDim> valueBoundDim(const Op &op);

// The data-dependent dims of control flow's results, set when the step has run (no count
// operand): an `if`'s dims its branches give differently, each a symbol of the result's own that
// the branch taken binds (bound: the larger of the branches' dims, each data-dependent size
// inside a branch replaced by its own bound, so a formula over the if's operands' dims; none
// when a branch's dim depends on an unbounded size); a
// `loop`'s scan results' dim 0 when it has `max_trips` or `early_exit` (the iterations run;
// bound: max_trips, none without it).
std::vector<ValueBoundDim> controlFlowResultDims(const Op &op);

// Every data-dependent dim `op` defines (valueBoundDim's and controlFlowResultDims'), and the
// symbol naming one (none where a specialized graph made it static).
std::vector<ValueBoundDim> dataDependentDims(const Op &op);
const std::string *dataDependentSymbol(const Op &op, const ValueBoundDim &vb);

// The data-dependent sizes the ops of `g` (and their regions) define: sizes a region decides
// each time it runs.
std::set<std::string> sizesDecidedIn(const Graph &g);
// Whether `d` reads one of `sizes` (a dim of a region's value sized by what the region decides).
bool readsAnyOf(const Dim &d, const std::set<std::string> &sizes);

// The inputs of `g` whose values sizes are read from (an arange's count, of `g` or inside its
// if/loop regions, computed from them, not through their dims alone): inputs a caller must
// give, not make up at random.
std::vector<unsigned> sizeDecidingInputs(const Graph &g);

// How many values of `g` (its inputs, every op's results, and the same in nested regions)
// mention each symbol in their types.
std::map<std::string, int64_t> symbolMentions(const Graph &g);
// Whether `op`, though no value reads its results, defines a data-dependent size that other
// values still mention (x[x > 0].shape[0] used only as a size): erasing it would leave that
// size bound by nothing. `mentions` is symbolMentions of the root graph.
bool definesMentionedSize(const Op &op, const std::map<std::string, int64_t> &mentions);

} // namespace strata
