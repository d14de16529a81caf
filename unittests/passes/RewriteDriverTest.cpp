// The greedy rewrite driver: fixed point, revisiting what a rewrite touched, DCE on the way,
// regions, the rewrite cap and use-list consistency.
#include "PassTestUtil.h"
#include "strata/graph/Parser.h"
#include "strata/graph/Printer.h"
#include "strata/graph/Verifier.h"
#include "strata/graph/passes/Rewrite.h"

#include <gtest/gtest.h>

using namespace strata;

namespace {

using strata::testing::parse;

void expectVerifies(const Graph &g) {
  llvm::Error err = verifyGraph(g);
  EXPECT_FALSE(static_cast<bool>(err)) << (err ? llvm::toString(std::move(err)) : "");
  llvm::consumeError(std::move(err));
}

// neg(neg(a)) -> a
struct DoubleNeg : RewritePattern {
  DoubleNeg() : RewritePattern(OpKind::Neg, "double-neg") {}
  bool matchAndRewrite(Op &op, PatternRewriter &r) const override {
    Op *inner = op.operand(0)->definingOp();
    if (!inner || inner->kind() != OpKind::Neg)
      return false;
    r.replaceOp(op, {inner->operand(0)});
    return true;
  }
};

// mul(a, 1) -> a
struct MulOne : RewritePattern {
  MulOne() : RewritePattern(OpKind::Mul, "mul-one") {}
  bool matchAndRewrite(Op &op, PatternRewriter &r) const override {
    if (!isConstantSplat(op.operand(1), 1.0) || op.operand(0)->type() != op.result()->type())
      return false;
    r.replaceOp(op, {op.operand(0)});
    return true;
  }
};

// sub(0, a) -> neg(a): creates a new op the driver must visit.
struct ZeroSubToNeg : RewritePattern {
  ZeroSubToNeg() : RewritePattern(OpKind::Sub, "zero-sub") {}
  bool matchAndRewrite(Op &op, PatternRewriter &r) const override {
    if (!isConstantSplat(op.operand(0), 0.0) || op.operand(1)->type() != op.result()->type())
      return false;
    r.replaceOp(op, {r.builder().value(OpKind::Neg, {op.operand(1)})});
    return true;
  }
};

// neg(a) -> sub(0, a): the inverse of ZeroSubToNeg; together they never stop.
struct NegToZeroSub : RewritePattern {
  NegToZeroSub() : RewritePattern(OpKind::Neg, "neg-to-sub") {}
  bool matchAndRewrite(Op &op, PatternRewriter &r) const override {
    Value *zero = r.builder().scalar(op.result()->type().dtype, 0.0);
    r.replaceOp(op, {r.builder().value(OpKind::Sub, {zero, op.operand(0)})});
    return true;
  }
};

// add(a, b) -> add(b, a), always: a pattern that fires forever on its own.
struct SwapAdd : RewritePattern {
  SwapAdd() : RewritePattern(OpKind::Add, "swap") {}
  bool matchAndRewrite(Op &op, PatternRewriter &r) const override {
    Value *a = op.operand(0), *b = op.operand(1);
    r.setOperand(op, 0, b);
    r.setOperand(op, 1, a);
    return true;
  }
};

TEST(RewriteDriverTest, ReachesFixedPointOnChain) {
  auto g = parse(R"(graph @g(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %a = neg(%x) : tensor<4xf32>
  %b = neg(%a) : tensor<4xf32>
  %c = neg(%b) : tensor<4xf32>
  %d = neg(%c) : tensor<4xf32>
  %e = neg(%d) : tensor<4xf32>
  return %e
})");
  ASSERT_TRUE(g);
  PatternSet patterns;
  patterns.add<DoubleNeg>();
  PassContext ctx;
  auto changed = applyPatternsGreedily(*g, patterns, ctx, "test");
  ASSERT_TRUE(static_cast<bool>(changed)) << llvm::toString(changed.takeError());
  EXPECT_TRUE(*changed);
  // Five negations are one.
  ASSERT_EQ(g->numOps(), 1u);
  EXPECT_EQ(g->ops().begin()->kind(), OpKind::Neg);
  EXPECT_EQ(g->ops().begin()->operand(0), g->input(0));
  EXPECT_EQ(ctx.stats.get("test.double-neg"), 2);
  expectVerifies(*g);

  // At the fixed point a second run changes nothing.
  auto again = applyPatternsGreedily(*g, patterns, ctx, "test");
  ASSERT_TRUE(static_cast<bool>(again));
  EXPECT_FALSE(*again);
  EXPECT_EQ(ctx.stats.get("test.double-neg"), 2);
}

TEST(RewriteDriverTest, RevisitsNewOpsAndUsersOfReplacedValues) {
  // sub(0,x) becomes a new neg; its user then matches double-neg; the mul by one then sees x.
  auto g = parse(R"(graph @g(%x: tensor<4xf32>) -> (y: tensor<4xf32>, z: tensor<4xf32>) {
  %zero = constant {value = dense<[0.0]> : tensor<f32>} : tensor<f32>
  %one = constant {value = dense<[1.0, 1.0, 1.0, 1.0]> : tensor<4xf32>} : tensor<4xf32>
  %s = sub(%zero, %x) : tensor<4xf32>
  %n = neg(%s) : tensor<4xf32>
  %m = mul(%n, %one) : tensor<4xf32>
  %k = add(%m, %s) : tensor<4xf32>
  return %m, %k
})");
  ASSERT_TRUE(g);
  PatternSet patterns;
  patterns.add<DoubleNeg>();
  patterns.add<MulOne>();
  patterns.add<ZeroSubToNeg>();
  PassContext ctx;
  auto changed = applyPatternsGreedily(*g, patterns, ctx, "p");
  ASSERT_TRUE(static_cast<bool>(changed)) << llvm::toString(changed.takeError());
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ctx.stats.get("p.zero-sub"), 1);
  EXPECT_EQ(ctx.stats.get("p.double-neg"), 1);
  EXPECT_EQ(ctx.stats.get("p.mul-one"), 1);
  // y is x itself; z = add(x, neg(x)); both constants died.
  EXPECT_EQ(g->output(0), g->input(0));
  ASSERT_EQ(g->numOps(), 2u) << printGraph(*g);
  Op *add = g->output(1)->definingOp();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->kind(), OpKind::Add);
  EXPECT_EQ(add->operand(0), g->input(0));
  EXPECT_EQ(add->operand(1)->definingOp()->kind(), OpKind::Neg);
  // Use lists match the operands exactly: x is read by the add and the neg, nothing else.
  EXPECT_EQ(g->input(0)->uses().size(), 2u);
  for (const Use &u : g->input(0)->uses())
    EXPECT_EQ(u.user->operand(u.operandIndex), g->input(0));
  expectVerifies(*g);
}

TEST(RewriteDriverTest, ErasesDeadOpsWithoutPatterns) {
  auto g = parse(R"(graph @g(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %a = exp(%x) : tensor<4xf32>
  %b = exp(%a) : tensor<4xf32>
  %c = tanh(%b) : tensor<4xf32>
  %y = neg(%x) : tensor<4xf32>
  return %y
})");
  ASSERT_TRUE(g);
  PatternSet none;
  PassContext ctx;
  auto changed = applyPatternsGreedily(*g, none, ctx, "dce");
  ASSERT_TRUE(static_cast<bool>(changed));
  EXPECT_TRUE(*changed);
  ASSERT_EQ(g->numOps(), 1u);
  EXPECT_EQ(g->ops().begin()->kind(), OpKind::Neg);
  EXPECT_EQ(g->input(0)->uses().size(), 1u);
  expectVerifies(*g);
}

// A fused kernel's body is sealed (graph/Kernel.h: its decision names region ops by position):
// patterns never rewrite inside it.
TEST(RewriteDriverTest, LeavesKernelBodiesSealed) {
  auto g = parse(R"(graph @g(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %y = kernel(%x) {kind = "elementwise"} : tensor<4xf32> {
    graph @region(%p: tensor<4xf32>) -> (r: tensor<4xf32>) {
      %dead = exp(%p) : tensor<4xf32>
      %a = neg(%p) : tensor<4xf32>
      %b = neg(%a) : tensor<4xf32>
      %c = tanh(%b) : tensor<4xf32>
      return %c
    }
  }
  return %y
})");
  ASSERT_TRUE(g);
  PatternSet patterns;
  patterns.add<DoubleNeg>();
  PassContext ctx;
  auto changed = applyPatternsGreedily(*g, patterns, ctx, "test");
  ASSERT_TRUE(static_cast<bool>(changed)) << llvm::toString(changed.takeError());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g->ops().begin()->region(0).numOps(), 4u) << printGraph(*g);
  expectVerifies(*g);
}

TEST(RewriteDriverTest, StopsAtTheCap) {
  auto g = parse(R"(graph @g(%x: tensor<4xf32>, %z: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %y = add(%x, %z) : tensor<4xf32>
  return %y
})");
  ASSERT_TRUE(g);
  PatternSet patterns;
  patterns.add<SwapAdd>();
  PassContext ctx;
  GreedyRewriteConfig config;
  config.maxRewrites = 10;
  auto changed = applyPatternsGreedily(*g, patterns, ctx, "test", config);
  ASSERT_FALSE(static_cast<bool>(changed));
  std::string msg = llvm::toString(changed.takeError());
  EXPECT_NE(msg.find("rewrite cap 10 reached; pattern 'swap' fired 11 times"), std::string::npos)
      << msg;
  EXPECT_EQ(ctx.stats.get("test.swap"), 11);
  // The graph is still well formed where the driver stopped.
  expectVerifies(*g);
}

TEST(RewriteDriverTest, ReportsCycleOfInversePatterns) {
  auto g = parse(R"(graph @g(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %y = neg(%x) : tensor<4xf32>
  return %y
})");
  ASSERT_TRUE(g);
  PatternSet patterns;
  patterns.add<NegToZeroSub>();
  patterns.add<ZeroSubToNeg>();
  PassContext ctx;
  GreedyRewriteConfig config;
  config.maxRewrites = 100;
  auto changed = applyPatternsGreedily(*g, patterns, ctx, "test", config);
  ASSERT_FALSE(static_cast<bool>(changed));
  std::string msg = llvm::toString(changed.takeError());
  EXPECT_NE(msg.find("rewrite cap 100 reached"), std::string::npos) << msg;
  EXPECT_NE(msg.find("likely a cycle"), std::string::npos) << msg;
  // The two patterns alternate, so each fired about half the time.
  EXPECT_GE(ctx.stats.get("test.neg-to-sub"), 50);
  EXPECT_GE(ctx.stats.get("test.zero-sub"), 50);
  expectVerifies(*g);
}

TEST(RewriteDriverTest, ConstantHelpers) {
  auto g = parse(R"(graph @g(%x: tensor<2xf32>) -> (a: tensor<2xf32>, b: tensor<2xi32>, c: tensor<0xf32>) {
  %ones = constant {value = dense<[1.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %mixed = constant {value = dense<[1, 2]> : tensor<2xi32>} : tensor<2xi32>
  %empty = constant {value = dense<[]> : tensor<0xf32>} : tensor<0xf32>
  %a = mul(%x, %ones) : tensor<2xf32>
  return %a, %mixed, %empty
})");
  ASSERT_TRUE(g);
  Value *a = g->output(0), *mixed = g->output(1), *empty = g->output(2);
  Value *ones = a->definingOp()->operand(1);
  ASSERT_NE(constantValue(ones), nullptr);
  EXPECT_EQ(constantValue(ones)->numElements(), 2);
  EXPECT_EQ(constantValue(a), nullptr);
  EXPECT_EQ(constantValue(g->input(0)), nullptr);
  EXPECT_TRUE(isConstantSplat(ones, 1.0));
  EXPECT_FALSE(isConstantSplat(ones, 0.0));
  EXPECT_FALSE(isConstantSplat(mixed, 1.0));
  EXPECT_FALSE(isConstantSplat(empty, 0.0));
}

} // namespace
