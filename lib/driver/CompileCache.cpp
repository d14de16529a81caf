#include "strata/driver/CompileCache.h"
#include "strata/support/Error.h"

#include "strata/codegen/Target.h"
#include "strata/driver/Aot.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <cstdlib>
#include <fmt/format.h>

namespace strata::driver {

llvm::Expected<std::string> compileCacheKey(const std::string &modelPath,
                                            const CompileOptions &opts) {
  auto spec = codegen::resolveTarget(opts.target);
  if (!spec)
    return spec.takeError();
  auto bytes = llvm::MemoryBuffer::getFile(modelPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bytes)
    return makeError(modelPath + ": " + bytes.getError().message());
  llvm::sys::fs::file_status code;
  std::string codeId = "unknown";
  if (!llvm::sys::fs::status(codeLocation(), code))
    codeId = fmt::format("{}:{}", code.getSize(),
                         code.getLastModificationTime().time_since_epoch().count());
  llvm::XXH128_hash_t model = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(
      llvm::StringRef((*bytes)->getBufferStart(), (*bytes)->getBufferSize())));
  std::string what = fmt::format(
      "strata-cache-1\n{}\n{}\nllvm {}\nmodel {:016x}{:016x}\n{}\n{}\n{}\npipeline {}\nwinograd {}\nO{} s{}\n",
      STRATA_VERSION_STRING, codeLocation() + " " + codeId, LLVM_VERSION_STRING, model.high64,
      model.low64, spec->triple, spec->cpu, spec->features, opts.pipeline, opts.winogradTile,
      opts.optLevel,
      opts.schedule ? 1 : 0);
  llvm::XXH128_hash_t key = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(what));
  return fmt::format("{:016x}{:016x}", key.high64, key.low64);
}

std::string compileCacheDir() {
  llvm::SmallString<256> dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') {
    dir = xdg;
  } else if (const char *home = std::getenv("HOME"); home && *home == '/') {
    dir = home;
    llvm::sys::path::append(dir, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(dir, "strata");
  return std::string(dir);
}

llvm::Expected<std::string> compileCachePath(const std::string &modelPath,
                                             const CompileOptions &opts) {
  std::string dir = compileCacheDir();
  if (!compileCacheEnabled() || dir.empty())
    return "";
  auto key = compileCacheKey(modelPath, opts);
  if (!key)
    return key.takeError();
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, *key + ".so");
  return std::string(path);
}

bool compileCacheEnabled() {
  const char *env = std::getenv("STRATA_CACHE");
  return !(env && std::string(env) == "0");
}

} // namespace strata::driver
