// conv1x1-to-matmul: a 1x1 convolution left in the plain NCHW layout (layout-nchwc blocks only
// channel counts that are multiples of the SIMD block) is a matrix product per image,
//   y[n, o, p] = sum_i w[o, i] x[n, i, p] + b[o]      (p over the H x W positions),
// so it becomes reshape(x, [N, C_in, H*W]) -> matmul(w[C_out, C_in], ., b[C_out, 1]) -> reshape to
// [N, C_out, H, W]. The plain conv's nest is scalar with a bounds test per term (shufflenet's
// 116-channel 1x1 convs ran at 3% of the FMA peak); the matmul gets the register-tiled kernel
// (vectors along the H*W positions, w's entries broadcast), and the reshapes become index maps
// of the fused kernel. Only f32, stride 1 (dilations do not matter for a 1x1 window), no padding,
// group 1, static shapes, a constant weight; the result type is the conv's. The sum runs over
// the same terms in another order, as any conv kernel's does.
#include "strata/graph/Builder.h"
#include "strata/graph/Ops.h"
#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"
#include "strata/graph/passes/Rewrite.h"

#include <algorithm>

namespace strata {
namespace {

bool allEqual(const std::vector<int64_t> &v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
}

bool rewriteConv(Graph &g, Op &conv) {
  if (conv.kind() != OpKind::Conv || conv.hasAttr("layout"))
    return false;
  ops::ConvOp c(conv);
  const TensorType &x = conv.operand(0)->type(), &y = conv.result(0)->type();
  const Tensor *w = constantValue(conv.operand(1));
  if (x.rank() != 4 || !x.isStatic() || !y.isStatic() || x.dtype != DType::F32 || !w ||
      !w->valid() || w->rank() != 4 || w->shape()[2] != 1 || w->shape()[3] != 1 || c.group() != 1 ||
      !allEqual(c.strides(), 1) || !allEqual(c.pads(), 0))
    return false;
  const Shape xs = x.staticShape(), ys = y.staticShape();
  const int64_t n = xs[0], in = xs[1], positions = xs[2] * xs[3], out = w->shape()[0];
  if (n == 0 || in == 0 || positions == 0 || out == 0)
    return false;
  Value *bias = nullptr;
  if (conv.numOperands() > 2) {
    const Tensor *b = constantValue(conv.operand(2));
    if (!b || !b->valid() || b->dtype() != DType::F32)
      return false;
    bias = conv.operand(2);
  }
  Builder b(g);
  b.setInsertBefore(&conv);
  b.setLocation(conv.location());
  Value *rows = b.value(OpKind::Reshape, {conv.operand(0)},
                        AttrMap{{"shape", std::vector<int64_t>{n, in, positions}}});
  std::vector<Value *> operands = {b.constant(w->reshaped({out, in})), rows};
  if (bias)
    operands.push_back(b.constant(constantValue(bias)->reshaped({out, 1})));
  Value *product = b.value(OpKind::MatMul, operands);
  Value *result = b.value(OpKind::Reshape, {product}, AttrMap{{"shape", ys}});
  if (!conv.result(0)->name().empty())
    result->setName(conv.result(0)->name());
  conv.result(0)->replaceAllUsesWith(result);
  g.eraseOp(&conv);
  return true;
}

class Conv1x1ToMatMulPass : public Pass {
public:
  std::string_view name() const override { return "conv1x1-to-matmul"; }

  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    int64_t rewritten = 0;
    forEachGraph(g, [&](Graph &graph) {
      for (Op *op : graph.opList())
        rewritten += rewriteConv(graph, *op);
    });
    if (rewritten)
      ctx.stats.add("conv1x1-to-matmul.rewritten", rewritten);
    return rewritten > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createConv1x1ToMatMulPass() {
  return std::make_unique<Conv1x1ToMatMulPass>();
}

} // namespace strata
