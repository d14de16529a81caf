// Helpers for the interpreter kernel tests: tensor literals and running one op via evaluateOp.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/graph/NormalForm.h"
#include "strata/interp/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace strata::testing {

template <typename T> Tensor tensorOf(DType dt, Shape shape, const std::vector<T> &values) {
  Tensor t(dt, shape);
  EXPECT_EQ(static_cast<size_t>(t.numElements()), values.size()) << "literal size mismatch";
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numElements(); ++i)
    t.setDouble(static_cast<int64_t>(i), static_cast<double>(values[i]));
  return t;
}
inline Tensor f32(Shape s, const std::vector<double> &v) { return tensorOf(DType::F32, s, v); }
inline Tensor f64(Shape s, const std::vector<double> &v) { return tensorOf(DType::F64, s, v); }
inline Tensor f16(Shape s, const std::vector<double> &v) { return tensorOf(DType::F16, s, v); }
// Exact integer literals (setDouble would round int64 values beyond 2^53).
inline Tensor intTensor(DType dt, Shape shape, const std::vector<int64_t> &values) {
  Tensor t(dt, shape);
  EXPECT_EQ(static_cast<size_t>(t.numElements()), values.size()) << "literal size mismatch";
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numElements(); ++i)
    t.setInt(static_cast<int64_t>(i), values[i]);
  return t;
}
inline Tensor i32(Shape s, const std::vector<int64_t> &v) { return intTensor(DType::I32, s, v); }
inline Tensor i64(Shape s, const std::vector<int64_t> &v) { return intTensor(DType::I64, s, v); }
inline Tensor boolean(Shape s, const std::vector<int> &v) { return tensorOf(DType::Bool, s, v); }

// Runs one op (created detached from any values) on concrete operands.
class OpRunner {
public:
  llvm::Expected<std::vector<Tensor>> tryRun(OpKind kind, const std::vector<Tensor> &operands,
                                             AttrMap attrs = {}) {
    std::vector<TensorType> types; // negative axes resolved, as the importer does (NormalForm.h)
    for (const Tensor &t : operands)
      types.push_back(TensorType::fromShape(t.dtype(), t.shape()));
    normalizeAttributes(kind, types, attrs);
    Op *op = graph_.createOp(kind, {}, {}, std::move(attrs));
    op->setLocation(location_);
    return evaluateOp(*op, operands);
  }
  Tensor run(OpKind kind, const std::vector<Tensor> &operands, AttrMap attrs = {}) {
    auto r = tryRun(kind, operands, std::move(attrs));
    if (!r) {
      ADD_FAILURE() << llvm::toString(r.takeError());
      return Tensor();
    }
    return r->front();
  }
  // The error message of a run expected to fail ("" and a test failure if it succeeds).
  std::string error(OpKind kind, const std::vector<Tensor> &operands, AttrMap attrs = {}) {
    auto r = tryRun(kind, operands, std::move(attrs));
    if (r) {
      ADD_FAILURE() << "expected " << opInfo(kind).name << " to fail";
      return "";
    }
    return llvm::toString(r.takeError());
  }
  void setLocation(std::string loc) { location_ = std::move(loc); }

private:
  Graph graph_;
  std::string location_;
};

inline std::vector<double> doubles(const Tensor &t) {
  return t.valid() ? t.toDoubleVector() : std::vector<double>{};
}
inline std::vector<int64_t> ints(const Tensor &t) {
  return t.valid() ? t.toIntVector() : std::vector<int64_t>{};
}

// Element-wise equality where NaN equals NaN.
inline ::testing::AssertionResult sameValues(const std::vector<double> &got,
                                             const std::vector<double> &want, double tol = 0) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok = (std::isnan(got[i]) && std::isnan(want[i])) || got[i] == want[i] ||
              std::fabs(got[i] - want[i]) <= tol;
    if (!ok)
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", want " << want[i];
  }
  return ::testing::AssertionSuccess();
}

} // namespace strata::testing
