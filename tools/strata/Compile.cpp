// strata compile MODEL [--emit=graph|loop|llvm|asm|obj|so] [--passes=PIPELINE] [-o FILE] ...:
// imports a model (or parses graph IR), optimizes it with a pass pipeline (the standard one by
// default) and stops at the requested rung: the optimized graph, the scheduled loop IR of every
// kernel, the LLVM module, assembly, an object file, or a shared library with a C API (plus its
// header). Without --emit, the extension of -o picks it (.so, .o, .s, .ll), else graph.
#include "Commands.h"
#include "strata/support/Error.h"

#include <set>

#include "strata/driver/Aot.h"
#include "strata/driver/CompiledModel.h"
#include "strata/graph/Kernel.h"
#include "strata/graph/Printer.h"
#include "strata/graph/Specialize.h"
#include "strata/graph/passes/MemoryPlan.h"
#include "strata/graph/passes/PassManager.h"
#include "strata/loop/Printer.h"
#include "strata/lower/Capabilities.h"
#include "strata/runtime/Arena.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>

namespace strata::cli {

namespace {

struct CompileOpts {
  std::string model, output, emit, passes = "default", target = "host";
  int optLevel = 2;
  std::vector<std::string> printIrAfter, dims, shapes, values;
  bool stats = false, fastMath = false, emitBlobs = false, time = false;
  int64_t winogradTile = 0;
  PassManagerOptions pm;
};

const char *const kSupportedEmits[] = {"graph", "loop", "llvm", "asm", "obj", "so"};

// --emit, or what the output file's extension implies.
std::string emitKind(const CompileOpts &o) {
  if (!o.emit.empty())
    return o.emit;
  for (auto [ext, kind] : {std::pair{".so", "so"}, {".o", "obj"}, {".s", "asm"}, {".ll", "llvm"}})
    if (endsWith(o.output, ext))
      return kind;
  return "graph";
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
      return makeError("--dim expects NAME=SIZE, got '" + d + "'");
    opts.symbolSizes[d.substr(0, eq)] = size;
  }
  auto bindAll = [&](const TensorType &t) {
    for (const Dim &dim : t.dims)
      if (!dim.isStatic()) {
        std::set<std::string> names;
        dim.expr.collectSymbols(names);
        for (const std::string &n : names)
          opts.symbolSizes.emplace(n, 1);
      }
  };
  for (unsigned i = 0; i < g.numInputs(); ++i)
    bindAll(g.input(i)->type());
  for (const Op &op : g.ops())
    for (unsigned r = 0; r < op.numResults(); ++r)
      bindAll(op.result(r)->type());
  return opts;
}

// What --stats prints (stderr when the output goes to stdout, so either stays machine-readable):
// the graph's counts after the pipeline, and the plan that runs, with the arena the executor
// places for the bound symbols (--dim NAME=SIZE, else 1) by the same layout (runtime/Arena.h).
struct GraphCounts {
  size_t opsImported = 0;
  const PassContext *ctx = nullptr;
};

int printStats(const CompileOpts &o, const std::string &emit, const Graph &graph,
               const GraphCounts &counts, const driver::Program &prog) {
  auto planOpts = memoryPlanOptions(graph, o.dims);
  if (!planOpts)
    return fail(kUsage, llvm::toString(planOpts.takeError()));
  auto graphPlan = planMemory(graph, *planOpts);
  if (!graphPlan)
    return fail(kBadModel,
                o.model + ": memory planning failed: " + llvm::toString(graphPlan.takeError()));
  std::vector<int64_t> symbolValues;
  for (const std::string &sym : prog.plan.symbols)
    symbolValues.push_back(planOpts->symbolSizes.count(sym) ? planOpts->symbolSizes.at(sym) : 1);
  runtime::ArenaLayout arena;
  if (Status st =
          runtime::layoutArena(prog.plan, symbolValues, arena, std::numeric_limits<int64_t>::max()))
    return fail(kBadModel, o.model + ": " + st.message());
  bool toStdout = emit == "obj" || emit == "so" || (!o.output.empty() && o.output != "-");
  std::ostream &os = toStdout ? std::cout : std::cerr;
  os << "ops_imported: " << counts.opsImported << "\n";
  os << "ops_optimized: " << graph.numOps() << "\n";
  os << "ops_optimized_inner: " << countOpsInKernels(graph) << "\n";
  os << "kernels: " << countKernelOps(graph) << "\n";
  os << "plan_steps: " << prog.plan.steps.size() << "\n";
  os << "plan_buffers: " << prog.plan.buffers.size() << "\n";
  os << "in_place: " << graphPlan->inPlaceCount << "\n";
  os << "arena_peak_bytes: " << arena.bytes << "\n";
  os << "intermediate_total_bytes: " << graphPlan->intermediateTotalBytes << "\n";
  os << "weights_bytes: " << prog.plan.weightsBytes << "\n";
  for (const auto &[key, count] : counts.ctx->stats.all())
    os << key << ": " << count << "\n";
  return 0;
}

// The program for `graph` (already optimized; so are the variants'): lowering and schedules for
// --target; the regions of its if/loop ops get --passes first.
llvm::Expected<driver::Program> buildFor(const CompileOpts &o, Graph &graph,
                                         const std::vector<driver::ShapeVariant> &variants = {}) {
  driver::CompileOptions co;
  co.pipeline = ""; // the graph is already optimized
  co.target = o.target;
  auto po = driver::programOptions(co);
  if (!po)
    return po.takeError();
  po->regionPipeline = o.passes;
  return withContext(driver::buildProgram(graph, *po, variants), inFile(o.model));
}

// --shape specs as sets of input shapes: a name given again starts the next set.
llvm::Expected<std::vector<std::map<std::string, Shape>>>
parseShapeSets(const std::vector<std::string> &specs) {
  std::vector<std::map<std::string, Shape>> sets;
  for (const std::string &spec : specs) {
    auto one = parseShapeHints({spec});
    if (!one)
      return one.takeError();
    const auto &[name, shape] = *one->begin();
    if (sets.empty() || sets.back().count(name))
      sets.emplace_back();
    sets.back()[name] = shape;
  }
  return sets;
}

// The models `strata compile` builds one program from: the graph (at the first --shape set, if
// any), the general graph when --shape is given for a model with symbolic dims (then the
// library keeps the path for every shape, the sets its variants), and the other sets' graphs.
struct CompileGraphs {
  std::unique_ptr<Graph> main, general;
  std::vector<std::unique_ptr<Graph>> more;
};

// Each variant's input shapes, in `general`'s input order.
std::vector<driver::ShapeVariant> shapeVariants(const Graph &general,
                                                const std::vector<Graph *> &specialized) {
  std::vector<driver::ShapeVariant> variants;
  for (Graph *g : specialized) {
    driver::ShapeVariant v{g, {}};
    for (const Value *in : general.inputs())
      for (const Value *at : g->inputs())
        if (at->name() == in->name())
          v.shapes.push_back(at->type().staticShape());
    variants.push_back(std::move(v));
  }
  return variants;
}

using Clock = std::chrono::steady_clock;

// --time: where the compile went, one `time: PHASE MS ms` line each on stderr.
void printTime(const CompileOpts &o, const char *phase, double ms) {
  if (o.time)
    std::cerr << "time: " << phase << " " << static_cast<int64_t>(ms + 0.5) << " ms\n";
}

// The rungs below the graph: build the program (lowering, schedules) and emit it.
int emitProgram(const CompileOpts &o, const std::string &emit, CompileGraphs &graphs,
                std::chrono::steady_clock::time_point start, const GraphCounts &counts) {
  Graph &graph = *graphs.main;
  Clock::time_point phase = Clock::now();
  std::vector<Graph *> more;
  for (auto &g : graphs.more)
    more.push_back(g.get());
  llvm::Expected<driver::Program> prog = llvm::make_error<llvm::StringError>(
      "no program", llvm::inconvertibleErrorCode());
  if (graphs.general) {
    // The general path with a variant per --shape set; where it does not compile, the library
    // runs only at the given shapes.
    std::vector<Graph *> all = {&graph};
    all.insert(all.end(), more.begin(), more.end());
    prog = buildFor(o, *graphs.general, shapeVariants(*graphs.general, all));
    if (!prog)
      std::cerr << "note: " << llvm::toString(prog.takeError())
                << "\nnote: the model does not compile for every input shape; the library runs "
                   "at the --shape sizes only\n";
  }
  if (!graphs.general || !prog)
    prog = buildFor(o, graph, shapeVariants(graph, more));
  if (!prog) {
    std::string why = llvm::toString(prog.takeError());
    if (!needsShapeSpecialization(graph))
      return fail(kBadModel, why);
    // Symbolic dims beyond a batch: the kernels take them as extents where their ops' lowerings
    // can; name the inputs and the way out otherwise.
    std::string which;
    for (const Value *in : graph.inputs())
      if (!in->type().isStatic())
        which += (which.empty() ? "" : ", ") + ("'" + in->name() + "' " + in->type().str());
    return fail(kBadModel, why + "\nnote: the inputs " + which +
                               " have symbolic dims beyond a leading batch and not every kernel "
                               "takes them as run-time extents yet; compile for one shape with "
                               "--shape NAME=D0xD1x..., or run it with `strata run` (the jit "
                               "compiles it per input shape)");
  }
  printTime(o, "lowering + schedules", msSince(phase));
  if (o.stats)
    if (int code = printStats(o, emit, graph, counts, *prog))
      return code;
  if (emit == "loop") {
    std::string text;
    for (const loop::LoopFunction &f : prog->kernels)
      text += loop::printFunction(f) + "\n";
    return writeTextOutput(o.output, text) ? kOk : failedCode();
  }
  bool binary = emit == "obj" || emit == "so";
  if (binary && (o.output.empty() || o.output == "-"))
    return fail(kUsage, "--emit=" + emit + " needs an output file (-o)");
  driver::AotOptions ao;
  ao.target = o.target;
  ao.optLevel = o.optLevel;
  driver::AotOutput kind = emit == "llvm"  ? driver::AotOutput::LLVM
                            : emit == "asm" ? driver::AotOutput::Asm
                            : emit == "obj" ? driver::AotOutput::Object
                                            : driver::AotOutput::SharedLibrary;
  std::string path = o.output.empty() ? "-" : o.output;
  phase = Clock::now();
  if (kind != driver::AotOutput::SharedLibrary) {
    if (llvm::Error err = driver::writeAot(*prog, ao, kind, path))
      return fail(kBadModel, o.model + ": " + llvm::toString(std::move(err)));
    printTime(o, "code generation", msSince(phase));
    printTime(o, "total", msSince(start));
    return 0;
  }
  driver::AotTimings timings;
  ao.timings = &timings;
  if (llvm::Error err = driver::writeLibraryWithHeader(*prog, ao, path))
    return fail(kBadModel, o.model + ": " + llvm::toString(std::move(err)));
  printTime(o, "LLVM IR + optimization", timings.optimizeMs);
  printTime(o, "machine code", timings.codegenMs);
  printTime(o, "link", timings.linkMs);
  printTime(o, "total", msSince(start));
  llvm::SmallString<256> header(path);
  llvm::sys::path::replace_extension(header, ".h");
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << "wrote " << path << " and " << header.str().str() << ": "
            << prog->plan.steps.size() << " kernels, " << prog->plan.weightsBytes
            << " weight bytes, " << prog->plan.symbols.size() << " symbolic dims";
  if (!prog->plan.variants.empty())
    std::cout << ", " << prog->plan.variants.size() << " shape variant"
              << (prog->plan.variants.size() == 1 ? "" : "s");
  std::cout << "; compile time " << static_cast<int64_t>(ms) << " ms\n";
  return 0;
}

int compileModel(const CompileOpts &o) {
  auto start = std::chrono::steady_clock::now();
  const std::string emit = emitKind(o);
  if (!o.dims.empty() && !o.stats) // --dim sizes nothing but the --stats arena
    return fail(kUsage, "--dim sizes the arena that --stats reports; it needs --stats");
  bool emitSupported = false;
  for (const char *e : kSupportedEmits)
    emitSupported |= emit == e;
  if (!emitSupported) {
    std::string list;
    for (const char *e : kSupportedEmits)
      list += (list.empty() ? "" : ", ") + std::string(e);
    return fail(kUsage, "--emit=" + emit + " is not supported; supported: " + list);
  }

  for (const std::string &name : o.printIrAfter)
    if (!lookupPass(name))
      return fail(kUsage, "--print-ir-after: unknown pass '" + name + "'");
  PassManagerOptions pmOpts = o.pm;
  pmOpts.printIrAfter.insert(o.printIrAfter.begin(), o.printIrAfter.end());
  PassManager pm(pmOpts);
  // Parse the pipeline before importing, so a typo fails fast.
  if (llvm::Error err = pm.parsePipeline(o.passes))
    return fail(kUsage, llvm::toString(std::move(err)));
  auto shapeSets = parseShapeSets(o.shapes);
  if (!shapeSets)
    return fail(kUsage, llvm::toString(shapeSets.takeError()));
  auto values = parseValueHints(o.values);
  if (!values)
    return fail(kUsage, llvm::toString(values.takeError()));
  Clock::time_point phase = Clock::now();
  CompileGraphs graphs;
  if (!shapeSets->empty() || !values->empty()) {
    const std::map<std::string, Shape> none;
    graphs.main = loadModelAtShapes(o.model, shapeSets->empty() ? none : shapeSets->front(),
                                    nullptr, *values);
    for (size_t i = 1; graphs.main && i < shapeSets->size(); ++i) {
      graphs.more.push_back(loadModelAtShapes(o.model, (*shapeSets)[i], nullptr, *values));
      if (!graphs.more.back())
        return failedCode();
    }
    // --shape for a model with symbolic dims: the path for every shape too (with --value the
    // model is the one with those values built in).
    if (graphs.main && !shapeSets->empty() && values->empty() && emit != "graph") {
      std::unique_ptr<Graph> general = loadModel(o.model);
      if (!general)
        return failedCode();
      const auto &ins = general->inputs();
      if (std::any_of(ins.begin(), ins.end(),
                      [](const Value *in) { return !in->type().isStatic(); }))
        graphs.general = std::move(general);
    }
  } else {
    graphs.main = loadModel(o.model);
  }
  if (!graphs.main)
    return failedCode();
  Graph *graph = graphs.main.get();
  printTime(o, "import", msSince(phase));
  size_t opsImported = graph->numOpsRecursive();

  PassContext ctx;
  if (emit != "graph") {
    // Code for a target: block convolutions by its SIMD width, as the JIT does. The graph
    // output stays at the portable default (8) so it reads the same on every machine.
    driver::CompileOptions co;
    co.target = o.target;
    auto po = driver::programOptions(co);
    if (!po)
      return fail(kUsage, llvm::toString(po.takeError()));
    ctx.options = driver::passOptionsFor(po->scheduleTarget);
  } else {
    ctx.options.fusesIntoKernel = [](const Op &op) { return lower::lowersInKernel(op); };
  }
  ctx.options.fastMath = o.fastMath;
  ctx.options.winogradTile = o.winogradTile;
  phase = Clock::now();
  if (llvm::Error err = pm.run(*graph, ctx))
    return fail(kBadModel, o.model + ": " + llvm::toString(std::move(err)));
  for (Graph *g : {graphs.general.get()})
    if (g)
      if (llvm::Error err = pm.run(*g, ctx))
        return fail(kBadModel, o.model + ": " + llvm::toString(std::move(err)));
  for (auto &g : graphs.more)
    if (llvm::Error err = pm.run(*g, ctx))
      return fail(kBadModel, o.model + ": " + llvm::toString(std::move(err)));
  printTime(o, "graph passes", msSince(phase));

  const GraphCounts counts{opsImported, &ctx};
  if (emit != "graph")
    return emitProgram(o, emit, graphs, start, counts);
  PrintOptions po;
  po.emitBlobs = o.emitBlobs;
  if (!writeTextOutput(o.output, printGraph(*graph, po)))
    return failedCode();
  if (!o.stats)
    return kOk;
  // The program of this graph (blocked for the portable width, like the graph printed).
  auto prog = buildFor(o, *graph);
  if (!prog)
    return fail(kBadModel, llvm::toString(prog.takeError()));
  return printStats(o, emit, *graph, counts, *prog);
}

} // namespace

Action addCompileCommand(CLI::App &app) {
  auto o = std::make_shared<CompileOpts>();
  CLI::App *cmd =
      app.add_subcommand("compile", "Import a model, optimize it with a pass pipeline and emit it");
  addLimitOption(cmd);
  cmd->add_option("model", o->model, "ONNX model or graph IR text file")->required();
  cmd->add_option("--emit", o->emit,
                  "What to emit: graph, loop, llvm, asm, obj or so (default: from the -o "
                  "extension .so/.o/.s/.ll, else graph)");
  cmd->add_option("--target", o->target, "CPU to generate code for: host, x86-64-v3, x86-64-v2")
      ->capture_default_str();
  cmd->add_option("-O", o->optLevel, "LLVM optimization level 0-3")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  cmd->add_option("--passes", o->passes,
                  "Pass pipeline (see `strata-opt --list-passes`); 'default' is the standard one")
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Write the output here instead of stdout");
  cmd->add_flag("--emit-blobs", o->emitBlobs,
                "Append the data of large constants so the IR re-parses into a runnable graph");
  cmd->add_flag("--stats", o->stats,
                "Print op, kernel, plan, arena and pass statistics as `key: value` lines (stderr "
                "when the output goes to stdout, else stdout), for every --emit");
  cmd->add_option("--dim,--dims", o->dims,
                  "Size of a symbolic dim for --stats' arena: NAME=SIZE (default 1)");
  cmd->add_option("--shape", o->shapes,
                  "Specialize for this input shape: NAME=D0xD1x... (repeatable; an input named "
                  "again starts another set). A model with symbolic dims keeps its path for "
                  "every other shape: the sets are variants picked when the inputs match");
  addValueOption(cmd, o->values);
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
  cmd->add_flag("--time", o->time,
                "Print where the compile goes (import, passes, lowering, LLVM, machine code, "
                "link) to stderr");
  addWinogradOption(cmd, o->winogradTile);
  cmd->add_flag("--fast-math", o->fastMath,
                "Allow rewrites that are not exact under IEEE arithmetic");
  return [o]() { return compileModel(*o); };
}

} // namespace strata::cli
