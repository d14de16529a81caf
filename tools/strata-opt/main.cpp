// strata-opt: reads graph IR text, verifies it, transforms it, prints it. The driver of lit tests.
//
//   strata-opt FILE [-o OUT] [--emit-blobs] [--print-locations] [--no-verify]
//
// Stages run in order: parse -> verify -> (passes, later) -> print. Any failure prints one
// error line to stderr and exits with 1; the output file is only written (atomically) on success.
#include "strata/graph/Parser.h"
#include "strata/graph/Printer.h"
#include "strata/graph/Verifier.h"

#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <string>

namespace {

struct Options {
  std::string input;
  std::string output = "-";
  bool noVerify = false;
  strata::PrintOptions print;
};

void addOptions(CLI::App &app, Options &opts) {
  app.add_option("input", opts.input, "Graph IR text file ('-' reads stdin)")->required();
  app.add_option("-o,--output", opts.output, "Output file ('-' is stdout)")
      ->capture_default_str();
  app.add_flag("--emit-blobs", opts.print.emitBlobs,
               "Append a blobs section holding the data of constants printed as blob<\"hash\">");
  app.add_flag("--print-locations", opts.print.printLocations,
               "Print each op's source location as loc(\"...\")");
  app.add_option("--inline-limit", opts.print.inlineElementLimit,
                 "Constants with more elements than this print as blob<\"hash\">")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-verify", opts.noVerify, "Skip the verifier (print malformed IR as parsed)");
}

std::string displayName(const Options &opts) {
  return opts.input == "-" ? "<stdin>" : opts.input;
}

// Everything between reading and writing: the place where a pass pipeline goes.
llvm::Error transform(strata::Graph &graph, const Options &opts) {
  if (!opts.noVerify)
    if (llvm::Error err = strata::verifyGraph(graph))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     displayName(opts) + ": error: verification failed: " +
                                         llvm::toString(std::move(err)));
  return llvm::Error::success();
}

llvm::Error run(const Options &opts) {
  auto graph = strata::parseGraphFile(opts.input);
  if (!graph)
    return graph.takeError();
  if (llvm::Error err = transform(**graph, opts))
    return err;
  std::string text = strata::printGraph(**graph, opts.print);
  // writeToOutput goes through a temporary file and renames it, so a failed run never leaves a
  // partial output behind.
  llvm::Error err = llvm::writeToOutput(opts.output, [&](llvm::raw_ostream &os) {
    os << text;
    return llvm::Error::success();
  });
  if (err)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "strata-opt: error: cannot write '" + opts.output +
                                       "': " + llvm::toString(std::move(err)));
  return llvm::Error::success();
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"strata-opt: parse, verify and print strata graph IR"};
  Options opts;
  addOptions(app, opts);
  CLI11_PARSE(app, argc, argv);

  if (llvm::Error err = run(opts)) {
    // Messages already start with `file:line:col: error:` (or `file: error:`).
    llvm::errs() << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  return 0;
}
