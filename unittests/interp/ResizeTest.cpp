// resize kernel against the ONNX reference implementation (onnx/backend/test/case/node/resize.py).
#include "StructuredTestUtil.h"

using namespace strata;
using namespace strata::testing;

namespace {

Tensor resize(const Tensor &x, std::vector<int64_t> sizes, std::string mode,
              std::string coordinateMode, std::string nearestMode = "round_prefer_floor",
              double cubicA = -0.75, int64_t excludeOutside = 0, std::vector<double> scales = {}) {
  auto r = runOp(OpKind::Resize, {x},
                 {{"sizes", std::move(sizes)},
                  {"scales", std::move(scales)},
                  {"mode", std::move(mode)},
                  {"coordinate_transformation_mode", std::move(coordinateMode)},
                  {"nearest_mode", std::move(nearestMode)},
                  {"cubic_coeff_a", cubicA},
                  {"exclude_outside", excludeOutside},
                  {"extrapolation_value", 0.0}});
  return r.empty() ? Tensor() : r[0];
}

Tensor small() { return f32({1, 1, 2, 3}, {1, 2, 4, 3, 5, 9}); }

Tensor sixteen() {
  Tensor x = iotaF32({1, 1, 4, 4});
  x.data<float>()[6] = 20;
  return x;
}

TEST(ResizeKernel, NearestModes) {
  expectTensor(resize(small(), {1, 1, 3, 5}, "nearest", "half_pixel"), DType::F32, {1, 1, 3, 5},
               {1, 1, 2, 4, 4, 1, 1, 2, 4, 4, 3, 3, 5, 9, 9});
  expectTensor(resize(small(), {1, 1, 3, 5}, "nearest", "align_corners", "floor"), DType::F32,
               {1, 1, 3, 5}, {1, 1, 2, 2, 4, 1, 1, 2, 2, 4, 3, 3, 5, 5, 9});
  expectTensor(resize(small(), {1, 1, 4, 4}, "nearest", "asymmetric", "ceil"), DType::F32,
               {1, 1, 4, 4}, {1, 2, 4, 4, 3, 5, 9, 9, 3, 5, 9, 9, 3, 5, 9, 9});
}

TEST(ResizeKernel, LinearModes) {
  expectTensor(resize(small(), {1, 1, 3, 5}, "linear", "half_pixel"), DType::F32, {1, 1, 3, 5},
               {1, 1.4, 2, 3.2, 4, 2, 2.6, 3.5, 5.3, 6.5, 3, 3.8, 5, 7.4, 9});
  expectTensor(resize(small(), {1, 1, 3, 5}, "linear", "align_corners"), DType::F32, {1, 1, 3, 5},
               {1, 1.5, 2, 3, 4, 2, 2.75, 3.5, 5, 6.5, 3, 4, 5, 7, 9});
  expectTensor(resize(small(), {1, 1, 1, 2}, "linear", "pytorch_half_pixel"), DType::F32,
               {1, 1, 1, 2}, {1.25, 3.5});
}

TEST(ResizeKernel, LinearWithExplicitScales) {
  // Scales (as f32 values) drive the coordinate mapping, sizes the output shape.
  expectTensor(resize(small(), {1, 1, 3, 2}, "linear", "half_pixel", "round_prefer_floor", -0.75, 0,
                      {1, 1, 1.5, 0.699999988079071}),
               DType::F32, {1, 1, 3, 2},
               {1.21428573, 3.28571436, 2.32142859, 5.42857154, 3.42857145, 7.57142872});
}

TEST(ResizeKernel, Cubic) {
  expectTensor(resize(sixteen(), {1, 1, 3, 5}, "cubic", "half_pixel"), DType::F32, {1, 1, 3, 5},
               {0.44387963, 0.867061921, 3.34194155, 4.76611632, 3.4285515, 5.93925, 5.69429688,
                12.4355469, 15.2990156, 8.55576563, 11.4346204, 12.1329172, 12.8510561, 13.6825804,
                14.570886});
  expectTensor(
      resize(sixteen(), {1, 1, 3, 5}, "cubic", "half_pixel", "round_prefer_floor", -0.5, 1),
      DType::F32, {1, 1, 3, 5},
      {0.368109325, 0.935039685, 2.89359956, 4.14380918, 3.37909232, 5.95673077, 6.08694862,
       11.9296875, 14.5778599, 8.70252404, 11.5453522, 12.2476212, 13.0024617, 13.8194382,
       14.6385183});
  Tensor up = resize(sixteen(), {1, 1, 8, 8}, "cubic", "asymmetric");
  ASSERT_EQ(up.shape(), (Shape{1, 1, 8, 8}));
  std::vector<double> firstRows = {0,       0.40625,    1,     1.5,        2,     2.59375,
                                   3,       3.09375,    1.625, 1.25195312, 2.625, 8.06054688,
                                   11.9375, 9.15429688, 4.625, 3.93945312};
  for (size_t i = 0; i < firstRows.size(); ++i)
    EXPECT_NEAR(up.getDouble(static_cast<int64_t>(i)), firstRows[i], 1e-5) << i;
}

TEST(ResizeKernel, TrilinearOnEveryAxis) {
  expectTensor(resize(iotaF32({2, 2, 2}), {3, 3, 3}, "linear", "align_corners"), DType::F32,
               {3, 3, 3}, {0, 0.5, 1,   1, 1.5, 2,   2, 2.5, 3,   2, 2.5, 3,   3, 3.5,
                           4, 4,   4.5, 5, 4,   4.5, 5, 5,   5.5, 6, 6,   6.5, 7});
}

TEST(ResizeKernel, IntegerNearestAndCropModeRejected) {
  Tensor x = Tensor::fromVector(DType::U8, {1, 2}, std::vector<uint8_t>{10, 200});
  expectTensor(resize(x, {1, 4}, "nearest", "asymmetric"), DType::U8, {1, 4}, {10, 10, 200, 200});
  std::string err = runOpError(OpKind::Resize, {small()},
                               {{"sizes", std::vector<int64_t>{1, 1, 2, 3}},
                                {"scales", std::vector<double>{}},
                                {"mode", "linear"},
                                {"coordinate_transformation_mode", "tf_crop_and_resize"},
                                {"nearest_mode", "floor"},
                                {"cubic_coeff_a", -0.75},
                                {"exclude_outside", int64_t{0}},
                                {"extrapolation_value", 0.0}});
  EXPECT_NE(err.find("tf_crop_and_resize"), std::string::npos) << err;
}

} // namespace
