// strata-opt: reads graph IR text, verifies it, transforms it, prints it. The driver of lit tests.
//
//   strata-opt FILE [-o OUT] [--emit-blobs] [--print-locations] [--no-verify]
//              [--passes=PIPELINE] [--verify-each] [--print-ir-after-all] [--print-ir-after=NAME]
//              [--time-passes] [--stats] [--verify-semantics] [--fast-math] [--list-passes]
//              [--print-memory-plan]
//
// Stages run in order: parse -> verify -> passes -> print. Any failure prints one error line to
// stderr and exits with 1; the output file is only written (atomically) on success. IR dumps,
// timings and statistics go to stderr so stdout stays parseable IR.
#include "strata/graph/Parser.h"
#include "strata/graph/Printer.h"
#include "strata/graph/Verifier.h"
#include "strata/graph/passes/MemoryPlan.h"
#include "strata/graph/passes/PassManager.h"
#include "strata/lower/Capabilities.h"
#include "strata/support/Error.h"

#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <string>

namespace {

struct Options {
  std::string input;
  std::string output = "-";
  bool noVerify = false;
  strata::PrintOptions print;
  std::string passes;
  std::vector<std::string> printIrAfter;
  bool stats = false;
  bool listPasses = false;
  bool printMemoryPlan = false;
  strata::PassManagerOptions pm;
  strata::PassOptions passOptions;
};

void addOptions(CLI::App &app, Options &opts) {
  app.add_option("input", opts.input, "Graph IR text file ('-' reads stdin)");
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
  app.add_option("--passes", opts.passes,
                 "Pass pipeline: comma-separated pass names, fixpoint(a,b,...) groups, or "
                 "'default' (see --list-passes)");
  app.add_flag("--verify-each", opts.pm.verifyEach,
               "Verify the graph after every pass (always on in debug builds)");
  app.add_flag("--print-ir-after-all", opts.pm.printIrAfterAll,
               "Print the graph to stderr after every pass");
  app.add_option("--print-ir-after", opts.printIrAfter,
                 "Print the graph to stderr after each run of the named pass (repeatable)");
  app.add_flag("--time-passes", opts.pm.timePasses, "Print wall time per pass to stderr");
  app.add_flag("--stats", opts.stats,
               "Print pass and pattern statistics to stderr as sorted `key: value` lines");
  app.add_flag("--verify-semantics", opts.pm.verifySemantics,
               "Interpret the graph on seeded random inputs before the pipeline and after each "
               "pass; fail naming the first pass that changes an output beyond tolerance");
  app.add_option("--semantics-tolerance", opts.pm.semanticsTolerance,
                 "Relative tolerance of --verify-semantics")
      ->capture_default_str();
  app.add_option("--semantics-seed", opts.pm.semanticsSeed,
                 "Seed of the --verify-semantics inputs")
      ->capture_default_str();
  app.add_option("--fixpoint-cap", opts.pm.fixpointCap,
                 "Most iterations of a fixpoint(...) group")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--vector-width", opts.passOptions.vectorWidth,
                 "f32 lanes of the target's vectors for layout decisions (default 8: AVX2)");
  app.add_option("--vector-registers", opts.passOptions.vectorRegisters,
                 "SIMD registers of the target (default 16: AVX2; 32 with AVX-512)");
  app.add_option("--winograd-tile", opts.passOptions.winogradTile,
                 "winograd's tile: 0 its cost model (default), 2 or 4 wherever it applies, -1 none")
      ->check(CLI::IsMember({-1, 0, 2, 4}));
  app.add_flag("--fast-math", opts.passOptions.fastMath,
               "Allow rewrites that are not exact under IEEE arithmetic");
  app.add_flag("--list-passes", opts.listPasses, "List the registered passes and exit");
  app.add_flag("--print-memory-plan", opts.printMemoryPlan,
               "After the IR, print the arena memory plan of the transformed graph to stdout");
}

void listPasses() {
  for (const strata::PassInfo &p : strata::passRegistry())
    llvm::outs() << "  " << p.name << " - " << p.description << "\n";
  llvm::outs() << "  default - " << strata::PassManager::defaultPipeline() << "\n";
}

std::string displayName(const Options &opts) {
  return opts.input == "-" ? "<stdin>" : opts.input;
}

// Everything between reading and writing: the place where a pass pipeline goes.
llvm::Error transform(strata::Graph &graph, const Options &opts) {
  if (!opts.noVerify)
    if (llvm::Error err = strata::verifyGraph(graph))
      return strata::makeError(displayName(opts) +
                               ": error: verification failed: " + llvm::toString(std::move(err)));
  if (opts.passes.empty())
    return llvm::Error::success();
  strata::PassManagerOptions pmOpts = opts.pm;
  for (const std::string &name : opts.printIrAfter)
    if (!strata::lookupPass(name))
      return strata::makeError("strata-opt: error: --print-ir-after: unknown pass '" + name + "'");
  pmOpts.printIrAfter.insert(opts.printIrAfter.begin(), opts.printIrAfter.end());
  strata::PassManager pm(pmOpts);
  strata::PassContext ctx;
  ctx.options = opts.passOptions;
  // The fuse pass forms only kernels the lowering can compute, as in the compiler.
  ctx.options.fusesIntoKernel = [](const strata::Op &op) {
    return strata::lower::lowersInKernel(op);
  };
  llvm::Error err = pm.parsePipeline(opts.passes);
  if (!err)
    err = pm.run(graph, ctx);
  if (opts.stats) // also on failure: the counts help to find a runaway pattern
    for (const auto &[key, count] : ctx.stats.all())
      llvm::errs() << key << ": " << count << "\n";
  if (err)
    return strata::makeError(displayName(opts) + ": error: " + llvm::toString(std::move(err)));
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
    return strata::makeError("strata-opt: error: cannot write '" + opts.output +
                             "': " + llvm::toString(std::move(err)));
  if (opts.printMemoryPlan) {
    auto plan = strata::planMemory(**graph);
    if (!plan)
      return strata::makeError(displayName(opts) + ": error: " + llvm::toString(plan.takeError()));
    strata::printMemoryPlan(*plan, llvm::outs());
  }
  return llvm::Error::success();
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"strata-opt: parse, verify and print strata graph IR"};
  Options opts;
  addOptions(app, opts);
  CLI11_PARSE(app, argc, argv);
  if (opts.listPasses) {
    listPasses();
    return 0;
  }
  if (opts.input.empty()) {
    llvm::errs() << "strata-opt: error: an input file is required\n";
    return 1;
  }

  if (llvm::Error err = run(opts)) {
    // Messages already start with `file:line:col: error:` (or `file: error:`).
    llvm::errs() << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  return 0;
}
