// Differential tests of resize lowering (LowerResize.cpp): the same taps and f64 order as the
// interpreter, so results compare exactly.
#include "LowerTestUtil.h"

using namespace strata;
using namespace strata::lowertest;

namespace {

using I = std::vector<int64_t>;
using F = std::vector<double>;

AttrMap resizeAttrs(I sizes, F scales, const char *mode, const char *coord, const char *nearest,
                    double a = -0.75, int64_t exclude = 0) {
  return {{"sizes", sizes}, {"scales", scales}, {"mode", mode},
          {"coordinate_transformation_mode", coord}, {"nearest_mode", nearest},
          {"cubic_coeff_a", a}, {"exclude_outside", exclude}, {"extrapolation_value", 0.0}};
}

TEST(LowerResize, ModesAndCoordinateTransforms) {
  Tensor x = randomTensor(DType::F32, {1, 2, 4, 5});
  for (const char *mode : {"nearest", "linear", "cubic"})
    for (const char *coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                              "half_pixel_symmetric"}) {
      SCOPED_TRACE(std::string(mode) + " " + coord);
      checkOp(OpKind::Resize, {x}, resizeAttrs({1, 2, 7, 3}, {}, mode, coord, "round_prefer_floor"));
      checkOp(OpKind::Resize, {x}, resizeAttrs({1, 2, 8, 7}, {1, 1, 2, 1.5}, mode, coord, "round_prefer_ceil"));
    }
  for (const char *nearest : {"floor", "ceil", "round_prefer_floor", "round_prefer_ceil"})
    checkOp(OpKind::Resize, {x}, resizeAttrs({1, 2, 9, 2}, {}, "nearest", "asymmetric", nearest));
  checkOp(OpKind::Resize, {x}, resizeAttrs({1, 2, 6, 8}, {}, "cubic", "half_pixel", "floor", -0.5, 1));
}

TEST(LowerResize, IntegersSpecialsAndIdentity) {
  checkOp(OpKind::Resize, {randomTensor(DType::F32, {2, 3, 4}, true)},
          resizeAttrs({2, 5, 3}, {}, "linear", "half_pixel", "floor"));
  checkOp(OpKind::Resize, {randomTensor(DType::I32, {1, 3, 4}, true)},
          resizeAttrs({1, 5, 7}, {}, "cubic", "align_corners", "floor"));
  checkOp(OpKind::Resize, {randomTensor(DType::U8, {3, 4})},
          resizeAttrs({6, 8}, {}, "linear", "asymmetric", "floor"));
  checkOp(OpKind::Resize, {randomTensor(DType::F64, {3, 4})},
          resizeAttrs({3, 4}, {}, "nearest", "asymmetric", "floor"));
  checkOp(OpKind::Resize, {randomTensor(DType::F32, {3, 4})},
          resizeAttrs({3, 0}, {}, "linear", "asymmetric", "floor"));
}

} // namespace
