// The reference interpreter: the executable semantics of every graph op (ONNX semantics).
// Clear before fast; constant folding and every differential check run through it.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

namespace strata {

// Runs a graph on concrete inputs (in graph input order). Checks input dtypes and ranks against
// the graph's input types and binds symbolic dims consistently. Errors name the failing op.
llvm::Expected<std::vector<Tensor>> interpret(const Graph &g, const std::vector<Tensor> &inputs);

// Evaluates one op on concrete operand tensors (ignores the op's own operand values).
llvm::Expected<std::vector<Tensor>> evaluateOp(const Op &op, const std::vector<Tensor> &operands);

// Elementwise dtype conversion with ONNX Cast semantics.
Tensor castTensor(const Tensor &t, DType to);

} // namespace strata
