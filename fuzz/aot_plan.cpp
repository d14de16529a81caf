// The plan an AOT library embeds, as its C API loads it (parseLibraryPlan against a table of 4
// kernels and 64 KiB of weights), then bound and run by the executor with kernels that do
// nothing: a damaged plan must be refused or run without any access outside its buffers.
#include "FuzzTarget.h"

#include "strata/runtime/Executor.h"

#include <vector>

namespace {
void noKernel(void **) {}
alignas(64) const uint8_t kWeights[65536] = {};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace strata;
  using namespace strata::runtime;
  std::string text(reinterpret_cast<const char *>(data), size);
  Plan plan;
  if (parseLibraryPlan(text.c_str(), 4, sizeof kWeights, plan))
    return 0;
  Executor ex(plan, std::vector<KernelFn>(4, &noKernel), kWeights, 1);
  // Inputs: static dims as stated, every symbol 3; nothing beyond 1 MiB in all.
  std::vector<DType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<uint8_t>> storage;
  int64_t total = 0;
  for (const PlanTensor &t : plan.inputs) {
    std::vector<int64_t> shape;
    int64_t bytes = static_cast<int64_t>(dtypeSize(t.dtype));
    for (const PlanDim &d : t.dims) {
      shape.push_back(d.isStatic() ? d.size : 3);
      if (shape.back() > 0 && bytes > (int64_t(1) << 20) / shape.back())
        return 0;
      bytes *= shape.back();
    }
    if ((total += bytes) > (int64_t(1) << 20))
      return 0;
    dtypes.push_back(t.dtype);
    shapes.push_back(shape);
    storage.emplace_back(static_cast<size_t>(bytes) + 1);
  }
  if (ex.bind(dtypes, shapes))
    return 0;
  std::vector<std::vector<uint8_t>> outStorage;
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    int64_t bytes = static_cast<int64_t>(dtypeSize(plan.outputs[o].dtype));
    for (int64_t d : ex.outputShape(o)) {
      if (d > 0 && bytes > (int64_t(1) << 20) / d)
        return 0;
      bytes *= d;
    }
    outStorage.emplace_back(static_cast<size_t>(bytes) + 1);
  }
  std::vector<const void *> in;
  for (auto &s : storage)
    in.push_back(s.data());
  std::vector<void *> out;
  for (auto &s : outStorage)
    out.push_back(s.data());
  (void)ex.run(in.data(), out.data());
  return 0;
}
