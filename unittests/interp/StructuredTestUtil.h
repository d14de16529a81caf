// Helpers for the structured-kernel tests: run one op through evaluateOp and compare results.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/graph/NormalForm.h"
#include "strata/interp/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace strata::testing {

// The attributes of a `kind` op on `operands` in normal form, as the importer writes them:
// negative axes resolved (NormalForm.h), and a conv/pool window's absent strides, dilations and
// pads (and group, output_padding) filled with ONNX's defaults. Tests then list only what matters.
inline AttrMap normalAttrs(OpKind kind, const std::vector<Tensor> &operands, AttrMap attrs) {
  std::vector<TensorType> types;
  for (const Tensor &t : operands)
    types.push_back(TensorType::fromShape(t.dtype(), t.shape()));
  normalizeAttributes(kind, types, attrs);
  if ((kind == OpKind::Conv || kind == OpKind::ConvTranspose || kind == OpKind::Pool) &&
      !operands.empty() && operands[0].rank() >= 2) {
    size_t spatial = static_cast<size_t>(operands[0].rank() - 2);
    attrs.emplace("strides", std::vector<int64_t>(spatial, 1));
    attrs.emplace("dilations", std::vector<int64_t>(spatial, 1));
    attrs.emplace("pads", std::vector<int64_t>(2 * spatial, 0));
    if (kind != OpKind::Pool)
      attrs.emplace("group", int64_t{1});
    if (kind == OpKind::ConvTranspose)
      attrs.emplace("output_padding", std::vector<int64_t>(spatial, 0));
  }
  return attrs;
}

// Builds a one-op graph (result types are placeholders: evaluateOp does not read them) and
// evaluates it. On error, records a test failure and returns no results.
inline std::vector<Tensor> runOp(OpKind kind, const std::vector<Tensor> &operands,
                                 AttrMap attrs = {}) {
  Graph g;
  std::vector<Value *> values;
  for (const Tensor &t : operands)
    values.push_back(g.addInput(TensorType::fromShape(t.dtype(), t.shape())));
  std::vector<TensorType> resultTypes(opInfo(kind).numResults, TensorType(DType::F32, {}));
  Op *op = g.createOp(kind, values, resultTypes, normalAttrs(kind, operands, std::move(attrs)));
  auto results = evaluateOp(*op, operands);
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return {};
  }
  return *results;
}

// The error message of an op that is expected to fail ("" when it succeeds).
inline std::string runOpError(OpKind kind, const std::vector<Tensor> &operands,
                              AttrMap attrs = {}) {
  Graph g;
  std::vector<Value *> values;
  for (const Tensor &t : operands)
    values.push_back(g.addInput(TensorType::fromShape(t.dtype(), t.shape())));
  std::vector<TensorType> resultTypes(opInfo(kind).numResults, TensorType(DType::F32, {}));
  Op *op = g.createOp(kind, values, resultTypes, normalAttrs(kind, operands, std::move(attrs)));
  auto results = evaluateOp(*op, operands);
  if (results)
    return "";
  return llvm::toString(results.takeError());
}

inline Tensor f32(Shape shape, std::vector<float> values) {
  return Tensor::fromVector(DType::F32, std::move(shape), values);
}
inline Tensor f64(Shape shape, std::vector<double> values) {
  return Tensor::fromVector(DType::F64, std::move(shape), values);
}
inline Tensor i64(Shape shape, std::vector<int64_t> values) {
  return Tensor::fromVector(DType::I64, std::move(shape), values);
}
inline Tensor i32(Shape shape, std::vector<int32_t> values) {
  return Tensor::fromVector(DType::I32, std::move(shape), values);
}
// [0, 1, 2, ...] * scale + offset as f32.
inline Tensor iotaF32(Shape shape, float scale = 1, float offset = 0) {
  std::vector<float> v(static_cast<size_t>(numElements(shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i) * scale + offset;
  return f32(std::move(shape), v);
}

// Expects dtype, shape and values (relative + absolute tolerance; NaNs must match).
inline void expectTensor(const Tensor &t, DType dtype, const Shape &shape,
                         const std::vector<double> &expected, double tol = 1e-5) {
  ASSERT_EQ(t.dtype(), dtype) << "dtype " << dtypeName(t.dtype());
  ASSERT_EQ(t.shape(), shape) << "shape " << shapeToString(t.shape());
  ASSERT_EQ(static_cast<size_t>(t.numElements()), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    double got = t.getDouble(static_cast<int64_t>(i)), want = expected[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << ": got " << got << ", want NaN";
      continue;
    }
    if (std::isinf(want)) {
      EXPECT_EQ(got, want) << "element " << i;
      continue;
    }
    EXPECT_NEAR(got, want, tol * (1 + std::fabs(want))) << "element " << i;
  }
}

} // namespace strata::testing
