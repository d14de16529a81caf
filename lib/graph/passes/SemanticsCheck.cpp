// Differential check of a pipeline against the reference interpreter (see SemanticsCheck.h).
#include "SemanticsCheck.h"
#include "strata/support/Error.h"

#include "strata/interp/Interpreter.h"
#include "strata/support/TensorCompare.h"

#include <random>

namespace strata {

namespace {

// Symbolic dims get a small fixed size: big enough to exercise broadcasting, cheap to run.
constexpr int64_t kSymbolicDimSize = 2;

} // namespace

std::vector<Tensor> makeRandomInputs(const Graph &g, unsigned seed) {
  std::mt19937_64 rng(seed);
  // Explicit conversions (not std::uniform_*_distribution) so the values do not depend on the
  // standard library implementation.
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }; // [0, 1)
  std::vector<Tensor> inputs;
  for (unsigned i = 0; i < g.numInputs(); ++i) {
    const TensorType &type = g.input(i)->type();
    Shape shape;
    for (const Dim &d : type.dims)
      shape.push_back(d.isStatic() ? d.size : kSymbolicDimSize);
    Tensor t(type.dtype, shape);
    for (int64_t e = 0, n = t.numElements(); e < n; ++e) {
      if (isFloat(type.dtype))
        t.setDouble(e, 2 * unit() - 1);
      else if (type.dtype == DType::Bool)
        t.setInt(e, static_cast<int64_t>(rng() >> 63));
      else
        t.setInt(e, static_cast<int64_t>(rng() >> 62)); // [0, 4): valid as indices and sizes
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

llvm::Expected<SemanticsReference> makeSemanticsReference(const Graph &g, unsigned seed) {
  SemanticsReference ref;
  ref.inputs = makeRandomInputs(g, seed);
  auto outputs = interpret(g, ref.inputs);
  if (!outputs)
    return makeError("--verify-semantics: cannot interpret the input graph on random inputs: " +
                     llvm::toString(outputs.takeError()));
  ref.outputs = std::move(*outputs);
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    ref.outputNames.push_back(g.outputName(i));
  return ref;
}

llvm::Error checkSemantics(const Graph &g, const SemanticsReference &ref, double tol,
                           std::string_view passName) {
  std::string blame = "semantics changed by pass '" + std::string(passName) + "': ";
  auto outputs = interpret(g, ref.inputs);
  if (!outputs)
    return makeError(blame + "the graph no longer interprets: " +
                     llvm::toString(outputs.takeError()));
  if (outputs->size() != ref.outputs.size())
    return makeError(blame + std::to_string(outputs->size()) + " outputs instead of " +
                     std::to_string(ref.outputs.size()));
  for (size_t o = 0; o < ref.outputs.size(); ++o)
    if (auto diff = compareTensors(ref.outputs[o], (*outputs)[o], tol))
      return makeError(blame + "output '" + ref.outputNames[o] + "' " + *diff);
  return llvm::Error::success();
}

} // namespace strata
