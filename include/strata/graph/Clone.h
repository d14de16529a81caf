// Deep copies of graphs and ops (regions included), for tools that must try changes on a copy
// and keep the original: `strata bisect` runs passes on copies and cuts subgraphs out of them.
// Constants' data is shared, not copied (tensors are immutable blobs).
#pragma once
#include "strata/graph/Graph.h"

#include <memory>
#include <unordered_map>

namespace strata {

// Old value -> new value, across scopes (a region's ops may read values of enclosing graphs).
using ValueMap = std::unordered_map<const Value *, Value *>;

// Copies `op` to the end of `into`: operands through `map` (each must be mapped), results and
// regions fresh, attributes, location and names as they are. Adds the results to `map`.
Op *cloneOp(Graph &into, const Op &op, ValueMap &map);

// A copy of `g`: inputs, ops, outputs with their names. `map`, if given, receives old -> new
// for every value.
std::unique_ptr<Graph> cloneGraph(const Graph &g, ValueMap *map = nullptr);

} // namespace strata
