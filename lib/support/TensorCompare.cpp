// Tensor comparison within a relative tolerance (see TensorCompare.h).
#include "strata/support/TensorCompare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace strata {

namespace {

// Floor of the tolerance scale, so an all-zero reference does not demand bit-exact results.
constexpr double kTinyScale = 1e-6;

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

} // namespace

std::optional<std::string> compareTensors(const Tensor &want, const Tensor &got, double tol) {
  if (got.dtype() != want.dtype())
    return "has dtype " + std::string(dtypeName(got.dtype())) + " instead of " +
           std::string(dtypeName(want.dtype()));
  if (got.shape() != want.shape())
    return "has shape [" + shapeToString(got.shape()) + "] instead of [" +
           shapeToString(want.shape()) + "]";
  int64_t n = want.numElements();
  if (!isFloat(want.dtype())) {
    for (int64_t e = 0; e < n; ++e)
      if (got.getInt(e) != want.getInt(e))
        return "differs at element " + std::to_string(e) + ": " + std::to_string(got.getInt(e)) +
               " instead of " + std::to_string(want.getInt(e));
    return std::nullopt;
  }
  double scale = 0, maxErr = 0;
  for (int64_t e = 0; e < n; ++e) {
    double w = want.getDouble(e);
    if (std::isfinite(w))
      scale = std::max(scale, std::fabs(w));
  }
  for (int64_t e = 0; e < n; ++e) {
    double w = want.getDouble(e), v = got.getDouble(e);
    if (std::isnan(w) != std::isnan(v))
      return "has NaN at different positions (element " + std::to_string(e) + ")";
    if (std::isnan(w))
      continue;
    if (std::isinf(w) || std::isinf(v)) {
      if (w != v)
        return "element " + std::to_string(e) + " is " + fmt(v) + " instead of " + fmt(w);
      continue;
    }
    maxErr = std::max(maxErr, std::fabs(w - v));
  }
  double allowed = tol * std::max(scale, kTinyScale);
  if (maxErr > allowed)
    return "max error " + fmt(maxErr) + " (tolerance " + fmt(allowed) + ")";
  return std::nullopt;
}

double maxAbsDiff(const Tensor &want, const Tensor &got) {
  if (!isFloat(want.dtype()) || want.dtype() != got.dtype() || want.shape() != got.shape())
    return 0;
  double m = 0;
  for (int64_t e = 0, n = want.numElements(); e < n; ++e) {
    double d = std::fabs(want.getDouble(e) - got.getDouble(e));
    if (std::isfinite(d))
      m = std::max(m, d);
  }
  return m;
}

} // namespace strata
