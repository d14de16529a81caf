// The loop IR text parser: any text parses or fails with an error; a function that parses and
// verifies prints to text that parses again and prints the same, and the simplifier and the
// bounds checker take it without crashing.
#include "FuzzTarget.h"

#include "strata/loop/Bounds.h"
#include "strata/loop/Parser.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Simplify.h"
#include "strata/loop/Verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace strata::loop;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto f = parseFunction(text);
  if (!f) {
    llvm::consumeError(f.takeError());
    return 0;
  }
  if (llvm::Error err = verifyFunction(*f)) {
    llvm::consumeError(std::move(err));
    return 0;
  }
  std::string printed = printFunction(*f);
  auto again = parseFunction(printed);
  if (!again)
    strata::fuzz::violated("printed loop IR parses",
                           llvm::toString(again.takeError()) + "\n" + printed);
  if (printFunction(*again) != printed)
    strata::fuzz::violated("print, parse, print is stable", printed);
  (void)checkBounds(*f);
  LoopFunction s = *f;
  s.body = simplify(s.body);
  if (llvm::Error err = verifyFunction(s))
    strata::fuzz::violated("simplified IR verifies",
                           llvm::toString(std::move(err)) + "\n" + printed);
  return 0;
}
