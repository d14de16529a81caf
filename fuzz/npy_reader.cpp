// The .npy reader on raw bytes; what it accepts must write back and read again identically.
#include "FuzzTarget.h"

#include "strata/io/Npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = strata::fuzz::scratchFile(".npy", data, size);
  auto t = strata::readNpy(path);
  if (!t) {
    llvm::consumeError(t.takeError());
    return 0;
  }
  std::string again = path + ".out.npy";
  if (llvm::Error err = strata::writeNpy(again, *t))
    strata::fuzz::violated("an accepted array writes", llvm::toString(std::move(err)));
  auto back = strata::readNpy(again);
  if (!back)
    strata::fuzz::violated("a written array reads", llvm::toString(back.takeError()));
  if (!back->identical(*t))
    strata::fuzz::violated("write then read is the identity", path);
  std::remove(again.c_str());
  return 0;
}
