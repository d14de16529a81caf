// Shared by the fuzz targets (docs/fuzzing.md). Each target is one file defining
// LLVMFuzzerTestOneInput; it links either with libFuzzer (`make fuzz`, clang) or with
// ReplayMain.cpp, which runs saved inputs through it (the regression replay in every build).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace strata::fuzz {

// The readers under test take paths, as users' files do: the input is written to a scratch file
// of this process (one per extension) and that path returned.
inline std::string scratchFile(const char *ext, const uint8_t *data, size_t size) {
  const char *dir = std::getenv("TMPDIR");
  std::string path =
      std::string(dir && *dir ? dir : "/tmp") + "/strata-fuzz-" + std::to_string(::getpid()) + ext;
  if (FILE *f = std::fopen(path.c_str(), "wb")) {
    if (size)
      std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

// A property of the code under test that failed: report and abort, so the fuzzer keeps the input.
[[noreturn]] inline void violated(const char *what, const std::string &detail) {
  std::fprintf(stderr, "fuzz property violated: %s\n%s\n", what, detail.c_str());
  std::abort();
}

} // namespace strata::fuzz
