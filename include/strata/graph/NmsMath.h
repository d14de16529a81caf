// ONNX NonMaxSuppression's overlap test, shared by the interpreter and the lowering's reference
// order of operations (graph op nms, OpTable.def).
#pragma once

#include <algorithm>

namespace strata::nms {

// Whether two boxes (4 floats each, as center_point_box says) overlap by an IoU above
// `threshold`: intersection over union of the axis-aligned boxes, degenerate ones never.
inline bool suppresses(const float *a, const float *b, bool centered, float threshold) {
  auto span = [&](const float *box, int lo, int hi, float &min, float &max) {
    if (centered) {
      min = box[lo] - box[hi] / 2; // lo: the center, hi: the extent
      max = box[lo] + box[hi] / 2;
    } else {
      min = std::min(box[lo], box[hi]);
      max = std::max(box[lo], box[hi]);
    }
  };
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  // Corners: [y1, x1, y2, x2]; centered: [xc, yc, w, h].
  span(a, centered ? 0 : 1, centered ? 2 : 3, ax0, ax1);
  span(a, centered ? 1 : 0, centered ? 3 : 2, ay0, ay1);
  span(b, centered ? 0 : 1, centered ? 2 : 3, bx0, bx1);
  span(b, centered ? 1 : 0, centered ? 3 : 2, by0, by1);
  const float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  const float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (ix1 <= ix0 || iy1 <= iy0)
    return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float areaA = (ax1 - ax0) * (ay1 - ay0), areaB = (bx1 - bx0) * (by1 - by0);
  const float uni = areaA + areaB - inter;
  if (inter <= 0 || areaA <= 0 || areaB <= 0 || uni <= 0)
    return false;
  return inter / uni > threshold;
}

} // namespace strata::nms
