// Result-type inference for every op in the table; the builder and the verifier both use it.
#pragma once
#include "strata/graph/Graph.h"

#include "llvm/Support/Error.h"

namespace strata {

// Infers the result types of an op of `kind` with these operand types and attributes. Checks
// arity, attribute presence/kinds and operand compatibility; the error says what is wrong.
llvm::Expected<std::vector<TensorType>> inferResultTypes(OpKind kind,
                                                        const std::vector<TensorType> &operands,
                                                        const AttrMap &attrs);

// Checks an op's attributes against its table entry (names, kinds, required ones present).
llvm::Error checkAttributes(OpKind kind, const AttrMap &attrs);

} // namespace strata
