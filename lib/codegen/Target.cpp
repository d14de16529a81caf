// Target machines for `host`, `x86-64-v3` and `x86-64-v2` (see Target.h).
#include "strata/codegen/Target.h"
#include "strata/support/Error.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

namespace strata::codegen {

llvm::Expected<TargetSpec> resolveTarget(llvm::StringRef name) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
  TargetSpec t;
  t.triple = llvm::sys::getProcessTriple();
  if (name == "host") {
    t.cpu = llvm::sys::getHostCPUName().str();
    // The CPU name alone can miss features the OS disabled (e.g. AVX-512 state), so use the
    // detected feature list verbatim.
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    for (auto &kv : features) {
      if (!t.features.empty())
        t.features += ",";
      t.features += (kv.second ? "+" : "-") + kv.first().str();
    }
  } else if (name == "x86-64-v3" || name == "x86-64-v2") {
    if (!llvm::StringRef(t.triple).starts_with("x86_64"))
      return makeError("target " + name.str() + " needs an x86-64 host, this is " + t.triple);
    t.cpu = name.str(); // the microarchitecture levels are CPU names in LLVM's X86 backend
  } else {
    return makeError("unknown target '" + name.str() + "' (expected host, x86-64-v3 or x86-64-v2)");
  }
  return t;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const TargetSpec &t) {
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!target)
    return makeError("cannot find target for " + t.triple + ": " + err);
  llvm::TargetOptions opts;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      t.triple, t.cpu, t.features, opts, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return makeError("cannot create a target machine for " + t.cpu);
  return tm;
}

} // namespace strata::codegen
