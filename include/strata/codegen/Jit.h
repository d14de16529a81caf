// JIT compilation of loop functions through ORC LLJIT (docs/codegen.md).
#pragma once
#include "strata/codegen/LoopToLLVM.h"
#include "strata/codegen/Target.h"
#include "strata/support/Tensor.h"

#include <memory>
#include <vector>

// ORC's headers take 10 s to parse: only Jit.cpp includes them.
namespace llvm::orc {
class LLJIT;
class JITDylib;
} // namespace llvm::orc

namespace strata::codegen {

// A compiled kernel: the C-ABI entry point and its packed trampoline (see LoopToLLVM.h). Valid
// while the LoopJit that made it lives.
struct CompiledKernel {
  void *function = nullptr;
  void (*packed)(void **args) = nullptr;
  loop::LoopFunction source; // kept for argument checking
  CodegenOptions options;
};

class LoopJit {
public:
  // `target`: "host", "x86-64-v3" or "x86-64-v2". optLevel 0..3.
  static llvm::Expected<std::unique_ptr<LoopJit>> create(llvm::StringRef target = "host",
                                                         int optLevel = 2);
  ~LoopJit();
  // Emits, optimizes and compiles `f`. Each call gets its own JITDylib, so compiling two
  // functions of one name is fine.
  llvm::Expected<CompiledKernel> compile(const loop::LoopFunction &f,
                                         const CodegenOptions &opts = {});
  // Emits `kernels` into one module (KernelModule.h), optimizes and compiles it in one dylib, and
  // returns each kernel's packed entry point in order: one optimization and codegen run for a
  // whole model instead of one per kernel.
  llvm::Expected<std::vector<void (*)(void **)>>
  compileAll(const std::vector<loop::LoopFunction> &kernels, const CodegenOptions &opts = {});
  // Calls `k` with one tensor per parameter, like loop::evaluate: buffers as tensors of the
  // buffer's dtype and rank (constant dims are checked; symbolic ones are the caller's promise),
  // scalars as rank-0 tensors. With noalias, overlapping buffer arguments are an error.
  static llvm::Error call(const CompiledKernel &k, std::vector<Tensor> &args);

  const TargetSpec &target() const { return target_; }

private:
  llvm::Expected<llvm::orc::JITDylib &> newDylib(const std::string &name);
  LoopJit(std::unique_ptr<llvm::orc::LLJIT> jit, TargetSpec t, int opt);
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  TargetSpec target_;
  int optLevel_;
  unsigned counter_ = 0;
};

} // namespace strata::codegen
