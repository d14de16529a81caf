// The compile cache (docs/runtime.md, "Compile cache"): `strata run` keeps each model it compiles
// as an AOT library under $XDG_CACHE_HOME/strata (default ~/.cache/strata), named by a key over
// everything that decides the code, so running the same model again loads it instead of
// compiling it.
#pragma once
#include "strata/driver/CompiledModel.h"

#include "llvm/Support/Error.h"

#include <string>

namespace strata::driver {

// The key (32 hex digits) of compiling the file at `modelPath` with `opts`: the file's bytes, the
// resolved target (CPU and features, so "host" differs between machines), the pipeline, the
// optimization level and schedule switch, strata's version and the identity (size, mtime) of the
// binary holding this code, so a rebuilt strata never reads another build's entries.
llvm::Expected<std::string> compileCacheKey(const std::string &modelPath,
                                            const CompileOptions &opts);

// $XDG_CACHE_HOME/strata, else $HOME/.cache/strata; empty when neither is set.
std::string compileCacheDir();

// The cache entry (a library) for compiling `modelPath` with `opts`: compileCacheDir()/KEY.so.
// Empty when the cache is off ($STRATA_CACHE=0) or has no folder.
llvm::Expected<std::string> compileCachePath(const std::string &modelPath,
                                             const CompileOptions &opts);

// False when $STRATA_CACHE is "0" (the test suites set it, so they exercise the JIT).
bool compileCacheEnabled();

} // namespace strata::driver
