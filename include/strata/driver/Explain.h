// strata explain (docs/explain.md): a model stepped down the whole ladder — ONNX nodes, graph IR
// after import and after every pass that changed it, fused kernels, loop IR before and after
// scheduling, LLVM IR, assembly — with each rung's text, counts, portability and optimizations,
// provenance from ONNX nodes to kernels, the reasons for what did not happen, measured per-kernel
// time against this machine's roofline, compile time per pass and rung, and the arena over time.
// The report is one JSON document; explainHtml wraps it in a self-contained page.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace strata::driver {

// One node of the source model (the importer's view of the ONNX graph).
struct SourceNode {
  std::string name, opType;
  std::vector<std::string> inputs, outputs;
};

struct ExplainOptions {
  std::string modelPath;
  std::string pipeline = "default";
  std::string target = "host";
  int optLevel = 2;
  unsigned threads = 0; // 0: one per core
  // Timed runs (after warmup runs) for the per-kernel profile; 0 skips running the model and
  // the roofline probes.
  unsigned iters = 10, warmup = 2;
  // Progress lines ("optimizing", "compiling 53 kernels", ...), if set.
  std::function<void(const std::string &)> log;
};

// Explains `g` (as imported from `source`, in `importMs`), optimizing it in place. `inputs` are
// what the model runs on for the timings (one per graph input).
llvm::Expected<nlohmann::ordered_json> explainModel(Graph &g, const std::vector<SourceNode> &source,
                                                    double importMs,
                                                    const std::vector<Tensor> &inputs,
                                                    const ExplainOptions &opts);

// The report as one HTML page that works offline: the JSON inline, the viewer's script and
// styles inline, no external request.
std::string explainHtml(const nlohmann::ordered_json &report);

} // namespace strata::driver
