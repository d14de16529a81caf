// The Winograd F(2x2, 3x3) and F(4x4, 3x3) transform matrices (Toom-Cook) and the filter
// transform.
#include "strata/graph/Winograd.h"

#include <cassert>
#include <cmath>

namespace strata::winograd {
namespace {

// The coefficients of prod (x - r) over `roots`, lowest degree first.
std::vector<double> polynomialOfRoots(const std::vector<double> &roots) {
  std::vector<double> c = {1};
  for (double r : roots) {
    std::vector<double> next(c.size() + 1, 0.0);
    for (size_t i = 0; i < c.size(); ++i) {
      next[i + 1] += c[i];
      next[i] -= r * c[i];
    }
    c = std::move(next);
  }
  return c;
}

} // namespace

Transform toomCook(const std::vector<double> &points) {
  // With finite points a_j and infinity, the product of a degree-(m-1) and a degree-2 polynomial
  // is evaluated at every point (G for the filter, B^T for the data: row j holds the Lagrange
  // numerator prod_{l != j} (x - a_l), the last row M(x) = prod_l (x - a_l) for infinity) and
  // interpolated back (A^T: powers of the points). The denominators prod (a_j - a_l) go to G.
  const int64_t finite = static_cast<int64_t>(points.size());
  Transform tr;
  tr.m = finite - 1;
  tr.t = finite + 1;
  const int64_t m = tr.m, t = tr.t;
  tr.at.assign(static_cast<size_t>(m * t), 0.0);
  tr.g.assign(static_cast<size_t>(t * 3), 0.0);
  tr.bt.assign(static_cast<size_t>(t * t), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < finite; ++j)
      tr.at[i * t + j] = std::pow(points[j], static_cast<double>(i));
    tr.at[i * t + t - 1] = i == m - 1 ? 1.0 : 0.0;
  }
  for (int64_t j = 0; j < finite; ++j) {
    double denominator = 1;
    std::vector<double> others;
    for (int64_t l = 0; l < finite; ++l)
      if (l != j) {
        denominator *= points[j] - points[l];
        others.push_back(points[l]);
      }
    for (int64_t k = 0; k < 3; ++k)
      tr.g[j * 3 + k] = std::pow(points[j], static_cast<double>(k)) / denominator;
    std::vector<double> numerator = polynomialOfRoots(others);
    for (size_t k = 0; k < numerator.size(); ++k)
      tr.bt[j * t + static_cast<int64_t>(k)] = numerator[k];
  }
  tr.g[(t - 1) * 3 + 2] = 1.0;
  std::vector<double> all = polynomialOfRoots(points);
  for (size_t k = 0; k < all.size(); ++k)
    tr.bt[(t - 1) * t + static_cast<int64_t>(k)] = all[k];
  return tr;
}

const Transform *transformFor(int64_t m) {
  static const Transform f2 = toomCook({0, 1, -1});
  static const Transform f4 = toomCook({0, -1, 1, 0.5, -2});
  return m == 2 ? &f2 : m == 4 ? &f4 : nullptr;
}

Tensor transformFilter(const Tensor &weight, const Transform &tr) {
  const Shape &s = weight.shape();
  assert(weight.dtype() == DType::F32 && s.size() == 4 && s[2] == 3 && s[3] == 3);
  const int64_t outs = s[0], ins = s[1], t = tr.t;
  Tensor u(DType::F32, {t * t, ins, outs});
  const float *w = static_cast<const float *>(weight.rawData());
  float *dst = static_cast<float *>(u.rawData());
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t i = 0; i < ins; ++i) {
      const float *g = w + (o * ins + i) * 9;
      double gw[16 * 3]; // G g: t x 3
      for (int64_t a = 0; a < t; ++a)
        for (int64_t c = 0; c < 3; ++c) {
          double sum = 0;
          for (int64_t k = 0; k < 3; ++k)
            sum += tr.gAt(a, k) * g[k * 3 + c];
          gw[a * 3 + c] = sum;
        }
      for (int64_t a = 0; a < t; ++a)
        for (int64_t b = 0; b < t; ++b) {
          double sum = 0;
          for (int64_t c = 0; c < 3; ++c)
            sum += gw[a * 3 + c] * tr.gAt(b, c);
          dst[((a * t + b) * ins + i) * outs + o] = static_cast<float>(sum);
        }
    }
  return u;
}

} // namespace strata::winograd
