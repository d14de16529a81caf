// Shape arithmetic that more than one rung needs, defined once: axis normalization, numpy
// broadcasting, sliding-window output sizes (conv, pool, conv_transpose) and ONNX Slice ranges.
// Type inference, the interpreter, lowering and batch lifting all call these. Header-only and
// free of graph types, so the runtime can evaluate the same formulas on bound sizes.
//
// broadcastShapes is generic over the dim type: int64_t (concrete sizes) or any type with a
// DimTraits specialization (the graph IR's Dim, a static size or a symbol: graph/Type.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::shape {

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
// it at run time (checked when symbols are bound). Two different symbols do not broadcast.
template <typename D>
std::optional<std::vector<D>> broadcastShapes(const std::vector<D> &a, const std::vector<D> &b,
                                              std::string *why = nullptr) {
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
// the window does not fit even once.
inline std::optional<int64_t> windowOutputSize(int64_t in, const WindowDim &w, bool ceilMode,
                                               std::string *why = nullptr) {
  int64_t padded = in + w.padBegin + w.padEnd;
  if (padded < w.effectiveKernel()) {
    if (why)
      *why = "window of effective size " + std::to_string(w.effectiveKernel()) +
             " does not fit padded size " + std::to_string(padded);
    return std::nullopt;
  }
  int64_t span = padded - w.effectiveKernel();
  if (!ceilMode)
    return span / w.stride + 1;
  int64_t out = (span + w.stride - 1) / w.stride + 1;
  if ((out - 1) * w.stride >= in + w.padBegin)
    --out;
  return out;
}

// conv_transpose: stride * (in - 1) + output_padding + effective kernel - both paddings (may be
// negative: the caller reports it).
inline int64_t convTransposeOutputSize(int64_t in, const WindowDim &w, int64_t outputPadding) {
  return w.stride * (in - 1) + outputPadding + w.effectiveKernel() - w.padBegin - w.padEnd;
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
