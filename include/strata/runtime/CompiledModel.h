// The JIT engine (docs/runtime.md): a graph compiled into an execution plan of native kernels
// that run over one arena laid out by the memory plan.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace strata {
class ThreadPool;
}
namespace strata::codegen {
class LoopJit;
}

namespace strata::runtime {

struct CompileOptions {
  // Graph passes run before lowering; empty runs none. The default is the standard pipeline
  // without `layout-nchwc`, whose `relayout`/blocked ops have no lowering yet.
  std::string pipeline = defaultJitPipeline();
  std::string target = "host"; // "host", "x86-64-v3" or "x86-64-v2"
  int optLevel = 2;
  // Apply loop::applyDefaultSchedule to every kernel (off: direct loop nests, for debugging).
  bool schedule = true;
  // Threads that `parallel` loops run on (a pool owned by the model); 0 means one per core.
  unsigned threads = 0;

  static std::string defaultJitPipeline();
};

// One native call of the plan: a compiled loop function and where each of its arguments lives.
struct ArgSlot {
  enum Kind { Arena, Input, Output, Constant } kind = Arena;
  int64_t index = 0;              // arena byte offset, input or output index
  const void *constant = nullptr; // Constant: the shared constant buffer's data
};

struct PlanStep {
  std::string name;     // "conv (node conv_3)" for error messages and traces
  void (*packed)(void **args) = nullptr;
  std::vector<ArgSlot> args;
  std::vector<void *> argPointers; // resolved per run, allocated once at compile time
};

class CompiledModel {
public:
  ~CompiledModel();
  CompiledModel(const CompiledModel &) = delete;
  CompiledModel &operator=(const CompiledModel &) = delete;

  // Checks the inputs (count, dtype, rank, every dim) before any kernel runs, then runs the plan.
  // The arena is allocated by the first run and reused by every later one; outputs are fresh.
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs);

  size_t numKernels() const { return steps_.size(); }
  int64_t arenaBytes() const { return arenaBytes_; }
  // How many times an arena was allocated (1 after any number of runs).
  int64_t arenaAllocations() const { return arenaAllocations_; }
  unsigned threads() const;

private:
  friend class ModelCompiler;
  CompiledModel() = default;

  struct IOType {
    std::string name;
    DType dtype;
    Shape shape;
  };
  // Where an output's data comes from when it is not written by a kernel directly.
  struct OutputSource {
    ArgSlot::Kind kind = ArgSlot::Output; // Output: written by a kernel (index = own index)
    int64_t index = 0;
    const void *constant = nullptr;
  };

  std::unique_ptr<codegen::LoopJit> jit_; // owns the code of every step
  std::unique_ptr<ThreadPool> pool_;       // current pool of the thread calling the kernels
  std::vector<std::shared_ptr<Buffer>> constants_;
  std::vector<PlanStep> steps_;
  std::vector<IOType> inputs_, outputs_;
  std::vector<OutputSource> outputSources_;
  int64_t arenaBytes_ = 0;
  int64_t arenaAllocations_ = 0;
  std::unique_ptr<uint8_t, decltype(&std::free)> arena_{nullptr, &std::free};
};

// Optimizes `g` in place with `opts.pipeline`, then lowers and JIT-compiles every top-level op.
// Ops without a lowering fail with "jit: op 'X' (node N): lowering of op 'X' is not implemented
// yet"; there is no fallback to the interpreter.
llvm::Expected<std::unique_ptr<CompiledModel>> compileModel(Graph &g,
                                                            const CompileOptions &opts = {});

} // namespace strata::runtime
