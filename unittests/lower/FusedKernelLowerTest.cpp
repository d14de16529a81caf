// Real kernels: graphs are fused by the `fuse` pass (after layout-nchwc where noted), then every
// op of the result (kernels, relayouts, blocked convs) is lowered, run by the loop interpreter
// on the values the graph interpreter computed for its operands, and compared.
#include "LowerTestUtil.h"

#include "strata/graph/Parser.h"
#include "strata/graph/passes/Passes.h"

using namespace strata;
using namespace strata::lowertest;

namespace {

// Runs `passes` over `g`, then checks every non-constant op; returns how many kernels it saw.
int fuseAndCheckAll(Graph &g, const std::vector<std::unique_ptr<Pass>> &passes) {
  PassContext ctx;
  for (const auto &p : passes) {
    auto changed = p->run(g, ctx);
    EXPECT_TRUE(static_cast<bool>(changed)) << llvm::toString(changed.takeError());
  }
  std::map<const Value *, Tensor> values;
  for (unsigned i = 0; i < g.numInputs(); ++i)
    values[g.input(i)] = randomTensor(g.input(i)->type().dtype, g.input(i)->type().staticShape());
  int kernels = 0;
  for (const Op &op : g.ops()) {
    std::vector<Tensor> ins;
    for (const Value *v : op.operands())
      ins.push_back(values.at(v));
    if (op.kind() != OpKind::Constant) {
      SCOPED_TRACE(std::string(op.opName()));
      checkOpOn(op, ins, Cmp::MaxRel, 2e-6);
      kernels += op.kind() == OpKind::Kernel;
    }
    auto res = evaluateOp(op, ins);
    EXPECT_TRUE(static_cast<bool>(res)) << llvm::toString(res.takeError());
    if (!res)
      return kernels;
    for (unsigned r = 0; r < op.numResults(); ++r)
      values[op.result(r)] = (*res)[r];
  }
  return kernels;
}

int fuseAndCheck(const std::string &text) {
  auto g = parseGraph(text);
  EXPECT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  if (!g)
    return 0;
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(createFusePass());
  return fuseAndCheckAll(**g, passes);
}

TEST(LowerFusedKernel, ConvEpilogueWithResidual) {
  EXPECT_EQ(fuseAndCheck(R"(
graph @main(%x: tensor<1x3x7x7xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %r: tensor<1x4x4x4xf32>) -> (y: tensor<1x4x4x4xf32>) {
  %z = constant {value = dense<[0]> : tensor<f32>} : tensor<f32>
  %six = constant {value = dense<[6]> : tensor<f32>} : tensor<f32>
  %c = conv(%x, %w, %b) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [2, 2]} : tensor<1x4x4x4xf32>
  %s = add(%c, %r) : tensor<1x4x4x4xf32>
  %m = max(%s, %z) : tensor<1x4x4x4xf32>
  %y = min(%m, %six) : tensor<1x4x4x4xf32>
  return %y
})"),
            1);
}

TEST(LowerFusedKernel, MatMulEpilogue) {
  EXPECT_EQ(fuseAndCheck(R"(
graph @main(%a: tensor<2x5x7xf32>, %b: tensor<7x6xf32>, %bias: tensor<6xf32>, %g: tensor<2x1x6xf32>) -> (y: tensor<2x5x6xf32>) {
  %m = matmul(%a, %b, %bias) : tensor<2x5x6xf32>
  %s = sigmoid(%m) : tensor<2x5x6xf32>
  %y = mul(%s, %g) : tensor<2x5x6xf32>
  return %y
})"),
            1);
}

TEST(LowerFusedKernel, LayerNormReductionWithReshapeProducer) {
  EXPECT_EQ(fuseAndCheck(R"(
graph @main(%p: tensor<6x16xf32>, %x: tensor<1x6x16xf32>, %g: tensor<16xf32>, %bt: tensor<16xf32>) -> (y: tensor<1x6x16xf32>) {
  %eps = constant {value = dense<[1e-05]> : tensor<f32>} : tensor<f32>
  %r = reshape(%p) {shape = [1, 6, 16]} : tensor<1x6x16xf32>
  %a = add(%x, %r) : tensor<1x6x16xf32>
  %mean = reduce(%a) {axes = [2], keepdims = 1, kind = "mean"} : tensor<1x6x1xf32>
  %c = sub(%a, %mean) : tensor<1x6x16xf32>
  %sq = mul(%c, %c) : tensor<1x6x16xf32>
  %var = reduce(%sq) {axes = [2], keepdims = 1, kind = "mean"} : tensor<1x6x1xf32>
  %ve = add(%var, %eps) : tensor<1x6x1xf32>
  %sd = sqrt(%ve) : tensor<1x6x1xf32>
  %n = div(%c, %sd) : tensor<1x6x16xf32>
  %sc = mul(%n, %g) : tensor<1x6x16xf32>
  %y = add(%sc, %bt) : tensor<1x6x16xf32>
  return %y
})"),
            1);
}

TEST(LowerFusedKernel, SoftmaxWithTransposeAndScale) {
  EXPECT_GE(fuseAndCheck(R"(
graph @main(%x: tensor<2x4x3xf32>) -> (y: tensor<2x3x4xf32>) {
  %k = constant {value = dense<[0.5]> : tensor<f32>} : tensor<f32>
  %t = transpose(%x) {perm = [0, 2, 1]} : tensor<2x3x4xf32>
  %s = mul(%t, %k) : tensor<2x3x4xf32>
  %y = softmax(%s) {axis = 2} : tensor<2x3x4xf32>
  return %y
})"),
            1);
}

TEST(LowerFusedKernel, IndexMapsAndSeveralResultShapes) {
  EXPECT_GE(fuseAndCheck(R"(
graph @main(%x: tensor<2x6xf32>, %b: tensor<3x4xf32>) -> (y: tensor<4x3xf32>, v: tensor<2x3xf32>) {
  %xt = transpose(%x) {perm = [1, 0]} : tensor<6x2xf32>
  %e = exp(%xt) : tensor<6x2xf32>
  %r = reshape(%e) {shape = [3, 4]} : tensor<3x4xf32>
  %s = add(%r, %b) : tensor<3x4xf32>
  %y = transpose(%s) {perm = [1, 0]} : tensor<4x3xf32>
  %v = slice(%x) {ends = [9223372036854775807, 6], starts = [0, 0], steps = [1, 2]} : tensor<2x3xf32>
  return %y, %v
})"),
            1);
}

// The default pipeline's layout-nchwc pass: relayouts and NCHW8c convs (dense and depthwise)
// inside epilogue kernels.
TEST(LowerFusedKernel, BlockedConvKernelsAfterLayoutNCHWc) {
  Graph g;
  Builder b(g);
  Value *x = g.addInput(TensorType::fromShape(DType::F32, {1, 16, 6, 6}));
  Value *w1 = b.constant(randomTensor(DType::F32, {16, 16, 3, 3}));
  Value *b1 = b.constant(randomTensor(DType::F32, {16}));
  Value *w2 = b.constant(randomTensor(DType::F32, {16, 1, 3, 3}));
  Value *z = b.scalar(DType::F32, 0);
  AttrMap conv = {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(1)},
                  {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{1, 1}}};
  Value *c1 = b.value(OpKind::Conv, {x, w1, b1}, conv);
  Value *r1 = b.value(OpKind::Max, {c1, z});
  AttrMap dw = conv;
  dw["group"] = int64_t(16);
  dw["strides"] = std::vector<int64_t>{2, 2};
  Value *c2 = b.value(OpKind::Conv, {r1, w2}, dw);
  Value *y = b.value(OpKind::Add, {c2, b.scalar(DType::F32, 1)});
  g.addOutput(y, "y");
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(createLayoutNCHWcPass());
  passes.push_back(createFusePass());
  EXPECT_GE(fuseAndCheckAll(g, passes), 2);
  int relayouts = 0;
  for (const Op &op : g.ops())
    relayouts += op.kind() == OpKind::Relayout;
  EXPECT_GE(relayouts, 1);
}

// Micro-kernel anchors run the epilogue on their accumulators: the kernel needs no temporary.
TEST(LowerFusedKernel, MicroKernelEpiloguesNeedNoTemporary) {
  auto g = parseGraph(R"(
graph @main(%x: tensor<1x3x9x9xf32>, %w: tensor<8x3x3x3xf32>, %r: tensor<1x8x5x5xf32>, %a: tensor<6x12xf32>, %m: tensor<12x16xf32>, %mb: tensor<16xf32>) -> (y: tensor<1x8x5x5xf32>, z: tensor<6x16xf32>) {
  %lo = constant {value = dense<[0]> : tensor<f32>} : tensor<f32>
  %hi = constant {value = dense<[6]> : tensor<f32>} : tensor<f32>
  %c = conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [2, 2]} : tensor<1x8x5x5xf32>
  %s = add(%c, %r) : tensor<1x8x5x5xf32>
  %t = max(%s, %lo) : tensor<1x8x5x5xf32>
  %y = min(%t, %hi) : tensor<1x8x5x5xf32>
  %p = matmul(%a, %m, %mb) : tensor<6x16xf32>
  %z = max(%p, %lo) : tensor<6x16xf32>
  return %y, %z
}
)");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(createFusePass());
  EXPECT_EQ(fuseAndCheckAll(**g, passes), 2);
  for (const Op &op : (*g)->ops()) {
    if (op.kind() != OpKind::Kernel)
      continue;
    auto fn = lower::lowerOp(op);
    ASSERT_TRUE(static_cast<bool>(fn)) << llvm::toString(fn.takeError());
    std::string text = loop::printFunction(*fn);
    EXPECT_NE(text.find("fma("), std::string::npos) << text;
    EXPECT_EQ(text.find("global"), std::string::npos) << text; // no temporary buffer
  }
}

TEST(LowerRelayout, BothDirections) {
  checkOp(OpKind::Relayout, {randomTensor(DType::F32, {2, 16, 3, 2}, true)}, {{"from", "NCHW"}, {"to", "NCHW8c"}});
  checkOp(OpKind::Relayout, {randomTensor(DType::I32, {1, 2, 3, 4}, true)}, {{"from", "NCHW4c"}, {"to", "NCHW"}});
}

TEST(LowerConv, BlockedLayoutDirect) {
  // x [1, 16, 5, 5] blocked by 8; weight [O=8, I=16] blocked [1, 2, 3, 3, 8, 8].
  checkOp(OpKind::Conv,
          {randomTensor(DType::F32, {1, 2, 5, 5, 8}), randomTensor(DType::F32, {1, 2, 3, 3, 8, 8}),
           randomTensor(DType::F32, {8})},
          {{"layout", "NCHW8c"}, {"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(1)}, {"pads", std::vector<int64_t>{1, 0, 1, 0}},
           {"strides", std::vector<int64_t>{1, 2}}},
          Cmp::MaxRel, 1e-6);
}

} // namespace
