// What the lowering can do, for the graph passes that must not form work it cannot do: the fuse
// pass asks before putting an op into a kernel (PassOptions::fusesIntoKernel), so no fusion is
// ever undone later.
#pragma once
#include "strata/graph/Graph.h"

#include <string>

namespace strata::lower {

// Whether `op` (a top-level op about to join a fused kernel) can be computed inside one: an
// elementwise op needs a scalar expression for its dtypes (integer pow, a loop of squarings, has
// none), any other op a lowering for its dtypes. `why`, if given, says what is missing.
bool lowersInKernel(const Op &op, std::string *why = nullptr);

} // namespace strata::lower
