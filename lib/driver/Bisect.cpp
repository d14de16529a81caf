// strata bisect: the rung, pass, kernel or schedule step that broke an answer (see Bisect.h).
#include "strata/driver/Bisect.h"
#include "strata/support/Error.h"

#include "strata/graph/Clone.h"
#include "strata/graph/passes/PassManager.h"
#include "strata/interp/Interpreter.h"
#include "strata/support/TensorCompare.h"

#include <fmt/format.h>
#include <unordered_map>
#include <unordered_set>

namespace strata::driver {

using Rung = Culprit::Rung;

std::string Culprit::text() const {
  switch (rung) {
  case Rung::None:
    return "no mismatch";
  case Rung::GraphPass:
    return "graph-pass: " + name;
  case Rung::Kernel:
    return "kernel: " + name;
  case Rung::Schedule:
    return "schedule: " + name;
  case Rung::LlvmPass:
    return "llvm-pass: " + name;
  case Rung::Plan:
    return "plan: " + name;
  }
  return "";
}

namespace {

// "k12_conv" -> "conv": a kernel's name without its plan index.
std::string kernelBase(const std::string &name) {
  size_t u = name.find('_');
  return name.size() > 1 && name[0] == 'k' && u != std::string::npos ? name.substr(u + 1) : name;
}

// The node part of a plan step name: "op 'kernel' (node conv_3)" -> "(node conv_3)".
std::string stepNode(const std::string &step) {
  size_t p = step.find('(');
  return p == std::string::npos ? step : step.substr(p);
}

} // namespace

bool Culprit::sameAs(const Culprit &o) const {
  if (rung != o.rung)
    return false;
  switch (rung) {
  case Rung::Kernel:
    return kernelBase(name) == kernelBase(o.name) && stepNode(node) == stepNode(o.node);
  case Rung::Schedule:
  case Rung::LlvmPass:
    return name == o.name && kernelBase(kernel) == kernelBase(o.kernel);
  default:
    return name == o.name;
  }
}

namespace {

// A subgraph cut out of a graph: chosen ops, their constants, the values they read from outside
// as inputs (with the reference data of those values), and every result read outside (or
// returned by the graph) as an output.
struct Cut {
  std::unique_ptr<Graph> graph;
  std::vector<Tensor> inputs;
  int64_t ops = 0;
};

// `ops` in graph order; `valueOf` gives the reference data of a value read from outside.
Cut cutOut(const std::vector<const Op *> &ops,
           const std::function<Tensor(const Value *)> &valueOf) {
  Cut cut;
  cut.graph = std::make_unique<Graph>("main");
  std::unordered_set<const Op *> chosen(ops.begin(), ops.end());
  ValueMap map;
  for (const Op *op : ops) {
    for (const Value *v : op->operands()) {
      if (map.count(v))
        continue;
      const Op *def = v->definingOp();
      if (def && def->kind() == OpKind::Constant) {
        cloneOp(*cut.graph, *def, map);
        continue;
      }
      std::string name = "in" + std::to_string(cut.inputs.size());
      map[v] = cut.graph->addInput(v->type(), name);
      cut.inputs.push_back(valueOf(v));
    }
    cloneOp(*cut.graph, *op, map);
    ++cut.ops;
  }
  int outputs = 0;
  for (const Op *op : ops)
    for (unsigned r = 0; r < op->numResults(); ++r) {
      const Value *v = op->result(r);
      bool outside = v->isGraphOutput() || !v->hasUses();
      for (const Use &u : v->uses())
        outside = outside || !chosen.count(u.user);
      if (outside)
        cut.graph->addOutput(map.at(v), "out" + std::to_string(outputs++));
    }
  return cut;
}

// The top-level ops that become kernels (every op but constants), in order.
std::vector<const Op *> computeOps(const Graph &g) {
  std::vector<const Op *> ops;
  for (const Op &op : g.ops())
    if (op.kind() != OpKind::Constant)
      ops.push_back(&op);
  return ops;
}

// The interpreter's value of every value of `g` (inputs and every op's results), from one run of
// a copy whose every result is an output.
llvm::Expected<std::unordered_map<const Value *, Tensor>>
interpretAll(const Graph &g, const std::vector<Tensor> &inputs) {
  ValueMap map;
  auto all = cloneGraph(g, &map);
  std::vector<const Value *> order;
  for (const Op *op : computeOps(g))
    for (unsigned r = 0; r < op->numResults(); ++r) {
      order.push_back(op->result(r));
      all->addOutput(map.at(op->result(r)), "v" + std::to_string(order.size()));
    }
  auto out = interpret(*all, inputs);
  if (!out)
    return out.takeError();
  std::unordered_map<const Value *, Tensor> values;
  for (unsigned i = 0; i < g.numInputs(); ++i)
    values[g.input(i)] = inputs[i];
  for (size_t i = 0; i < order.size(); ++i)
    values[order[i]] = (*out)[g.numOutputs() + i];
  return values;
}

// The first output of `got` that differs from `want`: "output 'y' max error ...".
std::optional<std::string> firstDifference(const Graph &g, const std::vector<Tensor> &want,
                                           const std::vector<Tensor> &got, double tol) {
  if (want.size() != got.size())
    return fmt::format("{} outputs instead of {}", got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    if (auto d = compareTensors(want[i], got[i], tol))
      return "output '" + (i < g.numOutputs() ? g.outputName(i) : std::to_string(i)) + "' " + *d;
  return std::nullopt;
}

// What locating a culprit leaves behind for cutting a reproducer.
struct Located {
  Culprit culprit;
  // graph-pass: the graph the culprit pass ran on, and its interpreter values.
  std::unique_ptr<Graph> before;
  // kernel, schedule: the culprit kernel alone, failing on the interpreter's operands.
  std::optional<Cut> kernel;
  FaultInjection kernelFault; // the fault as it names things in `kernel`
};

class Bisector {
public:
  explicit Bisector(const BisectOptions &o) : o_(o) {}

  llvm::Expected<Located> locate(const Graph &g, const std::vector<Tensor> &inputs,
                                 const std::string &pipeline, const FaultInjection &fault) {
    Located at;
    auto ref = interpret(g, inputs);
    if (!ref)
      return withContext(ref.takeError(), inPhase("bisect: the reference interpreter"));

    // 1. The whole compiled model.
    {
      auto copy = cloneGraph(g);
      auto model = compile(*copy, pipeline, fault);
      if (!model)
        return model.takeError();
      auto got = (*model)->run(inputs);
      if (!got)
        return withContext(got.takeError(), inPhase("bisect: running the compiled model"));
      auto diff = firstDifference(g, *ref, *got, o_.tolerance);
      if (!diff)
        return at;
      log("compiled model differs from the interpreter: " + *diff);
    }

    // 2. Graph passes: snapshots after each change, then a binary search for the first that
    // interprets differently.
    struct Snapshot {
      std::string pass;
      std::unique_ptr<Graph> graph;
    };
    std::vector<Snapshot> snaps;
    auto optimized = cloneGraph(g);
    {
      PassManagerOptions pmo;
      pmo.afterPass = [&](std::string_view pass, bool changed, double, Graph &now) {
        if (changed && fault.rung == FaultInjection::Rung::GraphPass && pass == fault.name)
          perturbLargestConstant(now);
        if (changed)
          snaps.push_back({std::string(pass), cloneGraph(now)});
        return llvm::Error::success();
      };
      PassManager pm(pmo);
      PassContext ctx;
      ctx.options = passOptions_;
      llvm::Error err = llvm::Error::success();
      if (!pipeline.empty()) {
        err = pm.parsePipeline(pipeline);
        if (!err)
          err = pm.run(*optimized, ctx);
      }
      if (err)
        return withContext(std::move(err), inPhase("bisect: optimizing"));
    }
    auto differs = [&](const Graph &graph) -> llvm::Expected<std::optional<std::string>> {
      auto out = interpret(graph, inputs);
      if (!out)
        return std::optional<std::string>("no longer interprets: " +
                                          llvm::toString(out.takeError()));
      return firstDifference(g, *ref, *out, o_.tolerance);
    };
    if (!snaps.empty()) {
      auto last = differs(*snaps.back().graph);
      if (!last)
        return last.takeError();
      if (*last) {
        size_t lo = 0, hi = snaps.size() - 1; // the first differing snapshot is in [lo, hi]
        std::string detail = **last;
        while (lo < hi) {
          size_t mid = (lo + hi) / 2;
          auto d = differs(*snaps[mid].graph);
          if (!d)
            return d.takeError();
          if (*d) {
            hi = mid;
            detail = **d;
          } else {
            lo = mid + 1;
          }
        }
        at.culprit = {Rung::GraphPass, snaps[lo].pass, "", "", detail};
        at.before = lo == 0 ? cloneGraph(g) : std::move(snaps[lo - 1].graph);
        log(fmt::format("graph pass '{}' (change {} of {}) changes the answer: {}", snaps[lo].pass,
                        lo + 1, snaps.size(), detail));
        return at;
      }
    }
    log(fmt::format("the optimized graph ({} changes by passes) still interprets correctly",
                    snaps.size()));
    snaps.clear();

    // 3. Kernels: every intermediate an output, compiled without passes, compared in plan order.
    auto values = interpretAll(*optimized, inputs);
    if (!values)
      return withContext(values.takeError(), inPhase("bisect: interpreting the optimized graph"));
    std::vector<const Op *> ops = computeOps(*optimized);
    ValueMap map;
    auto all = cloneGraph(*optimized, &map);
    std::vector<const Value *> order;
    for (const Op *op : ops)
      for (unsigned r = 0; r < op->numResults(); ++r) {
        order.push_back(op->result(r));
        all->addOutput(map.at(op->result(r)), "v" + std::to_string(order.size()));
      }
    auto model = compile(*all, "", fault);
    if (!model)
      return model.takeError();
    if ((*model)->numKernels() != ops.size())
      return makeError(
          fmt::format("bisect: {} kernels for {} ops", (*model)->numKernels(), ops.size()));
    auto got = (*model)->run(inputs);
    if (!got)
      return withContext(got.takeError(), inPhase("bisect: running every kernel"));
    size_t culpritOp = ops.size();
    std::string detail;
    for (size_t k = 0, v = 0; k < ops.size() && culpritOp == ops.size(); ++k)
      for (unsigned r = 0; r < ops[k]->numResults(); ++r, ++v)
        if (auto d = compareTensors(values->at(order[v]), (*got)[optimized->numOutputs() + v],
                                    o_.tolerance)) {
          culpritOp = k;
          detail = fmt::format("result {} {}", r, *d);
          break;
        }
    if (culpritOp == ops.size()) {
      at.culprit = {Rung::Plan, "the kernels agree one by one but not as one program", "", "", ""};
      return at;
    }
    const std::string kernel = (*model)->kernelNames()[culpritOp];
    const std::string node = (*model)->plan().steps[culpritOp].name;
    at.culprit = {Rung::Kernel, kernel, "", node, detail};
    log(fmt::format("kernel {} ({}) is the first to differ: {}", kernel, node, detail));

    // 4. The kernel alone, on the interpreter's operands: which schedule step breaks it.
    Cut alone = cutOut({ops[culpritOp]}, [&](const Value *v) { return values->at(v); });
    std::vector<Tensor> want;
    for (unsigned r = 0; r < ops[culpritOp]->numResults(); ++r)
      want.push_back(values->at(ops[culpritOp]->result(r)));
    FaultInjection aloneFault = fault;
    if (fault.rung == FaultInjection::Rung::Kernel)
      aloneFault.name = "k0_" + kernelBase(kernel);
    struct Trial {
      std::optional<std::string> diff;
      loop::Schedule steps;
      std::vector<std::string> llvmPasses; // the optional LLVM pass invocations consulted
    };
    auto trial = [&](int64_t scheduleLimit, int64_t llvmLimit) -> llvm::Expected<Trial> {
      auto copy = cloneGraph(*alone.graph);
      auto passLog = std::make_shared<std::vector<std::string>>();
      auto m = compile(*copy, "", aloneFault, scheduleLimit, llvmLimit, passLog);
      if (!m)
        return m.takeError();
      auto out = (*m)->run(alone.inputs);
      if (!out)
        return withContext(out.takeError(), inPhase("bisect: running the kernel alone"));
      return Trial{firstDifference(*alone.graph, want, *out, o_.tolerance),
                   (*m)->kernelSchedules().at(0).steps, std::move(*passLog)};
    };
    // The smallest limit in [lo, hi] whose trial differs (the trial at hi is known to).
    auto smallestFailing = [](int64_t lo, int64_t hi,
                              const auto &attempt) -> llvm::Expected<int64_t> {
      while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        auto t = attempt(mid);
        if (!t)
          return t.takeError();
        if (t->diff)
          hi = mid;
        else
          lo = mid + 1;
      }
      return lo;
    };
    auto full = trial(-1, -1);
    if (!full)
      return full.takeError();
    if (!full->diff) {
      log("the kernel computes correctly when compiled alone; no reproducer smaller than the "
          "model");
      return at;
    }
    // The kernel's cut becomes the reproducer's starting point once the trials are done.
    at.kernelFault = aloneFault;
    auto done = [&]() {
      at.kernel = std::move(alone);
      return std::move(at);
    };
    // LLVM first: if the kernel is right with none of LLVM's optional passes, one of them breaks
    // it (opt-bisect style: the first N pass invocations run, the rest are skipped).
    auto noLlvm = trial(-1, 0);
    if (!noLlvm)
      return noLlvm.takeError();
    if (!noLlvm->diff) {
      int64_t total = static_cast<int64_t>(full->llvmPasses.size());
      auto first = smallestFailing(1, total, [&](int64_t limit) { return trial(-1, limit); });
      if (!first)
        return first.takeError();
      int64_t lo = *first;
      std::string invocation = lo >= 1 && lo <= total ? full->llvmPasses[lo - 1] : "?";
      log(fmt::format("LLVM pass invocation {} of {} ({}) makes it differ", lo, total, invocation));
      std::string pass = llvm::StringRef(invocation).split(" on ").first.str();
      at.culprit = {Rung::LlvmPass, pass, kernel, node, detail};
      return done();
    }
    // Then the schedule, with LLVM's optional passes off so they cannot hide a broken step.
    const int64_t n = static_cast<int64_t>(full->steps.size());
    auto first = smallestFailing(0, n, [&](int64_t limit) { return trial(limit, 0); });
    if (!first)
      return first.takeError();
    int64_t lo = *first;
    if (lo == 0) {
      log(fmt::format("it differs with none of its {} schedule steps and no optional LLVM pass: "
                      "its lowering or code generation",
                      n));
      return done();
    }
    std::string step = loop::printStep(full->steps[lo - 1]);
    log(fmt::format("schedule step {} of {} ({}) makes it differ", lo, n, step));
    at.culprit = {Rung::Schedule, step, kernel, node, detail};
    return done();
  }

  // The smallest cut of `before` on which `pass` alone (with the fault) fails the same way.
  llvm::Expected<std::optional<Cut>> reduceGraphPass(const Graph &before,
                                                     const std::vector<Tensor> &inputs,
                                                     const std::string &pass,
                                                     const FaultInjection &fault) {
    auto values = interpretAll(before, inputs);
    if (!values)
      return values.takeError();
    std::vector<const Op *> ops = computeOps(before);
    auto valueOf = [&](const Value *v) { return values->at(v); };
    // A cut fails when the pass changes its answer under the interpreter.
    int64_t tries = 0;
    auto fails = [&](const std::vector<const Op *> &subset) -> bool {
      ++tries;
      Cut cut = cutOut(subset, valueOf);
      auto want = interpret(*cut.graph, cut.inputs);
      if (!want) {
        llvm::consumeError(want.takeError());
        return false;
      }
      PassManagerOptions pmo;
      pmo.afterPass = [&](std::string_view p, bool changed, double, Graph &now) {
        if (changed && fault.rung == FaultInjection::Rung::GraphPass && p == fault.name)
          perturbLargestConstant(now);
        return llvm::Error::success();
      };
      PassManager pm(pmo);
      PassContext ctx;
      ctx.options = passOptions_;
      llvm::Error err = pm.parsePipeline(pass);
      if (!err)
        err = pm.run(*cut.graph, ctx);
      if (err) {
        llvm::consumeError(std::move(err));
        return false;
      }
      auto got = interpret(*cut.graph, cut.inputs);
      if (!got) {
        llvm::consumeError(got.takeError());
        return true; // the pass made it uninterpretable: still this pass's fault
      }
      return firstDifference(*cut.graph, *want, *got, o_.tolerance).has_value();
    };
    auto slice = [&](size_t lo, size_t hi) {
      return std::vector<const Op *>(ops.begin() + lo, ops.begin() + hi);
    };
    if (ops.empty() || !fails(ops))
      return std::nullopt;
    // The shortest failing prefix, then the shortest failing window ending there, then single
    // ops dropped from the window while it still fails.
    size_t lo = 1, hi = ops.size();
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (fails(slice(0, mid)))
        hi = mid;
      else
        lo = mid + 1;
    }
    size_t end = hi;
    lo = 0;
    hi = end - 1; // the largest failing start is in [lo, hi]
    while (lo < hi) {
      size_t mid = (lo + hi + 1) / 2;
      if (fails(slice(mid, end)))
        lo = mid;
      else
        hi = mid - 1;
    }
    std::vector<const Op *> window = slice(lo, end);
    constexpr size_t kMaxDropTries = 64;
    for (size_t i = 0; i < window.size() && window.size() > 1 && i < kMaxDropTries;) {
      std::vector<const Op *> without = window;
      without.erase(without.begin() + i);
      if (fails(without))
        window = std::move(without);
      else
        ++i;
    }
    log(fmt::format("reduced {} ops to {} in {} tries", ops.size(), window.size(), tries));
    return cutOut(window, valueOf);
  }

  llvm::Error init() {
    CompileOptions co;
    co.target = o_.target;
    auto po = programOptions(co);
    if (!po)
      return po.takeError();
    passOptions_ = passOptionsFor(po->scheduleTarget);
    return llvm::Error::success();
  }

  void log(const std::string &line) {
    if (o_.log)
      o_.log(line);
  }

private:
  llvm::Expected<std::unique_ptr<CompiledModel>>
  compile(Graph &g, const std::string &pipeline, const FaultInjection &fault,
          int64_t scheduleLimit = -1, int64_t llvmLimit = -1,
          std::shared_ptr<std::vector<std::string>> llvmLog = nullptr) {
    CompileOptions co;
    co.pipeline = pipeline;
    co.target = o_.target;
    co.threads = o_.threads;
    co.fault = fault;
    co.scheduleStepLimit = scheduleLimit;
    co.llvmPassLimit = llvmLimit;
    co.llvmPassLog = std::move(llvmLog);
    auto m = compileModel(g, co);
    if (!m)
      return withContext(m.takeError(), inPhase("bisect: compiling"));
    return m;
  }

  const BisectOptions &o_;
  PassOptions passOptions_;
};

} // namespace

llvm::Expected<BisectResult> bisect(const Graph &g, const std::vector<Tensor> &inputs,
                                    const BisectOptions &opts) {
  Bisector b(opts);
  if (llvm::Error err = b.init())
    return err;
  auto at = b.locate(g, inputs, opts.pipeline, opts.fault);
  if (!at)
    return at.takeError();
  BisectResult result;
  result.culprit = at->culprit;
  if (!opts.reduce || at->culprit.rung == Rung::None)
    return result;

  Reproducer repro;
  if (at->culprit.rung == Rung::GraphPass) {
    auto cut = b.reduceGraphPass(*at->before, inputs, at->culprit.name, opts.fault);
    if (!cut)
      return cut.takeError();
    if (*cut) {
      repro.graph = std::move((*cut)->graph);
      repro.inputs = std::move((*cut)->inputs);
      repro.ops = (*cut)->ops;
    } else { // no smaller cut fails: the whole graph the pass ran on
      repro.graph = std::move(at->before);
      repro.inputs = inputs;
      repro.ops = static_cast<int64_t>(computeOps(*repro.graph).size());
      b.log("no smaller cut of the graph fails with the pass alone");
    }
    repro.pipeline = at->culprit.name;
    repro.fault = opts.fault;
  } else if (at->kernel) {
    repro.graph = std::move(at->kernel->graph);
    repro.inputs = std::move(at->kernel->inputs);
    repro.ops = at->kernel->ops;
    repro.pipeline = "";
    repro.fault = at->kernelFault;
  } else {
    result.reproNote = "no reproducer: the culprit fails only inside the whole model";
    return result;
  }
  // The reproducer must fail the same way, or it is not one.
  b.log(fmt::format("checking the reproducer ({} ops)", repro.ops));
  auto check = b.locate(*repro.graph, repro.inputs, repro.pipeline, repro.fault);
  if (!check)
    return withContext(check.takeError(), inPhase("bisect: checking the reproducer"));
  repro.culprit = check->culprit;
  if (!repro.culprit.sameAs(result.culprit)) {
    result.reproNote = "no reproducer: the reduced model fails as '" + repro.culprit.text() +
                       "', not as '" + result.culprit.text() + "'";
    return result;
  }
  result.repro = std::move(repro);
  return result;
}

} // namespace strata::driver
