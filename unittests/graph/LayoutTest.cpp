// Layout transforms: matmul column panels and the kernel tile they are sized by.
#include "strata/graph/Layout.h"

#include <gtest/gtest.h>

using namespace strata;

namespace {

Tensor iota(DType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, static_cast<double>(i));
  return t;
}

TEST(MatMulPanels, PackedElementIsPlainColumnOfItsPanel) {
  const int64_t k = 3, n = 24, panel = 8;
  Tensor plain = iota(DType::F32, {k, n});
  Tensor packed = packMatMulPanels(plain, panel);
  ASSERT_EQ(packed.shape(), (Shape{n / panel, k, panel}));
  for (int64_t j = 0; j < n / panel; ++j)
    for (int64_t r = 0; r < k; ++r)
      for (int64_t q = 0; q < panel; ++q)
        ASSERT_EQ(packed.getDouble((j * k + r) * panel + q), plain.getDouble(r * n + j * panel + q))
            << j << " " << r << " " << q;
  EXPECT_TRUE(unpackMatMulPanels(packed).identical(plain));
}

TEST(MatMulPanels, RoundTripAnyDTypeAndOnePanel) {
  for (DType dt : {DType::F64, DType::I8, DType::F16}) {
    Tensor plain = iota(dt, {5, 16});
    EXPECT_TRUE(unpackMatMulPanels(packMatMulPanels(plain, 16)).identical(plain));
    EXPECT_TRUE(unpackMatMulPanels(packMatMulPanels(plain, 4)).identical(plain));
  }
}

TEST(MatMulPanels, ColumnTileFromRegisters) {
  bool divides = false;
  // Four rows: (32 - 1) / 5 = 6 vectors with AVX-512, (16 - 1) / 5 = 3 with AVX2.
  EXPECT_EQ(matMulColumnVectors(192, 4, 32, &divides), 6);
  EXPECT_TRUE(divides);
  EXPECT_EQ(matMulColumnVectors(384, 4, 16, &divides), 3);
  EXPECT_TRUE(divides);
  // A GEMV row: at most 8; 125 vectors take the divisor 5.
  EXPECT_EQ(matMulColumnVectors(125, 1, 32, &divides), 5);
  EXPECT_TRUE(divides);
  // 13 vectors have no divisor near 6: balanced tiles of 5, the last clamped.
  EXPECT_EQ(matMulColumnVectors(13, 4, 32, &divides), 5);
  EXPECT_FALSE(divides);
  // Fewer vectors than the widest tile: one tile.
  EXPECT_EQ(matMulColumnVectors(2, 4, 32, &divides), 2);
  EXPECT_TRUE(divides);
}

} // namespace
