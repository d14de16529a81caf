// conv-transpose-to-matmul: a 2-D transposed convolution whose stride equals its kernel (no
// padding, dilation 1, no output padding, group 1) writes each output pixel from exactly one
// input pixel, so
//   y[n, o, h*kh + i, w*kw + j] = sum_c x[n, c, h, w] W[c, o, i, j] + b[o]
// is one matrix product per image and a pixel shuffle:
//   matmul(W as [C_out*kh*kw, C_in], reshape(x, [N, C_in, H*W]), b repeated as [C_out*kh*kw, 1])
//   -> reshape [N, C_out, kh, kw, H, W] -> transpose [N, C_out, H, kh, W, kw]
//   -> reshape [N, C_out, H*kh, W*kw].
// The transposed conv's nest gathers over its taps per output element (Mask R-CNN's 2x2
// upsampling of 100 regions' 256 channels ran at ~2 GFLOP/s); the matmul takes the register-tiled
// kernel, and the reshapes and the transpose become index maps. f32, a constant weight; N, H and
// W may be symbolic (the region count of a detector). The sum runs over the same terms in another
// order, as any conv kernel's does.
#include "strata/graph/Builder.h"
#include "strata/graph/Ops.h"
#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"
#include "strata/graph/passes/Rewrite.h"

#include <algorithm>

namespace strata {
namespace {

// A reshape of `v` to `dims`: ints when all are static (the normal form), else the dims.
Value *reshapeTo(Builder &b, Value *v, const std::vector<Dim> &dims) {
  std::vector<int64_t> sizes;
  for (const Dim &d : dims)
    if (d.isStatic())
      sizes.push_back(d.size);
  AttrMap attrs{{"shape", sizes.size() == dims.size() ? Attribute(sizes) : Attribute::dims(dims)}};
  if (sizes.size() != dims.size() ||
      std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s == 0; }))
    attrs["allowzero"] = Attribute(int64_t{1}); // each entry is its dim exactly
  return b.value(OpKind::Reshape, {v}, std::move(attrs));
}

bool rewrite(Graph &g, Op &op) {
  if (op.kind() != OpKind::ConvTranspose)
    return false;
  const ops::ConvTransposeOp c(op);
  const TensorType &x = op.operand(0)->type(), &y = op.result(0)->type();
  const Tensor *w = constantValue(op.operand(1));
  if (x.rank() != 4 || y.rank() != 4 || x.dtype != DType::F32 || !w || !w->valid() ||
      w->dtype() != DType::F32 || w->rank() != 4 || c.group() != 1)
    return false;
  const int64_t in = w->shape()[0], out = w->shape()[1], kh = w->shape()[2], kw = w->shape()[3];
  const std::vector<int64_t> &strides = c.strides(), &pads = c.pads(), &dil = c.dilations(),
                             &extra = c.output_padding();
  auto all = [](const std::vector<int64_t> &v, int64_t e) {
    return std::all_of(v.begin(), v.end(), [&](int64_t a) { return a == e; });
  };
  if (strides.size() != 2 || strides[0] != kh || strides[1] != kw || !all(pads, 0) ||
      !all(dil, 1) || !all(extra, 0) || in == 0 || out == 0 || kh == 0 || kw == 0 ||
      !(x.dims[1] == Dim(in)))
    return false;
  const Tensor *bias = nullptr;
  if (op.numOperands() > 2) {
    bias = constantValue(op.operand(2));
    if (!bias || !bias->valid() || bias->dtype() != DType::F32 || bias->numElements() != out)
      return false;
  }
  const Dim n = x.dims[0], h = x.dims[2], wd = x.dims[3];
  // The result must be the one the rewrite computes (the shape function's (H-1)*kh + kh).
  if (!(y.dims[0] == n) || !(y.dims[1] == Dim(out)) ||
      !(y.dims[2] == Dim::of(h.asExpr() * SymExpr(kh))) ||
      !(y.dims[3] == Dim::of(wd.asExpr() * SymExpr(kw))))
    return false;
  // W [C_in, C_out, kh, kw] -> [C_out*kh*kw, C_in]; the bias repeated over each o's taps.
  const int64_t rows = out * kh * kw;
  Tensor wt(DType::F32, {rows, in}), bt(DType::F32, {rows, 1});
  for (int64_t ci = 0; ci < in; ++ci)
    for (int64_t r = 0; r < rows; ++r)
      wt.setDouble(r * in + ci, w->getDouble(ci * rows + r));
  if (bias)
    for (int64_t r = 0; r < rows; ++r)
      bt.setDouble(r, bias->getDouble(r / (kh * kw)));
  Builder b(g);
  b.setInsertBefore(&op);
  b.setLocation(op.location());
  Value *cols = reshapeTo(b, op.operand(0), {n, Dim(in), Dim::of(h.asExpr() * wd.asExpr())});
  std::vector<Value *> operands = {b.constant(wt), cols};
  if (bias)
    operands.push_back(b.constant(bt));
  Value *product = b.value(OpKind::MatMul, operands);
  Value *taps = reshapeTo(b, product, {n, Dim(out), Dim(kh), Dim(kw), h, wd});
  Value *shuffled = b.value(OpKind::Transpose, {taps},
                            AttrMap{{"perm", std::vector<int64_t>{0, 1, 4, 2, 5, 3}}});
  Value *result = reshapeTo(b, shuffled, y.dims);
  if (!op.result(0)->name().empty())
    result->setName(op.result(0)->name());
  op.result(0)->replaceAllUsesWith(result);
  g.eraseOp(&op);
  return true;
}

class ConvTransposeToMatMulPass : public Pass {
public:
  std::string_view name() const override { return "conv-transpose-to-matmul"; }

  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    int64_t rewritten = 0;
    forEachGraph(g, [&](Graph &graph) {
      for (Op *op : graph.opList())
        rewritten += rewrite(graph, *op);
    });
    if (rewritten)
      ctx.stats.add("conv-transpose-to-matmul.rewritten", rewritten);
    return rewritten > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createConvTransposeToMatMulPass() {
  return std::make_unique<ConvTransposeToMatMulPass>();
}

} // namespace strata
