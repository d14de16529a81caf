// Parses the loop IR text form (docs/loop-ir.md). Errors are one `file:line:col: error: ...` line.
// The parser resolves names and builds typed nodes; type rules are left to the verifier.
#pragma once
#include "strata/loop/IR.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace strata::loop {

llvm::Expected<LoopFunction> parseFunction(llvm::StringRef text,
                                           llvm::StringRef filename = "<input>");
// Reads `path` ("-" is stdin) and parses it.
llvm::Expected<LoopFunction> parseFunctionFile(llvm::StringRef path);

} // namespace strata::loop
