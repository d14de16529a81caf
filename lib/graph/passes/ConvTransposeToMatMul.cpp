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
#include "strata/graph/passes/Passes.h"
#include "strata/graph/passes/Rewrite.h"

#include <algorithm>
#include <limits>

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

// floor(a / b) for b > 0.
int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

bool rewriteToMatMul(Graph &g, Op &op) {
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
  if (strides.size() != 2 || pads.size() != 4 || !all(dil, 1) || !all(extra, 0) || in == 0 ||
      out == 0 || kh == 0 || kw == 0 || !(x.dims[1] == Dim(in)))
    return false;
  const int64_t sh = strides[0], sw = strides[1];
  const bool shuffleOnly = sh == kh && sw == kw && all(pads, 0);
  // Otherwise each output phase (oy mod sh, ox mod sw) sums the taps landing on it, each a
  // shifted copy of one tap plane: every phase needs a tap (kernel >= stride), and stride 1 is a
  // plain conv's business.
  if (!shuffleOnly && (sh < 2 || sw < 2 || kh < sh || kw < sw || kh > 4 * sh || kw > 4 * sw))
    return false;
  const Tensor *bias = nullptr;
  if (op.numOperands() > 2) {
    bias = constantValue(op.operand(2));
    if (!bias || !bias->valid() || bias->dtype() != DType::F32 || bias->numElements() != out)
      return false;
  }
  const Dim n = x.dims[0], h = x.dims[2], wd = x.dims[3];
  // The output is sh*H + eh rows (the shape function's (H-1)*sh + kh - pads), sw*W + ew columns.
  const int64_t eh = kh - sh - pads[0] - pads[2], ew = kw - sw - pads[1] - pads[3];
  if (!(y.dims[0] == n) || !(y.dims[1] == Dim(out)) ||
      !(y.dims[2] == Dim::of(h.asExpr() * SymExpr(sh) + SymExpr(eh))) ||
      !(y.dims[3] == Dim::of(wd.asExpr() * SymExpr(sw) + SymExpr(ew))))
    return false;
  // W [C_in, C_out, kh, kw] -> [C_out*kh*kw, C_in]; in the shuffle-only form the bias repeated
  // over each o's taps (every output pixel gets exactly one tap).
  const int64_t rows = out * kh * kw;
  Tensor wt(DType::F32, {rows, in});
  for (int64_t ci = 0; ci < in; ++ci)
    for (int64_t r = 0; r < rows; ++r)
      wt.setDouble(r * in + ci, w->getDouble(ci * rows + r));
  Builder b(g);
  b.setInsertBefore(&op);
  b.setLocation(op.location());
  Value *cols = reshapeTo(b, op.operand(0), {n, Dim(in), Dim::of(h.asExpr() * wd.asExpr())});
  std::vector<Value *> operands = {b.constant(wt), cols};
  if (bias && shuffleOnly) {
    Tensor bt(DType::F32, {rows, 1});
    for (int64_t r = 0; r < rows; ++r)
      bt.setDouble(r, bias->getDouble(r / (kh * kw)));
    operands.push_back(b.constant(bt));
  }
  Value *product = b.value(OpKind::MatMul, operands);
  Value *taps = reshapeTo(b, product, {n, Dim(out), Dim(kh), Dim(kw), h, wd});
  Value *result = nullptr;
  if (shuffleOnly) {
    Value *shuffled = b.value(OpKind::Transpose, {taps},
                              AttrMap{{"perm", std::vector<int64_t>{0, 1, 4, 2, 5, 3}}});
    result = reshapeTo(b, shuffled, y.dims);
  } else {
    // Tap (i, j) lands on output row h*sh + i - pt: phase (i - pt) mod sh, at row h + d_i of
    // that phase (d_i = floor((i - pt) / sh)). Each tap plane is padded with zeros to the rows
    // [dmin, H + dmax) of its phase (all planes one shape, no crop), the planes of a phase summed,
    // the phases interleaved, and the output's rows cut out of that canvas.
    const int64_t big = std::numeric_limits<int64_t>::max();
    const int64_t dminH = floorDiv(-pads[0], sh), dmaxH = floorDiv(kh - 1 - pads[0], sh);
    const int64_t dminW = floorDiv(-pads[1], sw), dmaxW = floorDiv(kw - 1 - pads[1], sw);
    std::vector<std::vector<Value *>> phase(static_cast<size_t>(sh * sw));
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        const int64_t di = floorDiv(i - pads[0], sh), dj = floorDiv(j - pads[1], sw);
        const int64_t a = i - pads[0] - di * sh, bb = j - pads[1] - dj * sw;
        Value *plane = b.value(OpKind::Slice, {taps},
                               AttrMap{{"starts", std::vector<int64_t>{0, 0, i, j, 0, 0}},
                                       {"ends", std::vector<int64_t>{big, big, i + 1, j + 1, big, big}},
                                       {"steps", std::vector<int64_t>{1, 1, 1, 1, 1, 1}}});
        plane = reshapeTo(b, plane, {n, Dim(out), h, wd});
        Value *placed = b.value(
            OpKind::Pad, {plane, b.scalar(DType::F32, 0.0)},
            AttrMap{{"pads", std::vector<int64_t>{0, 0, di - dminH, dj - dminW, 0, 0, dmaxH - di,
                                                  dmaxW - dj}},
                    {"mode", Attribute(std::string("constant"))}});
        phase[static_cast<size_t>(a * sw + bb)].push_back(placed);
      }
    const Dim qH = Dim::of(h.asExpr() + SymExpr(dmaxH - dminH)),
              qW = Dim::of(wd.asExpr() + SymExpr(dmaxW - dminW));
    std::vector<Value *> byRow;
    for (int64_t a = 0; a < sh; ++a) {
      std::vector<Value *> byCol;
      for (int64_t bb = 0; bb < sw; ++bb) {
        const std::vector<Value *> &terms = phase[static_cast<size_t>(a * sw + bb)];
        Value *sum = terms[0];
        for (size_t t = 1; t < terms.size(); ++t)
          sum = b.value(OpKind::Add, {sum, terms[t]});
        byCol.push_back(reshapeTo(b, sum, {n, Dim(out), qH, Dim(1), qW, Dim(1)}));
      }
      byRow.push_back(byCol.size() == 1 ? byCol[0]
                                        : b.value(OpKind::Concat, byCol,
                                                  AttrMap{{"axis", int64_t{5}}}));
    }
    Value *stacked = byRow.size() == 1
                         ? byRow[0]
                         : b.value(OpKind::Concat, byRow, AttrMap{{"axis", int64_t{3}}});
    Value *grid = reshapeTo(b, stacked, {n, Dim(out), Dim::of(qH.asExpr() * SymExpr(sh)),
                                         Dim::of(qW.asExpr() * SymExpr(sw))});
    // Output row oy is canvas row oy - dminH*sh; the canvas ends sh*dmaxH - eh rows past it.
    const int64_t skipH = -dminH * sh, skipW = -dminW * sw;
    const int64_t cutH = sh * dmaxH - eh, cutW = sw * dmaxW - ew;
    if (skipH || skipW || cutH || cutW)
      grid = b.value(OpKind::Slice, {grid},
                     AttrMap{{"starts", std::vector<int64_t>{0, 0, skipH, skipW}},
                             {"ends", std::vector<int64_t>{big, big, cutH ? -cutH : big,
                                                           cutW ? -cutW : big}},
                             {"steps", std::vector<int64_t>{1, 1, 1, 1}}});
    if (bias)
      grid = b.value(OpKind::Add, {grid, b.constant(bias->reshaped({out, 1, 1}))});
    result = grid->type() == y ? grid : reshapeTo(b, grid, y.dims);
  }
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
    const int64_t rewritten = rewriteEachOp(g, rewriteToMatMul);
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
