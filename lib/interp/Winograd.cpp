// winograd_input and winograd_output: the transforms of a Winograd F(m x m, 3 x 3) conv
// (graph/Winograd.h), computed in double from their definitions and rounded once: the reference
// the generated transforms are checked against.
#include "Kernels.h"

#include "strata/graph/Layout.h"
#include "strata/graph/Winograd.h"

namespace strata::interp::structured {

namespace {

const winograd::Transform &transformOf(const Op &op, int64_t m, const Tensor &x) {
  const winograd::Transform *tr = winograd::transformFor(m);
  if (!tr)
    fail(op, "tile " + std::to_string(m) + " has no Winograd transform (2 or 4)");
  if (x.dtype() != DType::F32)
    fail(op, "operand 0 must be f32, got " + std::string(dtypeName(x.dtype())));
  return *tr;
}

} // namespace

Tensors winogradInputKernel(const Op &op, const Tensors &operands) {
  const ops::WinogradInputOp attrs(op);
  const winograd::Transform &tr = transformOf(op, attrs.tile(), operands[0]);
  const int64_t block = attrs.layout();
  if (block && (operands[0].rank() != 5 || operands[0].shape().back() != block))
    fail(op, "operand 0 " + shapeText(operands[0].shape()) + " is not blocked by " +
                 std::to_string(block));
  const Tensor x = block ? unblockChannels(operands[0]) : operands[0];
  const std::vector<int64_t> &pads = attrs.pads();
  if (x.rank() != 4 || pads.size() != 4)
    fail(op, "expected [N, C, H, W] and four pads, got " + shapeText(x.shape()));
  const int64_t n = x.shape()[0], channels = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t t = tr.t, m = tr.m;
  int64_t outH = h + pads[0] + pads[2] - 2, outW = w + pads[1] + pads[3] - 2;
  // An output size of 0 (the conv's window wider than its padded input) has no tiles.
  if (outH < 0 || outW < 0 || pads[0] < 0 || pads[1] < 0 || pads[2] < 0 || pads[3] < 0)
    fail(op, "pads " + shapeText(pads) + " do not fit the input " + shapeText(x.shape()));
  const int64_t tilesH = winograd::tilesAlong(outH, m), tilesW = winograd::tilesAlong(outW, m);
  Tensor v(DType::F32, {n, t * t, tilesH * tilesW, channels});
  const float *src = static_cast<const float *>(x.rawData());
  float *dst = static_cast<float *>(v.rawData());
  const int64_t tiles = tilesH * tilesW;
  std::vector<double> d(static_cast<size_t>(t * t)), rows(static_cast<size_t>(t * t));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t th = 0; th < tilesH; ++th)
        for (int64_t tw = 0; tw < tilesW; ++tw) {
          for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j < t; ++j) {
              int64_t y = th * m - pads[0] + i, xx = tw * m - pads[1] + j;
              bool inside = y >= 0 && y < h && xx >= 0 && xx < w;
              d[i * t + j] = inside ? src[((b * channels + c) * h + y) * w + xx] : 0.0;
            }
          for (int64_t a = 0; a < t; ++a) // B^T d
            for (int64_t j = 0; j < t; ++j) {
              double sum = 0;
              for (int64_t i = 0; i < t; ++i)
                sum += tr.btAt(a, i) * d[i * t + j];
              rows[a * t + j] = sum;
            }
          for (int64_t a = 0; a < t; ++a) // (B^T d) B
            for (int64_t e = 0; e < t; ++e) {
              double sum = 0;
              for (int64_t j = 0; j < t; ++j)
                sum += rows[a * t + j] * tr.btAt(e, j);
              dst[((b * t * t + a * t + e) * tiles + th * tilesW + tw) * channels + c] =
                  static_cast<float>(sum);
            }
        }
  return {v};
}

Tensors winogradOutputKernel(const Op &op, const Tensors &operands) {
  const ops::WinogradOutputOp attrs(op);
  const Tensor &p = operands[0];
  const winograd::Transform &tr = transformOf(op, attrs.tile(), p);
  const std::vector<int64_t> size = boundSizes(attrs.output_size());
  const int64_t t = tr.t, m = tr.m;
  if (size.size() != 2 || size[0] < 0 || size[1] < 0 || p.rank() != 4)
    fail(op, "expected [N, t^2, tiles, K] and two output sizes, got " + shapeText(p.shape()));
  const int64_t outH = size[0], outW = size[1];
  const int64_t tilesH = winograd::tilesAlong(outH, m), tilesW = winograd::tilesAlong(outW, m);
  const int64_t n = p.shape()[0], k = p.shape()[3];
  if (p.shape()[1] != t * t || p.shape()[2] != tilesH * tilesW)
    fail(op, "operand 0 " + shapeText(p.shape()) + " does not hold " +
                 std::to_string(tilesH * tilesW) + " tiles of " + std::to_string(t * t));
  const float *bias = nullptr;
  if (operands.size() > 1) {
    if (operands[1].dtype() != DType::F32 || operands[1].shape() != Shape{k})
      fail(op, "bias must be f32 [" + std::to_string(k) + "]");
    bias = static_cast<const float *>(operands[1].rawData());
  }
  const int64_t block = attrs.layout();
  if (block && k % block != 0)
    fail(op, "channels " + std::to_string(k) + " do not fill blocks of " + std::to_string(block));
  Tensor y(DType::F32, {n, k, outH, outW});
  const float *src = static_cast<const float *>(p.rawData());
  float *dst = static_cast<float *>(y.rawData());
  const int64_t tiles = tilesH * tilesW;
  std::vector<double> rows(static_cast<size_t>(m * t));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < k; ++c)
      for (int64_t th = 0; th < tilesH; ++th)
        for (int64_t tw = 0; tw < tilesW; ++tw) {
          auto at = [&](int64_t a, int64_t e) {
            return static_cast<double>(
                src[((b * t * t + a * t + e) * tiles + th * tilesW + tw) * k + c]);
          };
          for (int64_t i = 0; i < m; ++i) // A^T P
            for (int64_t e = 0; e < t; ++e) {
              double sum = 0;
              for (int64_t a = 0; a < t; ++a)
                sum += tr.atAt(i, a) * at(a, e);
              rows[i * t + e] = sum;
            }
          for (int64_t i = 0; i < m; ++i) // (A^T P) A
            for (int64_t j = 0; j < m; ++j) {
              int64_t oy = th * m + i, ox = tw * m + j;
              if (oy >= outH || ox >= outW)
                continue;
              double sum = bias ? bias[c] : 0.0;
              for (int64_t e = 0; e < t; ++e)
                sum += rows[i * t + e] * tr.atAt(j, e);
              dst[((b * k + c) * outH + oy) * outW + ox] = static_cast<float>(sum);
            }
        }
  return {block ? blockChannels(y, block) : y};
}

} // namespace strata::interp::structured
