// Winograd transforms: the Toom-Cook matrices compute 3-tap correlations exactly (up to double
// rounding), in 1-D and through the filter transform in 2-D.
#include "strata/graph/Winograd.h"

#include <gtest/gtest.h>

#include <random>

using namespace strata;
using namespace strata::winograd;

namespace {

TEST(Winograd, TransformsComputeCorrelations) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t m : {2, 4}) {
    const Transform *tr = transformFor(m);
    ASSERT_NE(tr, nullptr);
    ASSERT_EQ(tr->t, m + 2);
    // y = A^T [(G g) .* (B^T d)] is the correlation of d with g.
    std::vector<double> d(tr->t), g(3);
    for (double &v : d)
      v = u(rng);
    for (double &v : g)
      v = u(rng);
    std::vector<double> product(tr->t);
    for (int64_t a = 0; a < tr->t; ++a) {
      double gg = 0, dd = 0;
      for (int64_t k = 0; k < 3; ++k)
        gg += tr->gAt(a, k) * g[k];
      for (int64_t i = 0; i < tr->t; ++i)
        dd += tr->btAt(a, i) * d[i];
      product[a] = gg * dd;
    }
    for (int64_t i = 0; i < m; ++i) {
      double y = 0, reference = 0;
      for (int64_t a = 0; a < tr->t; ++a)
        y += tr->atAt(i, a) * product[a];
      for (int64_t k = 0; k < 3; ++k)
        reference += d[i + k] * g[k];
      EXPECT_NEAR(y, reference, 1e-12) << "m = " << m << ", output " << i;
    }
  }
  EXPECT_EQ(transformFor(3), nullptr);
}

TEST(Winograd, FilterTransformIsGWGt) {
  const Transform &tr = *transformFor(2);
  Tensor w(DType::F32, {2, 1, 3, 3});
  for (int64_t i = 0; i < w.numElements(); ++i)
    w.setDouble(i, static_cast<double>(i % 7) - 3);
  Tensor u = transformFilter(w, tr);
  ASSERT_EQ(u.shape(), (Shape{16, 1, 2}));
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t a = 0; a < 4; ++a)
      for (int64_t b = 0; b < 4; ++b) {
        double sum = 0;
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 3; ++j)
            sum += tr.gAt(a, i) * w.getDouble(o * 9 + i * 3 + j) * tr.gAt(b, j);
        EXPECT_NEAR(u.getDouble((a * 4 + b) * 2 + o), sum, 1e-6);
      }
}

} // namespace
