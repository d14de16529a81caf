// Many loop functions as LLVM modules: what the JIT engine compiles for a model and what an AOT
// shared library is made of (docs/codegen.md, "Modules").
#pragma once
#include "strata/codegen/LoopToLLVM.h"
#include "strata/codegen/Target.h"

#include <memory>
#include <vector>

namespace strata::codegen {

// Emits every function of `kernels` (names unique) into `m`, then a constant global
// `tableName`: [N x ptr] holding each kernel's packed trampoline (`name_packed`) in order.
// Errors name the kernel that failed.
llvm::Error emitKernelModule(const std::vector<loop::LoopFunction> &kernels, llvm::Module &m,
                             const CodegenOptions &opts, llvm::StringRef tableName);

// A module with its own context, so that modules can be built and optimized concurrently.
struct KernelModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

// For each kernel, the index of the first kernel whose loop IR is the same but for the name
// (resnet50's repeated blocks: 58 kernels, 33 distinct): code is generated once per distinct
// kernel and every plan step of a shared one calls it.
std::vector<size_t> sharedKernels(const std::vector<loop::LoopFunction> &kernels);
// Whether `opts` asks for per-function instrumentation (bisection limits, pass logs, a fault
// after a pass): code for each kernel must then be its own.
bool instrumentsFunctions(const CodegenOptions &opts);

// A context for kernel modules: a loop the schedule marked `vectorized` that LLVM's vectorizer
// then declines (a guarded tail, a checked gather) is still correct scalar code, not a warning
// to print on every compile.
std::unique_ptr<llvm::LLVMContext> kernelContext();

// Splits `kernels` over `parts` modules (parts are capped by the kernel count, 0 means one per
// hardware thread; the largest kernels spread first), emits and optimizes each for `target` at
// `optLevel` on its own thread. Kernels keep their names (`name`, `name_packed`, external). With
// `shared` (sharedKernels), only kernels i with shared[i] == i are emitted.
llvm::Expected<std::vector<KernelModule>>
buildKernelModules(const std::vector<loop::LoopFunction> &kernels, const CodegenOptions &opts,
                   const TargetSpec &target, int optLevel, unsigned parts = 0,
                   const std::vector<size_t> *shared = nullptr);

// Declares each kernel's packed trampoline in `m` and defines the table `tableName` over them;
// with `shared`, entry i is kernel shared[i]'s.
void emitKernelTable(const std::vector<loop::LoopFunction> &kernels, llvm::Module &m,
                     llvm::StringRef tableName, const std::vector<size_t> *shared = nullptr);

} // namespace strata::codegen
