// Deliberate miscompiles, for testing `strata bisect` (docs/bisect.md): `--inject-fault=RUNG:NAME`
// makes one graph pass, one kernel or one schedule step compute a wrong answer, so a test can
// check that bisect names it. Never on by default: only that option sets one.
//   graph-pass:NAME   after pass NAME changes the graph, its largest float constant is scaled
//                     (x * 1.5 + 0.25)
//   kernel:NAME       the kernel named NAME ("k12_conv", as `strata bench --profile` and bisect
//                     name kernels) adds 1 to the last value it stores into a result
//   schedule:STEP     in every kernel whose default schedule has STEP (a primitive, "vectorize",
//                     or a whole step, "vectorize(i5.i)"), the first such step adds 1 to the last
//                     value stored into a result inside the loop the step names
//   llvm-pass:NAME    after each run of the LLVM pass NAME (its class name, "LICMPass", as
//                     bisect prints it) on a kernel's function, the function's last float store
//                     stores its value plus 1
#pragma once
#include "strata/graph/Graph.h"
#include "strata/loop/IR.h"
#include "strata/loop/Schedule.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace strata::driver {

struct FaultInjection {
  enum class Rung { None, GraphPass, Kernel, Schedule, LlvmPass };
  Rung rung = Rung::None;
  std::string name;
  bool active() const { return rung != Rung::None; }
  std::string text() const; // "graph-pass:fuse"; "" when none
};

// "graph-pass:NAME", "kernel:NAME", "schedule:STEP" or "llvm-pass:NAME"; anything else is an
// error saying so.
llvm::Expected<FaultInjection> parseFaultInjection(llvm::StringRef spec);

// The graph-pass fault: scales the float constant with the most elements. False if none.
bool perturbLargestConstant(Graph &g);

// The kernel and schedule faults: adds 1 to the value of the last store (in program order) into
// a result parameter, inside the loop named `loop` if it is given and found. False if none.
bool perturbLastResultStore(loop::LoopFunction &f, const std::string &loop = "");

// The index of the first step of `s` the schedule fault matches, or -1.
int64_t faultyStep(const FaultInjection &fault, const loop::Schedule &s);

} // namespace strata::driver
