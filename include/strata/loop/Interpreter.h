// A reference interpreter for the loop IR: runs a function on tensors, one lane at a time, with
// the same scalar semantics as the simplifier's constant folding. It is the loop IR's definition
// of meaning; lowering, schedules and code generation are tested against it.
#pragma once
#include "strata/loop/IR.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace strata::loop {

// `args` holds one tensor per parameter, in order: a buffer parameter takes a tensor of the
// buffer's dtype whose shape equals the buffer's shape (symbolic extents evaluated from the scalar
// arguments); a scalar parameter takes a rank-0 tensor of its dtype. Tensors share storage, so
// results appear in the caller's output tensors. Every access is checked against the buffer's
// shape; an out-of-bounds access, division by zero or an argument mismatch is an error.
llvm::Error evaluate(const LoopFunction &f, std::vector<Tensor> &args);

} // namespace strata::loop
