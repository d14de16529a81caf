// reduce, arg_reduce, softmax, log_softmax, layer_norm and cumsum kernels.
#include "StructuredTestUtil.h"

#include <cstdint>
#include <limits>

using namespace strata;
using namespace strata::testing;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor reduceOne(const Tensor &x, const std::string &kind, std::vector<int64_t> axes,
                 int64_t keepdims) {
  auto r = runOp(OpKind::Reduce, {x},
                 {{"kind", kind}, {"axes", std::move(axes)}, {"keepdims", keepdims}});
  return r.empty() ? Tensor() : r[0];
}

TEST(ReduceKernel, EachKindAxesAndKeepdims) {
  Tensor x = f32({2, 3}, {1, 5, 3, 4, 2, 6});
  expectTensor(reduceOne(x, "sum", {1}, 1), DType::F32, {2, 1}, {9, 12});
  expectTensor(reduceOne(x, "sum", {0, 1}, 0), DType::F32, {}, {21});
  expectTensor(reduceOne(x, "sum", {}, 0), DType::F32, {2, 3}, {1, 5, 3, 4, 2, 6}); // nothing
  expectTensor(reduceOne(x, "prod", {0}, 0), DType::F32, {3}, {4, 10, 18});
  expectTensor(reduceOne(x, "max", {-1}, 0), DType::F32, {2}, {5, 6});
  expectTensor(reduceOne(x, "min", {0}, 1), DType::F32, {1, 3}, {1, 2, 3});
  expectTensor(reduceOne(x, "mean", {0, 1}, 1), DType::F32, {1, 1}, {3.5});
  expectTensor(reduceOne(x, "mean", {0, -1}, 0), DType::F32, {}, {3.5});
}

TEST(ReduceKernel, EmptyReductionYieldsIdentity) {
  Tensor x(DType::F32, {2, 0});
  expectTensor(reduceOne(x, "sum", {1}, 0), DType::F32, {2}, {0, 0});
  expectTensor(reduceOne(x, "prod", {1}, 0), DType::F32, {2}, {1, 1});
  expectTensor(reduceOne(x, "max", {1}, 0), DType::F32, {2}, {-kInf, -kInf});
  expectTensor(reduceOne(x, "min", {1}, 1), DType::F32, {2, 1}, {kInf, kInf});
  expectTensor(reduceOne(x, "mean", {1}, 0), DType::F32, {2}, {kNaN, kNaN});
  Tensor xi(DType::I32, {0, 2});
  Tensor maxI = reduceOne(xi, "max", {0}, 0);
  ASSERT_EQ(maxI.shape(), Shape{2});
  EXPECT_EQ(maxI.data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  Tensor minI = reduceOne(xi, "min", {0}, 0);
  EXPECT_EQ(minI.data<int32_t>()[1], std::numeric_limits<int32_t>::max());
}

TEST(ReduceKernel, IntegersWrapAndMaxMinPropagateNaN) {
  Tensor xi = i32({3}, {std::numeric_limits<int32_t>::max(), 1, 0});
  Tensor sum = reduceOne(xi, "sum", {0}, 0);
  ASSERT_EQ(sum.dtype(), DType::I32);
  EXPECT_EQ(sum.data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  expectTensor(reduceOne(i32({4}, {7, -2, 5, 2}), "mean", {0}, 0), DType::I32, {}, {3});
  Tensor withNaN = f32({2, 3}, {1, std::numeric_limits<float>::quiet_NaN(), 3, 4, 5, 6});
  expectTensor(reduceOne(withNaN, "max", {1}, 0), DType::F32, {2}, {kNaN, 6});
  expectTensor(reduceOne(withNaN, "min", {1}, 0), DType::F32, {2}, {kNaN, 4});
}

TEST(ReduceKernel, F16RoundsBack) {
  Tensor x(DType::F16, {4});
  for (int i = 0; i < 4; ++i)
    x.setDouble(i, 0.5 * (i + 1));
  expectTensor(reduceOne(x, "sum", {0}, 0), DType::F16, {}, {5});
}

TEST(ReduceKernel, RejectsBadAxis) {
  std::string err =
      runOpError(OpKind::Reduce, {f32({2}, {1, 2})},
                 {{"kind", "sum"}, {"axes", std::vector<int64_t>{3}}, {"keepdims", int64_t{0}}});
  EXPECT_NE(err.find("axis 3"), std::string::npos) << err;
}

Tensor argOne(const Tensor &x, const std::string &kind, int64_t axis, int64_t keepdims,
              int64_t last) {
  auto r =
      runOp(OpKind::ArgReduce, {x},
            {{"kind", kind}, {"axis", axis}, {"keepdims", keepdims}, {"select_last_index", last}});
  return r.empty() ? Tensor() : r[0];
}

TEST(ArgReduceKernel, MaxMinAndSelectLastIndex) {
  Tensor x = f32({2, 4}, {2, 7, 7, 1, 5, 5, 0, 0});
  expectTensor(argOne(x, "max", 1, 0, 0), DType::I64, {2}, {1, 0});
  expectTensor(argOne(x, "max", 1, 0, 1), DType::I64, {2}, {2, 1});
  expectTensor(argOne(x, "min", -1, 1, 0), DType::I64, {2, 1}, {3, 2});
  expectTensor(argOne(x, "min", 1, 0, 1), DType::I64, {2}, {3, 3});
  expectTensor(argOne(x, "max", 0, 1, 0), DType::I64, {1, 4}, {1, 0, 0, 0});
  expectTensor(argOne(i32({3}, {4, -9, 4}), "min", 0, 0, 0), DType::I64, {}, {1});
  float nan = std::numeric_limits<float>::quiet_NaN();
  expectTensor(argOne(f32({4}, {1, nan, 3, nan}), "max", 0, 0, 0), DType::I64, {}, {1});
  expectTensor(argOne(f32({4}, {1, nan, 3, nan}), "min", 0, 0, 0), DType::I64, {}, {1});
}

TEST(SoftmaxKernel, RowsSumToOneAndLargeValuesAreStable) {
  Tensor x = f32({2, 3}, {1, 2, 3, 1000, 1000, 1000});
  auto r = runOp(OpKind::Softmax, {x}, {{"axis", int64_t{-1}}});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {2, 3},
               {0.09003057, 0.24472847, 0.66524096, 1 / 3.0, 1 / 3.0, 1 / 3.0});
  for (int row = 0; row < 2; ++row) {
    double sum = 0;
    for (int c = 0; c < 3; ++c)
      sum += r[0].getDouble(row * 3 + c);
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  auto col = runOp(OpKind::Softmax, {f32({2, 2}, {1, 2, 3, 4})}, {{"axis", int64_t{0}}});
  ASSERT_EQ(col.size(), 1u);
  expectTensor(col[0], DType::F32, {2, 2}, {0.11920292, 0.11920292, 0.88079708, 0.88079708});
}

TEST(LogSoftmaxKernel, MatchesLogOfSoftmax) {
  Tensor x = f32({2, 3}, {1, 2, 3, 1000, 1000, 1000});
  auto r = runOp(OpKind::LogSoftmax, {x}, {{"axis", int64_t{1}}});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {2, 3},
               {-2.40760596, -1.40760596, -0.40760596, -1.09861229, -1.09861229, -1.09861229});
}

TEST(LayerNormKernel, LastAxisWithScaleAndBias) {
  Tensor x = f32({2, 3}, {1, 2, 3, 2, 4, 9});
  auto r = runOp(OpKind::LayerNorm, {x, f32({3}, {2, 1, 0.5}), f32({3}, {0, 1, -1})},
                 {{"axis", int64_t{-1}}, {"epsilon", 0.0}});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {2, 3},
               {-2.44948974, 1, -0.38762756, -2.03809866, 0.66031689, -0.32063378});
}

TEST(LayerNormKernel, AxisZeroAndBroadcastScale) {
  Tensor x = f32({2, 3}, {1, 2, 3, 2, 4, 9});
  auto r =
      runOp(OpKind::LayerNorm, {x, f32({2, 1}, {1, 2})}, {{"axis", int64_t{0}}, {"epsilon", 1e-2}});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {2, 3},
               {-0.94989995, -0.56993997, -0.18997999, -1.13987994, 0.37995998, 4.17955978});

  std::vector<float> v3 = {
      0,          1,  2.82842712f, 5.19615242f, 8, 11.18033989f, 14.69693846f, 18.52025918f,
      22.627417f, 27, 31.6227766f, 36.48287269f};
  auto r3 = runOp(OpKind::LayerNorm, {f32({2, 2, 3}, v3), f32({3}, {1, 2, 3}), f32({1}, {0.5})},
                  {{"axis", int64_t{1}}, {"epsilon", 1e-5}});
  ASSERT_EQ(r3.size(), 1u);
  expectTensor(r3[0], DType::F32, {2, 2, 3},
               {-0.6977903, -1.38597151, -0.9312826, 0.62621298, 2.1812922, 5.45303353, -0.90354293,
                -1.28118591, -0.51868725, 0.74707849, 2.23457246, 5.05800075});
}

Tensor cumsum(const Tensor &x, int64_t axis, int64_t exclusive, int64_t reverse) {
  auto r =
      runOp(OpKind::CumSum, {x}, {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}});
  return r.empty() ? Tensor() : r[0];
}

TEST(CumSumKernel, ExclusiveAndReverse) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  expectTensor(cumsum(x, 0, 0, 0), DType::F32, {4}, {1, 3, 6, 10});
  expectTensor(cumsum(x, 0, 1, 0), DType::F32, {4}, {0, 1, 3, 6});
  expectTensor(cumsum(x, 0, 0, 1), DType::F32, {4}, {10, 9, 7, 4});
  expectTensor(cumsum(x, -1, 1, 1), DType::F32, {4}, {9, 7, 4, 0});
  Tensor m = f32({2, 2}, {1, 2, 3, 4});
  expectTensor(cumsum(m, 0, 0, 0), DType::F32, {2, 2}, {1, 2, 4, 6});
  expectTensor(cumsum(m, 1, 0, 0), DType::F32, {2, 2}, {1, 3, 3, 7});
  Tensor wrap = cumsum(i32({2}, {std::numeric_limits<int32_t>::max(), 1}), 0, 0, 0);
  ASSERT_EQ(wrap.dtype(), DType::I32);
  EXPECT_EQ(wrap.data<int32_t>()[1], std::numeric_limits<int32_t>::min());
}

} // namespace
