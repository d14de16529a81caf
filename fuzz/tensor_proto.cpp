// The TensorProto reader (.pb test data, initializers' format) on raw bytes.
#include "FuzzTarget.h"

#include "strata/import/OnnxImporter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = strata::fuzz::scratchFile(".pb", data, size);
  std::string name;
  auto t = strata::readTensorProtoFile(path, &name);
  if (!t) {
    llvm::consumeError(t.takeError());
    return 0;
  }
  // Every element of what was read is readable.
  double sum = 0;
  for (int64_t i = 0, n = t->numElements(); i < n; ++i)
    sum += t->getDouble(i);
  (void)sum;
  return 0;
}
