// The JIT engine (docs/runtime.md): a graph built into a Program (Program.h), its kernels compiled
// in memory through ORC LLJIT, run by the plan executor (Executor.h) over one arena.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/driver/Program.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace strata::codegen {
class LoopJit;
}

namespace strata::runtime {
class Executor;
class RunContext;
}

namespace strata::driver {

struct CompileOptions {
  // Graph passes run before lowering; empty runs none.
  std::string pipeline = defaultJitPipeline();
  std::string target = "host"; // "host", "x86-64-v3" or "x86-64-v2"
  int optLevel = 2;
  // Apply loop::applyDefaultSchedule to every kernel (off: direct loop nests, for debugging).
  bool schedule = true;
  // The winograd pass's tile (PassOptions::winogradTile): 0 its cost model, 2 or 4, -1 none.
  int64_t winogradTile = 0;
  // Threads that `parallel` loops run on (a pool owned by the model); 0 means one per core.
  unsigned threads = 0;
  // strata bisect only (ProgramOptions): a schedule prefix and a deliberate miscompile.
  int64_t scheduleStepLimit = -1;
  FaultInjection fault;
  // ... and LLVM's optional passes cut off (codegen::CodegenOptions::llvmPassLimit).
  int64_t llvmPassLimit = -1;
  std::shared_ptr<std::vector<std::string>> llvmPassLog;

  static std::string defaultJitPipeline();
};

class CompiledModel {
public:
  ~CompiledModel();
  CompiledModel(const CompiledModel &) = delete;
  CompiledModel &operator=(const CompiledModel &) = delete;

  // Checks the inputs (count, dtype, rank, every dim; symbolic dims consistent across inputs)
  // before any kernel runs, then runs the plan. The arena is allocated by the first run and
  // reused by every later one at the same bound sizes; outputs are fresh tensors.
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs);

  // Concurrent runs: the state of runs (bound dims, arena) in a context of its own, so threads
  // that share this model each run through their own context at the same time. run() above uses
  // the model's context and must not be called by two threads at once. A context must not
  // outlive the model.
  std::unique_ptr<runtime::RunContext> createContext() const;
  llvm::Expected<std::vector<Tensor>> run(runtime::RunContext &context,
                                          const std::vector<Tensor> &inputs) const;

  // The zero-copy form of run(), for callers that own the memory (the Python binding): inputs by
  // pointer, and each output written where `allocate(i, dtype, shape)` says. allocate is called
  // once per output, in order, after every input is checked and before any kernel runs; an error
  // it returns ends the run. Concurrent calls need contexts of their own, as above.
  struct InputRef {
    const void *data = nullptr;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
  };
  using OutputAllocator =
      std::function<llvm::Expected<void *>(size_t, DType, const std::vector<int64_t> &)>;
  llvm::Error runInto(runtime::RunContext &context, const std::vector<InputRef> &inputs,
                      const OutputAllocator &allocate) const;

  size_t numKernels() const;
  // Kernel i's name ("k12_conv") and the schedule it was given.
  const std::vector<std::string> &kernelNames() const { return kernelNames_; }
  const std::vector<KernelSchedule> &kernelSchedules() const { return schedules_; }
  // Kernel i's top-level op in the graph this model was compiled from: valid only while that
  // graph lives (strata bench keeps it, for each kernel's FLOPs and bytes).
  const std::vector<const Op *> &kernelOps() const { return kernelOps_; }
  // The graph op of each plan step (an if/loop runs kernels of its regions).
  const std::vector<const Op *> &stepOps() const { return stepOps_; }
  int64_t arenaBytes() const;        // of the last run's binding
  int64_t arenaAllocations() const; // 1 after any number of runs at one binding
  unsigned threads() const;
  const runtime::Plan &plan() const;
  // Per-step timing (Executor::setProfiling): steps' names and summed milliseconds.
  void setProfiling(bool on);
  std::vector<std::pair<std::string, double>> profile() const;

private:
  friend llvm::Expected<std::unique_ptr<CompiledModel>> compileModel(Graph &,
                                                                     const CompileOptions &);
  CompiledModel() = default;
  std::unique_ptr<codegen::LoopJit> jit_; // owns the kernels' code
  std::unique_ptr<uint8_t, decltype(&std::free)> weights_{nullptr, &std::free};
  std::unique_ptr<runtime::Executor> exec_;
  std::vector<std::string> kernelNames_;
  std::vector<KernelSchedule> schedules_;
  std::vector<const Op *> kernelOps_;
  std::vector<const Op *> stepOps_;
};

// The ProgramOptions (passes, schedule, SIMD width of the target) that `opts` implies.
llvm::Expected<ProgramOptions> programOptions(const CompileOptions &opts);

// Optimizes `g` in place with `opts.pipeline`, builds the program and JIT-compiles its kernels.
// Ops without a lowering fail with "jit: op 'X' (node N): lowering of op 'X' is not implemented
// yet"; there is no fallback to the interpreter.
llvm::Expected<std::unique_ptr<CompiledModel>> compileModel(Graph &g,
                                                            const CompileOptions &opts = {});

} // namespace strata::driver
