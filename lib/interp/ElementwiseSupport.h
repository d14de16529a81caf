// Internal helpers shared by the elementwise, cast and data-movement kernels: per-dtype storage
// and compute types, a dtype visitor, and strided row iteration over a multi-index (with numpy
// broadcasting expressed as zero strides).
#pragma once
#include "Kernels.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata::interp {

// Storage type of a dtype and the type its arithmetic is done in: f16/bf16 are computed in f32
// and rounded back on store; every other dtype computes in its own type.
template <DType D> struct ElemTraits;

#define STRATA_IDENTITY_TRAITS(E, T)                                                               \
  template <> struct ElemTraits<DType::E> {                                                        \
    using Storage = T;                                                                             \
    using Compute = T;                                                                             \
    static Compute load(Storage s) { return s; }                                                   \
    static Storage store(Compute c) { return c; }                                                  \
  };
STRATA_IDENTITY_TRAITS(F32, float)
STRATA_IDENTITY_TRAITS(F64, double)
STRATA_IDENTITY_TRAITS(I8, int8_t)
STRATA_IDENTITY_TRAITS(I16, int16_t)
STRATA_IDENTITY_TRAITS(I32, int32_t)
STRATA_IDENTITY_TRAITS(I64, int64_t)
STRATA_IDENTITY_TRAITS(U8, uint8_t)
STRATA_IDENTITY_TRAITS(U16, uint16_t)
STRATA_IDENTITY_TRAITS(U32, uint32_t)
STRATA_IDENTITY_TRAITS(U64, uint64_t)
STRATA_IDENTITY_TRAITS(Bool, bool)
#undef STRATA_IDENTITY_TRAITS

template <> struct ElemTraits<DType::F16> {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage s) { return halfToFloat(s); }
  static Storage store(Compute c) { return floatToHalf(c); }
};
template <> struct ElemTraits<DType::BF16> {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage s) { return bf16ToFloat(s); }
  static Storage store(Compute c) { return floatToBf16(c); }
};

template <DType D> struct DTypeTag {
  static constexpr DType value = D;
};

// Calls f(DTypeTag<dt>{}); every branch must return the same type.
template <typename F> decltype(auto) visitDType(DType dt, F &&f) {
  switch (dt) {
#define X(e, n, t, s)                                                                              \
  case DType::e:                                                                                   \
    return f(DTypeTag<DType::e>{});
    STRATA_DTYPES(X)
#undef X
  }
  throw InterpError("invalid dtype");
}

// Calls f(Word{}) with an unsigned integer type of `bytes` bytes: data movement only copies
// elements, so it needs their size, not their meaning.
template <typename F> decltype(auto) visitElemSize(size_t bytes, F &&f) {
  switch (bytes) {
  case 1:
    return f(uint8_t{});
  case 2:
    return f(uint16_t{});
  case 4:
    return f(uint32_t{});
  case 8:
    return f(uint64_t{});
  }
  throw InterpError("unsupported element size " + std::to_string(bytes));
}

inline std::string unsupportedDType(std::string_view what, DType dt) {
  return std::string(what) + ": unsupported dtype " + std::string(dtypeName(dt));
}

// An iteration space over a contiguous output: `dims` with, per operand, one element stride per
// dim (0 where the operand is broadcast; may be negative for reversed slices) and a base offset.
struct StridedPlan {
  Shape dims;
  std::vector<std::vector<int64_t>> strides;
  std::vector<int64_t> base;
};

// Drops size-1 dims and merges adjacent dims that every operand walks contiguously, so a
// same-shape or scalar-broadcast loop becomes one long row. Always leaves at least one dim.
void coalesce(StridedPlan &plan);

// Numpy broadcast of operand shapes into a plan (coalesced); `outShape` receives the result shape.
StridedPlan planBroadcast(const std::vector<const Shape *> &shapes, Shape &outShape);

// Visits the plan row by row along its innermost dim:
//   row(outOffset, const int64_t *operandOffsets, rowLength, const int64_t *operandRowStrides).
// Output offsets are those of a contiguous output. Does nothing when the space is empty.
template <typename RowFn> void forEachRow(const StridedPlan &plan, RowFn &&row) {
  const size_t rank = plan.dims.size();
  const size_t numOperands = plan.strides.size();
  for (int64_t d : plan.dims)
    if (d == 0)
      return;
  const int64_t inner = plan.dims[rank - 1];
  int64_t outer = 1;
  for (size_t d = 0; d + 1 < rank; ++d)
    outer *= plan.dims[d];
  std::vector<int64_t> index(rank, 0);
  std::vector<int64_t> offsets = plan.base;
  std::vector<int64_t> innerStrides(numOperands);
  for (size_t k = 0; k < numOperands; ++k)
    innerStrides[k] = plan.strides[k][rank - 1];
  for (int64_t o = 0; o < outer; ++o) {
    row(o * inner, offsets.data(), inner, innerStrides.data());
    // Odometer increment over the outer dims.
    for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
      for (size_t k = 0; k < numOperands; ++k)
        offsets[k] += plan.strides[k][d];
      if (++index[d] < plan.dims[d])
        break;
      for (size_t k = 0; k < numOperands; ++k)
        offsets[k] -= plan.strides[k][d] * plan.dims[d];
      index[d] = 0;
    }
  }
}

// Copies the elements a strided view of `src` selects into a new contiguous tensor of `outShape`.
// `strides` (elements, one per output dim, may be 0 or negative) and `base` locate the view.
Tensor stridedCopy(const Tensor &src, const Shape &outShape, int64_t base,
                   const std::vector<int64_t> &strides);

// Reads an index tensor (any integer dtype) as int64 values.
std::vector<int64_t> readIndices(const Tensor &t, std::string_view what);

} // namespace strata::interp
