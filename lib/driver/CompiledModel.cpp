// The JIT engine: Program -> one LLVM module -> ORC LLJIT -> plan executor.
#include "strata/driver/CompiledModel.h"
#include "strata/support/Error.h"

#include "strata/codegen/Jit.h"
#include "strata/graph/passes/PassManager.h"
#include "strata/runtime/Executor.h"
#include "strata/support/CrashContext.h"

#include <optional>

namespace strata::driver {

using namespace strata::runtime;

std::string CompileOptions::defaultJitPipeline() { return std::string(PassManager::defaultPipeline()); }

CompiledModel::~CompiledModel() = default;
size_t CompiledModel::numKernels() const { return exec_->plan().steps.size(); }
int64_t CompiledModel::arenaBytes() const { return exec_->arenaBytes(); }
int64_t CompiledModel::arenaAllocations() const { return exec_->arenaAllocations(); }
unsigned CompiledModel::threads() const { return exec_->threads(); }
const Plan &CompiledModel::plan() const { return exec_->plan(); }
void CompiledModel::setProfiling(bool on) { exec_->setProfiling(on); }

std::vector<std::pair<std::string, double>> CompiledModel::profile() const {
  std::vector<std::pair<std::string, double>> r;
  for (size_t i = 0; i < exec_->stepMillis().size(); ++i)
    r.emplace_back(exec_->plan().steps[i].name, exec_->stepMillis()[i]);
  return r;
}

llvm::Expected<ProgramOptions> programOptions(const CompileOptions &opts) {
  llvm::Expected<codegen::TargetSpec> spec = codegen::resolveTarget(opts.target);
  if (!spec)
    return spec.takeError();
  ProgramOptions po;
  po.pipeline = opts.pipeline;
  po.schedule = opts.schedule;
  po.winogradTile = opts.winogradTile;
  po.scheduleStepLimit = opts.scheduleStepLimit;
  po.fault = opts.fault;
  po.scheduleTarget = scheduleTargetFor(spec->cpu, spec->features);
  return po;
}

llvm::Expected<std::unique_ptr<CompiledModel>> compileModel(Graph &g, const CompileOptions &opts) {
  const Diagnostic jit = inPhase("jit");
  auto po = programOptions(opts);
  if (!po)
    return withContext(po.takeError(), jit);
  auto prog = buildProgram(g, *po);
  if (!prog)
    return withContext(prog.takeError(), jit);
  std::unique_ptr<CompiledModel> model(new CompiledModel());
  auto lljit = codegen::LoopJit::create(opts.target, opts.optLevel);
  if (!lljit)
    return withContext(lljit.takeError(), jit);
  model->jit_ = std::move(*lljit);
  codegen::CodegenOptions co;
  co.noalias = true; // the plan never passes overlapping buffers to one kernel
  co.llvmPassLimit = opts.llvmPassLimit;
  co.llvmPassLog = opts.llvmPassLog;
  if (opts.fault.rung == FaultInjection::Rung::LlvmPass)
    co.faultAfterPass = opts.fault.name;
  setCrashContext("generating native code (LLVM) for " + std::to_string(prog->kernels.size()) +
                  " kernels");
  auto entries = model->jit_->compileAll(prog->kernels, co);
  if (!entries)
    return withContext(entries.takeError(), inPhase("jit: codegen"));
  for (const loop::LoopFunction &f : prog->kernels)
    model->kernelNames_.push_back(f.name);
  model->schedules_ = std::move(prog->schedules);
  model->kernelOps_ = prog->kernelOps;
  model->stepOps_ = prog->stepOps;
  model->weights_ = std::move(prog->weights);
  model->exec_ = std::make_unique<Executor>(std::move(prog->plan), std::move(*entries),
                                            model->weights_.get(), opts.threads);
  return model;
}

llvm::Expected<std::vector<Tensor>> CompiledModel::run(const std::vector<Tensor> &inputs) {
  return run(exec_->context(), inputs);
}

std::unique_ptr<RunContext> CompiledModel::createContext() const {
  return std::make_unique<RunContext>(*exec_);
}

llvm::Expected<std::vector<Tensor>> CompiledModel::run(RunContext &ctx,
                                                       const std::vector<Tensor> &inputs) const {
  std::vector<InputRef> refs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor &t = inputs[i];
    if (!t.valid() && t.byteSize() != 0)
      return makeError(
          Diagnostic::error("input " + std::to_string(i) + ": tensor has no data").inPhase("jit"));
    refs.push_back({t.rawData(), t.dtype(), t.shape()});
  }
  std::vector<Tensor> outputs;
  auto allocate = [&](size_t i, DType dtype,
                      const std::vector<int64_t> &shape) -> llvm::Expected<void *> {
    try {
      outputs.emplace_back(dtype, shape);
    } catch (const std::exception &e) { // Tensor refuses absurd sizes
      return makeError(Diagnostic::error("output " + std::to_string(i) + " ('" +
                                         exec_->plan().outputs[i].name + "'): " + e.what())
                           .inPhase("jit"));
    }
    return outputs.back().rawData();
  };
  if (llvm::Error err = runInto(ctx, refs, allocate))
    return err;
  return outputs;
}

llvm::Error CompiledModel::runInto(RunContext &ctx, const std::vector<InputRef> &inputs,
                                   const OutputAllocator &allocate) const {
  std::vector<DType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<const void *> in;
  for (const InputRef &r : inputs) {
    dtypes.push_back(r.dtype);
    shapes.push_back(r.shape);
    in.push_back(r.data);
  }
  const Executor &exec = *exec_;
  if (Status s = exec.bind(ctx, dtypes, shapes))
    return withContext(toError(s), inPhase("jit"));
  // The caller's allocator's own error, when it has one, is the run's.
  std::optional<llvm::Error> refused;
  auto give = [&](size_t i, const std::vector<int64_t> &shape) -> void * {
    auto at = allocate(i, exec.plan().outputs[i].dtype, shape);
    if (at)
      return *at;
    refused.emplace(at.takeError());
    return nullptr;
  };
  Status s = exec.run(ctx, in.data(), give);
  if (refused)
    return std::move(*refused);
  if (s)
    return withContext(toError(s), inPhase("jit"));
  return llvm::Error::success();
}

} // namespace strata::driver
