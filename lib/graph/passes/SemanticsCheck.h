// --verify-semantics: the reference interpreter run on seeded random inputs before a pipeline,
// then again after each pass, comparing every output within a relative tolerance.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct SemanticsReference {
  std::vector<Tensor> inputs;  // seeded random inputs, one per graph input
  std::vector<Tensor> outputs; // the original graph's outputs on them
  std::vector<std::string> outputNames;
};

// Random inputs for `g` (floats uniform in [-1,1), integers in [0,4), random bools; every
// symbolic dim bound to 2), deterministic in `seed`.
std::vector<Tensor> makeRandomInputs(const Graph &g, unsigned seed);

// Interprets the original graph on fresh random inputs.
llvm::Expected<SemanticsReference> makeSemanticsReference(const Graph &g, unsigned seed);

// Interprets `g` on the reference inputs and compares every output: same count, dtype and shape,
// NaN at the same positions, max |diff| <= tol * max(max |ref|, 1e-6) for floats, exact equality
// otherwise. The error names `passName` and the first differing output.
llvm::Error checkSemantics(const Graph &g, const SemanticsReference &ref, double tol,
                           std::string_view passName);

} // namespace strata
