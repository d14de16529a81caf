// Shared helpers of the importer tests: where the generated models live, npy loading, tensor
// comparison. Models come from scripts/make_import_test_models.py.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/io/Npy.h"
#include "strata/support/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

namespace strata::import_test {

inline std::filesystem::path modelsDir() {
  return std::filesystem::path(__FILE__).parent_path() / "models";
}

inline std::string modelPath(const std::string &rel) { return (modelsDir() / rel).string(); }

// input_0.npy, input_1.npy, ... (or output_*) in `dir`, in order.
inline std::vector<Tensor> readNumbered(const std::filesystem::path &dir, const std::string &prefix) {
  std::vector<Tensor> out;
  for (int i = 0;; ++i) {
    auto p = dir / (prefix + std::to_string(i) + ".npy");
    if (!std::filesystem::exists(p))
      break;
    auto t = readNpy(p.string());
    if (!t) {
      ADD_FAILURE() << llvm::toString(t.takeError());
      break;
    }
    out.push_back(std::move(*t));
  }
  return out;
}

inline void expectTensorNear(const Tensor &actual, const Tensor &expected, const std::string &what) {
  ASSERT_EQ(dtypeName(actual.dtype()), dtypeName(expected.dtype())) << what;
  ASSERT_EQ(shapeToString(actual.shape()), shapeToString(expected.shape())) << what;
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    double a = actual.getDouble(i), e = expected.getDouble(i);
    ASSERT_LE(std::fabs(a - e), 1e-5 * (1 + std::fabs(e))) << what << " element " << i;
  }
}

inline size_t countOps(const Graph &g, OpKind kind) {
  size_t n = 0;
  for (const Op &op : g.ops())
    n += op.kind() == kind;
  return n;
}

} // namespace strata::import_test
