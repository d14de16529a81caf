// The vectorized f32 row normalizations (LowerRowVector.cpp) against the graph interpreter: rows
// of whole vectors, rows with scalar tails, rows shorter than the target's width (8 lanes), both
// vector widths, special values, scale/bias broadcasting; and a check that these shapes take the
// vector path in f32 while short rows and other axes keep the exact scalar lowerings.
#include "LowerTestUtil.h"

using namespace strata;
using namespace strata::lowertest;

namespace {

using I = std::vector<int64_t>;

lower::LowerOptions lanes(int64_t w) {
  lower::LowerOptions lo;
  lo.vectorLanesF32 = w;
  return lo;
}

// Values spread over [-120, 120), so that the max subtraction matters.
Tensor spread(Shape shape, bool specials = false) {
  Tensor x = randomTensor(DType::F32, shape, specials);
  for (int64_t e = 0; e < x.numElements(); ++e)
    x.setDouble(e, x.getDouble(e) * 30);
  return x;
}

TEST(RowVectorLower, SoftmaxAndLogSoftmaxRows) {
  for (int64_t w : {8, 16})
    for (OpKind k : {OpKind::Softmax, OpKind::LogSoftmax})
      for (const Shape &s : {Shape{3, 8}, Shape{2, 16}, Shape{4, 13}, Shape{2, 3, 37}, Shape{64},
                             Shape{2, 200}, Shape{1, 2, 769}}) {
        SCOPED_TRACE(std::string(opInfo(k).name) + " " + shapeToString(s) + " lanes " +
                     std::to_string(w));
        checkOp(k, {spread(s)}, {{"axis", int64_t{-1}}}, Cmp::MaxRel, 2e-6, lanes(w));
        checkOp(k, {randomTensor(DType::F32, s)}, {{"axis", int64_t(s.size()) - 1}}, Cmp::MaxRel,
                2e-6, lanes(w));
      }
}

TEST(RowVectorLower, SpecialValuesPropagate) {
  // NaN anywhere in a row, or +inf (inf - inf), makes the whole row NaN, as in the interpreter;
  // -inf entries give 0 (softmax) and -inf (log_softmax).
  for (OpKind k : {OpKind::Softmax, OpKind::LogSoftmax})
    for (int64_t w : {8, 16}) {
      checkOp(k, {randomTensor(DType::F32, {16, 35}, true)}, {{"axis", int64_t{1}}}, Cmp::MaxRel,
              2e-6, lanes(w));
      Tensor x = randomTensor(DType::F32, {3, 24});
      for (int64_t j = 0; j < 24; j += 5)
        x.setDouble(j, -INFINITY); // row 0: some -inf
      for (int64_t j = 24; j < 48; ++j)
        x.setDouble(j, -INFINITY); // row 1: all -inf
      checkOp(k, {x}, {{"axis", int64_t{1}}}, Cmp::MaxRel, 2e-6, lanes(w));
    }
}

TEST(RowVectorLower, LayerNormRowsScaleAndBias) {
  for (int64_t w : {8, 16})
    for (const Shape &s :
         {Shape{3, 8}, Shape{4, 13}, Shape{2, 3, 48}, Shape{5, 1, 1, 21}, Shape{2, 768}}) {
      SCOPED_TRACE(shapeToString(s) + " lanes " + std::to_string(w));
      int64_t n = s.back(), rank = static_cast<int64_t>(s.size());
      AttrMap last = {{"axis", rank - 1}, {"epsilon", 1e-5}};
      checkOp(OpKind::LayerNorm,
              {randomTensor(DType::F32, s), randomTensor(DType::F32, {n}),
               randomTensor(DType::F32, {n})},
              last, Cmp::MaxRel, 2e-6, lanes(w));
      // No bias; a scale of one value.
      checkOp(OpKind::LayerNorm, {randomTensor(DType::F32, s), randomTensor(DType::F32, {n})}, last,
              Cmp::MaxRel, 2e-6, lanes(w));
      checkOp(OpKind::LayerNorm,
              {randomTensor(DType::F32, s), randomTensor(DType::F32, {1}),
               randomTensor(DType::F32, {n})},
              last, Cmp::MaxRel, 2e-6, lanes(w));
    }
  // An axis above the last whose dims are ones normalizes the same rows.
  checkOp(OpKind::LayerNorm,
          {randomTensor(DType::F32, {5, 1, 1, 21}), randomTensor(DType::F32, {1, 1, 21}),
           randomTensor(DType::F32, {21})},
          {{"axis", int64_t{1}}, {"epsilon", 1e-3}}, Cmp::MaxRel, 2e-6, lanes(16));
  // Constant rows: variance 0, y = bias.
  Tensor flat(DType::F32, {2, 40});
  for (int64_t e = 0; e < 80; ++e)
    flat.setDouble(e, 3.25);
  checkOp(OpKind::LayerNorm, {flat, randomTensor(DType::F32, {40}), randomTensor(DType::F32, {40})},
          {{"axis", int64_t{1}}, {"epsilon", 1e-5}}, Cmp::MaxRel, 2e-6, lanes(16));
}

TEST(RowVectorLower, TakesTheVectorPathOnlyForF32LastAxisRows) {
  auto text = [](OpKind k, const Tensor &x, int64_t axis, int64_t w) {
    return loweredText(k, {x}, {{"axis", axis}}, lanes(w));
  };
  std::string wide = text(OpKind::Softmax, randomTensor(DType::F32, {4, 64}), 1, 16);
  EXPECT_NE(wide.find("ramp(0, 1, 16)"), std::string::npos) << wide;
  EXPECT_EQ(wide.find("f64"), std::string::npos) << wide;
  EXPECT_NE(wide.find("exp("), std::string::npos) << wide;
  // A row shorter than 16 but at least 8 uses 8 lanes.
  std::string narrow = text(OpKind::LogSoftmax, randomTensor(DType::F32, {4, 12}), 1, 16);
  EXPECT_NE(narrow.find("ramp(0, 1, 8)"), std::string::npos) << narrow;
  EXPECT_EQ(narrow.find("ramp(0, 1, 16)"), std::string::npos) << narrow;
  // Short rows, other axes and f64 keep the scalar lowerings (exact against the interpreter).
  EXPECT_NE(text(OpKind::Softmax, randomTensor(DType::F32, {4, 7}), 1, 16).find("f64"),
            std::string::npos);
  EXPECT_NE(text(OpKind::Softmax, randomTensor(DType::F32, {64, 4}), 0, 16).find("f64"),
            std::string::npos);
  EXPECT_EQ(text(OpKind::Softmax, randomTensor(DType::F64, {4, 64}), 1, 16).find("ramp"),
            std::string::npos);
  std::string ln = loweredText(OpKind::LayerNorm,
                               {randomTensor(DType::F32, {3, 768}), randomTensor(DType::F32, {768}),
                                randomTensor(DType::F32, {768})},
                               {{"axis", int64_t{1}}, {"epsilon", 1e-5}}, lanes(16));
  EXPECT_NE(ln.find("ramp(0, 1, 16)"), std::string::npos) << ln;
  EXPECT_EQ(ln.find("f64"), std::string::npos) << ln;
}

} // namespace
