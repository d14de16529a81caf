// Shape arithmetic that more than one rung needs, defined once: checked size arithmetic, axis
// normalization, numpy broadcasting, sliding-window output sizes (conv, pool, conv_transpose) and
// ONNX Slice ranges.
// Type inference, the interpreter, lowering and batch lifting all call these. Header-only and
// free of graph types, so the runtime can evaluate the same formulas on bound sizes.
//
// broadcastShapes is generic over the dim type: int64_t (concrete sizes) or any type with a
// DimTraits specialization (the graph IR's Dim, a static size or a symbol: graph/Type.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace strata::shape {

// Checked int64 arithmetic for sizes computed from dims and attributes, which a hostile model file
// controls: nullopt where the exact result does not fit (signed overflow is undefined behaviour).
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
inline std::optional<int64_t> checkedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

// The exact product of non-negative `sizes` (0 when any is 0); nullopt when it overflows int64.
inline std::optional<int64_t> checkedProduct(const std::vector<int64_t> &sizes) {
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end())
    return 0;
  int64_t n = 1;
  for (int64_t s : sizes) {
    std::optional<int64_t> m = checkedMul(n, s);
    if (!m)
      return std::nullopt;
    n = *m;
  }
  return n;
}

// The row-major extent of `dims`: their product with zeros counted as 1. Every stride and every
// element offset of a tensor of these dims stays below it, even for an empty tensor (whose other
// dims are not bounded by its element count); nullopt past int64.
inline std::optional<int64_t> strideExtent(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    std::optional<int64_t> m = checkedMul(n, std::max<int64_t>(d, 1));
    if (!m)
      return std::nullopt;
    n = *m;
  }
  return n;
}

// `v` (already rounded as the caller's formula says) as an int64 when it is finite and in range;
// nullopt otherwise, where the conversion would be undefined.
inline std::optional<int64_t> checkedToInt64(double v) {
  if (!(v >= -0x1p63 && v < 0x1p63)) // also false for NaN
    return std::nullopt;
  return static_cast<int64_t>(v);
}

// `axis` in [-rank, rank) as an index in [0, rank); nullopt when out of range.
inline std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

// What broadcasting needs of a dim type: whether it is a known size, and that size.
template <typename D> struct DimTraits;
template <> struct DimTraits<int64_t> {
  static bool isStatic(int64_t) { return true; }
  static int64_t size(int64_t d) { return d; }
  static std::string str(int64_t d) { return std::to_string(d); }
};

// Numpy broadcasting, dims aligned from the right, a missing or size-1 dim taking the other's.
// A symbolic dim against a different static size takes the static size: the symbol must equal
// it at run time (checked when symbols are bound). Two different symbols do not broadcast,
// unless `merge` gives the dim of their result (elementwise ops: a fresh symbol, since either
// may be 1 at run time).
template <typename D>
std::optional<std::vector<D>> broadcastShapes(const std::vector<D> &a, const std::vector<D> &b,
                                              std::string *why = nullptr,
                                              const std::function<D(const D &, const D &)> &merge = {}) {
  using T = DimTraits<D>;
  const size_t rank = std::max(a.size(), b.size());
  std::vector<D> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const D *da = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const D *db = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    auto isOne = [](const D &d) { return T::isStatic(d) && T::size(d) == 1; };
    if (!da || (db && isOne(*da)))
      out[i] = *db;
    else if (!db || *da == *db || isOne(*db))
      out[i] = *da;
    else if (T::isStatic(*da) != T::isStatic(*db))
      out[i] = T::isStatic(*da) ? *da : *db;
    else if (merge && !T::isStatic(*da))
      out[i] = merge(*da, *db);
    else {
      if (why)
        *why = "cannot broadcast dimension " + T::str(*da) + " with " + T::str(*db);
      return std::nullopt;
    }
  }
  return out;
}

// One spatial dim of a sliding window (conv, pool): kernel size, stride, padding on both sides
// and dilation.
struct WindowDim {
  int64_t kernel = 1, stride = 1, padBegin = 0, padEnd = 0, dilation = 1;
  int64_t effectiveKernel() const { return (kernel - 1) * dilation + 1; }
};

// Output size of a window over `in` elements (floor mode, or ceil mode where the last window must
// still start inside the input or the begin padding, as ONNX says); nullopt with the reason when
// the window does not fit even once, the stride is not positive, or the arithmetic would overflow
// int64 (kernel, pads and dilation come from the model file).
inline std::optional<int64_t> windowOutputSize(int64_t in, const WindowDim &w, bool ceilMode,
                                               std::string *why = nullptr) {
  auto refuse = [&](std::string reason) -> std::optional<int64_t> {
    if (why)
      *why = std::move(reason);
    return std::nullopt;
  };
  auto overflow = [&] {
    return refuse("window of kernel " + std::to_string(w.kernel) + ", dilation " +
                  std::to_string(w.dilation) + " and pads " + std::to_string(w.padBegin) + ", " +
                  std::to_string(w.padEnd) + " over " + std::to_string(in) +
                  " elements overflows int64");
  };
  if (w.stride < 1)
    return refuse("window stride " + std::to_string(w.stride) + " is not positive");
  std::optional<int64_t> start = checkedAdd(in, w.padBegin); // where the end padding begins
  std::optional<int64_t> padded = start ? checkedAdd(*start, w.padEnd) : std::nullopt;
  std::optional<int64_t> effective = checkedSub(w.kernel, 1);
  if (effective)
    effective = checkedMul(*effective, w.dilation);
  if (effective)
    effective = checkedAdd(*effective, 1);
  if (!padded || !effective)
    return overflow();
  if (*padded < *effective)
    return refuse("window of effective size " + std::to_string(*effective) +
                  " does not fit padded size " + std::to_string(*padded));
  std::optional<int64_t> span = checkedSub(*padded, *effective);
  if (!span)
    return overflow();
  // Windows after the first: floor(span / stride), or its ceiling in ceil mode.
  int64_t steps = *span / w.stride + (ceilMode && *span % w.stride != 0 ? 1 : 0);
  std::optional<int64_t> out = checkedAdd(steps, 1);
  if (!out)
    return overflow();
  if (ceilMode) {
    // A last start past int64 is past the input and the begin padding too.
    std::optional<int64_t> lastStart = checkedMul(steps, w.stride);
    if (!lastStart || *lastStart >= *start)
      --*out;
  }
  return out;
}

// conv_transpose: stride * (in - 1) + output_padding + effective kernel - both paddings (may be
// negative: the caller reports it); nullopt when that overflows int64 (every term but `in` comes
// from the model file).
inline std::optional<int64_t> convTransposeOutputSize(int64_t in, const WindowDim &w,
                                                      int64_t outputPadding) {
  std::optional<int64_t> size = checkedSub(in, 1), taps = checkedSub(w.kernel, 1);
  if (size)
    size = checkedMul(*size, w.stride);
  if (taps)
    taps = checkedMul(*taps, w.dilation);
  if (!size || !taps)
    return std::nullopt;
  for (int64_t term : {outputPadding, *taps, int64_t{1}})
    if (!(size = checkedAdd(*size, term)))
      return std::nullopt;
  for (int64_t pad : {w.padBegin, w.padEnd})
    if (!(size = checkedSub(*size, pad)))
      return std::nullopt;
  return size;
}

// The elements one dim of an ONNX Slice keeps: `length` elements from `start` (in [0, dim)) in
// steps of `step`. Negative start/end count from the end; both are clamped as ONNX specifies
// (to [0, dim] for positive steps, [-1, dim - 1] for negative ones).
struct SliceRange {
  int64_t start = 0, length = 0, step = 1;
};

inline SliceRange sliceRange(int64_t dim, int64_t start, int64_t end, int64_t step) {
  SliceRange r;
  r.step = step;
  if (dim <= 0 || step == 0)
    return r;
  if (start < 0)
    start += dim; // cannot overflow: start < 0 <= dim
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.length = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    // INT64_MIN cannot be negated; such a step takes at most one element either way.
    const int64_t stride = step == INT64_MIN ? INT64_MAX : -step;
    r.length = start > end ? (start - end - 1) / stride + 1 : 0;
  }
  r.start = r.length > 0 ? start : 0;
  return r;
}

// The full-range entry of a slice dim: keeps every element (start 0, end INT64_MAX, step 1).
inline bool isFullSlice(int64_t start, int64_t end, int64_t step) {
  return start == 0 && end == INT64_MAX && step == 1;
}

} // namespace strata::shape
