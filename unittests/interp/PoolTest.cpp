// pool kernel (max | avg | lp) against values checked with torch and a direct numpy reference.
#include "StructuredTestUtil.h"

using namespace strata;
using namespace strata::testing;

namespace {

// 5x5 input: i * 0.5 - 3 with one spike (9) at (1, 3).
Tensor poolInput() {
  Tensor x = iotaF32({1, 1, 5, 5}, 0.5f, -3);
  x.data<float>()[1 * 5 + 3] = 9;
  return x;
}

AttrMap poolAttrs(std::string kind, std::vector<int64_t> kernel, std::vector<int64_t> strides,
                  std::vector<int64_t> pads, int64_t ceilMode = 0, int64_t countIncludePad = 0,
                  std::vector<int64_t> dilations = {}, int64_t p = 2) {
  AttrMap a{{"kind", kind}, {"kernel", kernel},      {"strides", strides},
            {"pads", pads}, {"ceil_mode", ceilMode}, {"count_include_pad", countIncludePad},
            {"p", p}};
  if (!dilations.empty())
    a["dilations"] = dilations;
  return a;
}

TEST(PoolKernel, MaxCeilModeWithPads) {
  auto r = runOp(OpKind::Pool, {poolInput()}, poolAttrs("max", {3, 3}, {2, 2}, {1, 1, 1, 1}, 1));
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 1, 3, 3}, {0, 9, 9, 5, 9, 9, 7.5, 8.5, 9});
}

TEST(PoolKernel, MaxDilations) {
  auto r = runOp(OpKind::Pool, {poolInput()},
                 poolAttrs("max", {2, 2}, {1, 1}, {0, 0, 0, 0}, 0, 0, {2, 2}));
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 1, 3, 3}, {3, 3.5, 4, 5.5, 9, 6.5, 8, 8.5, 9});
}

TEST(PoolKernel, AvgCeilModeCountIncludePad) {
  // Windows running past the end padding count only the taps inside the padded bounds.
  auto r = runOp(OpKind::Pool, {poolInput()}, poolAttrs("avg", {3, 3}, {2, 2}, {1, 1, 1, 1}, 1, 1));
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 1, 3, 3},
               {-0.666666667, 0.388888889, 0.888888889, 1.5, 3.88888889, 3.38888889, 2.66666667,
                4.5, 3.33333333});
}

TEST(PoolKernel, AvgCeilModeExcludePad) {
  auto r = runOp(OpKind::Pool, {poolInput()}, poolAttrs("avg", {3, 3}, {2, 2}, {1, 1, 1, 1}, 1, 0));
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 1, 3, 3},
               {-1.5, 0.583333333, 2, 2.25, 3.88888889, 5.08333333, 6, 6.75, 7.5});
}

TEST(PoolKernel, AvgAsymmetricPadsCountIncludePad) {
  auto r = runOp(OpKind::Pool, {poolInput()}, poolAttrs("avg", {2, 3}, {2, 2}, {0, 1, 1, 0}, 0, 1));
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 1, 3, 2}, {-1, 0.583333333, 2.33333333, 4.25, 2.41666667, 4});
}

TEST(PoolKernel, LpPool) {
  auto r2 = runOp(OpKind::Pool, {poolInput()}, poolAttrs("lp", {2, 2}, {2, 2}, {0, 0, 0, 0}));
  ASSERT_EQ(r2.size(), 1u);
  expectTensor(r2[0], DType::F32, {1, 1, 2, 2}, {3.93700394, 9.35414347, 7.44983221, 9.35414347});
  auto r1 = runOp(OpKind::Pool, {poolInput()},
                  poolAttrs("lp", {2, 2}, {2, 2}, {0, 0, 0, 0}, 0, 0, {}, 1));
  ASSERT_EQ(r1.size(), 1u);
  expectTensor(r1[0], DType::F32, {1, 1, 2, 2}, {6, 13, 14, 18});
}

TEST(PoolKernel, OneDimensional) {
  Tensor x = f32({1, 1, 6}, {1, 5, 2, 8, 3, 7});
  auto mx = runOp(OpKind::Pool, {x}, poolAttrs("max", {2}, {2}, {0, 0}));
  ASSERT_EQ(mx.size(), 1u);
  expectTensor(mx[0], DType::F32, {1, 1, 3}, {5, 8, 7});
  auto avg = runOp(OpKind::Pool, {x}, poolAttrs("avg", {4}, {3}, {0, 0}, 1));
  ASSERT_EQ(avg.size(), 1u);
  expectTensor(avg[0], DType::F32, {1, 1, 2}, {4, 6});
}

TEST(PoolKernel, CeilModeDropsWindowStartingInEndPad) {
  // Length 6, kernel 2, stride 3, end pad 2: ceil gives 3 windows, but the third would start at
  // 6, inside the end padding, so only 2 remain.
  Tensor x = f32({1, 1, 6}, {1, 5, 2, 8, 3, 7});
  auto r = runOp(OpKind::Pool, {x}, poolAttrs("avg", {2}, {3}, {0, 2}, 1, 1));
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 1, 2}, {3, 5.5});
}

TEST(PoolKernel, MaxOnIntegers) {
  Tensor x = Tensor::fromVector(DType::U8, {1, 1, 4}, std::vector<uint8_t>{3, 250, 7, 1});
  auto r = runOp(OpKind::Pool, {x}, poolAttrs("max", {2}, {2}, {0, 0}));
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::U8, {1, 1, 2}, {250, 7});
}

TEST(PoolKernel, GlobalAverageThreeD) {
  Tensor x = iotaF32({1, 2, 2, 2, 2});
  auto r = runOp(OpKind::Pool, {x}, poolAttrs("avg", {2, 2, 2}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}));
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {1, 2, 1, 1, 1}, {3.5, 11.5});
}

TEST(PoolKernel, RejectsUnknownKind) {
  std::string err =
      runOpError(OpKind::Pool, {poolInput()}, poolAttrs("median", {2, 2}, {1, 1}, {0, 0, 0, 0}));
  EXPECT_NE(err.find("median"), std::string::npos) << err;
}

} // namespace
