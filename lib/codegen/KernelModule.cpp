#include "strata/codegen/KernelModule.h"
#include "strata/support/Error.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"

#include <mutex>
#include <thread>

namespace strata::codegen {

namespace {

llvm::Error emitKernels(const std::vector<const loop::LoopFunction *> &kernels, llvm::Module &m,
                        const CodegenOptions &opts) {
  for (const loop::LoopFunction *f : kernels) {
    if (auto fn = emitLoopFunction(*f, m, opts); !fn)
      return makeError("kernel @" + f->name + ": " + llvm::toString(fn.takeError()));
    if (!m.getFunction(f->name + "_packed"))
      return makeError("kernel @" + f->name + ": no packed trampoline");
  }
  return llvm::Error::success();
}

} // namespace

void emitKernelTable(const std::vector<loop::LoopFunction> &kernels, llvm::Module &m,
                     llvm::StringRef tableName) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptrTy = llvm::PointerType::get(ctx, 0);
  auto *packedTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrTy}, false);
  std::vector<llvm::Constant *> entries;
  for (const loop::LoopFunction &f : kernels)
    entries.push_back(llvm::cast<llvm::Constant>(
        m.getOrInsertFunction(f.name + "_packed", packedTy).getCallee()));
  auto *tableTy = llvm::ArrayType::get(ptrTy, entries.size());
  new llvm::GlobalVariable(m, tableTy, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(tableTy, entries), tableName);
}

llvm::Error emitKernelModule(const std::vector<loop::LoopFunction> &kernels, llvm::Module &m,
                             const CodegenOptions &opts, llvm::StringRef tableName) {
  std::vector<const loop::LoopFunction *> all;
  for (const loop::LoopFunction &f : kernels)
    all.push_back(&f);
  if (llvm::Error err = emitKernels(all, m, opts))
    return err;
  emitKernelTable(kernels, m, tableName);
  return llvm::Error::success();
}

llvm::Expected<std::vector<KernelModule>>
buildKernelModules(const std::vector<loop::LoopFunction> &kernels, const CodegenOptions &opts,
                   const TargetSpec &target, int optLevel, unsigned parts) {
  if (parts == 0)
    parts = std::max(1u, std::thread::hardware_concurrency());
  parts = std::max<unsigned>(1, std::min<unsigned>(parts, static_cast<unsigned>(kernels.size())));
  std::vector<std::vector<const loop::LoopFunction *>> groups(parts);
  for (size_t i = 0; i < kernels.size(); ++i)
    groups[i % parts].push_back(&kernels[i]);

  std::vector<KernelModule> modules(parts);
  std::vector<std::string> errors(parts);
  auto build = [&](unsigned p) {
    KernelModule &km = modules[p];
    km.context = std::make_unique<llvm::LLVMContext>();
    km.module = std::make_unique<llvm::Module>("strata_kernels_" + std::to_string(p), *km.context);
    if (llvm::Error err = emitKernels(groups[p], *km.module, opts)) {
      errors[p] = llvm::toString(std::move(err));
      return;
    }
    // One target machine per thread: they are not shared across threads.
    auto tm = createTargetMachine(target);
    if (!tm) {
      errors[p] = llvm::toString(tm.takeError());
      return;
    }
    optimizeModule(*km.module, **tm, optLevel, opts);
  };
  std::vector<std::thread> workers;
  for (unsigned p = 1; p < parts; ++p)
    workers.emplace_back(build, p);
  build(0);
  for (std::thread &t : workers)
    t.join();
  for (const std::string &e : errors)
    if (!e.empty())
      return makeError(e);
  return modules;
}

} // namespace strata::codegen
