// Text form of the graph IR (grammar in docs/graph-ir.md).
#pragma once
#include "strata/graph/Graph.h"

#include "llvm/Support/raw_ostream.h"

namespace strata {

struct PrintOptions {
  // Constants with more elements than this print as `blob<"HASH">` instead of inline data.
  int64_t inlineElementLimit = 16;
  // Append a blob section holding the data of every elided constant, so the text re-parses
  // into an executable graph.
  bool emitBlobs = false;
  // Print each op's location (e.g. ONNX node name) as `loc("...")`.
  bool printLocations = false;
};

void printGraph(const Graph &g, llvm::raw_ostream &os, const PrintOptions &opts = {});
std::string printGraph(const Graph &g, const PrintOptions &opts = {});
// Prints one op (no trailing newline) as it appears in a graph, with operand names as
// assigned when printing the whole enclosing graph.
std::string printOp(const Op &op);

} // namespace strata
