// Ahead-of-time compilation (docs/runtime.md, "AOT libraries"): a Program's kernels, plan and
// weights compiled into one LLVM module, written as LLVM IR, assembly, an object file, or a shared
// library that exports the C API of include/strata/strata_model.h.
#pragma once
#include "strata/driver/CompiledModel.h"
#include "strata/driver/Program.h"

#include "llvm/Support/Error.h"

#include <string>

namespace strata::driver {

enum class AotOutput { LLVM, Asm, Object, SharedLibrary };

// Where a shared library's build went (writeAot with AotOutput::SharedLibrary).
struct AotTimings {
  double optimizeMs = 0; // kernels emitted as LLVM IR and optimized, one module per thread
  double codegenMs = 0;  // machine code for the kernel modules and the plan/weights object
  double linkMs = 0;     // LLD
};

struct AotOptions {
  std::string target = "host"; // "host", "x86-64-v3" or "x86-64-v2"
  int optLevel = 2;
  // The runtime object linked into shared libraries (strata_aot_rt.o: the runtime, its C API and
  // the static C++ runtime); empty: $STRATA_AOT_RT, else found relative to this binary.
  std::string runtimeObject;
  // If set, receives the shared library's build times.
  AotTimings *timings = nullptr;
};

// Writes `prog` to `path` ("-" for stdout; text outputs only). LLVM IR and assembly leave the
// weights out (an external declaration) so they stay readable. A shared library is linked in
// process by LLD with the runtime object, against libc and libm only; nothing is left at `path`
// on error. The symbols the runtime reads: strata_aot_plan, strata_aot_kernels, strata_aot_weights.
llvm::Error writeAot(const Program &prog, AotOptions opts, AotOutput kind, const std::string &path);

// A shared library and its header next to it (model.so -> model.h), as `strata compile -o
// model.so` writes them. On error neither is left behind.
llvm::Error writeLibraryWithHeader(const Program &prog, const AotOptions &opts,
                                   const std::string &path);

// Optimizes `g` in place with `opts` (pipeline, target, -O), builds its program and writes it as
// a library, with its header next to it when `withHeader` (writeLibraryWithHeader): `strata
// compile -o m.so` in one call, for the compile cache and the Python package.
llvm::Error compileLibrary(Graph &g, const CompileOptions &opts, const std::string &path,
                           bool withHeader);

// The file holding strata's code in this process: the executable (through /proc/self/exe), or
// the shared object (the Python extension) by the path it was loaded from, made absolute when it
// was loaded. The runtime object is looked for relative to it.
const std::string &codeLocation();

// The header written next to a library: the C API text plus the model's interface as comments
// and macros (STRATA_MODEL_NUM_INPUTS, ...).
std::string aotHeader(const runtime::Plan &plan, const std::string &libraryName);

} // namespace strata::driver
