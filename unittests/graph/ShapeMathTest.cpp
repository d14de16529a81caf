// The shape arithmetic shared by every rung (support/ShapeMath.h) and ONNX Resize's coordinate
// math (graph/ResizeMath.h).
#include "strata/support/ShapeMath.h"
#include "strata/graph/ResizeMath.h"
#include "strata/graph/Type.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace strata;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

TEST(ShapeMath, NormalizeAxis) {
  EXPECT_EQ(shape::normalizeAxis(-1, 3), 2);
  EXPECT_EQ(shape::normalizeAxis(2, 3), 2);
  EXPECT_FALSE(shape::normalizeAxis(3, 3).has_value());
  EXPECT_FALSE(shape::normalizeAxis(-4, 3).has_value());
  EXPECT_FALSE(shape::normalizeAxis(0, 0).has_value());
}

TEST(ShapeMath, BroadcastConcreteAndSymbolic) {
  using S = std::vector<int64_t>;
  EXPECT_EQ(shape::broadcastShapes(S{2, 1, 3}, S{4, 3}), (S{2, 4, 3}));
  EXPECT_EQ(shape::broadcastShapes(S{}, S{5}), (S{5}));
  std::string why;
  EXPECT_FALSE(shape::broadcastShapes(S{2, 3}, S{4}, &why).has_value());
  EXPECT_EQ(why, "cannot broadcast dimension 3 with 4");
  // The same function over the graph's dims: a symbol against a size takes the size (checked
  // when symbols are bound), two different symbols do not broadcast.
  std::vector<Dim> a = {Dim::sym("b"), 1, 3}, b = {Dim::sym("b"), 4, 1};
  auto r = shape::broadcastShapes(a, b);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(TensorType(DType::F32, *r).str(), "tensor<?b x4x3xf32>");
  auto staticWins = shape::broadcastShapes(std::vector<Dim>{Dim::sym("n")}, std::vector<Dim>{7});
  ASSERT_TRUE(staticWins.has_value());
  EXPECT_EQ((*staticWins)[0], Dim(7));
  EXPECT_FALSE(
      shape::broadcastShapes(std::vector<Dim>{Dim::sym("n")}, std::vector<Dim>{Dim::sym("m")}, &why)
          .has_value());
  EXPECT_EQ(why, "cannot broadcast dimension ?n with ?m");
}

TEST(ShapeMath, WindowOutputSizes) {
  shape::WindowDim w{3, 2, 0, 0, 1}; // kernel 3, stride 2
  EXPECT_EQ(shape::windowOutputSize(6, w, false), 2);
  EXPECT_EQ(shape::windowOutputSize(6, w, true), 3);
  // With ceil mode a last window starting in the end padding is dropped (ONNX).
  shape::WindowDim unit{1, 2, 0, 1, 1};
  EXPECT_EQ(shape::windowOutputSize(3, unit, true), 2);
  shape::WindowDim dilated{3, 1, 1, 1, 2}; // effective kernel 5
  EXPECT_EQ(shape::windowOutputSize(7, dilated, false), 5);
  std::string why;
  EXPECT_FALSE(shape::windowOutputSize(2, dilated, false, &why).has_value());
  EXPECT_EQ(why, "window of effective size 5 does not fit padded size 4");
  EXPECT_EQ(shape::convTransposeOutputSize(5, {3, 2, 1, 1, 1}, 1), 10);
}

TEST(ShapeMath, CheckedArithmeticRefusesOverflow) {
  const int64_t big = int64_t(1) << 40;
  EXPECT_EQ(shape::checkedAdd(kI64Max - 1, 1), kI64Max);
  EXPECT_FALSE(shape::checkedAdd(kI64Max, 1).has_value());
  EXPECT_FALSE(shape::checkedSub(kI64Min, 1).has_value());
  EXPECT_FALSE(shape::checkedMul(big, big).has_value());
  EXPECT_EQ(shape::checkedProduct({big, big, 0}), 0); // exact: empty whatever the other dims
  EXPECT_FALSE(shape::checkedProduct({big, big}).has_value());
  EXPECT_EQ(shape::strideExtent({0, 3, 4}), 12);
  EXPECT_FALSE(shape::strideExtent({0, big, big}).has_value()); // empty, but strides overflow
  EXPECT_EQ(shape::checkedToInt64(-0x1p63), kI64Min);
  EXPECT_FALSE(shape::checkedToInt64(0x1p63).has_value());
  EXPECT_FALSE(shape::checkedToInt64(std::nan("")).has_value());
}

TEST(ShapeMath, WindowSizesOfHostileAttributes) {
  // An error, never a wrapped size: pads, kernels, dilations and strides come from model files.
  std::string why;
  EXPECT_FALSE(shape::windowOutputSize(5, {2, 1, kI64Max, 1, 1}, false, &why).has_value());
  EXPECT_NE(why.find("overflows int64"), std::string::npos) << why;
  EXPECT_FALSE(shape::windowOutputSize(5, {kI64Max, 1, 0, 0, 2}, false).has_value());
  EXPECT_FALSE(shape::windowOutputSize(5, {1, 0, 0, 0, 1}, true).has_value()); // stride 0
  EXPECT_EQ(shape::windowOutputSize(kI64Max, {1, 1, 0, 0, 1}, true), kI64Max);
  EXPECT_EQ(shape::windowOutputSize(10, {1, kI64Max, 0, 0, 1}, true), 1);
  EXPECT_FALSE(shape::convTransposeOutputSize(3, {3, kI64Max, 0, 0, 1}, 0).has_value());
  EXPECT_FALSE(shape::convTransposeOutputSize(3, {3, 1, 0, 0, 1}, kI64Max).has_value());
  EXPECT_FALSE(shape::convTransposeOutputSize(3, {3, 1, kI64Min, 0, 1}, 0).has_value());
}

TEST(ShapeMath, SliceRangesClampAsOnnx) {
  auto len = [](int64_t dim, int64_t s, int64_t e, int64_t st) {
    return shape::sliceRange(dim, s, e, st).length;
  };
  EXPECT_EQ(len(10, -1, kI64Min, -1), 10); // everything reversed
  EXPECT_EQ(shape::sliceRange(10, -1, kI64Min, -1).start, 9);
  EXPECT_EQ(len(10, 8, 2, -2), 3);
  EXPECT_EQ(len(10, -100, 100, 1), 10);
  EXPECT_EQ(len(10, 5, 2, 1), 0);
  EXPECT_EQ(len(8, 0, 8, 3), 3);
  EXPECT_EQ(len(5, kI64Max, 0, kI64Min), 1); // a step that cannot be negated takes one element
  EXPECT_EQ(len(5, 0, kI64Max, kI64Max), 1); // no overflow in the length arithmetic
  EXPECT_EQ(len(0, 0, kI64Max, 1), 0);
  EXPECT_TRUE(shape::isFullSlice(0, kI64Max, 1));
  EXPECT_FALSE(shape::isFullSlice(0, 5, 1));
}

TEST(ResizeMath, CoordinatesAndTaps) {
  EXPECT_DOUBLE_EQ(resizeSourceCoordinate(CoordinateMode::HalfPixel, 0, 2, 4), -0.25);
  EXPECT_DOUBLE_EQ(resizeSourceCoordinate(CoordinateMode::AlignCorners, 3, 2, 2), 1.0 / 3 * 3);
  EXPECT_DOUBLE_EQ(resizeSourceCoordinate(CoordinateMode::Asymmetric, 3, 2, 4), 1.5);
  EXPECT_THROW(resizeSourceCoordinate(CoordinateMode::TfCropAndResize, 0, 1, 1),
               std::invalid_argument);
  ResizeParams linear;
  linear.mode = ResizeMode::Linear;
  linear.coordinateMode = CoordinateMode::Asymmetric;
  ResizeTaps t = resizeTaps(linear, 2, 4, 2.0);
  ASSERT_EQ(t.count, 2);
  // Output 1 maps to input 0.5: half of each neighbour.
  EXPECT_EQ(t.index[2], 0);
  EXPECT_EQ(t.index[3], 1);
  EXPECT_DOUBLE_EQ(t.weight[2], 0.5);
  EXPECT_DOUBLE_EQ(t.weight[3], 0.5);
  EXPECT_FALSE(t.identity);
  EXPECT_TRUE(resizeTaps(linear, 3, 3, 1.0).identity);
  // A tiny scale maps output 1 to 1e300: clamped to the edge, not converted out of range.
  ResizeTaps far = resizeTaps(linear, 4, 2, 1e-300);
  EXPECT_EQ(far.index[2], 3);
  EXPECT_EQ(far.index[3], 3);
  EXPECT_DOUBLE_EQ(resizeScale({}, 0, 4, 6), 1.5);
  EXPECT_DOUBLE_EQ(resizeScale({2.0, 3.0}, 1, 4, 6), 3.0);
}

} // namespace
