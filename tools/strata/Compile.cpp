// strata compile MODEL [--emit=graph] [--passes=PIPELINE] [-o FILE] [--stats] ...: imports a
// model (or parses graph IR), optimizes it with a pass pipeline (the standard one by default)
// and emits the result. Only the optimized graph IR can be emitted so far.
#include "Commands.h"

#include "strata/graph/Printer.h"
#include "strata/graph/passes/MemoryPlan.h"
#include "strata/graph/passes/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <iostream>

namespace strata::cli {

namespace {

struct CompileOpts {
  std::string model, output, emit = "graph", passes = "default";
  std::vector<std::string> printIrAfter, dims;
  bool stats = false, fastMath = false, emitBlobs = false;
  PassManagerOptions pm;
};

const char *const kSupportedEmits[] = {"graph"};

size_t countKernels(const Graph &g) {
  size_t n = 0;
  for (const Op &op : g.ops())
    n += op.kind() == OpKind::Kernel;
  return n;
}

size_t countOpsInKernels(const Graph &g) {
  size_t n = 0;
  for (const Op &op : g.ops())
    if (op.kind() == OpKind::Kernel)
      for (unsigned r = 0; r < op.numRegions(); ++r)
        n += op.region(r).numOpsRecursive();
  return n;
}

// Binds the symbolic dims of the memory plan: --dim NAME=SIZE, else 1 (one batch item).
llvm::Expected<MemoryPlanOptions> memoryPlanOptions(const Graph &g,
                                                    const std::vector<std::string> &dims) {
  MemoryPlanOptions opts;
  for (const std::string &d : dims) {
    size_t eq = d.find('=');
    int64_t size = -1;
    if (eq != std::string::npos) {
      try {
        size = std::stoll(d.substr(eq + 1));
      } catch (const std::exception &) {
      }
    }
    if (eq == std::string::npos || eq == 0 || size < 0)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--dim expects NAME=SIZE, got '" + d + "'");
    opts.symbolSizes[d.substr(0, eq)] = size;
  }
  auto bindAll = [&](const TensorType &t) {
    for (const Dim &dim : t.dims)
      if (!dim.isStatic())
        opts.symbolSizes.emplace(dim.symbol, 1);
  };
  for (unsigned i = 0; i < g.numInputs(); ++i)
    bindAll(g.input(i)->type());
  for (const Op &op : g.ops())
    for (unsigned r = 0; r < op.numResults(); ++r)
      bindAll(op.result(r)->type());
  return opts;
}

int compileModel(const CompileOpts &o) {
  bool emitSupported = false;
  for (const char *e : kSupportedEmits)
    emitSupported |= o.emit == e;
  if (!emitSupported) {
    std::string list;
    for (const char *e : kSupportedEmits)
      list += (list.empty() ? "" : ", ") + std::string(e);
    std::cerr << "error: --emit=" << o.emit << " is not supported; supported: " << list << "\n";
    return 1;
  }

  for (const std::string &name : o.printIrAfter)
    if (!lookupPass(name)) {
      std::cerr << "error: --print-ir-after: unknown pass '" << name << "'\n";
      return 1;
    }
  PassManagerOptions pmOpts = o.pm;
  pmOpts.printIrAfter.insert(o.printIrAfter.begin(), o.printIrAfter.end());
  PassManager pm(pmOpts);
  // Parse the pipeline before importing, so a typo fails fast.
  if (llvm::Error err = pm.parsePipeline(o.passes)) {
    std::cerr << "error: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  std::unique_ptr<Graph> graph = loadModel(o.model);
  if (!graph)
    return 1;
  size_t opsImported = graph->numOpsRecursive();

  PassContext ctx;
  ctx.options.fastMath = o.fastMath;
  if (llvm::Error err = pm.run(*graph, ctx)) {
    std::cerr << "error: " << o.model << ": " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }

  PrintOptions po;
  po.emitBlobs = o.emitBlobs;
  if (!writeTextOutput(o.output, printGraph(*graph, po)))
    return 1;

  if (o.stats) {
    auto planOpts = memoryPlanOptions(*graph, o.dims);
    if (!planOpts) {
      std::cerr << "error: " << llvm::toString(planOpts.takeError()) << "\n";
      return 1;
    }
    auto plan = planMemory(*graph, *planOpts);
    if (!plan) {
      std::cerr << "error: " << o.model << ": memory planning failed: "
                << llvm::toString(plan.takeError()) << "\n";
      return 1;
    }
    // Statistics go to stderr when the IR goes to stdout, so either stays machine-readable.
    std::ostream &os = o.output.empty() || o.output == "-" ? std::cerr : std::cout;
    os << "ops_imported: " << opsImported << "\n";
    os << "ops_optimized: " << graph->numOps() << "\n";
    os << "ops_optimized_inner: " << countOpsInKernels(*graph) << "\n";
    os << "kernels: " << countKernels(*graph) << "\n";
    os << "arena_peak_bytes: " << plan->arenaPeakBytes << "\n";
    os << "intermediate_total_bytes: " << plan->intermediateTotalBytes << "\n";
    for (const auto &[key, count] : ctx.stats.all())
      os << key << ": " << count << "\n";
  }
  return 0;
}

} // namespace

Action addCompileCommand(CLI::App &app) {
  auto o = std::make_shared<CompileOpts>();
  CLI::App *cmd =
      app.add_subcommand("compile", "Import a model, optimize it with a pass pipeline and emit it");
  cmd->add_option("model", o->model, "ONNX model or graph IR text file")->required();
  cmd->add_option("--emit", o->emit, "What to emit (supported: graph)")->capture_default_str();
  cmd->add_option("--passes", o->passes,
                  "Pass pipeline (see `strata-opt --list-passes`); 'default' is the standard one")
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Write the output here instead of stdout");
  cmd->add_flag("--emit-blobs", o->emitBlobs,
                "Append the data of large constants so the IR re-parses into a runnable graph");
  cmd->add_flag("--stats", o->stats,
                "Print op, kernel, memory and pass statistics as `key: value` lines (stderr "
                "when the IR goes to stdout, else stdout)");
  cmd->add_option("--dim,--dims", o->dims,
                  "Size of a symbolic dim for the memory plan: NAME=SIZE (default 1)");
  cmd->add_flag("--verify-each", o->pm.verifyEach, "Verify the graph after every pass");
  cmd->add_flag("--verify-semantics", o->pm.verifySemantics,
                "Interpret the graph on seeded random inputs before the pipeline and after each "
                "pass; fail naming the first pass that changes an output beyond tolerance");
  cmd->add_option("--semantics-tolerance", o->pm.semanticsTolerance,
                  "Relative tolerance of --verify-semantics")
      ->capture_default_str();
  cmd->add_flag("--print-ir-after-all", o->pm.printIrAfterAll,
                "Print the graph to stderr after every pass");
  cmd->add_option("--print-ir-after", o->printIrAfter,
                  "Print the graph to stderr after each run of the named pass (repeatable)");
  cmd->add_flag("--time-passes", o->pm.timePasses, "Print wall time per pass to stderr");
  cmd->add_flag("--fast-math", o->fastMath,
                "Allow rewrites that are not exact under IEEE arithmetic");
  return [o]() { return compileModel(*o); };
}

} // namespace strata::cli
