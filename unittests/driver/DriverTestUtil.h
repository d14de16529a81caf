// Test helpers shared by the driver tests.
#pragma once
#include "strata/support/Tensor.h"

#include <random>

namespace strata::driver::testing {

// An f32 tensor of `shape` with values uniform in [-1, 1), the same for the same seed.
inline Tensor randomTensor(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, dist(rng));
  return t;
}

} // namespace strata::driver::testing
