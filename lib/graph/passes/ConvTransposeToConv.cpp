// conv-transpose-to-conv: a transposed convolution with stride 1 is a plain convolution of the
// same input with the weight flipped in every spatial dim and its two channel dims swapped per
// group, padded by dilation * (k - 1) - pad on each side (plus the output padding at the end):
//   y[n, g*Og + o, p] = sum_{c, t} x[n, g*Cg + c, p + pb - d*t] W[g*Cg + c, o, t]
//                     = sum_{c, t'} xpad[n, g*Cg + c, p + d*t'] W[g*Cg + c, o, K-1-t']
// so conv(x, W') with W'[g*Og + o, c, t'] = W[g*Cg + c, o, K-1-t'] and pads
// d*(K-1) - pb, d*(K-1) - pe + output_padding. The transposed conv's nest gathers over its taps
// per output element; the conv takes the blocked layout, Winograd and the register-tiled
// kernels. Any number of spatial dims, groups and dilations; a constant f32 weight; pads that
// leave the conv's padding >= 0 (larger ones would crop: left alone), and for a symbolic size
// an output no smaller than the input.
#include "strata/graph/Builder.h"
#include "strata/graph/Ops.h"
#include "strata/graph/passes/Passes.h"
#include "strata/graph/passes/Rewrite.h"

#include <algorithm>

namespace strata {
namespace {

bool rewriteStride1(Graph &g, Op &op) {
  if (op.kind() != OpKind::ConvTranspose)
    return false;
  const ops::ConvTransposeOp c(op);
  const TensorType &x = op.operand(0)->type(), &y = op.result(0)->type();
  const Tensor *w = constantValue(op.operand(1));
  const int64_t spatial = x.rank() - 2;
  if (spatial < 1 || x.dtype != DType::F32 || !w || !w->valid() || w->dtype() != DType::F32 ||
      w->rank() != x.rank() || y.rank() != x.rank())
    return false;
  const std::vector<int64_t> &strides = c.strides(), &pads = c.pads(), &dil = c.dilations(),
                             &extra = c.output_padding();
  const int64_t group = c.group();
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial ||
      static_cast<int64_t>(dil.size()) != spatial ||
      static_cast<int64_t>(extra.size()) != spatial || group < 1 ||
      std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s != 1; }))
    return false;
  const std::vector<int64_t> &ws = w->shape();
  const int64_t cin = ws[0], coutPerGroup = ws[1];
  if (cin == 0 || coutPerGroup == 0 || cin % group != 0 || !(x.dims[1] == Dim(cin)))
    return false;
  const int64_t cinPerGroup = cin / group, cout = coutPerGroup * group;
  std::vector<int64_t> convPads(static_cast<size_t>(2 * spatial));
  int64_t taps = 1;
  for (int64_t s = 0; s < spatial; ++s) {
    const int64_t k = ws[static_cast<size_t>(2 + s)], d = dil[static_cast<size_t>(s)];
    if (k < 1 || d < 1)
      return false;
    const int64_t span = d * (k - 1);
    const int64_t begin = span - pads[static_cast<size_t>(s)];
    const int64_t end = span - pads[static_cast<size_t>(spatial + s)] + extra[static_cast<size_t>(s)];
    if (begin < 0 || end < 0)
      return false; // (a crop, which a conv's padding cannot say)
    // A symbolic size grows by begin + end - d*(k-1) >= 0: the conv's output is never smaller
    // than its input (the conv requires an output >= 1, so only an empty input, whose transposed
    // conv is empty too, becomes an error). A shrinking one stays.
    if (!x.dims[static_cast<size_t>(2 + s)].isStatic() && begin + end - span < 0)
      return false;
    convPads[static_cast<size_t>(s)] = begin;
    convPads[static_cast<size_t>(spatial + s)] = end;
    taps *= k;
  }
  const bool bias = op.numOperands() > 2;
  if (bias && !(op.operand(2)->type() == TensorType(DType::F32, {Dim(cout)})))
    return false;
  // W'[g*Og + o, c, t'] = W[g*Cg + c, o, K-1-t'] (t' row-major over the spatial dims, so the
  // flip of every dim at once is the reversal of the flattened tap index).
  std::vector<int64_t> convShape = ws;
  convShape[0] = cout;
  convShape[1] = cinPerGroup;
  Tensor flipped(DType::F32, convShape);
  for (int64_t gi = 0; gi < group; ++gi)
    for (int64_t o = 0; o < coutPerGroup; ++o)
      for (int64_t ci = 0; ci < cinPerGroup; ++ci)
        for (int64_t t = 0; t < taps; ++t)
          flipped.setDouble(((gi * coutPerGroup + o) * cinPerGroup + ci) * taps + t,
                            w->getDouble(((gi * cinPerGroup + ci) * coutPerGroup + o) * taps +
                                         (taps - 1 - t)));
  Builder b(g);
  b.setInsertBefore(&op);
  b.setLocation(op.location());
  std::vector<Value *> operands = {op.operand(0), b.constant(flipped)};
  if (bias)
    operands.push_back(op.operand(2));
  AttrMap attrs{{"strides", strides},
                {"pads", convPads},
                {"dilations", dil},
                {"group", Attribute(group)}};
  Value *result = b.value(OpKind::Conv, operands, std::move(attrs));
  if (!(result->type() == y))
    throw BuildError("the conv's type differs from the transposed conv's");
  if (!op.result(0)->name().empty())
    result->setName(op.result(0)->name());
  op.result(0)->replaceAllUsesWith(result);
  g.eraseOp(&op);
  return true;
}

class ConvTransposeToConvPass : public Pass {
public:
  std::string_view name() const override { return "conv-transpose-to-conv"; }

  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    const int64_t rewritten = rewriteEachOp(g, rewriteStride1);
    if (rewritten)
      ctx.stats.add("conv-transpose-to-conv.rewritten", rewritten);
    return rewritten > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createConvTransposeToConvPass() {
  return std::make_unique<ConvTransposeToConvPass>();
}

} // namespace strata
