// Internal: the interpreter's per-op evaluation functions, one family per file.
// Each takes the op (for attributes) and concrete operand tensors, and returns the results.
// Kernels throw InterpError on bad runtime input (shape mismatch, index out of range, ...).
#pragma once
#include "strata/graph/Graph.h"
#include "strata/graph/Ops.h"
#include "strata/support/ShapeMath.h"
#include "strata/support/Tensor.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace strata::interp {

struct InterpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Tensors = std::vector<Tensor>;

// A shape as error messages print it: "[2, 3]".
inline std::string shapeText(const Shape &s) { return "[" + shapeToString(s) + "]"; }
using KernelFn = Tensors (*)(const Op &op, const Tensors &operands);

// The size of symbolic dim `d` (a symbol or formula in an attribute: a reshape's or resize's
// target) under the symbols the running graph -- or a graph enclosing it -- has bound from its
// inputs and results so far; throws InterpError naming the dim when a symbol is unbound.
int64_t boundSize(const Dim &d);
std::vector<int64_t> boundSizes(const std::vector<Dim> &dims);

// Registration: each family file fills the table slots of the kinds it implements.
// Elementwise.cpp: all T_ELEMENTWISE ops, select, cast, constant.
void registerElementwiseKernels(KernelFn *table);
// DataMovement.cpp: reshape, transpose, expand, slice, concat, pad, gather*, scatter*.
void registerDataMovementKernels(KernelFn *table);
// Structured.cpp / Conv.cpp / Reductions.cpp ...: matmul, conv, conv_transpose, pool, reduce,
// arg_reduce, softmax, log_softmax, layer_norm, cumsum, topk, resize, einsum.
void registerStructuredKernels(KernelFn *table);
// Relayout.cpp: relayout between plain and blocked channel layouts.
void registerLayoutKernels(KernelFn *table);

// Numpy broadcast of concrete shapes (shape::broadcastShapes); throws InterpError when
// incompatible.
Shape broadcastShapes(const Shape &a, const Shape &b);

// `axis` itself when it is in [0, rank) (the attributes' normal form), else InterpError naming
// `what`: a guard for graphs that never met the verifier.
int64_t checkedAxis(int64_t axis, int64_t rank, std::string_view what);

} // namespace strata::interp

// --- Helpers shared by the structured-kernel files (defined in Structured.cpp) ------------------
// Integer arithmetic that wraps instead of overflowing (computed in an unsigned type never
// narrower than unsigned int, so integer promotion cannot turn it back into signed int).
// Floats and bool pass through to the plain operators.
template <typename T> using WrapUnsigned =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T> constexpr bool kWraps = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T> T wrapAdd(T a, T b) {
  if constexpr (kWraps<T>)
    return static_cast<T>(static_cast<WrapUnsigned<T>>(a) + static_cast<WrapUnsigned<T>>(b));
  else
    return a + b;
}
template <typename T> T wrapSub(T a, T b) {
  if constexpr (kWraps<T>)
    return static_cast<T>(static_cast<WrapUnsigned<T>>(a) - static_cast<WrapUnsigned<T>>(b));
  else
    return a - b;
}
template <typename T> T wrapMul(T a, T b) {
  if constexpr (kWraps<T>)
    return static_cast<T>(static_cast<WrapUnsigned<T>>(a) * static_cast<WrapUnsigned<T>>(b));
  else
    return a * b;
}

namespace strata::interp::structured {

// Strict ordering "a comes before b" for values va, vb at indices ia, ib (topk; nms's score
// order). NaN counts as larger than every number (as numpy's sort places it last); ties go to
// the lower index.
template <typename T> bool comesFirst(T va, int64_t ia, T vb, int64_t ib, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    bool nanA = std::isnan(va), nanB = std::isnan(vb);
    if (nanA || nanB) {
      if (nanA && nanB)
        return ia < ib;
      return largest ? nanA : nanB;
    }
  }
  if (va != vb)
    return largest ? va > vb : va < vb;
  return ia < ib;
}

// Throws InterpError(msg) for `op` (the driver prefixes the op's name and location).
[[noreturn]] void fail(const Op &op, const std::string &msg);
// f16/bf16 tensors widened to f32 (other dtypes returned unchanged), and the rounding back.
Tensor widenHalf(const Tensor &t);
Tensor narrowFromF32(const Tensor &t, DType to);
// Offsets into a tensor of shape `src` for every element of `dst` (row-major) under numpy
// broadcasting of src to dst (src right-aligned); fails when src does not broadcast to dst.
std::vector<int64_t> broadcastOffsets(const Op &op, const Shape &src, const Shape &dst);

// Calls f(T{}) with the C++ storage type of `dt`. f16/bf16 must be widened first; `allowInts`
// false rejects integer and bool dtypes with a clear error.
template <typename F> decltype(auto) visitDType(const Op &op, DType dt, bool allowInts, F &&f) {
  if (!allowInts && !isFloat(dt))
    fail(op, "dtype " + std::string(dtypeName(dt)) + " is not supported (floating point only)");
  switch (dt) {
  case DType::F32: return f(float{});
  case DType::F64: return f(double{});
  case DType::I8: return f(int8_t{});
  case DType::I16: return f(int16_t{});
  case DType::I32: return f(int32_t{});
  case DType::I64: return f(int64_t{});
  case DType::U8: return f(uint8_t{});
  case DType::U16: return f(uint16_t{});
  case DType::U32: return f(uint32_t{});
  case DType::U64: return f(uint64_t{});
  case DType::Bool: return f(bool{});
  case DType::F16:
  case DType::BF16: break;
  }
  fail(op, "internal error: half-precision tensor reached a kernel unwidened");
}

// Kernels of the structured family (one file each, registered by registerStructuredKernels).
Tensors matMulKernel(const Op &op, const Tensors &operands);
Tensors convKernel(const Op &op, const Tensors &operands);
Tensors convTransposeKernel(const Op &op, const Tensors &operands);
Tensors poolKernel(const Op &op, const Tensors &operands);
Tensors reduceKernel(const Op &op, const Tensors &operands);
Tensors argReduceKernel(const Op &op, const Tensors &operands);
Tensors softmaxKernel(const Op &op, const Tensors &operands);
Tensors attentionKernel(const Op &op, const Tensors &operands); // Attention.cpp
Tensors logSoftmaxKernel(const Op &op, const Tensors &operands);
Tensors layerNormKernel(const Op &op, const Tensors &operands);
Tensors cumSumKernel(const Op &op, const Tensors &operands);
Tensors topKKernel(const Op &op, const Tensors &operands);
Tensors resizeKernel(const Op &op, const Tensors &operands);
Tensors einsumKernel(const Op &op, const Tensors &operands);
Tensors winogradInputKernel(const Op &op, const Tensors &operands);  // Winograd.cpp
Tensors winogradOutputKernel(const Op &op, const Tensors &operands);
Tensors roiAlignKernel(const Op &op, const Tensors &operands); // RoiAlign.cpp
Tensors nmsCountKernel(const Op &op, const Tensors &operands); // Nms.cpp
Tensors uniqueCountKernel(const Op &op, const Tensors &operands); // Unique.cpp
Tensors uniqueKernel(const Op &op, const Tensors &operands);
Tensors nmsKernel(const Op &op, const Tensors &operands);

// C += A * B for row-major A [m x k] (leading dim lda), B [k x n] (ldb), C [m x n] (ldc).
// Cache-blocked; shared by matmul, conv and conv_transpose.
template <typename T>
void gemmAccumulate(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b,
                    int64_t ldb, T *c, int64_t ldc);

} // namespace strata::interp::structured
