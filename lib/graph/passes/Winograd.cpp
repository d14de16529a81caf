// winograd: a blocked 3x3 conv with stride 1 becomes Winograd's F(m x m, 3 x 3) (graph/Winograd.h)
// where a cost model says that is faster:
//
//   v = winograd_input(x)        [N, t^2, tiles, C]   B^T d B of every t x t input tile
//   p = matmul(v, u)             [N, t^2, tiles, K]   u = G w G^T, [t^2, C, K], at compile time
//   y = winograd_output(p, bias) [N, K/c, OH, OW, c]  A^T p A of every tile, the conv's epilogue
//
// The t^2 products of one tile position are one matmul each (the register-tiled kernel), so the
// conv's 9 multiply-adds per output and channel pair become t^2 / m^2: 4 for m = 2, 2.25 for
// m = 4. What it costs: the transformed filter is t^2 / 9 times the weight (4x for m = 4),
// streamed once per run; the transforms move the tiles through memory twice; and a tile's
// outputs past the edge are computed and dropped. The cost model (below) weighs these against
// the direct conv's work per conv, in multiply-adds at the FMA peak.
//
// Only blocked convs (layout-nchwc's; the pass runs after it): f32, group 1, 3x3 kernel, stride
// and dilation 1, a constant weight, static channels. A symbolic batch, height or width is fine:
// the transforms' tile counts are then run-time extents, and the cost model weighs a symbolic
// size at its value for every input symbol at kNominalSize (a 224-pixel image: a conv deep in a
// net sees its own fraction of it, 7 x 7 after five halvings). The result is not bit-identical to the direct conv: m = 2's transforms are exact in
// f32 but the sums run in another order; m = 4's coefficients (up to 8, and thirds and fifteenths
// in the filter transform) cost a few ulps more. docs/passes.md records the error measured.
#include "strata/graph/Winograd.h"
#include "strata/graph/Builder.h"
#include "strata/graph/Layout.h"
#include "strata/graph/Ops.h"
#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"
#include "strata/graph/passes/Rewrite.h"

#include <algorithm>
#include <cstdio>

namespace strata {
namespace {

// What the cost model reads of a conv.
struct ConvSize {
  double n, c, k, h, w, outH, outW;
};

// Cost units: one f32 multiply-add at the FMA peak of the target's vectors. The constants are
// fit to resnet's 3x3 convs timed on an AVX-512 machine with 2 threads (strata bench --profile,
// direct against forced tiles; docs/passes.md, "winograd"): the direct micro-kernel runs at
// 76-90% of the peak; the batched matmul of the Winograd form at 70% with >= 128 rows per
// product down to 40% with 4; streaming a byte of weights costs ~5 multiply-adds (the peak over
// the bandwidth the transformed filters streamed at), and a byte the transforms read or write
// ~7 (they ran at 25-30 GB/s). Per byte, a target with narrower vectors does fewer
// multiply-adds in the same time: the byte costs scale with lanes / 16.
constexpr double kDirectEfficiency = 0.85;
constexpr int64_t kNominalSize = 224;
constexpr double kMacsPerWeightByte = 5;
constexpr double kMacsPerTransformByte = 7;

double gemmEfficiency(double rows) {
  // The matmul kernel's register tile has 4 rows; few rows per product leave the filter panel
  // reused less and the parallel loop short.
  return rows >= 128 ? 0.7 : rows >= 32 ? 0.6 : rows >= 16 ? 0.5 : 0.4;
}

double directCost(const ConvSize &s, double byteScale) {
  return s.n * s.outH * s.outW * s.c * s.k * 9 / kDirectEfficiency +
         9 * s.c * s.k * 4 * kMacsPerWeightByte * byteScale;
}

double winogradCost(const ConvSize &s, int64_t m, double byteScale) {
  const double t = static_cast<double>(m + 2);
  const double tiles = static_cast<double>(winograd::tilesAlong(static_cast<int64_t>(s.outH), m) *
                                           winograd::tilesAlong(static_cast<int64_t>(s.outW), m));
  const double gemm = t * t * s.n * tiles * s.c * s.k / gemmEfficiency(tiles);
  const double filter = t * t * s.c * s.k * 4 * kMacsPerWeightByte * byteScale;
  // The input transform reads the input and writes t^2 vectors per tile and channel; the output
  // transform reads as many and writes the output. (The matmul's own reads and writes of them
  // overlap its arithmetic.)
  const double moved =
      (t * t * s.n * tiles * (s.c + s.k) + s.n * (s.h * s.w * s.c + s.outH * s.outW * s.k)) * 4;
  return gemm + filter + moved * kMacsPerTransformByte * byteScale;
}

// The tile for `conv` (2 or 4), or 0 to keep it direct. `forced`: PassOptions::winogradTile.
int64_t chooseTile(const Op &conv, const PassOptions &opts, std::string &why) {
  const int64_t forced = opts.winogradTile;
  if (conv.kind() != OpKind::Conv || forced < 0)
    return 0;
  const ops::ConvOp attrs(conv);
  const int64_t block = attrs.layout();
  const TensorType &x = conv.operand(0)->type(), &y = conv.result(0)->type();
  const Tensor *w = constantValue(conv.operand(1));
  auto ones = [](const std::vector<int64_t> &v) {
    return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 1; });
  };
  if (!block || attrs.plain_input() || attrs.group() != 1 || x.dtype != DType::F32 ||
      x.rank() != 5 || !w || !w->valid() || w->rank() != 6 || w->shape()[2] != 3 ||
      w->shape()[3] != 3 || w->shape()[4] != block || !ones(attrs.strides()) ||
      !ones(attrs.dilations()))
    return 0;
  for (size_t d : {size_t{1}, size_t{4}})
    if (!x.dims[d].isStatic() || !y.dims[d].isStatic())
      return 0;
  // A symbolic height or width: pads within the 3x3 window's reach (winograd_input's rule).
  for (size_t d = 0; d < 4; ++d)
    if (!x.dims[2 + d % 2].isStatic() && (attrs.pads()[d] < 0 || attrs.pads()[d] > 2))
      return 0;
  if (conv.numOperands() > 2 && !constantValue(conv.operand(2)))
    return 0;
  // A spatial size as the cost model weighs it (a symbolic one at the nominal image size; one
  // that cannot be evaluated, or is not positive there, leaves the conv direct).
  auto nominal = [](const Dim &d) -> double {
    if (d.isStatic())
      return static_cast<double>(d.size);
    std::optional<int64_t> v =
        d.expr.evaluate([](const std::string &) { return std::optional<int64_t>(kNominalSize); });
    return v ? static_cast<double>(*v) : 0.0;
  };
  const ConvSize s{x.dims[0].isStatic() ? static_cast<double>(x.dims[0].size) : 1.0,
                   static_cast<double>(x.dims[1].size * block),
                   static_cast<double>(y.dims[1].size * block),
                   nominal(x.dims[2]),
                   nominal(x.dims[3]),
                   nominal(y.dims[2]),
                   nominal(y.dims[3])};
  if (s.n == 0 || s.c == 0 || s.k == 0 || s.outH < 1 || s.outW < 1)
    return 0;
  if (forced == 2 || forced == 4)
    return forced;
  const double byteScale = static_cast<double>(opts.vectorWidth) / 16;
  const double direct = directCost(s, byteScale), two = winogradCost(s, 2, byteScale),
               four = winogradCost(s, 4, byteScale);
  if (std::min(two, four) >= direct) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "kept direct: the cheaper Winograd form (tile %d) is estimated at %.2fx the "
                  "direct conv's time (transformed filter and transform traffic)",
                  two <= four ? 2 : 4, std::min(two, four) / direct);
    why = text;
    return 0;
  }
  return four <= two ? 4 : 2;
}

void rewriteConv(Graph &g, Op &conv, int64_t m) {
  const ops::ConvOp attrs(conv);
  const winograd::Transform &tr = *winograd::transformFor(m);
  const std::string layout = blockedLayoutName(attrs.layout());
  const TensorType &y = conv.result(0)->type();
  Builder b(g);
  b.setInsertBefore(&conv);
  b.setLocation(conv.location());
  Value *tiles = b.value(OpKind::WinogradInput, {conv.operand(0)},
                         AttrMap{{"tile", m}, {"pads", attrs.pads()}, {"layout", layout}});
  Tensor filter = winograd::transformFilter(unblockConvWeight(*constantValue(conv.operand(1))), tr);
  Value *products = b.value(OpKind::MatMul, {tiles, b.constant(std::move(filter))});
  std::vector<Value *> operands = {products};
  if (conv.numOperands() > 2)
    operands.push_back(conv.operand(2));
  Value *result = b.value(OpKind::WinogradOutput, operands,
                          AttrMap{{"tile", m},
                                  {"output_size", Attribute::dims({y.dims[2], y.dims[3]})},
                                  {"layout", layout}});
  if (!conv.result(0)->name().empty())
    result->setName(conv.result(0)->name());
  Op *weightDef = conv.operand(1)->definingOp();
  conv.result(0)->replaceAllUsesWith(result);
  g.eraseOp(&conv);
  if (weightDef && !weightDef->result(0)->hasUses() && !weightDef->result(0)->isGraphOutput())
    g.eraseOp(weightDef);
}

class WinogradPass : public Pass {
public:
  std::string_view name() const override { return "winograd"; }

  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    int64_t rewritten = 0;
    forEachGraph(g, [&](Graph &graph) {
      for (Op *op : graph.opList()) {
        std::string why;
        int64_t m = chooseTile(*op, ctx.options, why);
        if (!m) {
          if (!why.empty())
            ctx.remarks.push_back({"winograd", op->location(), why});
          continue;
        }
        rewriteConv(graph, *op, m);
        ctx.stats.add("winograd.tile" + std::to_string(m));
        ++rewritten;
      }
    });
    return rewritten > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createWinogradPass() { return std::make_unique<WinogradPass>(); }

} // namespace strata
