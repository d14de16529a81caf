// Binding symbolic dims to sizes: the graph a run at one set of input shapes computes. The JIT
// engine uses it for models whose symbolic dims its kernels cannot take as parameters yet (any dim
// but a leading batch): each new set of input shapes gets a graph of static shapes, compiled once.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace strata {

// Largest input (elements) whose values may key a compilation (an ONNX input whose values the
// importer needs: OnnxInterface::valueInputs, driver/ShapeSpecializedModel.h's InputBinding).
// Shape-like inputs are tiny (a Reshape's shape, Pad's pads: at most 2 x rank); a larger one is
// data, and keying compilations on data would compile again on every run.
inline constexpr int64_t kMaxValueInputElements = 64;

// Whether some value of `g` has a symbolic dim the compiled engines cannot run generically: one
// that is a formula, or a symbol anywhere but dim 0.
bool needsShapeSpecialization(const Graph &g);

// The size of every symbol the inputs' plain `?name` dims bind, from the input shapes; checks
// ranks, static dims, one size per symbol and the formula dims, naming the input and dim.
llvm::Expected<std::map<std::string, int64_t>> bindInputSymbols(const Graph &g,
                                                                const std::vector<Shape> &shapes);
// The same over an interface given as input names and declared types.
llvm::Expected<std::map<std::string, int64_t>>
bindInputSymbols(const std::vector<std::pair<std::string, TensorType>> &inputs,
                 const std::vector<Shape> &shapes);

// Replaces the symbols `lookup` knows in `op`'s dims attributes (OpTable.def's A_DIMS: a
// reshape's target, resize's sizes); one left all static becomes ints, its normal form.
void substituteAttributeDims(
    Op &op, const std::function<std::optional<SymExpr>(const std::string &)> &lookup);

// A copy of `g` with every symbol in `sizes` replaced by its size and each op's result types
// inferred again in order, so formulas become sizes and what only sizes can check (a window that
// must fit, a broadcast, a reshape's element count) is checked, naming the node. Symbols not in
// `sizes` stay symbolic.
llvm::Expected<std::unique_ptr<Graph>> specializeGraph(const Graph &g,
                                                       const std::map<std::string, int64_t> &sizes);

} // namespace strata
