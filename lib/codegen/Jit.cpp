// ORC LLJIT for loop functions (see Jit.h).
#include "strata/codegen/Jit.h"
#include "strata/codegen/KernelModule.h"
#include "strata/support/Error.h"
#include "strata/support/KernelStatus.h"
#include "strata/support/ThreadPool.h"

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"

#include <numeric>

namespace strata::codegen {

LoopJit::LoopJit(std::unique_ptr<llvm::orc::LLJIT> jit, TargetSpec t, int opt)
    : jit_(std::move(jit)), target_(std::move(t)), optLevel_(opt) {}
LoopJit::~LoopJit() = default;

llvm::Expected<std::unique_ptr<LoopJit>> LoopJit::create(llvm::StringRef target, int optLevel) {
  llvm::Expected<TargetSpec> spec = resolveTarget(target);
  if (!spec)
    return spec.takeError();
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(spec->triple)};
  jtmb.setCPU(spec->cpu);
  llvm::SubtargetFeatures features(spec->features);
  jtmb.addFeatures(features.getFeatures());
  jtmb.setCodeGenOptLevel(optLevel <= 0 ? llvm::CodeGenOptLevel::None
                                        : llvm::CodeGenOptLevel::Aggressive);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit)
    return jit.takeError();
  return std::unique_ptr<LoopJit>(new LoopJit(std::move(*jit), std::move(*spec), optLevel));
}

llvm::Expected<llvm::orc::JITDylib &> LoopJit::newDylib(const std::string &dylibName) {
  // A dylib per compile: names never clash, and malloc/free/libm resolve from this process.
  llvm::Expected<llvm::orc::JITDylib &> jd = jit_->createJITDylib(dylibName);
  if (!jd)
    return jd.takeError();
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit_->getDataLayout().getGlobalPrefix());
  if (!gen)
    return gen.takeError();
  jd->addGenerator(std::move(*gen));
  // Parallel loops call strata_parallel_for (ThreadPool.h), failed index checks
  // strata_index_error and failed scratch allocations strata_alloc_error (KernelStatus.h). They are bound by address: a symbol of a static library
  // in the executable is not visible to the dynamic-library search above.
  auto callable = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
  if (llvm::Error err = jd->define(llvm::orc::absoluteSymbols(
          {{jit_->mangleAndIntern("strata_parallel_for"),
            {llvm::orc::ExecutorAddr::fromPtr(&strata_parallel_for), callable}},
           {jit_->mangleAndIntern("strata_index_error"),
            {llvm::orc::ExecutorAddr::fromPtr(&strata_index_error), callable}},
           {jit_->mangleAndIntern("strata_alloc_error"),
            {llvm::orc::ExecutorAddr::fromPtr(&strata_alloc_error), callable}}})))
    return err;
  return jd;
}

llvm::Expected<std::vector<void (*)(void **)>>
LoopJit::compileAll(const std::vector<loop::LoopFunction> &kernels, const CodegenOptions &opts) {
  // Emitted and optimized on every core, one module per thread; ORC then compiles each module
  // to machine code when its symbols are looked up.
  // Kernels with the same loop IR share one function, unless each must be its own.
  std::vector<size_t> shared(kernels.size());
  if (instrumentsFunctions(opts))
    std::iota(shared.begin(), shared.end(), size_t{0});
  else
    shared = sharedKernels(kernels);
  auto modules = buildKernelModules(kernels, opts, target_, optLevel_, 0, &shared);
  if (!modules)
    return modules.takeError();
  llvm::Expected<llvm::orc::JITDylib &> jd = newDylib("kernels" + std::to_string(counter_++));
  if (!jd)
    return jd.takeError();
  for (KernelModule &km : *modules)
    if (llvm::Error err = jit_->addIRModule(
            *jd, llvm::orc::ThreadSafeModule(std::move(km.module), std::move(km.context))))
      return err;
  std::vector<void (*)(void **)> entries;
  for (size_t i = 0; i < kernels.size(); ++i) {
    auto addr = jit_->lookup(*jd, kernels[shared[i]].name + "_packed");
    if (!addr)
      return addr.takeError();
    entries.push_back(addr->toPtr<void (*)(void **)>());
  }
  return entries;
}

llvm::Expected<CompiledKernel> LoopJit::compile(const loop::LoopFunction &f,
                                                const CodegenOptions &opts) {
  auto ctx = kernelContext();
  auto mod = std::make_unique<llvm::Module>(f.name, *ctx);
  if (llvm::Expected<llvm::Function *> fn = emitLoopFunction(f, *mod, opts); !fn)
    return fn.takeError();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = createTargetMachine(target_);
  if (!tm)
    return tm.takeError();
  optimizeModule(*mod, **tm, optLevel_, opts);

  llvm::Expected<llvm::orc::JITDylib &> jd = newDylib("kernel" + std::to_string(counter_++) + "." + f.name);
  if (!jd)
    return jd.takeError();
  if (llvm::Error err =
          jit_->addIRModule(*jd, llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
    return err;
  auto fnAddr = jit_->lookup(*jd, f.name);
  if (!fnAddr)
    return fnAddr.takeError();
  auto packedAddr = jit_->lookup(*jd, f.name + "_packed");
  if (!packedAddr)
    return packedAddr.takeError();
  CompiledKernel k;
  k.function = fnAddr->toPtr<void *>();
  k.packed = packedAddr->toPtr<void (*)(void **)>();
  k.source = f;
  k.options = opts;
  return k;
}

llvm::Error LoopJit::call(const CompiledKernel &k, std::vector<Tensor> &args) {
  const loop::LoopFunction &f = k.source;
  if (args.size() != f.params.size())
    return makeError("@" + f.name + " takes " + std::to_string(f.params.size()) +
                     " arguments, got " + std::to_string(args.size()));
  std::vector<void *> ptrs;
  for (size_t i = 0; i < args.size(); ++i) {
    const loop::Param &p = f.params[i];
    Tensor &t = args[i];
    DType want = p.isBuffer() ? p.buffer->dtype : p.scalar->dtype;
    size_t rank = p.isBuffer() ? p.buffer->rank() : 0;
    bool ok = t.valid() && t.dtype() == want && static_cast<size_t>(t.rank()) == rank;
    for (size_t d = 0; ok && d < rank; ++d)
      if (auto c = p.buffer->shape[d].asInt())
        ok = *c == t.shape()[d];
    if (!ok)
      return makeError("argument %" + p.name() + " of @" + f.name +
                       " has the wrong dtype or shape");
    ptrs.push_back(t.rawData());
  }
  if (k.options.noalias) // the function was compiled assuming distinct buffers never overlap
    for (size_t i = 0; i < args.size(); ++i)
      for (size_t j = i + 1; j < args.size(); ++j) {
        if (!f.params[i].isBuffer() || !f.params[j].isBuffer())
          continue;
        auto *a = static_cast<const char *>(ptrs[i]), *b = static_cast<const char *>(ptrs[j]);
        if (a < b + args[j].byteSize() && b < a + args[i].byteSize())
          return makeError("buffers %" + f.params[i].name() + " and %" + f.params[j].name() +
                           " overlap, but @" + f.name + " was compiled with noalias");
      }
  KernelStatus status;
  ptrs.push_back(&status);
  k.packed(ptrs.data());
  if (!status.ok())
    return makeError("@" + f.name + ": " + status.message());
  return llvm::Error::success();
}

} // namespace strata::codegen
