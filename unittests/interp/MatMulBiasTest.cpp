// matmul(a, b, bias): the optional bias is broadcast-added after accumulation, so the fused op
// is bit-identical to add(matmul(a, b), bias); type inference rejects a bias that would grow
// the product.
#include "StructuredTestUtil.h"

#include "strata/graph/TypeInference.h"

#include <random>

using namespace strata;
using strata::testing::f32;
using strata::testing::runOp;

namespace {

Tensor randomTensor(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(numElements(shape)));
  for (float &x : v)
    x = dist(rng);
  return f32(std::move(shape), v);
}

TEST(MatMulBias, AddsRowBiasToEveryRow) {
  std::vector<Tensor> out = runOp(
      OpKind::MatMul, {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 0, 0, 1}), f32({2}, {10, 20})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(out[0].toDoubleVector(), (std::vector<double>{11, 22, 13, 24}));
}

TEST(MatMulBias, ColumnBiasAndBatchedProduct) {
  // [2, 2, 1] x [1, 2] -> [2, 2, 2]; bias [2, 1] broadcasts over the batch and the columns.
  std::vector<Tensor> out = runOp(OpKind::MatMul, {f32({2, 2, 1}, {1, 2, 3, 4}),
                                                   f32({1, 2}, {1, 10}), f32({2, 1}, {100, 200})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].toDoubleVector(), (std::vector<double>{101, 110, 202, 220, 103, 130, 204, 240}));
}

TEST(MatMulBias, BitIdenticalToSeparateAddOverManyKBlocks) {
  // K = 700 spans several accumulation blocks: the bias must not be the accumulator's seed.
  Tensor a = randomTensor({5, 700}, 1), b = randomTensor({700, 9}, 2), bias = randomTensor({9}, 3);
  std::vector<Tensor> fused = runOp(OpKind::MatMul, {a, b, bias});
  std::vector<Tensor> product = runOp(OpKind::MatMul, {a, b});
  ASSERT_EQ(product.size(), 1u);
  std::vector<Tensor> separate = runOp(OpKind::Add, {product[0], bias});
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(separate.size(), 1u);
  EXPECT_TRUE(fused[0].identical(separate[0]));
}

TEST(MatMulBias, ConvBiasBitIdenticalToSeparateAdd) {
  // 32 input channels x 3x3 = 288 > one accumulation block.
  Tensor x = randomTensor({1, 32, 5, 5}, 4), w = randomTensor({4, 32, 3, 3}, 5),
         bias = randomTensor({4}, 6);
  AttrMap attrs = {{"strides", std::vector<int64_t>{1, 1}},
                   {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                   {"dilations", std::vector<int64_t>{1, 1}},
                   {"group", int64_t{1}}};
  std::vector<Tensor> fused = runOp(OpKind::Conv, {x, w, bias}, attrs);
  std::vector<Tensor> conv = runOp(OpKind::Conv, {x, w}, attrs);
  ASSERT_EQ(conv.size(), 1u);
  std::vector<Tensor> separate = runOp(OpKind::Add, {conv[0], bias.reshaped({4, 1, 1})});
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(separate.size(), 1u);
  EXPECT_TRUE(fused[0].identical(separate[0]));
}

TEST(MatMulBias, InterpreterRejectsBiasThatGrowsTheProduct) {
  std::string err = strata::testing::runOpError(
      OpKind::MatMul,
      {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 0, 0, 1}), f32({3, 1, 1}, {1, 2, 3})});
  EXPECT_NE(err.find("does not broadcast"), std::string::npos) << err;
}

TEST(MatMulBias, TypeInference) {
  TensorType a(DType::F32, {Dim::sym("m"), 3}), b(DType::F32, {3, 4});
  auto ok = inferResultTypes(OpKind::MatMul, {a, b, TensorType(DType::F32, {1, 4})}, {});
  ASSERT_TRUE(static_cast<bool>(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ((*ok)[0], TensorType(DType::F32, {Dim::sym("m"), 4}));

  auto grows = inferResultTypes(OpKind::MatMul, {a, b, TensorType(DType::F32, {2, 1, 4})}, {});
  ASSERT_FALSE(static_cast<bool>(grows));
  EXPECT_NE(llvm::toString(grows.takeError()).find("operand 2 (bias)"), std::string::npos);

  auto wrongDType = inferResultTypes(OpKind::MatMul, {a, b, TensorType(DType::F64, {4})}, {});
  EXPECT_FALSE(static_cast<bool>(wrongDType));
  llvm::consumeError(wrongDType.takeError());
}

} // namespace
