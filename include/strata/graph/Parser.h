// Parses the text form of the graph IR. Errors carry file:line:col and say what was expected.
#pragma once
#include "strata/graph/Graph.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace strata {

llvm::Expected<std::unique_ptr<Graph>> parseGraph(llvm::StringRef text,
                                                  llvm::StringRef filename = "<input>");
llvm::Expected<std::unique_ptr<Graph>> parseGraphFile(llvm::StringRef path);

} // namespace strata
