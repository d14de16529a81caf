// conv / conv_transpose kernels against values computed with torch.
#include "StructuredTestUtil.h"

using namespace strata;
using namespace strata::testing;

namespace {

// (i % mod - sub) * scale, as the generators in torch used.
Tensor pattern(Shape shape, int mod, float sub, float scale) {
  std::vector<float> v(static_cast<size_t>(numElements(shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = (static_cast<float>(static_cast<int>(i) % mod) - sub) * scale;
  return f32(std::move(shape), v);
}

TEST(ConvKernel, AsymmetricPadsStridesDilationsBias) {
  Tensor x = iotaF32({1, 2, 4, 4}, 0.1f);
  Tensor w = pattern({2, 2, 3, 3}, 7, 3, 0.5f);
  Tensor b = f32({2}, {0.5f, -1});
  auto r = runOp(OpKind::Conv, {x, w, b},
                 {{"strides", std::vector<int64_t>{2, 1}},
                  {"pads", std::vector<int64_t>{1, 0, 1, 2}},
                  {"dilations", std::vector<int64_t>{1, 2}},
                  {"group", int64_t{1}}});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(
      r[0], DType::F32, {1, 2, 2, 2},
      {1.49999988, 1.65000021, 0.500000238, 0.350000143, 3.60000014, 3.59999967, 4.09999943, 4.25});
}

TEST(ConvKernel, Groups) {
  Tensor x = pattern({1, 4, 3, 3}, 5, 2, 1);
  Tensor w = pattern({2, 2, 2, 2}, 3, 1, 1);
  auto r = runOp(OpKind::Conv, {x, w}, {{"group", int64_t{2}}});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 2, 2, 2}, {-1, 3, 1, 0, -2, 3, -2, 3});
}

TEST(ConvKernel, OneDimensionalWithPads) {
  auto r = runOp(OpKind::Conv, {f32({1, 1, 5}, {1, 2, 3, 4, 5}), f32({1, 1, 3}, {1, 0, -1})},
                 {{"pads", std::vector<int64_t>{1, 1}}, {"group", int64_t{1}}});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 1, 5}, {-2, -2, -2, -2, 4});
}

TEST(ConvKernel, ThreeDimensional) {
  Tensor x = iotaF32({1, 2, 3, 3, 3}, 0.1f);
  Tensor w = pattern({2, 2, 2, 2, 2}, 3, 1, 1);
  auto r = runOp(OpKind::Conv, {x, w},
                 {{"strides", std::vector<int64_t>{1, 2, 1}},
                  {"pads", std::vector<int64_t>{0, 1, 0, 0, 1, 0}}});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 2, 2, 2, 2},
               {1.69999957, 1.70000005, -1.30000019, -1.4000001, 1.70000029, 1.69999981,
                -2.19999981, -2.30000019, -2.69999981, -2.80000019, -2, -2, -3.60000014,
                -3.70000005, -2.00000048, -1.99999976});
}

TEST(ConvKernel, PointwiseMatchesChannelMix) {
  // 1x1 conv takes the direct (no im2col) path: y[m] = sum_c w[m, c] * x[c] + b[m].
  Tensor x = f32({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = f32({2, 2, 1, 1}, {1, 1, 2, -1});
  auto r = runOp(OpKind::Conv, {x, w, f32({2}, {0, 10})});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 2, 1, 3}, {5, 7, 9, 8, 9, 10});
}

TEST(ConvKernel, F64AndF16) {
  Tensor x = Tensor::fromVector(DType::F64, {1, 1, 3}, std::vector<double>{1, 2, 3});
  Tensor w = Tensor::fromVector(DType::F64, {1, 1, 2}, std::vector<double>{0.5, 0.25});
  auto r = runOp(OpKind::Conv, {x, w});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F64, {1, 1, 2}, {1, 1.75}, 1e-12);

  Tensor xh(DType::F16, {1, 1, 3}), wh(DType::F16, {1, 1, 2});
  for (int i = 0; i < 3; ++i)
    xh.setDouble(i, i + 1);
  wh.setDouble(0, 0.5);
  wh.setDouble(1, 0.25);
  auto rh = runOp(OpKind::Conv, {xh, wh});
  ASSERT_EQ(rh.size(), 1u);
  expectTensor(rh[0], DType::F16, {1, 1, 2}, {1, 1.75}, 1e-3);
}

TEST(ConvKernel, RejectsChannelMismatch) {
  std::string err = runOpError(OpKind::Conv, {iotaF32({1, 3, 4, 4}), iotaF32({2, 2, 3, 3})});
  EXPECT_NE(err.find("group"), std::string::npos) << err;
}

TEST(ConvTransposeKernel, StridesPadsOutputPaddingBias) {
  Tensor x = iotaF32({1, 2, 3, 3}, 0.1f, -0.5f);
  Tensor w = pattern({2, 3, 3, 3}, 5, 2, 0.5f);
  Tensor b = f32({3}, {1, 0, -1});
  auto r = runOp(OpKind::ConvTranspose, {x, w, b},
                 {{"strides", std::vector<int64_t>{2, 2}},
                  {"pads", std::vector<int64_t>{1, 0, 0, 1}},
                  {"output_padding", std::vector<int64_t>{1, 0}},
                  {"group", int64_t{1}}});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 3, 7, 6},
               {0.350000024,
                0.300000012,
                0.800000012,
                0.350000024,
                0.649999976,
                0.399999976,
                1.64999998,
                1.85000002,
                1.60000002,
                1.95000005,
                1.54999995,
                2.04999995,
                0.199999988,
                0.449999988,
                0.349999964,
                0.5,
                0.200000048,
                0.550000012,
                1.35000002,
                2.1500001,
                1.45000005,
                2.25,
                1.39999998,
                2.3499999,
                0.0500000119,
                0.600000024,
                -0.100000024,
                0.649999976,
                -0.250000119,
                0.699999988,
                1.45000005,
                2,
                0.5,
                2.0999999,
                0.450000048,
                2.20000005,
                1,
                1,
                1,
                1,
                1,
                1,
                0.400000006,
                -0.649999976,
                -0.199999988,
                -0.699999988,
                -0.0499999523,
                -0.75,
                -0.0500000119,
                0.649999976,
                0.75,
                0.550000012,
                0.800000072,
                0.450000018,
                0.699999988,
                -0.800000012,
                0.25,
                -0.850000024,
                0.399999976,
                -0.899999976,
                -0.200000003,
                0.349999994,
                0.899999976,
                0.25,
                0.950000048,
                0.149999976,
                1,
                -0.949999988,
                0.700000048,
                -1,
                0.850000024,
                -1.05000007,
                -0.100000001,
                0.449999988,
                0.800000012,
                0.450000018,
                0.800000012,
                0.450000018,
                0,
                0,
                0,
                0,
                0,
                0,
                -0.550000012,
                -0.600000024,
                -1.20000005,
                -0.5,
                -1.25,
                -0.399999976,
                -2.5,
                -1.04999995,
                -1.8499999,
                -1.10000002,
                -1.95000005,
                -1.14999998,
                -0.550000012,
                -0.300000012,
                -1.35000002,
                -0.199999988,
                -1.4000001,
                -0.100000024,
                -2.5,
                -1.20000005,
                -2.1500001,
                -1.25,
                -2.25,
                -1.29999995,
                -0.550000012,
                0,
                -1.5,
                0.100000024,
                -1.54999995,
                0.200000048,
                -1.39999998,
                -1.10000002,
                -0.900000036,
                -1.20000005,
                -0.850000024,
                -1.29999995,
                -1,
                -1,
                -1,
                -1,
                -1,
                -1});
}

TEST(ConvTransposeKernel, OneDimensionalGroupsDilation) {
  Tensor x = f32({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = f32({2, 1, 2}, {1, -1, 2, 1});
  auto r = runOp(OpKind::ConvTranspose, {x, w},
                 {{"dilations", std::vector<int64_t>{2}}, {"group", int64_t{2}}});
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 2, 5}, {1, 2, 2, -2, -3, 8, 10, 16, 5, 6});
}

} // namespace
