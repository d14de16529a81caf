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

// Splits `kernels` over `parts` modules (kernel i in part i % parts; parts are capped by the
// kernel count, 0 means one per hardware thread), emits and optimizes each for `target` at
// `optLevel` on its own thread. Kernels keep their names (`name`, `name_packed`, external).
llvm::Expected<std::vector<KernelModule>>
buildKernelModules(const std::vector<loop::LoopFunction> &kernels, const CodegenOptions &opts,
                   const TargetSpec &target, int optLevel, unsigned parts = 0);

// Declares each kernel's packed trampoline in `m` and defines the table `tableName` over them.
void emitKernelTable(const std::vector<loop::LoopFunction> &kernels, llvm::Module &m,
                     llvm::StringRef tableName);

} // namespace strata::codegen
