// canonicalize: algebraic identities and data-movement cleanups, applied greedily to a fixed
// point. The patterns live in one file per family (CanonicalizeAlgebra.cpp,
// CanonicalizeDataMovement.cpp, CanonicalizeEinsum.cpp); this file assembles them and runs the rewrite driver. Each
// firing is counted as "canonicalize.<pattern name>".
#include "CanonicalizePatterns.h"
#include "strata/graph/passes/Passes.h"

namespace strata {
namespace {

class CanonicalizePass : public Pass {
public:
  std::string_view name() const override { return "canonicalize"; }

  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    PatternSet patterns;
    canonicalize::addAlgebraPatterns(patterns, ctx.options);
    canonicalize::addDataMovementPatterns(patterns, ctx.options);
    canonicalize::addEinsumPatterns(patterns, ctx.options);
    return applyPatternsGreedily(g, patterns, ctx, "canonicalize");
  }
};

} // namespace

std::unique_ptr<Pass> createCanonicalizePass() { return std::make_unique<CanonicalizePass>(); }

} // namespace strata
