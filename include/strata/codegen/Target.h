// Target machines for CPU code generation: `host` (the running CPU's name and features, the
// default), `x86-64-v3` (AVX2/FMA) and `x86-64-v2` (SSE4.2), the latter two for portable output.
#pragma once
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace strata::codegen {

struct TargetSpec {
  std::string triple;   // the host's process triple
  std::string cpu;      // "znver3", "x86-64-v3", ...
  std::string features; // "+avx2,+fma,..." (host: from getHostCPUFeatures; else implied by cpu)
};

// Resolves "host", "x86-64-v3" or "x86-64-v2"; anything else is an error. Initializes the
// native LLVM target on first use.
llvm::Expected<TargetSpec> resolveTarget(llvm::StringRef name);
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const TargetSpec &t);

} // namespace strata::codegen
