// resize: ONNX Resize (nearest | linear | cubic) as separable 1-D interpolations, one axis at a
// time from the innermost, computed in double like the ONNX reference implementation.
#include "Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::interp::structured {

namespace {

struct Tap {
  int64_t index; // input coordinate, already clamped into [0, in) (edge padding)
  double weight;
};

struct ResizeParams {
  std::string mode, coordinateMode, nearestMode;
  double cubicA = -0.75;
  bool excludeOutside = false;
};

// Maps an output coordinate to the (fractional) input coordinate.
double originalCoordinate(const Op &op, const std::string &mode, double x, double scale,
                          int64_t inSize) {
  double outWidth = scale * static_cast<double>(inSize);
  if (mode == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel")
    return outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (mode == "align_corners")
    return outWidth == 1 ? 0.0 : x * static_cast<double>(inSize - 1) / (outWidth - 1);
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "half_pixel_symmetric") {
    // Centers the (possibly fractional) scaled canvas on the integer output canvas.
    double adjustment = std::floor(outWidth) / outWidth;
    double offset = static_cast<double>(inSize) / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (mode == "tf_crop_and_resize")
    fail(op, "coordinate_transformation_mode tf_crop_and_resize (crop boxes) is not supported");
  fail(op, "unknown coordinate_transformation_mode '" + mode + "'");
}

// Interpolation weights for the neighbours left of and around x, given ratio in (0, 1].
std::vector<double> coefficients(const Op &op, const ResizeParams &p, double ratio) {
  if (p.mode == "nearest") {
    if (ratio == 1.0)
      return {0, 1};
    const std::string &m = p.nearestMode;
    if (m == "round_prefer_floor")
      return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (m == "round_prefer_ceil")
      return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (m == "floor")
      return {1, 0};
    if (m == "ceil")
      return {0, 1};
    fail(op, "unknown nearest_mode '" + m + "'");
  }
  if (p.mode == "linear")
    return {1 - ratio, ratio};
  if (p.mode == "cubic") {
    double a = p.cubicA, r = ratio, s = 1 - ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
  }
  fail(op, "unknown resize mode '" + p.mode + "' (expected nearest, linear or cubic)");
}

std::vector<std::vector<Tap>> tapsForAxis(const Op &op, const ResizeParams &p, int64_t inSize,
                                          int64_t outSize, double scale) {
  std::vector<std::vector<Tap>> taps(static_cast<size_t>(outSize));
  for (int64_t o = 0; o < outSize; ++o) {
    double xOri = originalCoordinate(op, p.coordinateMode, static_cast<double>(o), scale, inSize);
    // The neighbours are chosen so the one just left of xOri is `base`, with ratio in (0, 1]:
    // an integral xOri is treated as ratio 1 from its left neighbour.
    double floorX = std::floor(xOri);
    double ratio = xOri == floorX ? 1.0 : xOri - floorX;
    int64_t base = static_cast<int64_t>(floorX) - (xOri == floorX ? 1 : 0);
    std::vector<double> coeffs = coefficients(op, p, ratio);
    int64_t n = static_cast<int64_t>(coeffs.size());
    int64_t first = base - n / 2 + 1;
    if (p.excludeOutside) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        if (first + j < 0 || first + j >= inSize)
          coeffs[j] = 0;
        sum += coeffs[j];
      }
      for (double &c : coeffs)
        c /= sum;
    }
    for (int64_t j = 0; j < n; ++j)
      if (coeffs[j] != 0)
        taps[o].push_back({std::clamp<int64_t>(first + j, 0, inSize - 1), coeffs[j]});
  }
  return taps;
}

bool isIdentity(const std::vector<std::vector<Tap>> &taps, int64_t inSize) {
  if (static_cast<int64_t>(taps.size()) != inSize)
    return false;
  for (int64_t o = 0; o < inSize; ++o)
    if (taps[o].size() != 1 || taps[o][0].index != o || taps[o][0].weight != 1.0)
      return false;
  return true;
}

// One separable pass: resizes axis `axis` of `src` (shape `shape`) to taps.size().
std::vector<double> resizeAxis(const std::vector<double> &src, Shape &shape, int64_t axis,
                               const std::vector<std::vector<Tap>> &taps) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  int64_t inSize = shape[axis], outSize = static_cast<int64_t>(taps.size());
  std::vector<double> dst(static_cast<size_t>(outer * outSize * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t x = 0; x < outSize; ++x) {
      double *row = dst.data() + (o * outSize + x) * inner;
      for (const Tap &t : taps[x]) {
        const double *srcRow = src.data() + (o * inSize + t.index) * inner;
        for (int64_t i = 0; i < inner; ++i)
          row[i] += t.weight * srcRow[i];
      }
    }
  shape[axis] = outSize;
  return dst;
}

} // namespace

Tensors resizeKernel(const Op &op, const Tensors &operands) {
  const Tensor &x = operands[0];
  int64_t rank = x.rank();
  ResizeParams p;
  p.mode = op.stringAttr("mode", "nearest");
  p.coordinateMode = op.stringAttr("coordinate_transformation_mode", "half_pixel");
  p.nearestMode = op.stringAttr("nearest_mode", "round_prefer_floor");
  p.cubicA = op.floatAttr("cubic_coeff_a", -0.75);
  p.excludeOutside = op.intAttr("exclude_outside", 0) != 0;
  std::vector<int64_t> sizes = op.intsAttr("sizes");
  std::vector<double> scales = op.floatsAttr("scales");
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != rank)
    fail(op, "scales has " + std::to_string(scales.size()) + " entries for rank " +
                 std::to_string(rank));
  if (sizes.empty() && !scales.empty())
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(
          static_cast<int64_t>(std::floor(static_cast<double>(x.shape()[d]) * scales[d])));
  if (static_cast<int64_t>(sizes.size()) != rank)
    fail(op,
         "sizes has " + std::to_string(sizes.size()) + " entries for rank " + std::to_string(rank));
  if (x.dtype() == DType::Bool)
    fail(op, "bool input is not supported");

  Shape shape = x.shape();
  std::vector<double> data = x.toDoubleVector();
  for (int64_t d = rank - 1; d >= 0; --d) {
    int64_t inSize = shape[d], outSize = sizes[d];
    if (outSize < 0)
      fail(op, "negative output size " + std::to_string(outSize) + " for dim " + std::to_string(d));
    if (inSize == 0 && outSize > 0)
      fail(op,
           "cannot resize an empty dim " + std::to_string(d) + " to " + std::to_string(outSize));
    double scale =
        scales.empty() ? static_cast<double>(outSize) / static_cast<double>(inSize) : scales[d];
    if (outSize > 0 && !(scale > 0))
      fail(op, "scale for dim " + std::to_string(d) + " must be positive");
    std::vector<std::vector<Tap>> taps =
        outSize == 0 ? std::vector<std::vector<Tap>>() : tapsForAxis(op, p, inSize, outSize, scale);
    if (outSize != 0 && isIdentity(taps, inSize))
      continue;
    data = resizeAxis(data, shape, d, taps);
  }

  Tensor result(x.dtype(), shape);
  int64_t count = result.numElements();
  if (isFloat(x.dtype())) {
    for (int64_t i = 0; i < count; ++i)
      result.setDouble(i, data[i]);
  } else {
    // Integer outputs truncate like numpy's astype, clamped so the conversion stays defined.
    int bits = static_cast<int>(dtypeSize(x.dtype()) * 8) - (isSigned(x.dtype()) ? 1 : 0);
    double maxV = std::nextafter(std::ldexp(1.0, bits), 0.0);
    double minV = isSigned(x.dtype()) ? -std::ldexp(1.0, bits) : 0.0;
    for (int64_t i = 0; i < count; ++i) {
      double v = std::isnan(data[i]) ? 0.0 : std::trunc(std::clamp(data[i], minV, maxV));
      if (isSigned(x.dtype()))
        result.setInt(i, static_cast<int64_t>(v));
      else
        result.setInt(i, static_cast<int64_t>(static_cast<uint64_t>(v)));
    }
  }
  return {result};
}

} // namespace strata::interp::structured
