// Runs an execution plan (Plan.h) over native kernels: checks inputs and binds symbolic dims,
// places intermediate buffers in one arena (re-placed only when bound sizes change), calls the
// kernels in order on a thread pool. The per-run state lives in a RunContext, so one executor
// serves many threads, each with its own context. Shared by the JIT engine and AOT libraries' C
// API, hence LLVM-free: errors are a Status (support/Diagnostic.h).
#pragma once
#include "strata/runtime/Plan.h"
#include "strata/support/Diagnostic.h"
#include "strata/support/Limits.h"
#include "strata/support/SymExpr.h"

#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace strata {
class ThreadPool;
}

namespace strata::runtime {

using KernelFn = void (*)(void **args);

class Executor;

// The state of runs: bound symbols, output shapes, the arena and its placement, argument arrays
// and the per-step profile. A context is used by one thread at a time; contexts of one executor
// run concurrently (weights, kernels and the plan are shared read-only). It must not outlive its
// executor.
class RunContext {
public:
  explicit RunContext(const Executor &ex);
  RunContext(const RunContext &) = delete;
  RunContext &operator=(const RunContext &) = delete;

  // Output i's shape: after bind(), the one to allocate (data-dependent dims at their bounds);
  // after a run, the one the run produced (its data the row-major prefix of that space).
  const std::vector<int64_t> &outputShape(size_t i) const { return outputShapes_[i]; }
  int64_t symbolValue(size_t i) const { return symbolValues_[i]; }
  // Of the variant that runs, when one does.
  int64_t arenaBytes() const;
  // Which PlanVariant the bound shapes run (-1: the general path).
  int variant() const { return variant_; }
  // How many times the arena was (re)allocated: 1 after any number of runs at one binding.
  int64_t arenaAllocations() const { return arenaAllocations_; }
  // Per-step wall time, summed over the runs since profiling was turned on (ms, plan order).
  void setProfiling(bool on);
  const std::vector<double> &stepMillis() const { return stepMillis_; }

private:
  friend class Executor;
  const Executor &exec_;
  std::vector<int64_t> symbolValues_;
  std::vector<std::vector<int64_t>> outputShapes_;
  bool bound_ = false;
  std::vector<int64_t> placedFor_; // symbol values the current placement was made for
  // The values bind() computed (value-bound symbols at their bounds): what the arena and the
  // outputs are sized by. symbolValues_ starts each run from them; PlanBinds change it.
  std::vector<int64_t> boundValues_;
  // The last successful shape program's input (base and bound values) and its result: a bind at
  // the same sizes (every run of a model called at one shape) reuses it instead of evaluating
  // every formula and check again (hundreds in a Swin compiled for any image size: 8 ms a run).
  bool shapeCached_ = false;
  std::vector<int64_t> shapeKey_, shapeResult_;
  // Per symbol: whether this run has bound it (a value-bound one), so a check reading several
  // data-dependent sizes waits for the last of them.
  std::vector<bool> valueBound_;
  std::vector<std::vector<int64_t>> boundOutputShapes_;
  bool placed_ = false;
  std::vector<int64_t> bufferOffsets_;
  int64_t arenaBytes_ = 0, arenaCapacity_ = 0, arenaAllocations_ = 0;
  std::unique_ptr<uint8_t, decltype(&std::free)> arena_{nullptr, &std::free};
  std::vector<std::vector<void *>> argPointers_; // per step, reused every run
  // Control-flow steps: a context per region plan, and per loop step the second buffer of each
  // carried value (the body reads one while it writes the other), grown as needed.
  std::vector<std::unique_ptr<RunContext>> regionContexts_;
  // The plan variant (PlanVariant) the last bind() picked for its input shapes, or -1: the
  // general path. A variant's run is its region's, in regionContexts_.
  int variant_ = -1;
  // Buffers and outputs sized by an unbounded size (Plan::isUnbounded): allocated during the
  // run once it is bound, kept and grown across runs (index: the plan's buffer or output).
  struct DynamicStorage {
    std::unique_ptr<uint8_t, decltype(&std::free)> data{nullptr, &std::free};
    int64_t capacity = 0;
  };
  std::vector<DynamicStorage> dynamicBuffers_, dynamicOutputs_;
  std::vector<std::vector<std::unique_ptr<uint8_t[]>>> carriedSpare_;
  std::vector<std::vector<int64_t>> carriedSpareBytes_;
  bool profiling_ = false;
  std::vector<double> stepMillis_;
};

class Executor {
public:
  // `kernels` has plan.numKernels entries; `weights` (plan.weightsBytes, 64-byte aligned) must
  // outlive the executor. threads == 0: one per core. The pool is shared by every context's
  // runs; a run that finds it busy with another context's parallel loop runs that loop on its
  // own thread.
  Executor(Plan plan, std::vector<KernelFn> kernels, const uint8_t *weights, unsigned threads);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  const Plan &plan() const { return plan_; }

  // Checks input count, dtypes, ranks and every dim (static ones must match, each symbol must
  // take one value across all inputs), binds the symbols in `ctx`, computes the derived ones
  // (a negative one, a window larger than its input, is an error naming it) and the output
  // shapes. On error `ctx` is unchanged.
  Status bind(RunContext &ctx, const std::vector<DType> &dtypes,
              const std::vector<std::vector<int64_t>> &shapes) const;
  // Runs the plan in `ctx` on data laid out as bound by its last successful bind(): one pointer
  // per input and per output (each output sized for its bound shape). An output whose size reads
  // an unbounded data-dependent size (Plan::isUnbounded) is written to the context's own
  // storage instead (its pointer is not used): the allocating run below hands it over.
  Status run(RunContext &ctx, const void *const *inputs, void *const *outputs) const;
  // The same, asking `allocate(i, shape)` for output i's memory (null for a non-empty output:
  // none, the run fails):
  // before the run at the bound shapes or, when the plan has data-dependent sizes, after it at
  // the shapes the run produced, the run having written into space for the bound ones (the
  // prefix holding the result is copied).
  using OutputAllocator = std::function<void *(size_t output, const std::vector<int64_t> &shape)>;
  Status run(RunContext &ctx, const void *const *inputs, const OutputAllocator &allocate) const;

  // The same on the executor's own context, for callers that run from one thread at a time.
  Status bind(const std::vector<DType> &dtypes, const std::vector<std::vector<int64_t>> &shapes) {
    return bind(*own_, dtypes, shapes);
  }
  Status run(const void *const *inputs, void *const *outputs) {
    return run(*own_, inputs, outputs);
  }
  RunContext &context() { return *own_; }
  const std::vector<int64_t> &outputShape(size_t i) const { return own_->outputShape(i); }
  int64_t symbolValue(size_t i) const { return own_->symbolValue(i); }
  void setProfiling(bool on) { own_->setProfiling(on); }
  const std::vector<double> &stepMillis() const { return own_->stepMillis(); }
  int64_t arenaBytes() const { return own_->arenaBytes(); }
  int64_t arenaAllocations() const { return own_->arenaAllocations(); }
  unsigned threads() const;

  // The run-time limits (support/Limits.h): inputs and outputs of at most maxTensorElements
  // elements, an arena of at most maxArenaBytes, checked by bind() and run() before anything is
  // allocated. They start at the process limits when the executor is created. setLimit accepts
  // those two fields (false for another field or a negative value).
  bool setLimit(int64_t Limits::*field, int64_t value);
  int64_t maxArenaBytes() const { return maxArenaBytes_.load(std::memory_order_relaxed); }
  int64_t maxTensorElements() const { return maxTensorElements_.load(std::memory_order_relaxed); }

private:
  friend class RunContext;
  // A region plan's executor: the enclosing one's kernels, weights and pool.
  Executor(Plan plan, std::vector<KernelFn> kernels, const uint8_t *weights, ThreadPool *pool);
  void sharePool(ThreadPool *pool); // this executor's and its regions'
  Status placeBuffers(RunContext &ctx) const;
  // Makes the storage of dynamic buffer or output `arg` hold its size at the current values.
  // (Storage that must grow keeps its first `keepBytes`: a scan result as its loop runs.)
  Status allocateDynamic(RunContext &ctx, const PlanArg &arg, const std::string &before,
                         int64_t keepBytes = 0) const;
  // Where output i's data is after a run of `ctx` into `outputs`.
  const void *outputData(const RunContext &ctx, size_t i, void *const *outputs) const;
  // bind() once the input symbols are in `values` (the others -1): bounds, the shape program,
  // output shapes.
  Status bindValues(RunContext &ctx, std::vector<int64_t> values) const;
  // A region's bind: its input symbols take the enclosing context's values of the same names.
  Status bindFromEnclosing(RunContext &ctx, const RunContext &outer) const;
  // Runs control-flow step `s` (If, Loop) of `ctx` on its arguments' pointers; `bytes(a)` is
  // the size of argument a's tensor at the current sizes.
  Status runControl(RunContext &ctx, size_t s, const std::vector<void *> &args,
                    const std::function<int64_t(const PlanArg &)> &bytes) const;

  Plan plan_;
  std::vector<KernelFn> kernels_;
  const uint8_t *weights_;
  std::unique_ptr<ThreadPool> ownPool_;
  ThreadPool *pool_;
  std::vector<std::unique_ptr<Executor>> regions_; // one per plan_.regions
  std::unique_ptr<RunContext> own_;
  std::vector<std::string> runLabels_; // per step, for the crash context
  // Per symbol: its formula when derived (parsed once; nullopt for input symbols or a formula
  // that does not parse, which bind() then refuses).
  std::vector<std::optional<SymExpr>> formulas_;
  // Per name, the index of the input (non-derived) symbol a formula's atom reads.
  std::unordered_map<std::string, size_t> baseSymbolIndex_;
  std::vector<std::optional<SymExpr>> bounds_; // value-bound symbols' bound formulas
  // Per symbol: whether it reads an unbounded size (symbolsReadingUnbounded); per buffer and
  // output: whether its size does (then it is allocated during the run); per step: which of its
  // arguments those are; per derived symbol reading unbounded sizes: the value-bound ones.
  std::vector<bool> dynamicSymbol_, dynamicBuffer_, dynamicOutput_;
  std::vector<std::vector<size_t>> dynamicArgs_;
  // Per step: results it allocates itself (a loop's scan results sized by their first entry).
  std::vector<std::vector<size_t>> stepAllocatedArgs_;
  // Per step: sizes its run sets whose bound reads sizes read from data (a loop's scan length
  // that an early exit can cut short, at most a trip count read from data): set to that bound,
  // computed when the step starts, so its results are allocated at it.
  std::vector<std::vector<size_t>> atBoundSymbols_;
  // The bound of value-bound symbol `sym` over the sizes the run has bound so far; nullopt
  // when it reads one not bound yet.
  std::optional<int64_t> boundNow(const RunContext &ctx, size_t sym) const;
  std::vector<std::vector<size_t>> derivedDynamicReads_;
  // Recomputes the derived symbols from `values`' base symbols, then runs the checks: at bind()
  // (`boundNow` null) those reading no value-bound symbol; during a run, after a bind, those
  // reading value-bound symbols once `boundNow` says the run has bound all of them.
  Status shapeProgram(std::vector<int64_t> &values, const std::vector<bool> *boundNow) const;
  // Per plan check: the value-bound symbols it reads (none: checked at bind()).
  std::vector<std::vector<size_t>> checkValueSymbols_;
  std::vector<std::pair<std::optional<SymExpr>, std::optional<SymExpr>>> checks_; // plan_.checks
  std::atomic<int64_t> maxArenaBytes_{processLimits().maxArenaBytes};
  std::atomic<int64_t> maxTensorElements_{processLimits().maxTensorElements};
};

} // namespace strata::runtime
