// Text form of the loop IR (grammar in docs/loop-ir.md). Printing a parsed function gives back
// the same text, byte for byte.
#pragma once
#include "strata/loop/IR.h"

#include <string>

namespace strata::loop {

std::string printFunction(const LoopFunction &f);
// One statement, indented by `indent` levels of two spaces, each line ending in '\n'.
std::string printStmt(const Stmt &s, int indent = 0);
std::string printExpr(const Expr &e);

} // namespace strata::loop
