// roi_align (ONNX RoiAlign), in f32 and in ONNX Runtime's order of operations (which
// lib/lower/LowerRoiAlign.cpp follows): per region, its start and bin sizes; per bin, a grid of
// bilinear samples, each the four corners' weighted values (a sample outside [-1, H] x [-1, W]
// weighs nothing), averaged or maxed. Where ONNX Runtime's arithmetic is undefined (NaN
// coordinates, absurd grids), a NaN coordinate samples at 0 and grids stop at 4096 per side.
#include "Kernels.h"

#include <algorithm>
#include <cmath>

namespace strata::interp::structured {

Tensors roiAlignKernel(const Op &op, const Tensors &operands) {
  const ops::RoiAlignOp attrs(op);
  const Tensor &x = operands[0], &rois = operands[1], &batch = operands[2];
  if (x.dtype() != DType::F32 || rois.dtype() != DType::F32 || batch.dtype() != DType::I64 ||
      x.rank() != 4 || rois.rank() != 2 || rois.shape()[1] != 4 || batch.rank() != 1 ||
      batch.shape()[0] != rois.shape()[0])
    fail(op, "expected f32 x [N, C, H, W], f32 rois [R, 4] and i64 batch_indices [R], got " +
                 shapeText(x.shape()) + ", " + shapeText(rois.shape()) + " and " +
                 shapeText(batch.shape()));
  const int64_t n = x.shape()[0], channels = x.shape()[1], height = x.shape()[2],
                width = x.shape()[3], regions = rois.shape()[0];
  const int64_t oh = attrs.output_height(), ow = attrs.output_width();
  const bool half = attrs.half_pixel(), max = attrs.mode() == "max";
  const float scale = static_cast<float>(attrs.spatial_scale()), offset = half ? 0.5f : 0.f;
  const float *data = static_cast<const float *>(x.rawData());
  const float *box = static_cast<const float *>(rois.rawData());
  Tensor out(DType::F32, {regions, channels, oh, ow});
  float *y = static_cast<float *>(out.rawData());
  for (int64_t r = 0; r < regions; ++r) {
    int64_t b = batch.getInt(r); // ONNX-style: negative counts from the end
    if (b < -n || b >= n)
      fail(op, "batch index " + std::to_string(b) + " of region " + std::to_string(r) +
                   " is out of range [" + std::to_string(-n) + ", " + std::to_string(n) + ")");
    b = b < 0 ? b + n : b;
    const float *roi = box + r * 4; // [x1, y1, x2, y2]
    const float startW = roi[0] * scale - offset, startH = roi[1] * scale - offset;
    const float endW = roi[2] * scale - offset, endH = roi[3] * scale - offset;
    float roiW = endW - startW, roiH = endH - startH;
    if (!half) {
      roiW = std::max(roiW, 1.f);
      roiH = std::max(roiH, 1.f);
    }
    const float binH = roiH / static_cast<float>(oh), binW = roiW / static_cast<float>(ow);
    const int64_t ratio = attrs.sampling_ratio();
    // ceil(side / bins), at most 4096 (NaN or negative: none).
    auto grid = [&](float side, int64_t bins) -> int64_t {
      if (ratio > 0)
        return ratio;
      const float v = std::ceil(side / static_cast<float>(bins));
      return static_cast<int64_t>(v > 0 ? std::min(v, 4096.f) : 0.f);
    };
    const int64_t gridH = grid(roiH, oh), gridW = grid(roiW, ow);
    const float count = static_cast<float>(std::max<int64_t>(gridH * gridW, 1));
    for (int64_t c = 0; c < channels; ++c) {
      const float *plane = data + (b * channels + c) * height * width;
      for (int64_t ph = 0; ph < oh; ++ph)
        for (int64_t pw = 0; pw < ow; ++pw) {
          float acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < (height > 0 && width > 0 ? gridH : 0); ++iy) {
            const float yy = startH + static_cast<float>(ph) * binH +
                             static_cast<float>(iy + .5f) * binH / static_cast<float>(gridH);
            for (int64_t ix = 0; ix < gridW; ++ix) {
              const float xx = startW + static_cast<float>(pw) * binW +
                               static_cast<float>(ix + .5f) * binW / static_cast<float>(gridW);
              float w1 = 0, w2 = 0, w3 = 0, w4 = 0;
              int64_t p1 = 0, p2 = 0, p3 = 0, p4 = 0;
              if (!(yy < -1.f || yy > static_cast<float>(height) || xx < -1.f ||
                    xx > static_cast<float>(width))) {
                float sy = yy > 0 ? yy : 0, sx = xx > 0 ? xx : 0; // NaN too: 0
                int64_t yLow = static_cast<int64_t>(sy), xLow = static_cast<int64_t>(sx), yHigh,
                        xHigh;
                if (yLow >= height - 1) {
                  yHigh = yLow = height - 1;
                  sy = static_cast<float>(yLow);
                } else {
                  yHigh = yLow + 1;
                }
                if (xLow >= width - 1) {
                  xHigh = xLow = width - 1;
                  sx = static_cast<float>(xLow);
                } else {
                  xHigh = xLow + 1;
                }
                const float ly = sy - static_cast<float>(yLow), lx = sx - static_cast<float>(xLow);
                const float hy = 1.f - ly, hx = 1.f - lx;
                w1 = hy * hx, w2 = hy * lx, w3 = ly * hx, w4 = ly * lx;
                p1 = yLow * width + xLow, p2 = yLow * width + xHigh;
                p3 = yHigh * width + xLow, p4 = yHigh * width + xHigh;
              }
              if (max) {
                const float v = std::max(std::max(std::max(w1 * plane[p1], w2 * plane[p2]),
                                                  w3 * plane[p3]),
                                         w4 * plane[p4]);
                acc = first ? v : std::max(acc, v);
                first = false;
              } else {
                acc += w1 * plane[p1] + w2 * plane[p2] + w3 * plane[p3] + w4 * plane[p4];
              }
            }
          }
          y[((r * channels + c) * oh + ph) * ow + pw] = max ? acc : acc / count;
        }
    }
  }
  return {out};
}

} // namespace strata::interp::structured
