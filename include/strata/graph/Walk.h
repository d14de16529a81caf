// Walking a graph together with the graphs nested in it through op regions, for passes and
// analyses that treat every nesting level alike (instead of each recursing by hand).
#pragma once
#include "strata/graph/Graph.h"

#include <functional>

namespace strata {

// A fused kernel's region is sealed once formed (graph/Kernel.h): rewriting walks skip it.
enum class KernelRegions { Skip, Visit };

// Calls `fn` on every graph nested in `g` and then on `g` itself, inner graphs before the graph
// holding them, so `fn` may erase or replace ops of the graph it is given (their regions were
// visited already). Ops `fn` creates are not walked.
void forEachGraph(Graph &g, const std::function<void(Graph &)> &fn,
                  KernelRegions kernels = KernelRegions::Skip);

// Calls `fn` on every op of `g` and of the graphs nested in it, in graph order, an op before the
// ops of its regions. `fn` must not change the graphs.
void forEachOp(const Graph &g, const std::function<void(const Op &)> &fn,
               KernelRegions kernels = KernelRegions::Visit);

} // namespace strata
