// Internal interface between the ONNX import driver and the per-op converters.
//
// A converter turns one ONNX node into graph IR ops through the Builder and returns the values
// for the node's outputs (in order; nullptr for an output it does not produce, which is an error
// if that output is used). Converters live in files by op family; each family file has one
// registration function with one line per ONNX op type.
#pragma once
#include "strata/graph/Builder.h"
#include "strata/graph/Ops.h"
#include "strata/support/Tensor.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::onnx_import {

// Thrown by converters; the driver adds the file and node name.
struct ConvertError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ImportContext {
public:
  virtual ~ImportContext() = default;
  virtual Builder &builder() = 0;
  // Opset version of the default ONNX domain.
  virtual int64_t opset() const = 0;

  // The value of input i of `node`, or nullptr when the input is absent or named "".
  virtual Value *input(const onnx::NodeProto &node, int i) = 0;
  int numInputs(const onnx::NodeProto &node) const { return node.input_size(); }
  // Directory of the model file: external data of tensors (e.g. a Constant's) is relative to it.
  virtual const std::string &modelDir() const {
    static const std::string none;
    return none;
  }

  // Converts a subgraph attribute (If branch, Loop/Scan body) inline with its inputs bound to
  // `inputs`, returning its outputs; `where` names it in errors and locations.
  virtual std::vector<Value *> inlineSubgraph(const onnx::GraphProto &body,
                                              const std::vector<Value *> &inputs,
                                              const std::string &where) = 0;

  // Converts a subgraph into `region`, a graph built apart (an if branch, a loop body) whose
  // values `inputs` bind the subgraph's inputs; returns its outputs. Values of enclosing scopes
  // it reads stay references out of the region until ControlFlow.h's captureOuterValues.
  virtual std::vector<Value *> convertIntoRegion(const onnx::GraphProto &body, Graph &region,
                                                 const std::vector<Value *> &inputs,
                                                 const std::string &where) = 0;

  // The constant value of input i when it is known at import (initializer, Constant node, folded
  // subgraph, or a specializable graph input); nullopt otherwise. Use this for every input that
  // must be static (shapes, axes, pads, scales, k, ...).
  virtual std::optional<Tensor> constantInput(const onnx::NodeProto &node, int i) = 0;
  // The value of input i as formulas of the symbolic dims, per element, for an integer tensor of
  // rank 0 or 1 that shape arithmetic computes from symbolic dims (Shape, then Gather, Concat,
  // Unsqueeze, Cast, Slice, + - * / on it) or a small integer constant; nullopt otherwise.
  // Consumers that need a shape (Reshape, Expand) read it when constantInput has none.
  virtual std::optional<std::vector<SymExpr>> symbolicInput(const onnx::NodeProto &node, int i) = 0;
  // Element i of the integer value `v` as a formula of the symbolic dims (or a constant) where
  // shape arithmetic knows it, though perhaps not the whole tensor (a Resize's sizes: the batch
  // and channels read with Shape, the height and width from data); nullopt otherwise.
  virtual std::optional<SymExpr> elementFormula(const Value *, int64_t) { return std::nullopt; }
  // Whether `e` is >= 0 for every valid binding: provably (SymExpr's sign rule) or because Shape
  // read it off a tensor's dims (sizes are checked >= 0 when bound).
  virtual bool knownNonNegative(const SymExpr &e) const { return e.provablyNonNegative(); }
  // A tensor that has `size` as one of its dims, and which dim (a graph input, else one computed
  // so far): where a length computed from symbolic dims can be taken from at run time (iota);
  // nullopt when none has it.
  virtual std::optional<std::pair<Value *, int64_t>> dimWitness(const SymExpr &size) = 0;
  // `base` as a symbol name no earlier call returned (base, base_2, base_3, ...): a node
  // converted more than once (an unrolled loop body) still names each size read from data apart.
  std::string uniqueSymbol(const std::string &base) {
    std::string name = base;
    for (int k = 2; !symbolsMade_.insert(name).second; ++k)
      name = base + "_" + std::to_string(k);
    return name;
  }
  // Same, but throws ConvertError naming the input when it is not a known constant.
  Tensor requireConstantInput(const onnx::NodeProto &node, int i, const char *what) {
    auto t = constantInput(node, i);
    if (!t)
      throw ConvertError(std::string(what) + " (input " + std::to_string(i) + " '" +
                         (i < node.input_size() ? node.input(i) : std::string()) +
                         "') must be a constant known at import time");
    return *t;
  }

private:
  std::set<std::string> symbolsMade_;
};

// Attribute access with ONNX defaults.
const onnx::AttributeProto *findAttr(const onnx::NodeProto &node, const std::string &name);
int64_t attrInt(const onnx::NodeProto &node, const std::string &name, int64_t dflt);
float attrFloat(const onnx::NodeProto &node, const std::string &name, float dflt);
std::string attrString(const onnx::NodeProto &node, const std::string &name,
                       const std::string &dflt);
std::vector<int64_t> attrInts(const onnx::NodeProto &node, const std::string &name,
                              std::vector<int64_t> dflt = {});
std::vector<float> attrFloats(const onnx::NodeProto &node, const std::string &name);
bool hasAttr(const onnx::NodeProto &node, const std::string &name);
// TensorProto -> Tensor (raw_data or typed fields; external data resolved relative to `baseDir`).
Tensor tensorFromProto(const onnx::TensorProto &t, const std::string &baseDir);
// Same, but moves raw_data out of `t` into the tensor's buffer instead of copying it (the
// driver uses it for initializers, so weights are copied at most once).
Tensor takeTensorFromProto(onnx::TensorProto &t, const std::string &baseDir);
std::optional<DType> dtypeFromOnnx(int32_t onnxType);

using ConvertFn = std::function<std::vector<Value *>(ImportContext &, const onnx::NodeProto &)>;
using ConverterTable = std::map<std::string, ConvertFn>;

// One registration function per family file.
void registerElementwiseConverters(ConverterTable &t);   // Elementwise.cpp: math, logic, compare
void registerActivationConverters(ConverterTable &t);    // Activations.cpp
void registerNNConverters(ConverterTable &t);            // NN.cpp: conv, pool, norms, matmul, gemm
void registerReductionConverters(ConverterTable &t);     // Reductions.cpp: Reduce*, Arg*, softmax
void registerDataMovementConverters(ConverterTable &t);  // DataMovement.cpp: shape ops, gather...
void registerMiscConverters(ConverterTable &t);          // Misc.cpp: Constant*, Range, TopK, ...
void registerLossConverters(ConverterTable &t);
void registerRecurrentConverters(ConverterTable &t);     // Recurrent.cpp: RNN, GRU, LSTM
void registerControlFlowConverters(ConverterTable &t);   // ControlFlow.cpp: If, Loop, Scan
void registerQuantizationConverters(ConverterTable &t);  // Quantization.cpp: (De)QuantizeLinear

// `s` as a symbol name: characters other than letters, digits and '_' become '_' (and a name
// that would start with a digit, or be empty, gets a leading '_').
std::string sanitizeSymbol(const std::string &s);

// Normalizes a possibly negative axis for a tensor of `rank`; throws ConvertError if out of range.
// A scalar (rank 0) keeps 0 and -1 unchanged: a caller that indexes dims or per-axis vectors with
// the result must refuse rank 0 first (the graph ops' axis attributes already do).
int64_t normalizeAxis(int64_t axis, int64_t rank);

// 0, 1, ..., size - 1 (i64) for a symbolic `size` some graph input has as a dim (an iota of
// that dim); nullptr when none has it.
Value *countTo(ImportContext &ctx, const SymExpr &size);

// Input i of `node` as dims: its constant values, else the formulas shape arithmetic computed
// it from (symbolicInput); throws ConvertError naming `what` when it is neither.
std::vector<Dim> requireDimsInput(ImportContext &ctx, const onnx::NodeProto &node, int i,
                                  const char *what);

// The elements of `t` (an integer tensor of rank 0 or 1 and static length) as sizes read from
// its data when the model runs: each an `arange` of that many, whose dim is a symbol of its own
// (`val_<name>_<i>`, a data-dependent size with no bound before the run; a negative value fails
// the run). How a shape a model computes from tensor values, not from dims, compiles once.
std::vector<Dim> dataDims(ImportContext &ctx, Value *t, const std::string &name);
// The value of `count` (a rank-0 i64) as a size read when the model runs (as dataDims);
// `invalid`, where given, says what a negative count means (the run's error says it).
Dim dataDim(ImportContext &ctx, Value *count, const std::string &name,
            const std::string &invalid = "");
// The same size's arange: 0, 1, ..., count - 1 (its one dim that size).
Value *dataArange(ImportContext &ctx, Value *count, const std::string &name,
                  const std::string &invalid = "");
// Element i of `t` (as dataDims takes it) as a rank-0 i64 value.
Value *scalarElement(Builder &b, Value *t, int64_t i);
// Input i as dims: requireDimsInput's constants or formulas, else dataDims of its data.
std::vector<Dim> dimsInputOrData(ImportContext &ctx, const onnx::NodeProto &node, int i,
                                 const char *what);

// Reshapes x to `dims`: a symbolic dim is copied with 0 when it sits at the same position in x,
// otherwise inferred with -1 (at most one such dim); throws ConvertError when not expressible.
Value *reshapeTo(Builder &b, Value *x, const std::vector<Dim> &dims);

} // namespace strata::onnx_import
