// Runs a textual pipeline of passes with verification, IR printing, timing and statistics.
//
// Pipeline syntax: comma-separated pass names; `fixpoint(a,b,...)` repeats its body until
// nothing changes (bounded; a repeated graph state is reported as a cycle); `default` expands
// to the standard pipeline that `strata compile` uses.
#pragma once
#include "strata/graph/passes/Pass.h"

#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <set>

namespace strata {

struct PassManagerOptions {
  bool verifyEach = false;                 // verify after every pass (always on in debug builds)
  bool printIrAfterAll = false;
  std::set<std::string> printIrAfter;      // pass names
  bool timePasses = false;
  bool verifySemantics = false;            // interpreter before/after each pass on random inputs
  double semanticsTolerance = 1e-4;        // relative to the largest |reference|
  unsigned semanticsSeed = 0;
  int fixpointCap = 16;                    // iterations of a fixpoint(...) group
  llvm::raw_ostream *log = nullptr;        // where IR dumps and timings go (default stderr)
  // Called after every pass with whether it changed the graph and the pass's own wall time, before
  // the checks above; an error ends the run. strata bisect watches each pass with it,
  // --inject-fault perturbs after one, strata explain snapshots the graph.
  std::function<llvm::Error(std::string_view pass, bool changed, double seconds, Graph &g)>
      afterPass;
};

class PassManager {
public:
  explicit PassManager(PassManagerOptions opts = {}) : opts_(std::move(opts)) {}
  // Parses a pipeline; errors name the unknown pass or the syntax problem.
  llvm::Error parsePipeline(std::string_view text);
  // Runs it; the first failing pass (or verification/semantics check) is the error.
  llvm::Error run(Graph &g, PassContext &ctx);

  // Programmatic construction (tests, tools): appends a pass, or a fixpoint group of passes.
  void addPass(std::unique_ptr<Pass> pass);
  void addFixpoint(std::vector<std::unique_ptr<Pass>> body);
  // The parsed pipeline with `default` expanded, e.g. "fixpoint(canonicalize,cse),dce".
  std::string pipelineText() const;

  // The standard pipeline's text.
  static std::string_view defaultPipeline();

  struct Node; // a pass or a fixpoint group
private:
  PassManagerOptions opts_;
  std::vector<std::shared_ptr<Node>> pipeline_;
};

} // namespace strata
