// strata bisect (docs/bisect.md): when the compiled model's answer differs from the reference
// interpreter's, find the step of the ladder that broke it and cut a small reproducer.
//
// 1. Reference: the interpreter on the original graph. Compiled: the JIT with the pipeline. Within
//    tolerance: no mismatch.
// 2. Graph passes: the pipeline again, the interpreter after every pass that changed the graph;
//    the first pass whose graph disagrees is the culprit.
// 3. Kernels: every intermediate of the optimized graph made an output, compiled and run once;
//    the first kernel (plan order) whose result disagrees with the interpreter's is the culprit.
// 4. That kernel alone, on the interpreter's operands. If it is right with none of LLVM's optional
//    passes, the first N pass invocations run for the smallest failing N name the LLVM pass.
//    Otherwise, with those passes off, the first N steps of its default schedule: the smallest N
//    that fails names the step (N = 0: the kernel's lowering or code generation).
// The reproducer is the smallest subgraph found that fails the same way (the same rung and
// name), checked by running these steps on it.
#pragma once
#include "strata/driver/CompiledModel.h"
#include "strata/driver/FaultInjection.h"
#include "strata/graph/Graph.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strata::driver {

struct BisectOptions {
  std::string pipeline = CompileOptions::defaultJitPipeline();
  std::string target = "host";
  unsigned threads = 1;
  double tolerance = 1e-4;                      // relative to each tensor's largest |reference|
  FaultInjection fault;                         // --inject-fault, for testing bisect itself
  bool reduce = true;                           // cut a reproducer
  std::function<void(const std::string &)> log; // progress, one line per call
};

struct Culprit {
  enum class Rung { None, GraphPass, Kernel, Schedule, LlvmPass, Plan };
  Rung rung = Rung::None;
  // the pass, the kernel ("k12_conv"), the schedule step, or the LLVM pass invocation
  // ("InstCombinePass on k0_kernel")
  std::string name;
  std::string kernel; // schedule, llvm-pass: the kernel the step or pass belongs to
  std::string node;   // kernel, schedule: the plan step ("op 'kernel' (node conv_3)")
  std::string detail; // the disagreement that showed it
  // "graph-pass: fuse", "kernel: k12_conv", "schedule: vectorize(i5.i)",
  // "llvm-pass: InstCombinePass on k0_kernel", "plan: ...", or "no mismatch".
  std::string text() const;
  // The same culprit, with kernels compared by name without their plan index ("k12_conv" and
  // "k0_conv" are one kernel cut out of its model).
  bool sameAs(const Culprit &o) const;
};

struct Reproducer {
  std::unique_ptr<Graph> graph;
  std::vector<Tensor> inputs; // in graph input order
  std::string pipeline;       // the passes to run on it
  FaultInjection fault;       // the fault as named in the reduced model
  Culprit culprit;            // what bisect finds on it: sameAs the original's
  int64_t ops = 0;            // its top-level ops other than constants
};

struct BisectResult {
  Culprit culprit;
  std::optional<Reproducer> repro; // with a culprit, when opts.reduce
  std::string reproNote;           // why there is no reproducer, or how it was reduced
};

llvm::Expected<BisectResult> bisect(const Graph &g, const std::vector<Tensor> &inputs,
                                    const BisectOptions &opts);

} // namespace strata::driver
