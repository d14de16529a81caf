// The ONNX importer on raw bytes: any file must import or fail with an error, never crash, hang
// or leak; an imported graph must pass the verifier and print.
#include "FuzzTarget.h"

#include "strata/graph/Printer.h"
#include "strata/graph/Verifier.h"
#include "strata/import/OnnxImporter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = strata::fuzz::scratchFile(".onnx", data, size);
  auto r = strata::importOnnxFile(path);
  if (!r) {
    llvm::consumeError(r.takeError());
    return 0;
  }
  if (llvm::Error err = strata::verifyGraph(*r->graph))
    strata::fuzz::violated("an imported graph verifies", llvm::toString(std::move(err)));
  (void)strata::printGraph(*r->graph);
  return 0;
}
