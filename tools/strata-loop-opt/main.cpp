// strata-loop-opt: reads loop IR text, verifies it, optionally simplifies it, prints it. The
// driver of the loop IR's lit tests.
//
//   strata-loop-opt FILE [-o OUT] [--simplify] [--check-bounds] [--no-verify]
//
// Stages run in order: parse -> verify -> simplify -> verify -> bounds check -> print. Any failure
// prints its error lines to stderr and exits with 1; nothing is written then.
#include "strata/loop/Parser.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Simplify.h"
#include "strata/loop/Verifier.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

int main(int argc, char **argv) {
  std::string input, output = "-";
  bool doSimplify = false, checkBounds = false, noVerify = false;
  CLI::App app{"Parse, verify, simplify and print strata loop IR"};
  app.add_option("input", input, "Loop IR text file ('-' reads stdin)")->required();
  app.add_option("-o,--output", output, "Output file ('-' is stdout)")->capture_default_str();
  app.add_flag("--simplify", doSimplify, "Run the arithmetic simplifier");
  app.add_flag("--check-bounds", checkBounds,
               "Fail unless every load and store index is provably inside its buffer");
  app.add_flag("--no-verify", noVerify, "Skip the verifier (print malformed IR as parsed)");
  CLI11_PARSE(app, argc, argv);

  auto fail = [](llvm::Error err) {
    llvm::errs() << llvm::toString(std::move(err)) << "\n";
    return 1;
  };
  llvm::Expected<strata::loop::LoopFunction> f = strata::loop::parseFunctionFile(input);
  if (!f)
    return fail(f.takeError());
  if (!noVerify)
    if (llvm::Error err = strata::loop::verifyFunction(*f))
      return fail(std::move(err));
  if (doSimplify) {
    *f = strata::loop::simplify(*f);
    if (!noVerify)
      if (llvm::Error err = strata::loop::verifyFunction(*f))
        return fail(std::move(err));
  }
  if (checkBounds)
    if (llvm::Error err = strata::loop::verifyFunction(*f, {.checkBounds = true}))
      return fail(std::move(err));

  std::string text = strata::loop::printFunction(*f);
  if (output == "-") {
    llvm::outs() << text;
    return 0;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << output << ": error: cannot write: " << ec.message() << "\n";
    return 1;
  }
  os << text;
  return 0;
}
