// Region ops that run at run time: `if` and `loop` (OpTable.def, docs/graph-ir.md "Control
// flow"). Their regions are closed like a kernel's: a region reads only its inputs, which the op
// binds to its operands, so each region compiles as a program of its own and every rung can
// treat it as a graph. This header is the one place that knows how operands, region inputs and
// outputs, and results line up.
#pragma once
#include "strata/graph/Graph.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace strata {

inline bool isControlFlow(OpKind k) { return k == OpKind::If || k == OpKind::Loop; }
inline bool isControlFlow(const Op &op) { return isControlFlow(op.kind()); }

// How a loop's operands, body and results line up:
//   operands  trip_count, cond, carried[numCarried], captures[numCaptures]
//   body in   iteration, cond, carried..., captures...
//   body out  cond, carried..., scans[numScans]
//   results   carried..., scans (each with a leading axis of the iteration count)
struct LoopLayout {
  unsigned numCarried = 0, numCaptures = 0, numScans = 0;
};
// Throws nothing; counts that do not fit give an error.
llvm::Expected<LoopLayout> loopLayout(const Op &loop);

// Operand firstBoundOperand(op) + i binds region input i: an if's condition binds none, a loop's
// trip count and condition line up with its body's iteration and condition inputs.
inline unsigned firstBoundOperand(const Op &op) { return op.kind() == OpKind::If ? 1 : 0; }
// The first capture operand: after an if's condition, after a loop's carried values.
llvm::Expected<unsigned> firstCapture(const Op &op);

// The result types the op's regions give now: an if's branch outputs (where the branches give a
// dim differently, the result's symbol there: a data-dependent size, ValueSymbols.h); a loop's
// carried body outputs (each the type of its body input) and its scan outputs behind the leading
// dim the op's result has now. Errors name the region output.
llvm::Expected<std::vector<TensorType>> controlFlowResultTypes(const Op &op);

// The structure the verifier checks: region count, region inputs of the operands' types (a
// loop's iteration an i64 [] and its cond a bool []), output counts, the condition's and trip
// count's types, and the results' types against controlFlowResultTypes.
llvm::Error checkControlFlow(const Op &op);

// Sets the region inputs' types from the op's operands (after they changed), so the caller can
// re-infer each region; then setResultTypes() takes the results' types from the regions.
void typeRegionInputs(Op &op);
llvm::Error setResultTypes(Op &op);

// Replaces an `if` by a copy of its region `r` inserted before it (region inputs mapped to the
// op's captures); the op is erased. Constant folding of a known condition.
void inlineIfBranch(Op &op, unsigned r);

// Gives each region its own copy of every constant the op captures (sharing the data), in
// place of the region input binding it, so the region's optimizations see the constant (a
// matmul's packed weights, folding). The operand and the now unused input stay. Returns how
// many region inputs it replaced.
int64_t sinkConstantCaptures(Op &op);

// Closes regions built with references to enclosing graphs (the importer converts an ONNX
// branch reading outer tensors by name): every value some region reads from outside it (an
// operand of one of its ops, or an output) becomes a new input of every region, appended in one
// order. Returns those outer values, the op's captures.
std::vector<Value *> captureOuterValues(const std::vector<Graph *> &regions);

} // namespace strata
