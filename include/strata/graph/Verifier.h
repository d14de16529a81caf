// Structural and type checks of a graph: SSA dominance (no use before def, no cycles), use-list
// consistency, arity, attribute kinds, result types against inference, unique names.
#pragma once
#include "strata/graph/Graph.h"

#include "llvm/Support/Error.h"

namespace strata {

// Returns success or one error naming the first offending op (by its printed form and location).
llvm::Error verifyGraph(const Graph &g);

} // namespace strata
