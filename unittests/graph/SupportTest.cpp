// DType names and half-precision conversions, Tensor basics and numpy broadcasting of dims.
#include "strata/graph/Type.h"
#include "strata/support/DType.h"
#include "strata/support/Tensor.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

using namespace strata;

namespace {

TEST(DType, NamesRoundTrip) {
  const DType all[] = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I8,
                       DType::I16, DType::I32, DType::I64,  DType::U8,  DType::U16,
                       DType::U32, DType::U64, DType::Bool};
  for (DType t : all) {
    auto parsed = parseDType(dtypeName(t));
    ASSERT_TRUE(parsed.has_value()) << dtypeName(t);
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_FALSE(parseDType("f8").has_value());
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_TRUE(isFloat(DType::BF16));
  EXPECT_FALSE(isFloat(DType::I32));
  EXPECT_TRUE(isInteger(DType::U8));
  EXPECT_FALSE(isInteger(DType::Bool));
  EXPECT_TRUE(isSigned(DType::F32));
  EXPECT_FALSE(isSigned(DType::U32));
}

TEST(DType, HalfRoundTripsEveryNonNaNValue) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    EXPECT_EQ(floatToHalf(f), h) << "half bits " << h;
  }
}

TEST(DType, HalfKnownValuesAndRounding) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
  // Ties go to even: 1 + 2^-11 is halfway between 1 and the next half.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // Overflow becomes infinity; the smallest subnormal survives.
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(halfToFloat(0xFC00)));
}

TEST(DType, BF16RoundTripsAndRounds) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = bf16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    EXPECT_EQ(floatToBf16(f), h) << "bf16 bits " << h;
  }
  EXPECT_EQ(floatToBf16(1.0f), 0x3F80);
  // Halfway between 0x3F80 and 0x3F81 rounds to even (0x3F80); above halfway rounds up.
  EXPECT_EQ(floatToBf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);
  EXPECT_EQ(floatToBf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);
  EXPECT_EQ(floatToBf16(std::bit_cast<float>(0x3F808001u)), 0x3F81);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Tensor, ShapesAndStrides) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({2, 0, 4}), 0);
  EXPECT_EQ(contiguousStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(shapeToString({2, 3}), "2x3");
  EXPECT_EQ(shapeToString({}), "");
}

TEST(Tensor, ElementAccessAndSharing) {
  Tensor t = Tensor::fromVector<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.numElements(), 6);
  EXPECT_EQ(t.byteSize(), 24u);
  EXPECT_DOUBLE_EQ(t.getDouble(4), 5.0);
  EXPECT_EQ(t.getInt(5), 6);

  Tensor view = t.reshaped({3, 2});
  EXPECT_EQ(view.shape(), (Shape{3, 2}));
  EXPECT_EQ(view.rawData(), t.rawData()) << "reshape shares the buffer";
  Tensor copy = t.clone();
  EXPECT_NE(copy.rawData(), t.rawData());
  EXPECT_TRUE(copy.identical(t));
  EXPECT_EQ(copy.contentHash(), t.contentHash());

  copy.setDouble(0, 42.0);
  EXPECT_DOUBLE_EQ(t.getDouble(0), 1.0) << "clone is deep";
  EXPECT_FALSE(copy == t);
  EXPECT_NE(copy.contentHash(), t.contentHash());
  EXPECT_FALSE(view.identical(t)) << "shape is part of identity";
}

TEST(Tensor, ScalarsAndConversions) {
  Tensor h = Tensor::scalar(DType::F16, 1.5);
  EXPECT_EQ(h.rank(), 0);
  EXPECT_EQ(h.numElements(), 1);
  EXPECT_EQ(*h.data<uint16_t>(), 0x3E00);
  EXPECT_DOUBLE_EQ(h.getDouble(0), 1.5);

  Tensor i = Tensor(DType::I64, {3});
  EXPECT_EQ(i.toIntVector(), (std::vector<int64_t>{0, 0, 0}));
  i.setInt(1, -7);
  EXPECT_EQ(i.toIntVector(), (std::vector<int64_t>{0, -7, 0}));
  Tensor b = Tensor::fromVector<uint8_t>(DType::Bool, {2}, {1, 0});
  EXPECT_EQ(b.toDoubleVector(), (std::vector<double>{1.0, 0.0}));
  EXPECT_FALSE(Tensor().valid());
}

std::string bcast(const std::vector<Dim> &a, const std::vector<Dim> &b) {
  std::string why;
  auto r = shape::broadcastShapes(a, b, &why);
  return r ? TensorType(DType::F32, *r).str() : "error: " + why;
}

TEST(Broadcast, NumpyRules) {
  EXPECT_EQ(bcast({2, 1, 3}, {4, 3}), "tensor<2x4x3xf32>");
  EXPECT_EQ(bcast({}, {5}), "tensor<5xf32>");
  EXPECT_EQ(bcast({1}, {0}), "tensor<0xf32>");
  EXPECT_EQ(bcast({2}, {3}), "error: cannot broadcast dimension 2 with 3");
}

TEST(Broadcast, SymbolicDims) {
  Dim b = Dim::sym("b"), c = Dim::sym("c");
  EXPECT_EQ(bcast({b, 3}, {1, 3}), "tensor<?b x3xf32>");
  EXPECT_EQ(bcast({b, 3}, {b, 1}), "tensor<?b x3xf32>");
  // A symbol against a size other than 1 takes the size (the symbol must equal it at run time).
  EXPECT_EQ(bcast({b}, {4}), "tensor<4xf32>");
  EXPECT_EQ(bcast({b}, {c}), "error: cannot broadcast dimension ?b with ?c");
}

} // namespace
