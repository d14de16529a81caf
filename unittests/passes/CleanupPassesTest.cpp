// constant-fold, cse, dce, fold-batchnorm and fuse-bias on graphs the lit tests cannot express
// compactly: a lowered fold limit, random data through the interpreter before and after (bit
// for bit where a pass claims exactness), and use-list consistency after rewriting.
#include "PassTestUtil.h"
#include "strata/graph/Parser.h"
#include "strata/graph/Verifier.h"
#include "strata/graph/passes/Passes.h"
#include "strata/interp/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace strata;

namespace {

using strata::testing::parse;

bool runPass(std::unique_ptr<Pass> pass, Graph &g, PassContext &ctx) {
  auto changed = pass->run(g, ctx);
  if (!changed) {
    ADD_FAILURE() << llvm::toString(changed.takeError());
    return false;
  }
  if (auto err = verifyGraph(g))
    ADD_FAILURE() << "invalid IR after " << pass->name() << ": " << llvm::toString(std::move(err));
  return *changed;
}

Tensor randomF32(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = dist(rng);
  return t;
}

// A constant holding `t` as IR text (dense literal).
std::string constantText(const std::string &name, const Tensor &t) {
  std::string s = "  %" + name + " = constant {value = dense<[";
  for (int64_t i = 0; i < t.numElements(); ++i) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%.9g", i ? ", " : "", t.getDouble(i));
    s += buf;
    if (std::floor(t.getDouble(i)) == t.getDouble(i))
      s += ".0";
  }
  std::string type = TensorType::fromShape(t.dtype(), t.shape()).str();
  return s + "]> : " + type + "} : " + type + "\n";
}

std::vector<Tensor> interpretOrFail(const Graph &g, const std::vector<Tensor> &inputs) {
  auto out = interpret(g, inputs);
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return {};
  }
  return *out;
}

size_t countOps(const Graph &g, OpKind kind) {
  size_t n = 0;
  for (const Op &op : g.ops())
    n += op.kind() == kind;
  return n;
}

TEST(ConstantFold, SizeLimitSparesReductionsAndSameSizeOps) {
  auto g = parse(R"(graph @main() -> (r: tensor<f32>, n: tensor<8xf32>, e: tensor<4x8xf32>) {
  %c = constant {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>} : tensor<8xf32>
  %r = reduce(%c) {axes = [0], keepdims = 0, kind = "sum"} : tensor<f32>
  %n = neg(%c) : tensor<8xf32>
  %e = expand(%c) {shape = [4, 8]} : tensor<4x8xf32>
  return %r, %n, %e
})");
  ASSERT_TRUE(g);
  PassContext ctx;
  ctx.options.foldElementLimit = 4;
  EXPECT_TRUE(runPass(createConstantFoldPass(), *g, ctx));
  // The reduction (1 element) and the negation (8 elements from 8) fold; the broadcast to 32
  // elements from 8 is over the limit of 4 and larger than its operand.
  EXPECT_EQ(ctx.stats.get("constant-fold.folded"), 2);
  EXPECT_EQ(countOps(*g, OpKind::Expand), 1u);
  EXPECT_EQ(g->output(0)->definingOp()->attr("value").getTensor().getDouble(0), 36.0);
  EXPECT_EQ(g->output(1)->definingOp()->attr("value").getTensor().getDouble(7), -8.0);

  ctx.options.foldElementLimit = 32; // now the broadcast fits
  EXPECT_TRUE(runPass(createConstantFoldPass(), *g, ctx));
  EXPECT_EQ(countOps(*g, OpKind::Expand), 0u);
}

TEST(CSE, MergedConstantsKeepUseListsConsistent) {
  auto g = parse(R"(graph @main(%x: tensor<2xf32>) -> (a: tensor<2xf32>, b: tensor<2xf32>) {
  %c1 = constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %a = add(%x, %c1) : tensor<2xf32>
  %c2 = constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %b = add(%x, %c2) : tensor<2xf32>
  return %a, %b
})");
  ASSERT_TRUE(g);
  PassContext ctx;
  EXPECT_TRUE(runPass(createCSEPass(), *g, ctx));
  // c2 merges into c1, which makes b identical to a.
  EXPECT_EQ(ctx.stats.get("cse.merged"), 2);
  EXPECT_EQ(g->numOps(), 2u);
  EXPECT_EQ(g->output(0), g->output(1));
  Value *c1 = g->output(0)->definingOp()->operand(1);
  ASSERT_EQ(c1->uses().size(), 1u);
  EXPECT_EQ(c1->uses()[0].user, g->output(0)->definingOp());
  EXPECT_FALSE(runPass(createCSEPass(), *g, ctx)); // a fixed point
}

TEST(DCE, DeadRegionOpReleasesOuterValues) {
  // %e is used only inside the dead kernel's body; it dies with the kernel.
  auto g = parse(R"(graph @main(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %e = exp(%x) : tensor<4xf32>
  %k = kernel(%x) {kind = "elementwise"} : tensor<4xf32> {
    graph @region(%p: tensor<4xf32>) -> (r: tensor<4xf32>) {
      %s = add(%p, %e) : tensor<4xf32>
      return %s
    }
  }
  %y = neg(%x) : tensor<4xf32>
  return %y
})");
  ASSERT_TRUE(g);
  PassContext ctx;
  EXPECT_TRUE(runPass(createDCEPass(), *g, ctx));
  EXPECT_EQ(g->numOps(), 1u);
  EXPECT_EQ(ctx.stats.get("dce.erased"), 2);
  EXPECT_FALSE(g->input(0)->uses().empty());
  EXPECT_EQ(g->input(0)->uses().size(), 1u);
}

// conv with a BatchNormalization as the importer leaves it, on random weights and inputs.
std::string convBatchNormText(bool withBias) {
  const int64_t c = 8;
  std::string text = "graph @main(%x: tensor<1x16x6x6xf32>) -> (y: tensor<1x8x6x6xf32>) {\n";
  text += constantText("w", randomF32({c, 16, 3, 3}, 11));
  text += constantText("b", randomF32({c}, 12));
  text += constantText("mean", randomF32({c, 1, 1}, 13));
  Tensor scale = randomF32({c, 1, 1}, 14);
  text += constantText("scale", scale);
  text += constantText("shift", randomF32({c, 1, 1}, 15));
  text += std::string("  %conv = conv(%x, %w") + (withBias ? ", %b" : "") +
          ") {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]} : "
          "tensor<1x8x6x6xf32>\n";
  text += "  %c = sub(%conv, %mean) : tensor<1x8x6x6xf32>\n";
  text += "  %s = mul(%c, %scale) : tensor<1x8x6x6xf32>\n";
  text += "  %y = add(%s, %shift) : tensor<1x8x6x6xf32>\n  return %y\n}\n";
  return text;
}

TEST(FoldBatchNorm, ConvChainMatchesWithinRounding) {
  for (bool withBias : {false, true}) {
    auto g = parse(convBatchNormText(withBias));
    ASSERT_TRUE(g);
    Tensor x = randomF32({1, 16, 6, 6}, 21);
    std::vector<Tensor> before = interpretOrFail(*g, {x});
    PassContext ctx;
    EXPECT_TRUE(runPass(createFoldBatchNormPass(), *g, ctx));
    runPass(createDCEPass(), *g, ctx);
    EXPECT_EQ(ctx.stats.get("fold-batchnorm.folded"), 3);
    EXPECT_EQ(countOps(*g, OpKind::Conv), 1u);
    EXPECT_EQ(g->numOps(), 3u); // weights, bias, conv
    std::vector<Tensor> after = interpretOrFail(*g, {x});
    ASSERT_EQ(before.size(), 1u);
    ASSERT_EQ(after.size(), 1u);
    double worst = 0, largest = 0;
    for (int64_t i = 0; i < before[0].numElements(); ++i) {
      worst = std::max(worst, std::abs(before[0].getDouble(i) - after[0].getDouble(i)));
      largest = std::max(largest, std::abs(before[0].getDouble(i)));
    }
    EXPECT_LE(worst, 1e-5 * largest) << "with bias: " << withBias;
  }
}

TEST(FuseBias, ConvAndMatMulBitExactOnRandomData) {
  // K = 16*3*3 = 144 for the conv and 300 for the matmul (more than one accumulation block).
  std::string text = "graph @main(%x: tensor<1x16x5x5xf32>, %a: tensor<7x300xf32>) -> "
                     "(y: tensor<1x4x5x5xf32>, z: tensor<7x9xf32>) {\n";
  text += constantText("w", randomF32({4, 16, 3, 3}, 31));
  text += constantText("cb", randomF32({4, 1, 1}, 32));
  text += constantText("m", randomF32({300, 9}, 33));
  text += constantText("mb", randomF32({9}, 34));
  text += "  %conv = conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], "
          "strides = [1, 1]} : tensor<1x4x5x5xf32>\n";
  text += "  %y = add(%cb, %conv) : tensor<1x4x5x5xf32>\n";
  text += "  %p = matmul(%a, %m) : tensor<7x9xf32>\n";
  text += "  %z = sub(%p, %mb) : tensor<7x9xf32>\n  return %y, %z\n}\n";
  auto g = parse(text);
  ASSERT_TRUE(g);
  std::vector<Tensor> inputs = {randomF32({1, 16, 5, 5}, 35), randomF32({7, 300}, 36)};
  std::vector<Tensor> before = interpretOrFail(*g, inputs);
  PassContext ctx;
  EXPECT_TRUE(runPass(createFuseBiasPass(), *g, ctx));
  EXPECT_EQ(ctx.stats.get("fuse-bias.merged"), 2);
  EXPECT_EQ(g->output(0)->definingOp()->numOperands(), 3u);
  EXPECT_EQ(g->output(1)->definingOp()->kind(), OpKind::MatMul);
  EXPECT_EQ(g->output(1)->definingOp()->numOperands(), 3u);
  std::vector<Tensor> after = interpretOrFail(*g, inputs);
  ASSERT_EQ(before.size(), 2u);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_TRUE(before[0].identical(after[0]));
  EXPECT_TRUE(before[1].identical(after[1]));
}

} // namespace
