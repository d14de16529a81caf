// Loop IR -> LLVM IR (docs/codegen.md). Each LoopFunction becomes
//   void @name(ptr %buf0, ..., i64 %n, ...)
// with parameters in the function's order (buffers as pointers to their first element, scalars as
// their dtype's LLVM type, i64 for the usual symbolic extents), plus a trampoline
//   void @name_packed(ptr %args)
// where args[i] is the buffer's data pointer or a pointer to the scalar's value, so a caller needs
// no variadic FFI. Semantics match the loop interpreter (strata/loop/Interpreter.h) exactly,
// except math intrinsics, which use the polynomial emitters (strata/codegen/VectorMath.h) for f32.
#pragma once
#include "strata/loop/IR.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace strata::codegen {

struct CodegenOptions {
  // Mark every buffer argument noalias: the caller promises that distinct buffer parameters never
  // overlap (LoopJit's call helper checks this). Off: no aliasing assumption at all.
  bool noalias = true;
  // Alignment in bytes promised for every buffer argument (0: the element's natural alignment).
  unsigned bufferAlign = 0;
  // strata bisect: run only the first N optional LLVM IR pass invocations of each module (-1:
  // all), as LLVM's -opt-bisect-limit does; `llvmPassLog`, if set, receives "PASS on UNIT" for
  // every invocation consulted. Meaningful for a model compiled into one module (one kernel).
  int64_t llvmPassLimit = -1;
  std::shared_ptr<std::vector<std::string>> llvmPassLog;
  // If set, receives "PASS on UNIT" for every pass run that changed the IR (did not preserve all
  // analyses): what strata explain lists as the LLVM optimizations that fired.
  std::shared_ptr<std::vector<std::string>> llvmPassChanges;
  // strata bisect's llvm-pass fault (driver/FaultInjection.h): after each run of the LLVM pass of
  // this class name on a kernel function, its last float store stores its value plus 1.
  std::string faultAfterPass;
};

// Emits `f` (verified beforehand by the caller) into `m`. Errors name what is unsupported
// (gpu_block/gpu_thread loops). Returns the function @name.
llvm::Expected<llvm::Function *> emitLoopFunction(const loop::LoopFunction &f, llvm::Module &m,
                                                  const CodegenOptions &opts = {});

// Sets the module's triple and data layout and each function's target-cpu/features from `tm`,
// then runs LLVM's default pipeline at `optLevel` (0..3; 0 runs only always-inline).
void optimizeModule(llvm::Module &m, llvm::TargetMachine &tm, int optLevel,
                    const CodegenOptions &opts = {});

} // namespace strata::codegen
