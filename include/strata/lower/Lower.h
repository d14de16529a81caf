// Lowering of graph ops to loop IR (docs/lowering.md): each op becomes one LoopFunction whose
// buffer parameters are the op's operands (role In, in order) followed by its results (role
// Out), so the loop interpreter run on the same tensors reproduces the graph interpreter.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/loop/IR.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <optional>

namespace strata::lower {

// The most boxes per class nms lowers (its kernel keeps a one-byte flag per box); a run-time
// box count is checked against it when bound.
constexpr int64_t kMaxNmsBoxes = int64_t(1) << 20;

struct LowerOptions {
  // f32 lanes of the register-tiled micro-kernels' vectors (matmul, plain conv); blocked convs
  // use their layout's block. The target's SIMD width: 8 with AVX2, 16 with AVX-512.
  int64_t vectorLanesF32 = 8;
  // The target's SIMD registers (16 with AVX2, 32 with AVX-512): how many accumulators a
  // micro-kernel's register tile may keep.
  int64_t vectorRegisters = 16;
};

// Lowers one graph op. Ops (or dtypes, or attribute combinations) that have no lowering yet give
// the error "lowering of op 'X' is not implemented yet". An op with a symbolic dim goes through
// lowerSymbolic when it can (a lifted batch), else lowerWithSymbolicExtents: the function then
// has trailing scalar parameters, each named symbolParamName(symbol), carrying the symbols'
// run-time values.
llvm::Expected<loop::LoopFunction> lowerOp(const Op &op, const LowerOptions &opts = {});

// Batch lifting (LowerSymbolic.cpp): an op whose only symbolic dim is dim 0 of its values, and
// whose dim-0 slices are independent, is lowered with the symbol bound to 1 and wrapped in a loop
// over the symbol. Other symbolic ops are refused with the reason.
// `beforeLift`, if given, runs on the function lowered at size 1 (e.g. the default schedule, which
// then sees the op's own loop nests rather than the loop over the symbol).
bool hasSymbolicDims(const Op &op);
llvm::Expected<loop::LoopFunction>
lowerSymbolic(const Op &op,
              const std::function<llvm::Error(loop::LoopFunction &)> &beforeLift = nullptr,
              const LowerOptions &opts = {});
std::string symbolParamName(const std::string &symbol); // "batch" -> "sym_batch"
// The parameter carrying a formula dim's value (computed by the plan): "fdiv(h+1,2)" ->
// "dim_fdiv_Lh_P1_C2_R", and back (nullopt for a name of another form).
std::string formulaParamName(const std::string &formula);
std::optional<std::string> formulaOfParamName(const std::string &param);
// Symbolic extents: an op with symbolic dims lowered as it is, every loop extent, buffer dim and
// stride an i64 expression over trailing scalar parameters, one per symbol its dims are
// (symbolParamName(symbol)) and one per formula dim (formulaParamName: fdiv(h+1,2), which the
// plan computes when the inputs are bound), sorted by name. Ops whose lowering needs static sizes are refused ("symbolic dims"). lowerOp uses
// this when batch lifting does not apply.
llvm::Expected<loop::LoopFunction> lowerWithSymbolicExtents(const Op &op,
                                                            const LowerOptions &opts = {});

// Lowers a fused `kernel` op (also reached through lowerOp): elementwise ops, constants and index
// maps of the region are inlined; other ops (conv, matmul, reduce, ...) are lowered by their
// family into the result buffer or a temporary, followed by one nest per result shape.
llvm::Expected<loop::LoopFunction> lowerKernel(const Op &kernelOp);

} // namespace strata::lower
