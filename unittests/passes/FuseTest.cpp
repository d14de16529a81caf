// fuse: differential tests (interpret before and after fusion; fusion only regroups the same ops,
// so results must agree bit for bit), the kernel op's verifier rules, and pass bookkeeping.
#include "PassTestUtil.h"
#include "strata/graph/Kernel.h"
#include "strata/graph/Parser.h"
#include "strata/graph/Printer.h"
#include "strata/graph/TypeInference.h"
#include "strata/graph/Verifier.h"
#include "strata/graph/passes/Passes.h"
#include "strata/interp/Interpreter.h"

#include <gtest/gtest.h>

#include <random>

using namespace strata;

namespace {

using strata::testing::parse;

std::vector<Tensor> randomInputs(const Graph &g, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<Tensor> inputs;
  for (const Value *in : g.inputs()) {
    Tensor t(in->type().dtype, in->type().staticShape());
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.setDouble(i, dist(rng));
    inputs.push_back(t);
  }
  return inputs;
}

// Fuses `text`, checks the result verifies, round-trips through text, and computes exactly what
// the unfused graph computes. Returns the number of kernels formed.
size_t fuseAndCompare(const std::string &text, PassContext *ctxOut = nullptr) {
  auto g = parse(text);
  if (!g)
    return 0;
  std::vector<Tensor> inputs = randomInputs(*g, 7);
  auto before = interpret(*g, inputs);
  EXPECT_TRUE(static_cast<bool>(before)) << llvm::toString(before.takeError());

  PassContext ctx;
  auto changed = createFusePass()->run(*g, ctx);
  EXPECT_TRUE(static_cast<bool>(changed)) << llvm::toString(changed.takeError());
  llvm::Error err = verifyGraph(*g);
  EXPECT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err)) << "\n" << printGraph(*g);

  std::string printed = printGraph(*g);
  auto reparsed = parse(printed);
  if (reparsed) {
    EXPECT_EQ(printGraph(*reparsed), printed);
  }

  auto after = interpret(*g, inputs);
  EXPECT_TRUE(static_cast<bool>(after)) << llvm::toString(after.takeError());
  if (before && after) {
    EXPECT_EQ(before->size(), after->size());
    for (size_t i = 0; i < before->size() && i < after->size(); ++i)
      EXPECT_TRUE((*before)[i].identical((*after)[i])) << "output " << i << " differs";
  }
  if (ctxOut)
    *ctxOut = ctx;
  return countKernelOps(*g);
}

TEST(Fuse, ElementwiseChainWithBroadcast) {
  EXPECT_EQ(fuseAndCompare(R"(
graph @main(%x: tensor<3x5xf32>, %b: tensor<5xf32>, %c: tensor<3x1xf32>) -> (y: tensor<3x5xf32>) {
  %t = constant {value = dense<[0.25]> : tensor<f32>} : tensor<f32>
  %e = tanh(%x) : tensor<3x5xf32>
  %a = add(%e, %b) : tensor<3x5xf32>
  %m = mul(%a, %c) : tensor<3x5xf32>
  %p = lt(%m, %t) : tensor<3x5xbool>
  %y = select(%p, %m, %a) : tensor<3x5xf32>
  return %y
})"),
            1u);
}

TEST(Fuse, EpilogueWithResidual) {
  PassContext ctx;
  EXPECT_EQ(fuseAndCompare(R"(
graph @main(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>, %b: tensor<2xf32>, %r: tensor<1x2x6x6xf32>) -> (y: tensor<1x2x6x6xf32>) {
  %z = constant {value = dense<[0]> : tensor<f32>} : tensor<f32>
  %c = conv(%x, %w, %b) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]} : tensor<1x2x6x6xf32>
  %s = add(%c, %r) : tensor<1x2x6x6xf32>
  %y = max(%s, %z) : tensor<1x2x6x6xf32>
  return %y
})",
                           &ctx),
            1u);
  EXPECT_EQ(ctx.stats.get("fuse.kernels.epilogue"), 1);
  EXPECT_EQ(ctx.stats.get("fuse.ops_fused"), 3);
}

TEST(Fuse, DecomposedSoftmaxAndLayerNorm) {
  PassContext ctx;
  EXPECT_EQ(fuseAndCompare(R"(
graph @main(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> (y: tensor<2x3x8xf32>, z: tensor<2x3x8xf32>) {
  %two = constant {value = dense<[2]> : tensor<f32>} : tensor<f32>
  %eps = constant {value = dense<[1e-05]> : tensor<f32>} : tensor<f32>
  %mean = reduce(%x) {axes = [2], keepdims = 1, kind = "mean"} : tensor<2x3x1xf32>
  %c = sub(%x, %mean) : tensor<2x3x8xf32>
  %sq = pow(%c, %two) : tensor<2x3x8xf32>
  %var = reduce(%sq) {axes = [2], keepdims = 1, kind = "mean"} : tensor<2x3x1xf32>
  %ve = add(%var, %eps) : tensor<2x3x1xf32>
  %sd = sqrt(%ve) : tensor<2x3x1xf32>
  %n = div(%c, %sd) : tensor<2x3x8xf32>
  %y = mul(%n, %g) : tensor<2x3x8xf32>
  %mx = reduce(%y) {axes = [2], keepdims = 1, kind = "max"} : tensor<2x3x1xf32>
  %d = sub(%y, %mx) : tensor<2x3x8xf32>
  %e = exp(%d) : tensor<2x3x8xf32>
  %s = reduce(%e) {axes = [2], keepdims = 1, kind = "sum"} : tensor<2x3x1xf32>
  %z = div(%e, %s) : tensor<2x3x8xf32>
  return %y, %z
})",
                           &ctx),
            1u); // same rows: one kernel; y, also a graph output, is an extra result
  EXPECT_EQ(ctx.stats.get("fuse.kernels.reduction"), 1);
  EXPECT_EQ(ctx.stats.get("fuse.ops_fused"), 13);
}

TEST(Fuse, MultiOutputAndCycleAvoidance) {
  EXPECT_EQ(fuseAndCompare(R"(
graph @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (y: tensor<4x4xf32>, z: tensor<4x4xf32>) {
  %a = exp(%x) : tensor<4x4xf32>
  %b = neg(%a) : tensor<4x4xf32>
  %c = cumsum(%a) {axis = 0, exclusive = 0, reverse = 1} : tensor<4x4xf32>
  %d = add(%b, %c) : tensor<4x4xf32>
  %e = sigmoid(%x) : tensor<4x4xf32>
  %f = mul(%e, %e) : tensor<4x4xf32>
  %z = matmul(%e, %w) : tensor<4x4xf32>
  %y = add(%d, %f) : tensor<4x4xf32>
  return %y, %z
})"),
            1u);
}

TEST(Fuse, IndexMapsAndStandaloneMovement) {
  EXPECT_EQ(fuseAndCompare(R"(
graph @main(%x: tensor<2x6xf32>, %b: tensor<3x4xf32>) -> (y: tensor<4x3xf32>, v: tensor<2x3xf32>) {
  %xt = transpose(%x) {perm = [1, 0]} : tensor<6x2xf32>
  %e = exp(%xt) : tensor<6x2xf32>
  %r = reshape(%e) {shape = [3, 4]} : tensor<3x4xf32>
  %s = add(%r, %b) : tensor<3x4xf32>
  %y = transpose(%s) {perm = [1, 0]} : tensor<4x3xf32>
  %v = slice(%x) {ends = [9223372036854775807, 6], starts = [0, 0], steps = [1, 2]} : tensor<2x3xf32>
  return %y, %v
})"),
            1u);
}

// Why ops stayed apart, for strata explain: one remark per producer -> consumer edge left between
// groups, naming the rule.
TEST(Fuse, RemarksSayWhyNot) {
  auto g = parse(R"(
graph @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %v: tensor<4x4xf32>) -> (y: tensor<4x4xf32>) {
  %s = mul(%x, %x) : tensor<4x4xf32> loc("scale")
  %a = matmul(%s, %w) : tensor<4x4xf32> loc("mm1")
  %r = sigmoid(%a) : tensor<4x4xf32> loc("act")
  %b = matmul(%r, %v) : tensor<4x4xf32> loc("mm2")
  %c = cumsum(%b) {axis = 0, exclusive = 0, reverse = 0} : tensor<4x4xf32> loc("scan")
  %y = exp(%c) : tensor<4x4xf32> loc("out")
  return %y
})");
  ASSERT_TRUE(g);
  PassContext ctx;
  auto changed = createFusePass()->run(*g, ctx);
  ASSERT_TRUE(static_cast<bool>(changed)) << llvm::toString(changed.takeError());
  auto remarkOn = [&](const std::string &node, const std::string &text) {
    for (const Remark &r : ctx.remarks)
      if (r.pass == "fuse" && r.node == node && r.message.find(text) != std::string::npos)
        return true;
    return false;
  };
  EXPECT_TRUE(remarkOn("scale", "computes on an operand of the matmul"));
  EXPECT_TRUE(remarkOn("act", "a kernel has one")); // sigmoid went with mm1; mm2 is another anchor
  EXPECT_TRUE(remarkOn("mm2", "'cumsum' fuses with nothing"));
  for (const Remark &r : ctx.remarks)
    EXPECT_NE(r.node, "out") << r.message; // the last op feeds nothing
}

TEST(Fuse, SecondRunChangesNothing) {
  auto g = parse(R"(
graph @main(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %a = exp(%x) : tensor<4xf32>
  %y = neg(%a) : tensor<4xf32>
  return %y
})");
  ASSERT_TRUE(g);
  PassContext ctx;
  auto first = createFusePass()->run(*g, ctx);
  ASSERT_TRUE(static_cast<bool>(first));
  EXPECT_TRUE(*first);
  auto second = createFusePass()->run(*g, ctx);
  ASSERT_TRUE(static_cast<bool>(second));
  EXPECT_FALSE(*second);
  EXPECT_EQ(ctx.stats.get("fuse.kernels"), 1);
}

TEST(Fuse, KernelTypesAreNotInferred) {
  auto types = inferResultTypes(OpKind::Kernel, {TensorType(DType::F32, {4})},
                                {{"kind", Attribute(std::string("elementwise"))}});
  ASSERT_FALSE(static_cast<bool>(types));
  EXPECT_NE(llvm::toString(types.takeError()).find("come from its region"), std::string::npos);
}

// Each malformed kernel is rejected with a message naming the broken rule.
std::string verifyError(const std::string &text) {
  auto g = parse(text);
  if (!g)
    return "parse failed";
  llvm::Error err = verifyGraph(*g);
  return err ? llvm::toString(std::move(err)) : "";
}

TEST(Fuse, VerifierChecksKernels) {
  EXPECT_NE(verifyError(R"(
graph @main(%x: tensor<4xf32>, %w: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %y = kernel(%x) {kind = "elementwise"} : tensor<4xf32> {
    graph @r(%p: tensor<4xf32>) -> (o: tensor<4xf32>) {
      %s = add(%p, %w) : tensor<4xf32>
      return %s
    }
  }
  return %y
})")
                .find("a kernel region is closed"),
            std::string::npos);
  EXPECT_NE(verifyError(R"(
graph @main(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %y = kernel(%x) {kind = "elementwise"} : tensor<4xf32> {
    graph @r(%p: tensor<4xi32>) -> (o: tensor<4xi32>) {
      return %p
    }
  }
  return %y
})")
                .find("region input 0 has type tensor<4xi32> but operand 0 has tensor<4xf32>"),
            std::string::npos);
  EXPECT_NE(verifyError(R"(
graph @main(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %y, %z = kernel(%x) {kind = "elementwise"} : tensor<4xf32>, tensor<4xf32> {
    graph @r(%p: tensor<4xf32>) -> (o: tensor<4xf32>) {
      return %p
    }
  }
  return %y
})")
                .find("has 2 results but its region has 1 outputs"),
            std::string::npos);
  EXPECT_NE(verifyError(R"(
graph @main(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %y = kernel(%x) : tensor<4xf32> {
    graph @r(%p: tensor<4xf32>) -> (o: tensor<4xf32>) {
      return %p
    }
  }
  return %y
})")
                .find("missing required attribute 'kind'"),
            std::string::npos);
  EXPECT_NE(verifyError(R"(
graph @main(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %y = kernel(%x) {kind = "elementwise"} : tensor<4xf32>
  return %y
})")
                .find("has 0 regions; a kernel has exactly one"),
            std::string::npos);
  // A well-formed kernel passes.
  EXPECT_EQ(verifyError(R"(
graph @main(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %y = kernel(%x) {kind = "elementwise"} : tensor<4xf32> {
    graph @r(%p: tensor<4xf32>) -> (o: tensor<4xf32>) {
      %n = neg(%p) : tensor<4xf32>
      return %n
    }
  }
  return %y
})"),
            "");
}

} // namespace
