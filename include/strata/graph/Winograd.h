// Winograd's minimal filtering for 3x3 convolutions with stride 1: F(m x m, 3 x 3) computes an
// m x m output tile from a t x t input tile (t = m + 2) with t^2 multiplies per channel pair
// instead of 9 m^2, as Y = A^T [ (G g G^T) .* (B^T d B) ] A (Lavin and Gray, "Fast Algorithms
// for Convolutional Neural Networks", 2016). The matrices are built by the Toom-Cook
// construction from m + 1 interpolation points (and the point at infinity): m = 2 uses 0, 1, -1
// (coefficients exact in f32); m = 4 uses 0, -1, 1, 1/2, -2, which in f32 loses about half as
// much as the common 0, +-1, +-2 (their mean error on 64-channel sums, measured: 1.3e-6 against
// 2.5e-6 relative; the direct sum 0.2e-6; docs/passes.md, "winograd").
//
// The graph ops winograd_input / winograd_output (OpTable.def), the interpreter, the lowering and
// the winograd pass all read the matrices from here.
#pragma once
#include "strata/support/Tensor.h"

#include <cstdint>
#include <vector>

namespace strata::winograd {

struct Transform {
  int64_t m = 0; // output tile
  int64_t t = 0; // input tile, m + 2
  // Row-major: bt is t x t (B^T), g is t x 3, at is m x t (A^T).
  std::vector<double> bt, g, at;
  double btAt(int64_t i, int64_t j) const { return bt[i * t + j]; }
  double gAt(int64_t i, int64_t j) const { return g[i * 3 + j]; }
  double atAt(int64_t i, int64_t j) const { return at[i * t + j]; }
};

// The F(m, 3) transform of the m + 1 finite interpolation `points` (distinct).
Transform toomCook(const std::vector<double> &points);

// The transform for output tile m, or null when there is none (m other than 2 and 4).
const Transform *transformFor(int64_t m);

// Output tiles along a dim of `size` outputs: ceil(size / m).
inline int64_t tilesAlong(int64_t size, int64_t m) { return (size + m - 1) / m; }

// The transformed filter U of a plain f32 conv weight [O, I, 3, 3]: [t^2, I, O], element
// (a * t + b, i, o) = (G w[o, i] G^T)[a, b], computed in double and rounded once: the right
// operand of the batched matmul between the two transforms.
Tensor transformFilter(const Tensor &weight, const Transform &tr);

} // namespace strata::winograd
