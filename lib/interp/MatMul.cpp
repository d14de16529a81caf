// matmul (numpy semantics) and the blocked GEMM shared with conv / conv_transpose.
#include "Kernels.h"
#include "strata/graph/Layout.h"
#include "strata/graph/Ops.h"

#include <algorithm>

namespace strata::interp::structured {

namespace {

// Register tile: MR rows of A times NR columns of B, accumulated over kc in locals so the
// compiler keeps them in vector registers; loops have constant trip counts so they vectorize.
template <typename T, int MR, int NR>
inline void microKernel(int64_t kc, const T *a, int64_t lda, const T *b, int64_t ldb, T *c,
                        int64_t ldc) {
  T acc[MR][NR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const T *bRow = b + p * ldb;
    T bv[NR];
    for (int j = 0; j < NR; ++j)
      bv[j] = bRow[j];
    for (int i = 0; i < MR; ++i) {
      T av = a[i * lda + p];
      for (int j = 0; j < NR; ++j)
        acc[i][j] += av * bv[j];
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j)
      c[i * ldc + j] += acc[i][j];
}

// Edge tiles (fewer than MR rows or NR columns): plain i-k-j loops.
template <typename T>
void edgeKernel(int64_t mr, int64_t nr, int64_t kc, const T *a, int64_t lda, const T *b,
                int64_t ldb, T *c, int64_t ldc) {
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t p = 0; p < kc; ++p) {
      T av = a[i * lda + p];
      const T *bRow = b + p * ldb;
      T *cRow = c + i * ldc;
      for (int64_t j = 0; j < nr; ++j)
        cRow[j] += av * bRow[j];
    }
}

// Integer GEMM: wrapping arithmetic in the operand dtype (ONNX: accumulate in that dtype).
template <typename T>
void integerGemm(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb,
                 T *c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      T av = a[i * lda + p];
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = wrapAdd(c[i * ldc + j], wrapMul(av, b[p * ldb + j]));
    }
}

} // namespace

template <typename T>
void gemmAccumulate(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b,
                    int64_t ldb, T *c, int64_t ldc) {
  if constexpr (!std::is_floating_point_v<T>) {
    integerGemm(m, n, k, a, lda, b, ldb, c, ldc);
  } else {
    constexpr int MR = 4;
    constexpr int NR = sizeof(T) == 4 ? 16 : 8;
    // Blocking keeps a KC x NC panel of B in L2 while all rows of A stream over it.
    constexpr int64_t KC = 256, NC = 1024;
    for (int64_t j0 = 0; j0 < n; j0 += NC) {
      int64_t nc = std::min(NC, n - j0);
      for (int64_t p0 = 0; p0 < k; p0 += KC) {
        int64_t kc = std::min(KC, k - p0);
        for (int64_t i = 0; i < m; i += MR) {
          int64_t mr = std::min<int64_t>(MR, m - i);
          const T *aBlock = a + i * lda + p0;
          for (int64_t j = 0; j < nc; j += NR) {
            int64_t nr = std::min<int64_t>(NR, nc - j);
            const T *bBlock = b + p0 * ldb + j0 + j;
            T *cBlock = c + i * ldc + j0 + j;
            if (mr == MR && nr == NR)
              microKernel<T, MR, NR>(kc, aBlock, lda, bBlock, ldb, cBlock, ldc);
            else
              edgeKernel(mr, nr, kc, aBlock, lda, bBlock, ldb, cBlock, ldc);
          }
        }
      }
    }
  }
}

#define INSTANTIATE(T)                                                                             \
  template void gemmAccumulate<T>(int64_t, int64_t, int64_t, const T *, int64_t, const T *,        \
                                  int64_t, T *, int64_t);
INSTANTIATE(float)
INSTANTIATE(double)
INSTANTIATE(int8_t)
INSTANTIATE(int16_t)
INSTANTIATE(int32_t)
INSTANTIATE(int64_t)
INSTANTIATE(uint8_t)
INSTANTIATE(uint16_t)
INSTANTIATE(uint32_t)
INSTANTIATE(uint64_t)
#undef INSTANTIATE

Tensors matMulKernel(const Op &op, const Tensors &operands) {
  const Tensor &lhsIn = operands[0];
  // b in panels [N/p, K, p] (b_panel = p) means the plain [K, N] matrix.
  int64_t panel = ops::MatMulOp(op).b_panel();
  if (panel != 0 && (operands[1].rank() != 3 || operands[1].shape()[2] != panel))
    fail(op, "operand 1 of shape " + shapeToString(operands[1].shape()) + " is not in panels of " +
                 std::to_string(panel));
  const Tensor rhsIn = panel != 0 ? unpackMatMulPanels(operands[1]) : operands[1];
  if (lhsIn.dtype() != rhsIn.dtype())
    fail(op, "operand dtypes differ (" + std::string(dtypeName(lhsIn.dtype())) + " vs " +
                 std::string(dtypeName(rhsIn.dtype())) + ")");
  if (lhsIn.rank() == 0 || rhsIn.rank() == 0)
    fail(op, "operands must have rank >= 1");
  if (lhsIn.dtype() == DType::Bool)
    fail(op, "bool operands are not supported");
  DType dtype = lhsIn.dtype();
  Tensor lhs = widenHalf(lhsIn), rhs = widenHalf(rhsIn);

  // numpy promotion: a rank-1 lhs is a row [1, K], a rank-1 rhs a column [K, 1].
  Shape lhsShape = lhs.shape(), rhsShape = rhs.shape();
  bool lhsVector = lhsShape.size() == 1, rhsVector = rhsShape.size() == 1;
  if (lhsVector)
    lhsShape.insert(lhsShape.begin(), 1);
  if (rhsVector)
    rhsShape.push_back(1);
  int64_t m = lhsShape[lhsShape.size() - 2], k = lhsShape.back();
  int64_t rhsK = rhsShape[rhsShape.size() - 2], n = rhsShape.back();
  if (k != rhsK)
    fail(op, "contraction dims differ: " + shapeToString(lhs.shape()) + " x " +
                 shapeToString(rhs.shape()));

  Shape lhsBatch(lhsShape.begin(), lhsShape.end() - 2),
      rhsBatch(rhsShape.begin(), rhsShape.end() - 2);
  Shape batch = broadcastShapes(lhsBatch, rhsBatch);
  std::vector<int64_t> lhsOffsets = broadcastOffsets(op, lhsBatch, batch);
  std::vector<int64_t> rhsOffsets = broadcastOffsets(op, rhsBatch, batch);

  Shape resultShape = batch;
  if (!lhsVector)
    resultShape.push_back(m);
  if (!rhsVector)
    resultShape.push_back(n);
  Tensor bias;
  if (operands.size() > 2) {
    if (operands[2].dtype() != dtype)
      fail(op, "bias dtype " + std::string(dtypeName(operands[2].dtype())) +
                   " differs from the operands' " + std::string(dtypeName(dtype)));
    bias = widenHalf(operands[2]);
  }
  Tensor result(lhs.dtype(), resultShape);
  int64_t batchCount = numElements(batch);
  visitDType(op, lhs.dtype(), /*allowInts=*/true, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T *a = lhs.data<T>();
      const T *b = rhs.data<T>();
      T *c = result.data<T>();
      for (int64_t bi = 0; bi < batchCount; ++bi)
        gemmAccumulate<T>(m, n, k, a + lhsOffsets[bi] * m * k, k, b + rhsOffsets[bi] * k * n, n,
                          c + bi * m * n, n);
      // The bias goes on after accumulation (y = acc + bias), so matmul(a, b, bias) rounds
      // exactly like add(matmul(a, b), bias) and fusing the add is exact.
      if (bias.valid()) {
        std::vector<int64_t> biasOffsets = broadcastOffsets(op, bias.shape(), resultShape);
        const T *biasData = bias.data<T>();
        for (size_t e = 0; e < biasOffsets.size(); ++e)
          c[e] = wrapAdd(c[e], biasData[biasOffsets[e]]);
      }
    }
  });
  return {narrowFromF32(result, dtype)};
}

} // namespace strata::interp::structured
