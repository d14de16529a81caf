// ONNX Resize coordinate transforms and interpolation weights (ResizeMath.h).
#include "strata/graph/ResizeMath.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace strata {

ResizeParams ResizeParams::of(const ops::ResizeOp &op) {
  ResizeParams p;
  p.mode = op.mode();
  p.coordinateMode = op.coordinate_transformation_mode();
  p.nearestMode = op.nearest_mode();
  p.cubicA = op.cubic_coeff_a();
  p.excludeOutside = op.exclude_outside();
  return p;
}

double resizeSourceCoordinate(CoordinateMode mode, double x, double scale, int64_t inSize) {
  double outWidth = scale * static_cast<double>(inSize);
  switch (mode) {
  case CoordinateMode::HalfPixel:
    return (x + 0.5) / scale - 0.5;
  case CoordinateMode::PytorchHalfPixel:
    return outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  case CoordinateMode::AlignCorners:
    return outWidth == 1 ? 0.0 : x * static_cast<double>(inSize - 1) / (outWidth - 1);
  case CoordinateMode::Asymmetric:
    return x / scale;
  case CoordinateMode::HalfPixelSymmetric: {
    // Centers the (possibly fractional) scaled canvas on the integer output canvas.
    double adjustment = std::floor(outWidth) / outWidth;
    double offset = static_cast<double>(inSize) / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  case CoordinateMode::TfCropAndResize:
    break;
  }
  throw std::invalid_argument(
      "coordinate_transformation_mode tf_crop_and_resize (crop boxes) is not supported");
}

std::optional<int64_t> resizedSize(int64_t inSize, double scale) {
  double out = std::floor(static_cast<double>(inSize) * scale);
  if (!(out >= 0) || out > double(int64_t(1) << 31)) // also before the conversion: UB past int64
    return std::nullopt;
  return static_cast<int64_t>(out);
}

std::optional<SymExpr> resizedSize(const SymExpr &inSize, double scale) {
  if (!(scale > 0) || scale > double(int64_t(1) << 20))
    return std::nullopt;
  if (scale == std::floor(scale)) // floor(in * k) = k * in
    return inSize * SymExpr(static_cast<int64_t>(scale));
  double inverse = 1 / scale;
  // 1 / 2^j is exact in binary: floor(in * 2^-j) = floor(in / 2^j).
  if (inverse == std::floor(inverse) && inverse <= double(int64_t(1) << 20) &&
      (static_cast<int64_t>(inverse) & (static_cast<int64_t>(inverse) - 1)) == 0)
    return SymExpr::floorDiv(inSize, SymExpr(static_cast<int64_t>(inverse)));
  return std::nullopt;
}

double resizeScale(const std::vector<double> &scales, int64_t d, int64_t inSize, int64_t outSize) {
  return scales.empty() ? static_cast<double>(outSize) / static_cast<double>(inSize)
                        : scales[static_cast<size_t>(d)];
}

namespace {

// Interpolation weights of the neighbours left of and around x, given ratio in (0, 1].
std::vector<double> coefficients(const ResizeParams &p, double ratio) {
  switch (p.mode) {
  case ResizeMode::Nearest:
    if (ratio == 1.0)
      return {0, 1};
    switch (p.nearestMode) {
    case NearestMode::RoundPreferFloor:
      return {double(ratio <= 0.5), double(ratio > 0.5)};
    case NearestMode::RoundPreferCeil:
      return {double(ratio < 0.5), double(ratio >= 0.5)};
    case NearestMode::Floor:
      return {1, 0};
    case NearestMode::Ceil:
      return {0, 1};
    }
    break;
  case ResizeMode::Linear:
    return {1 - ratio, ratio};
  case ResizeMode::Cubic: {
    double a = p.cubicA, r = ratio, s = 1 - ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
  }
  }
  return {0, 1};
}

} // namespace

ResizeTaps resizeTaps(const ResizeParams &p, int64_t inSize, int64_t outSize, double scale) {
  ResizeTaps t;
  for (int64_t o = 0; o < outSize; ++o) {
    double xOri = resizeSourceCoordinate(p.coordinateMode, static_cast<double>(o), scale, inSize);
    // A tiny scale sends xOri far outside (even to inf), where converting floor(xOri) to int64
    // would be undefined. Every tap of a coordinate beyond [-8, inSize + 8] clamps to the same
    // edge element, so clamping the coordinate there keeps the taps' indices; NaN reads element 0.
    xOri = std::isnan(xOri) ? 0.0 : std::clamp(xOri, -8.0, static_cast<double>(inSize) + 8.0);
    // The neighbours are chosen so the one just left of xOri is `base`, with ratio in (0, 1]:
    // an integral xOri is treated as ratio 1 from its left neighbour.
    double floorX = std::floor(xOri);
    double ratio = xOri == floorX ? 1.0 : xOri - floorX;
    int64_t base = static_cast<int64_t>(floorX) - (xOri == floorX ? 1 : 0);
    std::vector<double> coeffs = coefficients(p, ratio);
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
    t.count = n;
    int nonZero = 0;
    for (int64_t j = 0; j < n; ++j) {
      int64_t idx = std::clamp<int64_t>(first + j, 0, inSize - 1);
      t.index.push_back(idx);
      t.weight.push_back(coeffs[j]);
      if (coeffs[j] != 0) {
        ++nonZero;
        if (idx != o || coeffs[j] != 1.0)
          t.identity = false;
      }
    }
    if (nonZero != 1)
      t.identity = false;
  }
  if (outSize != inSize)
    t.identity = false;
  return t;
}

} // namespace strata
