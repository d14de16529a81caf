// A model compiled ahead of time (`strata compile -o model.so`), loaded with dlopen and driven
// through its C API (include/strata/strata_model.h): what `strata run model.so` and
// `strata bench model.so` use, and how tests check AOT libraries.
#pragma once
#include "strata/graph/Type.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace strata::driver {

struct IOSpec {
  std::string name;
  TensorType type; // symbolic dims carry the library's symbol names
  bool decidesSizes = false; // sizes are read from its values (ABI 5; older libraries: false)
};

class SharedModel {
public:
  // Loads the library (RTLD_LOCAL: several may be loaded at once), checks its ABI version and
  // creates the model with `threads` threads (0: one per core).
  static llvm::Expected<std::unique_ptr<SharedModel>> open(const std::string &path,
                                                           unsigned threads = 0);
  ~SharedModel();
  SharedModel(const SharedModel &) = delete;
  SharedModel &operator=(const SharedModel &) = delete;

  const std::vector<IOSpec> &inputs() const { return inputs_; }
  const std::vector<IOSpec> &outputs() const { return outputs_; }
  // Runs the model; outputs are copied out of the library's buffers.
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs);
  // Runs with output i written where allocate(i, dtype, shape) says, called once per output after
  // the inputs are checked: by the kernels themselves for libraries of ABI 4 on
  // (strata_model_run_into), copied there once from older ones. An error from allocate ends it.
  using OutputAllocator =
      std::function<llvm::Expected<void *>(size_t, DType, const std::vector<int64_t> &)>;
  llvm::Error runInto(const std::vector<Tensor> &inputs, const OutputAllocator &allocate);
  int64_t arenaBytes() const;

  struct Api; // resolved C entry points

private:
  SharedModel() = default;
  void *handle_ = nullptr;
  void *model_ = nullptr;
  std::unique_ptr<Api> api_;
  void *runInto_ = nullptr; // strata_model_run_into (ABI 4); null for older libraries

  std::string path_;
  std::vector<IOSpec> inputs_, outputs_;
};

} // namespace strata::driver
