// strata explain's report (Explain.h): the model stepped down every rung, with what each rung
// shows, where each ONNX node went, what each kernel costs and where the memory goes.
#include "strata/driver/Explain.h"
#include "strata/support/Error.h"

#include "strata/codegen/KernelModule.h"
#include "strata/codegen/LoopToLLVM.h"
#include "strata/codegen/Target.h"
#include "strata/driver/CompiledModel.h"
#include "strata/driver/KernelCost.h"
#include "strata/driver/MachineRoof.h"
#include "strata/driver/Program.h"
#include "strata/graph/Clone.h"
#include "strata/graph/Kernel.h"
#include "strata/graph/Ops.h"
#include "strata/graph/Printer.h"
#include "strata/graph/passes/MemoryPlan.h"
#include "strata/graph/passes/PassManager.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Visitor.h"
#include "strata/runtime/Arena.h"

#include "ExplainReport.inc"

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <tuple>

namespace strata::driver {

namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Every op location in `g`, regions included.
void collectLocations(const Graph &g, std::set<std::string> &out) {
  for (const Op &op : g.ops()) {
    if (!op.location().empty())
      out.insert(op.location());
    for (unsigned r = 0; r < op.numRegions(); ++r)
      collectLocations(op.region(r), out);
  }
}

std::set<std::string> locationsOf(const Op &op) {
  std::set<std::string> out;
  if (!op.location().empty())
    out.insert(op.location());
  for (unsigned r = 0; r < op.numRegions(); ++r)
    collectLocations(op.region(r), out);
  return out;
}

// Whether a decision for the target shows in `g`: a conv in a blocked layout, a relayout
// between layouts, or a matmul weight in column panels (their widths are the target's).
bool decidedForTarget(const Graph &g) {
  for (const Op &op : g.ops()) {
    if (op.kind() == OpKind::Relayout ||
        (op.kind() == OpKind::Conv && ops::ConvOp(op).layout() != 0) ||
        (op.kind() == OpKind::MatMul && ops::MatMulOp(op).b_panel() != 0))
      return true;
    for (unsigned r = 0; r < op.numRegions(); ++r)
      if (decidedForTarget(op.region(r)))
        return true;
  }
  return false;
}

// Statements of a loop function (loops, stores, allocations, conditionals, sequences).
int64_t countStmts(const loop::LoopFunction &f) {
  int64_t count = 0;
  if (f.body)
    loop::forEachStmt(f.body, [&count](const loop::Stmt &) { ++count; });
  return count;
}

// The kernel a generated function belongs to: "k12_conv", "k12_conv_packed" -> 12.
int64_t kernelOfSymbol(llvm::StringRef name) {
  if (name.size() < 3 || name[0] != 'k')
    return -1;
  size_t i = 1;
  int64_t n = 0;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])))
    n = n * 10 + (name[i++] - '0');
  return i > 1 && i < name.size() && name[i] == '_' ? n : -1;
}

struct MachineText {
  std::string llvm, assembly;
  int64_t llvmInstructions = 0, asmInstructions = 0, vectorInstructions = 0, fmaInstructions = 0;
  std::map<std::string, int64_t> llvmChanged; // LLVM pass -> runs that changed the kernel
};

// Assembly text -> each kernel's functions, with instruction counts. A function's text runs from
// the line after the previous function's `.size` (its constant pools come first) to its own.
void splitAssembly(llvm::StringRef text, std::vector<MachineText> &out) {
  std::string pending; // lines after the last function, before the next one's `.type`
  int64_t owner = -1;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    if (line.starts_with("\t.type\t") && line.ends_with(",@function")) {
      llvm::StringRef name = line.drop_front(7).split(',').first;
      owner = kernelOfSymbol(name);
      if (owner >= static_cast<int64_t>(out.size()))
        owner = -1;
      if (owner >= 0)
        out[owner].assembly += pending;
      pending.clear();
    }
    if (owner < 0) {
      pending.append(line.data(), line.size());
      pending += '\n';
      continue;
    }
    MachineText &m = out[owner];
    m.assembly.append(line.data(), line.size());
    m.assembly += '\n';
    if (line.starts_with("\t.size\t")) {
      owner = -1; // what follows belongs to the next function
      continue;
    }
    if (line.size() > 1 && line[0] == '\t' && line[1] != '.' && !line.ends_with(":")) {
      llvm::StringRef mnemonic = line.drop_front(1).split('\t').first.split(' ').first;
      ++m.asmInstructions;
      if (line.contains("%ymm") || line.contains("%zmm"))
        ++m.vectorInstructions;
      if (mnemonic.starts_with("vfmadd") || mnemonic.starts_with("vfnmadd") ||
          mnemonic.starts_with("vfmsub") || mnemonic.starts_with("vfnmsub"))
        ++m.fmaInstructions;
    }
  }
}

// Each kernel's optimized LLVM IR and assembly, compiled as `strata compile -o m.so` compiles
// them (one module per thread), with the LLVM passes that changed it.
llvm::Expected<std::vector<MachineText>>
machineText(const Program &prog, const codegen::TargetSpec &spec, int optLevel) {
  codegen::CodegenOptions co;
  co.noalias = true;
  co.llvmPassChanges = std::make_shared<std::vector<std::string>>();
  auto parts = codegen::buildKernelModules(prog.kernels, co, spec, optLevel);
  if (!parts)
    return parts.takeError();
  std::vector<MachineText> out(prog.kernels.size());
  for (const std::string &change : *co.llvmPassChanges) {
    auto [pass, unit] = llvm::StringRef(change).split(" on ");
    int64_t k = kernelOfSymbol(unit);
    if (k >= 0 && k < static_cast<int64_t>(out.size()))
      ++out[k].llvmChanged[pass.str()];
  }
  std::vector<std::string> assembly(parts->size()), errors(parts->size());
  auto emit = [&](size_t p) {
    llvm::Module &m = *(*parts)[p].module;
    for (const llvm::Function &fn : m) {
      int64_t k = kernelOfSymbol(fn.getName());
      if (fn.isDeclaration() || k < 0 || k >= static_cast<int64_t>(out.size()))
        continue;
      llvm::raw_string_ostream os(out[k].llvm);
      fn.print(os);
      out[k].llvmInstructions += fn.getInstructionCount();
    }
    auto tm = codegen::createTargetMachine(spec);
    if (!tm) {
      errors[p] = llvm::toString(tm.takeError());
      return;
    }
    llvm::SmallString<0> buf;
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    if ((*tm)->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
      errors[p] = "the target cannot emit assembly";
      return;
    }
    pm.run(m);
    assembly[p] = buf.str().str();
  };
  // Kernels of different parts are different kernels: the parts write disjoint entries.
  std::vector<std::thread> workers;
  for (size_t p = 1; p < parts->size(); ++p)
    workers.emplace_back(emit, p);
  if (!parts->empty())
    emit(0);
  for (std::thread &w : workers)
    w.join();
  for (const std::string &e : errors)
    if (!e.empty())
      return makeError("assembly: " + e);
  for (const std::string &a : assembly)
    splitAssembly(a, out);
  return out;
}

// What each graph pass can do, from the registry's descriptions, in pipeline order.
json pipelinePasses(const std::string &pipelineText) {
  json list = json::array();
  std::set<std::string> seen;
  std::string word;
  auto flush = [&]() {
    if (!word.empty() && seen.insert(word).second)
      if (const PassInfo *p = lookupPass(word))
        list.push_back(p->name + ": " + p->description);
    word.clear();
  };
  for (char c : pipelineText) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')
      word += c;
    else
      flush();
  }
  flush();
  return list;
}

json portability(bool neutral, const std::string &detail) {
  return {{"neutral", neutral}, {"detail", detail}};
}

struct PassRecord {
  std::string name;
  double ms = 0;
  bool changed = false;
  std::map<std::string, int64_t> fired; // statistics this run of the pass added
};

struct Snapshot {
  std::string pass, text;
  size_t ops = 0, kernels = 0;
  bool targetSpecific = false;
  std::map<std::string, int64_t> fired;
};

} // namespace

llvm::Expected<nlohmann::ordered_json> explainModel(Graph &g, const std::vector<SourceNode> &source,
                                                    double importMs,
                                                    const std::vector<Tensor> &inputs,
                                                    const ExplainOptions &opts) {
  auto log = [&](const std::string &line) {
    if (opts.log)
      opts.log(line);
  };
  CompileOptions co;
  co.pipeline = "";
  co.target = opts.target;
  co.optLevel = opts.optLevel;
  co.threads = opts.threads;
  auto po = programOptions(co);
  if (!po)
    return po.takeError();
  auto spec = codegen::resolveTarget(opts.target);
  if (!spec)
    return spec.takeError();
  const int64_t lanes = f32Lanes(po->scheduleTarget);
  const std::map<std::string, int64_t> symbols = symbolSizes(g, inputs);

  json report;
  report["model"] = opts.modelPath;
  report["target"] = {
      {"name", opts.target},        {"cpu", spec->cpu},
      {"features", spec->features}, {"vectorBytes", po->scheduleTarget.vectorBytes},
      {"f32Lanes", lanes},          {"vectorRegisters", po->scheduleTarget.vectorRegisters}};
  const std::string blockedWhy =
      fmt::format("target-specific: tensors blocked by {} channels, the {}-bit SIMD width of {}",
                  lanes, lanes * 32, spec->cpu);

  // Rung 1 and 2: the source model and the graph as imported.
  std::set<std::string> imported;
  collectLocations(g, imported);
  std::map<std::string, std::string> fate; // node -> what removed it
  int64_t foldedAtImport = 0;
  std::string sourceText;
  for (const SourceNode &n : source) {
    std::string ins, outs;
    for (const std::string &s : n.inputs)
      ins += (ins.empty() ? "" : ", ") + s;
    for (const std::string &s : n.outputs)
      outs += (outs.empty() ? "" : ", ") + s;
    sourceText += fmt::format("{}: {}({}) -> {}\n", n.name, n.opType, ins, outs);
    if (!imported.count(n.name)) {
      fate[n.name] = "folded into a constant or removed as dead at import";
      ++foldedAtImport;
    }
  }
  json rungs = json::array();
  if (!source.empty())
    rungs.push_back(
        {{"id", "onnx"},
         {"title", "ONNX graph"},
         {"text", sourceText},
         {"count", source.size()},
         {"unit", "nodes"},
         {"portability", portability(true, "target-neutral: the ONNX standard")},
         {"possible", json::array({"import: decompose composite ONNX ops into strata's primitives",
                                   "import: fold nodes whose inputs are all constants"})},
         {"fired", json::array({json{{"name", "nodes folded or dead at import"},
                                     {"count", foldedAtImport}}})}});

  // The passes, snapshotting the graph after each one that changed it.
  PassContext ctx;
  ctx.options = passOptionsFor(po->scheduleTarget);
  std::vector<PassRecord> passes;
  std::vector<Snapshot> snapshots;
  std::set<std::string> liveLocations = imported;
  std::map<std::string, int64_t> lastStats;
  PassManagerOptions pmo;
  pmo.afterPass = [&](std::string_view pass, bool changed, double seconds, Graph &now) {
    PassRecord rec{std::string(pass), seconds * 1e3, changed, {}};
    for (const auto &[key, value] : ctx.stats.all())
      if (key != rec.name + ".changed" && value != lastStats[key])
        rec.fired[key] = value - lastStats[key];
    lastStats = ctx.stats.all();
    if (changed) {
      std::set<std::string> locs;
      collectLocations(now, locs);
      for (const std::string &l : liveLocations)
        if (!locs.count(l))
          fate.emplace(l, "absorbed by graph pass '" + rec.name + "'");
      liveLocations = std::move(locs);
      snapshots.push_back({rec.name, printGraph(now), now.numOpsRecursive(), countKernelOps(now),
                           decidedForTarget(now), rec.fired});
    }
    passes.push_back(std::move(rec));
    return llvm::Error::success();
  };
  PassManager pm(pmo);
  if (llvm::Error err = pm.parsePipeline(opts.pipeline == "default"
                                             ? std::string(PassManager::defaultPipeline())
                                             : opts.pipeline))
    return err;
  rungs.push_back({{"id", "graph"},
                   {"title", "graph IR (imported)"},
                   {"text", printGraph(g)},
                   {"count", g.numOpsRecursive()},
                   {"unit", "ops"},
                   {"portability", portability(true, "target-neutral: whole-tensor ops, NCHW")},
                   {"possible", pipelinePasses(pm.pipelineText())},
                   {"fired", json::array()},
                   {"ms", importMs}});
  log("optimizing: " + pm.pipelineText());
  Clock::time_point t = Clock::now();
  if (llvm::Error err = pm.run(g, ctx))
    return withContext(std::move(err), inPhase("optimizing"));
  const double passesMs = msSince(t);
  {
    std::map<std::string, int64_t> changes; // the graph rung: which passes changed it
    for (const PassRecord &p : passes)
      changes[p.name] += p.changed;
    json fired = json::array();
    for (const auto &[name, n] : changes)
      if (n)
        fired.push_back({{"name", name + " changed the graph"}, {"count", n}});
    rungs.back()["fired"] = fired;
  }
  for (size_t i = 0; i < snapshots.size(); ++i) {
    const Snapshot &s = snapshots[i];
    json fired = json::array();
    for (const auto &[key, n] : s.fired)
      fired.push_back({{"name", key}, {"count", n}});
    rungs.push_back({{"id", fmt::format("pass{}:{}", i, s.pass)},
                     {"title", "after " + s.pass},
                     {"group", "graph passes"},
                     {"text", s.text},
                     {"count", s.ops},
                     {"unit", "ops"},
                     {"kernels", s.kernels},
                     {"portability", s.targetSpecific ? portability(false, blockedWhy)
                                                      : portability(true, "target-neutral")},
                     {"possible", json::array()},
                     {"fired", fired}});
  }

  // The fused graph, lowered and scheduled.
  log(fmt::format("lowering and scheduling {} top-level ops", g.numOps()));
  t = Clock::now();
  ProgramOptions lowerOpts = *po;
  lowerOpts.pipeline = "";
  lowerOpts.keepUnscheduled = true;
  auto prog = buildProgram(g, lowerOpts);
  if (!prog)
    return withContext(prog.takeError(), inPhase("lowering"));
  const double lowerMs = msSince(t);
  log(fmt::format("generating LLVM IR and assembly for {} kernels", prog->kernels.size()));
  t = Clock::now();
  auto machine = machineText(*prog, *spec, opts.optLevel);
  if (!machine)
    return withContext(machine.takeError(), inPhase("codegen"));
  const double codegenMs = msSince(t);

  // Memory: the plan's buffers placed for this run's sizes.
  std::vector<int64_t> symbolValues;
  for (const std::string &s : prog->plan.symbols)
    symbolValues.push_back(symbols.count(s) ? symbols.at(s) : 1);
  runtime::ArenaLayout arena;
  if (Status st = runtime::layoutArena(prog->plan, symbolValues, arena,
                                       std::numeric_limits<int64_t>::max()))
    return makeError(st.message());
  MemoryPlanOptions mpo;
  for (const auto &[s, n] : symbols)
    mpo.symbolSizes[s] = n;
  for (const std::string &s : prog->plan.symbols)
    mpo.symbolSizes.emplace(s, 1);
  auto graphPlan = planMemory(g, mpo);
  if (!graphPlan)
    return graphPlan.takeError();

  // Each kernel's locations, and which kernels each location ended up in.
  std::vector<std::set<std::string>> kernelLocations;
  std::map<std::string, std::vector<int64_t>> kernelsOf;
  for (size_t k = 0; k < prog->kernelOps.size(); ++k) {
    kernelLocations.push_back(locationsOf(*prog->kernelOps[k]));
    for (const std::string &l : kernelLocations.back())
      kernelsOf[l].push_back(static_cast<int64_t>(k));
  }

  // Remarks by node (deduplicated: a pass in a fixpoint group may repeat one).
  std::map<std::string, std::vector<json>> remarksOf;
  std::set<std::tuple<std::string, std::string, std::string>> seenRemarks;
  for (const Remark &r : ctx.remarks)
    if (seenRemarks.insert({r.pass, r.node, r.message}).second)
      remarksOf[r.node].push_back({{"pass", r.pass}, {"node", r.node}, {"message", r.message}});

  // Timing: the same program compiled by the JIT and run with per-step profiling.
  std::vector<double> kernelMs(prog->kernels.size(), 0.0);
  json run = nullptr, roof = nullptr;
  double jitMs = 0;
  if (opts.iters > 0) {
    log(fmt::format("compiling with the JIT and timing {} runs", opts.iters));
    std::unique_ptr<Graph> copy = cloneGraph(g);
    t = Clock::now();
    auto model = compileModel(*copy, co);
    if (!model)
      return model.takeError();
    jitMs = msSince(t);
    (*model)->setProfiling(true);
    std::vector<double> latencies;
    for (unsigned i = 0; i < opts.warmup + opts.iters; ++i) {
      Clock::time_point r = Clock::now();
      auto out = (*model)->run(inputs);
      if (!out)
        return withContext(out.takeError(), inPhase("running"));
      if (i >= opts.warmup)
        latencies.push_back(msSince(r));
    }
    auto profile = (*model)->profile();
    const double runs = opts.warmup + opts.iters;
    double kernelTotal = 0;
    for (size_t i = 0; i < profile.size() && i < kernelMs.size(); ++i) {
      kernelMs[i] = profile[i].second / runs;
      kernelTotal += kernelMs[i];
    }
    std::sort(latencies.begin(), latencies.end());
    run = {{"iters", opts.iters},
           {"warmup", opts.warmup},
           {"threads", (*model)->threads()},
           {"medianMs", latencies[latencies.size() / 2]},
           {"minMs", latencies.front()},
           {"kernelMs", kernelTotal}};
    log("measuring this machine's FMA peak and memory bandwidth");
    MachineRoof r = measureMachineRoof((*model)->threads(), static_cast<int>(lanes));
    roof = {{"peakGflops", r.peakGflops},
            {"bandwidthGBs", r.bandwidthGBs},
            {"threads", r.threads},
            {"lanes", r.lanes}};
  }

  // Kernels.
  json kernels = json::array();
  std::map<std::string, int64_t> scheduleCounts, llvmCounts, lowered;
  int64_t loopStmts = 0, scheduledStmts = 0, llvmInstructions = 0, asmInstructions = 0,
          vectorInstructions = 0, fmaInstructions = 0;
  // Each kernel's step name, regions' plans included (an if/loop's kernels run inside it).
  std::vector<std::string> stepOfKernel(prog->kernels.size());
  std::function<void(const runtime::Plan &)> nameSteps = [&](const runtime::Plan &p) {
    for (const runtime::PlanStep &st : p.steps)
      if (st.kind == runtime::PlanStep::Kernel && st.kernel >= 0 &&
          static_cast<size_t>(st.kernel) < stepOfKernel.size())
        stepOfKernel[st.kernel] = st.name;
    for (const runtime::Plan &r : p.regions)
      nameSteps(r);
  };
  nameSteps(prog->plan);
  for (size_t k = 0; k < prog->kernels.size(); ++k) {
    const Op &op = *prog->kernelOps[k];
    const MachineText &m = (*machine)[k];
    KernelCost cost = kernelCost(op, symbols);
    json nodes = json::array(), remarks = json::array();
    for (const std::string &l : kernelLocations[k]) {
      nodes.push_back(l);
      for (const json &r : remarksOf[l])
        remarks.push_back(r);
    }
    json steps = json::array();
    for (const loop::Step &s : prog->schedules[k].steps) {
      steps.push_back(loop::printStep(s));
      ++scheduleCounts[s.primitive];
    }
    json why = json::array();
    for (llvm::StringRef rest = prog->schedules[k].why; !rest.empty();) {
      auto [line, tail] = rest.split('\n');
      if (!line.trim().empty())
        why.push_back(line.trim().str());
      rest = tail;
    }
    json changed = json::object();
    for (const auto &[pass, n] : m.llvmChanged) {
      changed[pass] = n;
      llvmCounts[pass] += n;
    }
    int64_t before = countStmts(prog->unscheduled[k]), after = countStmts(prog->kernels[k]);
    loopStmts += before;
    scheduledStmts += after;
    llvmInstructions += m.llvmInstructions;
    asmInstructions += m.asmInstructions;
    vectorInstructions += m.vectorInstructions;
    fmaInstructions += m.fmaInstructions;
    std::string kind(op.opName());
    if (op.kind() == OpKind::Kernel) {
      if (auto plan = kernelPlan(op))
        kind = std::string(enumName(plan->kind));
      else
        llvm::consumeError(plan.takeError());
    }
    ++lowered[op.kind() == OpKind::Kernel ? "fused " + kind + " kernels" : "lone " + kind + " ops"];
    kernels.push_back(
        {{"name", prog->kernels[k].name},
         {"op", std::string(op.opName())},
         {"kind", kind},
         {"step", stepOfKernel[k]},
         {"type", op.numResults() ? op.result(0)->type().str() : ""},
         {"nodes", nodes},
         {"graph", printOp(op)},
         {"graphOps", op.kind() == OpKind::Kernel ? op.region(0).numOpsRecursive() : 1},
         {"loop", loop::printFunction(prog->unscheduled[k])},
         {"loopStmts", before},
         {"scheduled", loop::printFunction(prog->kernels[k])},
         {"scheduledStmts", after},
         {"schedule", steps},
         {"why", why},
         {"remarks", remarks},
         {"llvm", m.llvm},
         {"llvmInstructions", m.llvmInstructions},
         {"llvmChanged", changed},
         {"asm", m.assembly},
         {"asmInstructions", m.asmInstructions},
         {"vectorInstructions", m.vectorInstructions},
         {"fmaInstructions", m.fmaInstructions},
         {"ms", kernelMs[k]},
         {"flops", cost.flops},
         {"bytes", cost.bytes}});
  }
  report["kernels"] = kernels;

  // The rungs below the graph; their text is the kernels' (the viewer concatenates it).
  const bool blocked = decidedForTarget(g);
  json fusedFired = json::array();
  for (const auto &[key, n] : ctx.stats.all())
    if (llvm::StringRef(key).starts_with("fuse.kernels"))
      fusedFired.push_back({{"name", key}, {"count", n}});
  fusedFired.push_back(
      {{"name", "memory-plan.in-place buffers"}, {"count", graphPlan->inPlaceCount}});
  rungs.push_back(
      {{"id", "kernels"},
       {"title", "fused kernels"},
       {"text", printGraph(g)},
       {"count", prog->kernels.size()},
       {"unit", "kernels"},
       {"ops", g.numOps()},
       {"portability",
        blocked ? portability(false, blockedWhy) : portability(true, "target-neutral")},
       {"possible", json::array({"memory planning: one arena, best-fit offsets by live range",
                                 "in-place reuse: an elementwise kernel overwrites a "
                                 "dying operand",
                                 "lowering: each kernel becomes one loop function"})},
       {"fired", fusedFired},
       {"ms", passesMs}});
  json loweredFired = json::array();
  for (const auto &[what, n] : lowered)
    loweredFired.push_back({{"name", "lowered " + what}, {"count", n}});
  rungs.push_back(
      {{"id", "loop"},
       {"title", "loop IR (lowered)"},
       {"field", "loop"},
       {"count", loopStmts},
       {"unit", "statements"},
       {"portability",
        portability(!blocked, blocked ? "loop nests are target-neutral; the blocked buffer "
                                        "layouts they index were chosen for the target"
                                      : "target-neutral loop nests over buffers")},
       {"possible",
        json::array({"split / tile / reorder loops", "vectorize an inner loop by the SIMD width",
                     "parallelize an outer loop over threads", "unroll", "pack / cache operands",
                     "compute-at / inline producers"})},
       {"fired", loweredFired},
       {"ms", lowerMs}});
  json scheduleFired = json::array();
  for (const auto &[p, n] : scheduleCounts)
    scheduleFired.push_back({{"name", p}, {"count", n}});
  rungs.push_back(
      {{"id", "scheduled"},
       {"title", "loop IR (scheduled)"},
       {"field", "scheduled"},
       {"count", scheduledStmts},
       {"unit", "statements"},
       {"portability", portability(false, fmt::format("target-specific: vectors of {} f32 lanes, "
                                                      "register tiles for {} vector registers",
                                                      lanes, po->scheduleTarget.vectorRegisters))},
       {"possible", json::array({"LLVM: instruction combining, loop-invariant code motion",
                                 "LLVM: loop and SLP vectorization, unrolling",
                                 "LLVM: instruction selection for the CPU's "
                                 "features"})},
       {"fired", scheduleFired}});
  json llvmFired = json::array();
  for (const auto &[p, n] : llvmCounts)
    llvmFired.push_back({{"name", p}, {"count", n}});
  std::sort(llvmFired.begin(), llvmFired.end(),
            [](const json &a, const json &b) { return a["count"] > b["count"]; });
  rungs.push_back({{"id", "llvm"},
                   {"title", "LLVM IR (optimized)"},
                   {"field", "llvm"},
                   {"count", llvmInstructions},
                   {"unit", "instructions"},
                   {"portability", portability(false, fmt::format("target-specific: {} for CPU {}",
                                                                  spec->triple, spec->cpu))},
                   {"possible", json::array({"register allocation", "instruction scheduling",
                                             "encoding for the CPU's instruction set"})},
                   {"fired", llvmFired},
                   {"ms", codegenMs}});
  rungs.push_back(
      {{"id", "asm"},
       {"title", "assembly"},
       {"field", "asm"},
       {"count", asmInstructions},
       {"unit", "instructions"},
       {"portability", portability(false, "target-specific: x86-64 machine code for " + spec->cpu)},
       {"possible", json::array()},
       {"fired",
        json::array(
            {json{{"name", "instructions on 256/512-bit registers"}, {"count", vectorInstructions}},
             json{{"name", "fused multiply-adds"}, {"count", fmaInstructions}}})}});
  report["rungs"] = rungs;

  // Provenance of every source node.
  json nodes = json::array();
  for (const SourceNode &n : source) {
    // The kernels the node computes in first, the relayouts layout-nchwc placed for it after.
    json ks = json::array();
    if (auto it = kernelsOf.find(n.name); it != kernelsOf.end()) {
      std::vector<int64_t> order = it->second;
      std::stable_partition(order.begin(), order.end(), [&](int64_t k) {
        return prog->kernelOps[k]->kind() != OpKind::Relayout;
      });
      for (int64_t k : order)
        ks.push_back(k);
    }
    std::string where;
    if (!ks.empty())
      where = "";
    else if (auto f = fate.find(n.name); f != fate.end())
      where = f->second;
    else if (liveLocations.count(n.name))
      where = "became a constant (weights)";
    else
      where = "not in the compiled program";
    json remarks = json::array();
    for (const json &r : remarksOf[n.name])
      remarks.push_back(r);
    nodes.push_back({{"name", n.name},
                     {"op", n.opType},
                     {"inputs", n.inputs},
                     {"outputs", n.outputs},
                     {"kernels", ks},
                     {"fate", where},
                     {"remarks", remarks}});
  }
  report["nodes"] = nodes;

  // Compile time.
  json passList = json::array();
  for (const PassRecord &p : passes)
    passList.push_back({{"name", p.name}, {"ms", p.ms}, {"changed", p.changed}});
  report["compile"] = {{"importMs", importMs},   {"passesMs", passesMs}, {"lowerMs", lowerMs},
                       {"codegenMs", codegenMs}, {"jitMs", jitMs},       {"passes", passList}};
  report["run"] = run;
  report["roof"] = roof;

  // Memory.
  json buffers = json::array();
  int64_t total = 0;
  for (size_t b = 0; b < prog->plan.buffers.size(); ++b) {
    const runtime::PlanBuffer &pb = prog->plan.buffers[b];
    int64_t bytes = pb.size.bytes;
    for (int s : pb.size.symbols)
      bytes *= symbolValues[s];
    total += bytes;
    buffers.push_back(
        {{"offset", arena.offsets[b]}, {"bytes", bytes}, {"first", pb.first}, {"last", pb.last}});
  }
  report["memory"] = {{"arenaBytes", arena.bytes},
                      {"buffersTotalBytes", total},
                      {"intermediateTotalBytes", graphPlan->intermediateTotalBytes},
                      {"peakLiveBytes", graphPlan->peakLiveBytes},
                      {"inPlace", graphPlan->inPlaceCount},
                      {"weightsBytes", prog->plan.weightsBytes},
                      {"steps", prog->plan.steps.size()},
                      {"buffers", buffers}};
  json symbolJson = json::object();
  for (const auto &[s, n] : symbols)
    symbolJson[s] = n;
  report["symbols"] = symbolJson;
  return report;
}

std::string explainHtml(const nlohmann::ordered_json &report) {
  // Inside <script>, "</script>" or "<!--" in a string would end or confuse the element: every
  // '<' is written as the JSON escape \u003c (it only ever occurs inside strings). Names from a
  // hostile file that are not UTF-8 are replaced, not fatal.
  std::string data = report.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string escaped;
  escaped.reserve(data.size() + data.size() / 64);
  for (char c : data)
    escaped += c == '<' ? std::string("\\u003c") : std::string(1, c);
  std::string page = kExplainReportHtml;
  const std::string marker = "/*STRATA_REPORT_DATA*/";
  size_t at = page.find(marker);
  if (at == std::string::npos)
    return page; // the template is part of the build; it always has the marker
  return page.replace(at, marker.size(), escaped);
}

} // namespace strata::driver
