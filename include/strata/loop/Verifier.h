// Structural and type checks of a loop function.
//
// Checked: every variable is a scalar parameter or the index of an enclosing loop, every buffer a
// parameter or an enclosing allocation; names are identifiers and none shadows a visible one;
// index counts equal buffer ranks; operand dtypes and vector lanes agree; stored values match the
// buffer's dtype; nothing stores to an `in` buffer. With `checkBounds`, also that every access is
// provably inside its buffer's shape (see Bounds.h).
#pragma once
#include "strata/loop/IR.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace strata::loop {

struct VerifyOptions {
  bool checkBounds = false;
};

// All problems found, one message per line (empty when the function is well formed).
std::vector<std::string> verifyFunctionDiagnostics(const LoopFunction &f,
                                                   const VerifyOptions &opts = {});
// The same as one error ("verifier: ..." lines joined by newlines), or success.
llvm::Error verifyFunction(const LoopFunction &f, const VerifyOptions &opts = {});

} // namespace strata::loop
