#include "strata/codegen/KernelModule.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Visitor.h"
#include "strata/support/Error.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/GlobalVariable.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>
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

std::vector<size_t> sharedKernels(const std::vector<loop::LoopFunction> &kernels) {
  std::vector<size_t> shared(kernels.size());
  std::unordered_map<std::string, size_t> first; // loop IR text with the name left out
  for (size_t i = 0; i < kernels.size(); ++i) {
    loop::LoopFunction unnamed = kernels[i];
    unnamed.name.clear();
    shared[i] = first.emplace(loop::printFunction(unnamed), i).first->second;
  }
  return shared;
}

bool instrumentsFunctions(const CodegenOptions &opts) {
  return opts.llvmPassLimit >= 0 || opts.llvmPassLog || opts.llvmPassChanges ||
         !opts.faultAfterPass.empty();
}

void emitKernelTable(const std::vector<loop::LoopFunction> &kernels, llvm::Module &m,
                     llvm::StringRef tableName, const std::vector<size_t> *shared) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptrTy = llvm::PointerType::get(ctx, 0);
  auto *packedTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrTy}, false);
  std::vector<llvm::Constant *> entries;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const loop::LoopFunction &f = kernels[shared ? (*shared)[i] : i];
    entries.push_back(llvm::cast<llvm::Constant>(
        m.getOrInsertFunction(f.name + "_packed", packedTy).getCallee()));
  }
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

namespace {
// Drops the vectorizer's "loop not vectorized" warning and the remarks that explain it
// (kernelContext); errors and other warnings print as before.
struct QuietVectorizerMisses : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo &d) override {
    return d.getKind() == llvm::DK_OptimizationFailure || d.getSeverity() == llvm::DS_Remark;
  }
};
} // namespace

std::unique_ptr<llvm::LLVMContext> kernelContext() {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  ctx->setDiagnosticHandler(std::make_unique<QuietVectorizerMisses>());
  return ctx;
}

llvm::Expected<std::vector<KernelModule>>
buildKernelModules(const std::vector<loop::LoopFunction> &kernels, const CodegenOptions &opts,
                   const TargetSpec &target, int optLevel, unsigned parts,
                   const std::vector<size_t> *shared) {
  std::vector<const loop::LoopFunction *> emitted;
  for (size_t i = 0; i < kernels.size(); ++i)
    if (!shared || (*shared)[i] == i)
      emitted.push_back(&kernels[i]);
  if (parts == 0)
    parts = std::max(1u, std::thread::hardware_concurrency());
  parts = std::max<unsigned>(1, std::min<unsigned>(parts, static_cast<unsigned>(emitted.size())));
  // Balance the parts: the largest kernels (by statement count) first, each into the part with
  // the least so far.
  auto size = [](const loop::LoopFunction *f) {
    size_t n = 0;
    if (f->body)
      loop::forEachStmt(f->body, [&n](const loop::Stmt &) { ++n; });
    return n;
  };
  std::vector<std::pair<size_t, const loop::LoopFunction *>> bySize;
  for (const loop::LoopFunction *f : emitted)
    bySize.push_back({size(f), f});
  std::stable_sort(bySize.begin(), bySize.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  std::vector<std::vector<const loop::LoopFunction *>> groups(parts);
  std::vector<size_t> load(parts, 0);
  for (const auto &[n, f] : bySize) {
    size_t p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    groups[p].push_back(f);
    load[p] += n;
  }

  std::vector<KernelModule> modules(parts);
  std::vector<std::string> errors(parts);
  auto build = [&](unsigned p) {
    KernelModule &km = modules[p];
    km.context = kernelContext();
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
