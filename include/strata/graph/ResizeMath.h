// ONNX Resize's coordinate mapping and interpolation taps, defined once for the interpreter and
// the lowering (which precomputes the same taps as constant tables). Separable: each axis maps
// output coordinate o to taps (input index, weight) computed in double, like the ONNX reference.
#pragma once
#include "strata/graph/Ops.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace strata {

struct ResizeParams {
  ResizeMode mode = ResizeMode::Nearest;
  CoordinateMode coordinateMode = CoordinateMode::HalfPixel;
  NearestMode nearestMode = NearestMode::RoundPreferFloor;
  double cubicA = -0.75;
  bool excludeOutside = false;
  static ResizeParams of(const ops::ResizeOp &op);
};

// The input coordinate (fractional) that output coordinate `x` maps to, for an axis of `inSize`
// elements resized by `scale`. tf_crop_and_resize (crop boxes) has no mapping here: an error.
double resizeSourceCoordinate(CoordinateMode mode, double x, double scale, int64_t inSize);

// The output size of an axis of `inSize` resized by `scale` (ONNX: floor(in * scale)); nullopt
// past 2^31 (an absurd scale from a model file). For a symbolic size, the formula when it is
// exact (an integral scale k: k * in; 1 / 2^j: in / 2^j rounded down), nullopt otherwise. The
// `sizes` attribute holds -1 for such an axis.
std::optional<int64_t> resizedSize(int64_t inSize, double scale);
std::optional<SymExpr> resizedSize(const SymExpr &inSize, double scale);

// The scale of axis `d`: scales[d] when given, else out / in.
double resizeScale(const std::vector<double> &scales, int64_t d, int64_t inSize, int64_t outSize);

// Taps of one axis: per output position `count` (input index clamped into [0, inSize), weight)
// pairs; zero weights are kept so every position has the same count. `identity` when the axis
// maps every output position to the same input element with weight 1 (nothing to compute).
struct ResizeTaps {
  int64_t count = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;
  bool identity = true;
};
ResizeTaps resizeTaps(const ResizeParams &p, int64_t inSize, int64_t outSize, double scale);

} // namespace strata
