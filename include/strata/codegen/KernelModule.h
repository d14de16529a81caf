// Many loop functions in one LLVM module: what the JIT engine compiles at once and what an AOT
// shared library is made of (docs/codegen.md, "Modules").
#pragma once
#include "strata/codegen/LoopToLLVM.h"

#include <vector>

namespace strata::codegen {

// Emits every function of `kernels` (names unique) into `m`, then a constant global
// `tableName`: [N x ptr] holding each kernel's packed trampoline (`name_packed`) in order.
// Errors name the kernel that failed.
llvm::Error emitKernelModule(const std::vector<loop::LoopFunction> &kernels, llvm::Module &m,
                             const CodegenOptions &opts, llvm::StringRef tableName);

} // namespace strata::codegen
