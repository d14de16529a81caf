// Runs an execution plan (Plan.h) over native kernels: checks inputs and binds symbolic dims,
// places intermediate buffers in one arena (re-placed only when bound sizes change), calls the
// kernels in order on a thread pool. Shared by the JIT engine and AOT libraries' C API, hence
// LLVM-free: errors are a Status (support/Diagnostic.h).
#pragma once
#include "strata/runtime/Plan.h"
#include "strata/support/Diagnostic.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace strata {
class ThreadPool;
}

namespace strata::runtime {

using KernelFn = void (*)(void **args);

class Executor {
public:
  // `kernels` has plan.numKernels entries; `weights` (plan.weightsBytes, 64-byte aligned) must
  // outlive the executor. threads == 0: one per core.
  Executor(Plan plan, std::vector<KernelFn> kernels, const uint8_t *weights, unsigned threads);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  const Plan &plan() const { return plan_; }

  // Checks input count, dtypes, ranks and every dim (static ones must match, each symbol must
  // take one value across all inputs), binds the symbols and computes the output shapes.
  // On error nothing changes.
  Status bind(const std::vector<DType> &dtypes, const std::vector<std::vector<int64_t>> &shapes);
  const std::vector<int64_t> &outputShape(size_t i) const { return outputShapes_[i]; }
  int64_t symbolValue(size_t i) const { return symbolValues_[i]; }

  // Runs the plan on data laid out as bound by the last successful bind(): one pointer per input
  // and per output (each output sized for its bound shape).
  Status run(const void *const *inputs, void *const *outputs);

  // Per-step wall time, summed over the runs since profiling was turned on (ms, plan order).
  void setProfiling(bool on);
  const std::vector<double> &stepMillis() const { return stepMillis_; }

  int64_t arenaBytes() const { return arenaBytes_; }
  // How many times the arena was (re)allocated: 1 after any number of runs at one binding.
  int64_t arenaAllocations() const { return arenaAllocations_; }
  unsigned threads() const;

private:
  Status placeBuffers();

  Plan plan_;
  std::vector<KernelFn> kernels_;
  const uint8_t *weights_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<int64_t> symbolValues_;
  std::vector<std::vector<int64_t>> outputShapes_;
  bool bound_ = false;
  std::vector<int64_t> placedFor_; // symbol values the current placement was made for
  bool placed_ = false;
  std::vector<int64_t> bufferOffsets_;
  int64_t arenaBytes_ = 0, arenaCapacity_ = 0, arenaAllocations_ = 0;
  std::unique_ptr<uint8_t, decltype(&std::free)> arena_{nullptr, &std::free};
  std::vector<std::vector<void *>> argPointers_; // per step, reused every run
  bool profiling_ = false;
  std::vector<double> stepMillis_;
};

} // namespace strata::runtime
