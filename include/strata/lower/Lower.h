// Lowering of graph ops to loop IR (docs/lowering.md): each op becomes one LoopFunction whose
// buffer parameters are the op's operands (role In, in order) followed by its results (role
// Out), so the loop interpreter run on the same tensors reproduces the graph interpreter.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/loop/IR.h"

#include "llvm/Support/Error.h"

namespace strata::lower {

// Lowers one graph op with static shapes. Ops (or dtypes, or attribute combinations) that have
// no lowering yet give the error "lowering of op 'X' is not implemented yet".
llvm::Expected<loop::LoopFunction> lowerOp(const Op &op);

// Lowers a fused `kernel` op (also reached through lowerOp): elementwise ops, constants and index
// maps of the region are inlined; other ops (conv, matmul, reduce, ...) are lowered by their
// family into the result buffer or a temporary, followed by one nest per result shape.
llvm::Expected<loop::LoopFunction> lowerKernel(const Op &kernelOp);

} // namespace strata::lower
