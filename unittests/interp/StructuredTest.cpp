// matmul, topk and einsum kernels.
#include "StructuredTestUtil.h"

#include <cstdint>
#include <limits>

using namespace strata;
using namespace strata::testing;

namespace {

Tensor matmul(const Tensor &a, const Tensor &b) {
  auto r = runOp(OpKind::MatMul, {a, b});
  return r.empty() ? Tensor() : r[0];
}

TEST(MatMulKernel, TwoDAndVectorPromotion) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  expectTensor(matmul(a, b), DType::F32, {2, 2}, {58, 64, 139, 154});
  Tensor v = f32({3}, {1, 2, 3});
  expectTensor(matmul(v, b), DType::F32, {2}, {58, 64});
  expectTensor(matmul(a, f32({3}, {1, 1, 1})), DType::F32, {2}, {6, 15});
  expectTensor(matmul(v, v), DType::F32, {}, {14});
}

TEST(MatMulKernel, BatchBroadcasting) {
  Tensor a = iotaF32({2, 1, 2, 2}, 1, -3);
  Tensor b = iotaF32({3, 2, 2}, 0.5f);
  Tensor c = matmul(a, b);
  ASSERT_EQ(c.shape(), (Shape{2, 3, 2, 2}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t col = 0; col < 2; ++col) {
          double want = 0;
          for (int64_t k = 0; k < 2; ++k)
            want += a.getDouble(i * 4 + r * 2 + k) * b.getDouble(j * 4 + k * 2 + col);
          EXPECT_DOUBLE_EQ(c.getDouble(((i * 3 + j) * 2 + r) * 2 + col), want);
        }
}

TEST(MatMulKernel, LargeMatchesNaive) {
  // Sizes that exercise the register tiles, their edges and the k blocking.
  const int64_t m = 37, k = 300, n = 45;
  Tensor a(DType::F32, {m, k}), b(DType::F32, {k, n});
  for (int64_t i = 0; i < m * k; ++i)
    a.data<float>()[i] = static_cast<float>((i * 7919) % 23) / 11.0f - 1;
  for (int64_t i = 0; i < k * n; ++i)
    b.data<float>()[i] = static_cast<float>((i * 104729) % 19) / 9.0f - 1;
  Tensor c = matmul(a, b);
  ASSERT_EQ(c.shape(), (Shape{m, n}));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p)
        want += a.getDouble(i * k + p) * b.getDouble(p * n + j);
      EXPECT_NEAR(c.getDouble(i * n + j), want, 1e-3) << i << "," << j;
    }
}

TEST(MatMulKernel, IntegersWrapAndHalfRoundsBack) {
  Tensor c = matmul(i32({1, 1}, {65536}), i32({1, 1}, {65536}));
  ASSERT_EQ(c.dtype(), DType::I32);
  EXPECT_EQ(c.data<int32_t>()[0], 0);
  expectTensor(matmul(i64({2, 2}, {1, 2, 3, 4}), i64({2}, {5, 6})), DType::I64, {2}, {17, 39});
  Tensor h(DType::BF16, {1, 2});
  h.setDouble(0, 1.5);
  h.setDouble(1, -2);
  expectTensor(matmul(h, h.reshaped({2, 1})), DType::BF16, {1, 1}, {6.25}, 1e-2);
}

TEST(MatMulKernel, RejectsMismatchedContraction) {
  std::string err = runOpError(OpKind::MatMul, {iotaF32({2, 3}), iotaF32({2, 3})});
  EXPECT_NE(err.find("contraction"), std::string::npos) << err;
}

std::vector<Tensor> topk(const Tensor &x, int64_t axis, int64_t k, int64_t largest) {
  return runOp(OpKind::TopK, {x},
               {{"axis", axis}, {"k", k}, {"largest", largest}, {"sorted", int64_t{1}}});
}

TEST(TopKKernel, LargestSmallestAndTies) {
  Tensor x = f32({5}, {3, 1, 3, 2, 5});
  auto big = topk(x, 0, 3, 1);
  ASSERT_EQ(big.size(), 2u);
  expectTensor(big[0], DType::F32, {3}, {5, 3, 3});
  expectTensor(big[1], DType::I64, {3}, {4, 0, 2});
  auto small = topk(x, -1, 4, 0);
  ASSERT_EQ(small.size(), 2u);
  expectTensor(small[0], DType::F32, {4}, {1, 2, 3, 3});
  expectTensor(small[1], DType::I64, {4}, {1, 3, 0, 2});
}

TEST(TopKKernel, AlongOuterAxisIntegersAndNaN) {
  Tensor x = i64({3, 2}, {4, 9, 8, 9, 1, 7});
  auto r = topk(x, 0, 2, 1);
  ASSERT_EQ(r.size(), 2u);
  expectTensor(r[0], DType::I64, {2, 2}, {8, 9, 4, 9});
  expectTensor(r[1], DType::I64, {2, 2}, {1, 0, 0, 1});
  float nan = std::numeric_limits<float>::quiet_NaN();
  auto withNaN = topk(f32({3}, {1, nan, 3}), 0, 2, 1);
  ASSERT_EQ(withNaN.size(), 2u);
  expectTensor(withNaN[0], DType::F32, {2}, {std::numeric_limits<double>::quiet_NaN(), 3});
  expectTensor(withNaN[1], DType::I64, {2}, {1, 2});
  auto smallest = topk(f32({3}, {1, nan, 3}), 0, 3, 0);
  ASSERT_EQ(smallest.size(), 2u);
  expectTensor(smallest[1], DType::I64, {3}, {0, 2, 1});
}

TEST(TopKKernel, RejectsKTooLarge) {
  std::string err = runOpError(
      OpKind::TopK, {f32({2}, {1, 2})},
      {{"axis", int64_t{0}}, {"k", int64_t{3}}, {"largest", int64_t{1}}, {"sorted", int64_t{1}}});
  EXPECT_NE(err.find("k = 3"), std::string::npos) << err;
}

Tensor einsum(const std::string &eq, const std::vector<Tensor> &operands) {
  auto r = runOp(OpKind::Einsum, operands, {{"equation", eq}});
  return r.empty() ? Tensor() : r[0];
}

TEST(EinsumKernel, TransposeMatMulTraceDiagonal) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(einsum("ij->ji", {a}), DType::F32, {3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  expectTensor(einsum("ij,jk", {a, b}), DType::F32, {2, 2}, {58, 64, 139, 154});
  // Implicit output orders free labels alphabetically: "ji" on a [2,3] gives i first.
  expectTensor(einsum("ji", {a}), DType::F32, {3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor sq = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expectTensor(einsum("ii", {sq}), DType::F32, {}, {15});
  expectTensor(einsum("ii->i", {sq}), DType::F32, {3}, {1, 5, 9});
  expectTensor(einsum("i,i", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})}), DType::F32, {}, {32});
  expectTensor(einsum("i, j -> ij", {f32({2}, {1, 2}), f32({2}, {3, 4})}), DType::F32, {2, 2},
               {3, 4, 6, 8});
  expectTensor(einsum("bij->", {a.reshaped({1, 2, 3})}), DType::F32, {}, {21});
}

TEST(EinsumKernel, EllipsisBroadcasting) {
  Tensor a = iotaF32({2, 2, 3});
  Tensor b = f32({3, 2}, {1, 0, 0, 1, 1, 1});
  // b has no batch dims: its (empty) ellipsis broadcasts against a's.
  expectTensor(einsum("...ij,...jk->...ik", {a, b}), DType::F32, {2, 2, 2},
               {2, 3, 8, 9, 14, 15, 20, 21});
  // Implicit output puts the ellipsis first.
  expectTensor(einsum("...i,i", {a, f32({3}, {1, 1, 1})}), DType::F32, {2, 2}, {3, 12, 21, 30});
  // Batch diagonal.
  Tensor sq = iotaF32({2, 2, 2});
  expectTensor(einsum("...ii->...i", {sq}), DType::F32, {2, 2}, {0, 3, 4, 7});
}

TEST(EinsumKernel, IntegersAndErrors) {
  expectTensor(einsum("ij,j->i", {i32({2, 2}, {1, 2, 3, 4}), i32({2}, {1, -1})}), DType::I32, {2},
               {-1, -1});
  std::string err =
      runOpError(OpKind::Einsum, {iotaF32({2, 3}), iotaF32({4, 2})}, {{"equation", "ij,jk->ik"}});
  EXPECT_NE(err.find("disagree"), std::string::npos) << err;
}

} // namespace
