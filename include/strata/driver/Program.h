// A model made ready for code generation (docs/runtime.md): the optimized graph lowered to one
// scheduled loop function per plan kernel, the execution plan over them, and the weights packed
// into one blob. The JIT engine compiles the functions in memory; `strata compile -o model.so`
// compiles them into a shared library with the plan and weights inside.
#pragma once
#include "strata/driver/FaultInjection.h"
#include "strata/graph/Graph.h"
#include "strata/graph/passes/Pass.h"
#include "strata/loop/IR.h"
#include "strata/loop/Schedule.h"
#include "strata/runtime/Plan.h"

#include "llvm/Support/Error.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace strata::driver {

struct ProgramOptions {
  // Graph passes run before lowering; empty runs none.
  std::string pipeline;
  // The passes run on each region of an if/loop before it is compiled as a plan of its own;
  // empty: `pipeline`. (`strata compile` optimizes the graph before building the program, its
  // regions here.)
  std::string regionPipeline;
  // Apply loop::applyDefaultSchedule to every kernel (off: direct loop nests, for debugging).
  bool schedule = true;
  loop::ScheduleTarget scheduleTarget;
  // Apply only the first N steps of each kernel's default schedule (-1: all): strata bisect
  // looks for the first step that changes a kernel's answer.
  int64_t scheduleStepLimit = -1;
  // A deliberate miscompile for testing strata bisect (FaultInjection.h); none by default.
  FaultInjection fault;
  // Keep each kernel's loop IR as lowered, before its schedule (Program::unscheduled), for
  // strata explain's ladder.
  bool keepUnscheduled = false;
  // The winograd pass's tile (PassOptions::winogradTile): 0 its cost model, 2 or 4, -1 none.
  int64_t winogradTile = 0;
};

// How one kernel was scheduled: the steps applied and the default schedule's reasons.
struct KernelSchedule {
  loop::Schedule steps;
  std::string why; // one line per decision (loop::defaultSchedule's `why`)
};

struct Program {
  runtime::Plan plan;
  std::vector<loop::LoopFunction> kernels; // plan kernel i; names unique ("k3_conv")
  std::vector<KernelSchedule> schedules;   // kernel i's schedule
  // Kernel i's top-level graph op (valid while the graph lives) and, with
  // ProgramOptions::keepUnscheduled, its loop IR before scheduling (of the op's own nests: a
  // kernel lifted over a symbolic dim is scheduled before the loop over the symbol wraps it).
  std::vector<const Op *> kernelOps;
  // The graph op of each step of the top plan (a kernel's, or an if/loop's): profiles and
  // costs are per step.
  std::vector<const Op *> stepOps;
  std::vector<loop::LoopFunction> unscheduled;
  // The weights blob (plan.weightsBytes, 64-byte aligned, every constant at a 64-byte offset).
  std::unique_ptr<uint8_t, decltype(&std::free)> weights{nullptr, &std::free};
  // Graph stats after the pipeline, for reports.
  int64_t graphOps = 0;
};

// Optimizes `g` in place with `opts.pipeline`, lowers every top-level op (fused kernels included:
// fusion formed only kernels that lower) and schedules the functions. Errors name the op and
// node: "op 'topk' (node \"n3\"): lowering of op ...".
llvm::Expected<Program> buildProgram(Graph &g, const ProgramOptions &opts);

// `g` specialized for one set of input shapes (Specialize.h): compiled into the same program as
// a PlanVariant, run instead of `g`'s plan when the inputs have exactly these shapes.
struct ShapeVariant {
  Graph *graph = nullptr;
  std::vector<std::vector<int64_t>> shapes; // one per input of `g`, in order
};
// The same, with the variants' plans (their kernels in the one kernel table, their constants
// in the one weights blob) after `g`'s.
llvm::Expected<Program> buildProgram(Graph &g, const ProgramOptions &opts,
                                     const std::vector<ShapeVariant> &variants);

// f32 lanes of the micro-kernels' vectors and layout-nchwc's block for `t`: the SIMD width,
// at least 8 (AVX-512: 16).
int64_t f32Lanes(const loop::ScheduleTarget &t);

// The pass options code for `t` is optimized with: layout-nchwc blocks by its SIMD width, and the
// fuse pass forms only kernels the lowering can compute (lower::lowersInKernel).
PassOptions passOptionsFor(const loop::ScheduleTarget &t);

// The schedule target (SIMD width) for a CPU name and feature string ("x86-64-v3", "";
// "znver3", "+avx2,+fma,...").
loop::ScheduleTarget scheduleTargetFor(const std::string &cpu, const std::string &features);

} // namespace strata::driver
