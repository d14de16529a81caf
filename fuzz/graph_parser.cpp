// The graph IR text parser: any text parses or fails with an error; a graph that parses and
// verifies prints to text that parses again and prints the same.
#include "FuzzTarget.h"

#include "strata/graph/Parser.h"
#include "strata/graph/Printer.h"
#include "strata/graph/Verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto g = strata::parseGraph(text);
  if (!g) {
    llvm::consumeError(g.takeError());
    return 0;
  }
  if (llvm::Error err = strata::verifyGraph(**g)) {
    llvm::consumeError(std::move(err));
    return 0;
  }
  std::string printed = strata::printGraph(**g);
  auto again = strata::parseGraph(printed);
  if (!again)
    strata::fuzz::violated("printed graph IR parses",
                           llvm::toString(again.takeError()) + "\n" + printed);
  if (strata::printGraph(**again) != printed)
    strata::fuzz::violated("print, parse, print is stable", printed);
  return 0;
}
