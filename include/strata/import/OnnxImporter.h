// ONNX model import into the graph IR.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strata {

struct ImportOptions {
  // Graph inputs whose values may be fixed at import time. An input listed here is turned into a
  // constant only if the model uses it where a static value is needed (a Reshape's shape, a
  // Slice's starts, ...); all other inputs stay graph inputs.
  std::map<std::string, Tensor> specializableInputs;
  // Fold ops whose operands are all constants (through the interpreter) while importing.
  bool foldConstants = true;
  // Largest constant (in elements) folding may create.
  int64_t foldElementLimit = 1 << 22;
  // Graph inputs imported at these shapes instead of their declared ones: each must have the
  // declared rank and agree with its static dims; its symbolic dims take these sizes. Shape
  // arithmetic on them (Shape -> Gather -> Concat -> Reshape, Range, ...) then folds as for a
  // static model: what the JIT does to compile a model once per set of input shapes.
  std::map<std::string, Shape> inputShapes;
};

// One node of the ONNX graph as the file has it (in topological order): what `strata explain`
// shows as the top rung. `name` is the location its graph ops carry (Op::location).
struct OnnxNode {
  std::string name, opType;
  std::vector<std::string> inputs, outputs;
};

struct ImportResult {
  std::unique_ptr<Graph> graph;
  std::vector<std::string> specializedInputs; // inputs turned into constants
  std::vector<OnnxNode> nodes;
};

// Errors name the file and, for op problems, every offending node; unsupported ops are reported
// all together in one error listing each op type and the nodes that use it.
llvm::Expected<ImportResult> importOnnxFile(const std::string &path,
                                            const ImportOptions &opts = {});

// A model's interface without converting any node: its graph inputs (initializers excluded) with
// their declared types, named symbols as `importOnnxFile` names them, and its output names.
struct OnnxInterface {
  std::vector<std::pair<std::string, TensorType>> inputs;
  // Outputs with their declared types (rank 0 f32 where the file declares none).
  std::vector<std::pair<std::string, TensorType>> outputs;
  // Inputs whose values some node needs at import (a Reshape's shape, Slice's starts, TopK's k,
  // Resize's sizes, an If's condition ... given as graph inputs): a run imports the model again
  // with them as constants (ImportOptions::specializableInputs), keyed by their values. Inputs
  // declared larger than kMaxValueInputElements (graph/Specialize.h) are data, never listed.
  std::vector<std::string> valueInputs;
  bool hasSymbolicInput() const;
};
llvm::Expected<OnnxInterface> readOnnxInterface(const std::string &path);

// After an import of `path` failed: its interface when some input dim is symbolic (the failure
// may be shape arithmetic that folds only at known sizes) or some input's values are needed at
// import, so importing it again at each set of input shapes and values may work; else nullopt.
std::optional<OnnxInterface> perShapeInterface(const std::string &path);

// The graph of `path` with its inputs at these shapes (`inputs`: the interface's input names, in
// the order of `shapes`; ImportOptions::inputShapes), so its shape arithmetic folds to constants,
// and the value inputs in `values` turned into those constants.
llvm::Expected<std::unique_ptr<Graph>>
importOnnxFileAtShapes(const std::string &path, const std::vector<std::string> &inputs,
                       const std::vector<Shape> &shapes,
                       const std::map<std::string, Tensor> &values = {});

// Reads a serialized onnx.TensorProto (.pb), e.g. the backend test data.
llvm::Expected<Tensor> readTensorProtoFile(const std::string &path, std::string *name = nullptr);

} // namespace strata
