// The pass manager: pipeline syntax, fixpoint groups (convergence, cap, cycles), per-pass
// verification, IR dumps, timing, statistics and the --verify-semantics differential check.
#include "PassTestUtil.h"
#include "strata/graph/Builder.h"
#include "strata/graph/Parser.h"
#include "strata/graph/passes/PassManager.h"

#include <gtest/gtest.h>

#include <functional>

using namespace strata;

namespace {

// A pass defined by a function, so each test states its behaviour inline.
class FnPass : public Pass {
public:
  using Fn = std::function<llvm::Expected<bool>(Graph &)>;
  FnPass(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string_view name() const override { return name_; }
  llvm::Expected<bool> run(Graph &g, PassContext &) override { return fn_(g); }

private:
  std::string name_;
  Fn fn_;
};

std::unique_ptr<Pass> fnPass(std::string name, FnPass::Fn fn) {
  return std::make_unique<FnPass>(std::move(name), std::move(fn));
}

using strata::testing::parse;

const char *kNegChain = R"(graph @g(%x: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %a = neg(%x) : tensor<4xf32>
  %b = neg(%a) : tensor<4xf32>
  %c = neg(%b) : tensor<4xf32>
  %y = exp(%c) : tensor<4xf32>
  return %y
})";

// Errors as text; empty on success.
std::string errorText(llvm::Error err) { return err ? llvm::toString(std::move(err)) : ""; }

std::string parseError(std::string_view pipeline) {
  PassManager pm;
  return errorText(pm.parsePipeline(pipeline));
}

// Removes one neg(neg(a)) pair per run: converges after a few runs.
llvm::Expected<bool> removeOneDoubleNeg(Graph &g) {
  for (Op *op : g.opList()) {
    Op *inner = op->operand(0) ? op->operand(0)->definingOp() : nullptr;
    if (op->kind() == OpKind::Neg && inner && inner->kind() == OpKind::Neg) {
      op->result()->replaceAllUsesWith(inner->operand(0));
      g.eraseOp(op);
      if (!inner->result()->hasUses())
        g.eraseOp(inner);
      return true;
    }
  }
  return false;
}

TEST(PassManagerTest, ParsesPipelines) {
  PassManager pm;
  ASSERT_EQ(errorText(pm.parsePipeline(" canonicalize , cse,dce ")), "");
  EXPECT_EQ(pm.pipelineText(), "canonicalize,cse,dce");

  PassManager nested;
  ASSERT_EQ(errorText(nested.parsePipeline("fixpoint(cse, fixpoint(dce)),fuse")), "");
  EXPECT_EQ(nested.pipelineText(), "fixpoint(cse,fixpoint(dce)),fuse");

  PassManager standard;
  ASSERT_EQ(errorText(standard.parsePipeline("default")), "");
  EXPECT_EQ(standard.pipelineText(), PassManager::defaultPipeline());
}

TEST(PassManagerTest, PipelineSyntaxErrors) {
  std::string unknown = parseError("cse,bogus");
  EXPECT_NE(unknown.find("unknown pass 'bogus'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("available: canonicalize, constant-fold, cse"), std::string::npos)
      << unknown;
  EXPECT_NE(parseError("").find("expected a pass name"), std::string::npos);
  EXPECT_NE(parseError("cse,").find("expected a pass name"), std::string::npos);
  EXPECT_NE(parseError("fixpoint(cse").find("expected ')' closing 'fixpoint('"),
            std::string::npos);
  EXPECT_NE(parseError("fixpoint cse").find("expected '(' after 'fixpoint'"), std::string::npos);
  EXPECT_NE(parseError("cse)").find("unexpected ')'"), std::string::npos);
  EXPECT_NE(parseError("fixpoint()").find("expected a pass name"), std::string::npos);
}

TEST(PassManagerTest, FixpointConvergesAndCountsChanges) {
  auto g = parse(kNegChain);
  ASSERT_TRUE(g);
  PassManager pm;
  std::vector<std::unique_ptr<Pass>> body;
  body.push_back(fnPass("undo-neg", removeOneDoubleNeg));
  pm.addFixpoint(std::move(body));
  PassContext ctx;
  ASSERT_EQ(errorText(pm.run(*g, ctx)), "");
  EXPECT_EQ(g->numOps(), 2u); // one neg and the exp remain
  EXPECT_EQ(ctx.stats.get("undo-neg.changed"), 1);
}

TEST(PassManagerTest, FixpointTreatsUnchangedTextAsFixedPoint) {
  // A pass that always claims a change but leaves the graph alone must not loop to the cap.
  auto g = parse(kNegChain);
  ASSERT_TRUE(g);
  PassManager pm;
  std::vector<std::unique_ptr<Pass>> body;
  body.push_back(fnPass("liar", [](Graph &) -> llvm::Expected<bool> { return true; }));
  pm.addFixpoint(std::move(body));
  PassContext ctx;
  EXPECT_EQ(errorText(pm.run(*g, ctx)), "");
  EXPECT_EQ(ctx.stats.get("liar.changed"), 1);
}

TEST(PassManagerTest, FixpointComparesConstantsByContent) {
  // Rebuilding a constant with a fresh buffer of the same bytes is no change of state; changing
  // its bytes is, and the group runs again.
  auto g = parse(R"(graph @g(%x: tensor<2xf32>) -> (y: tensor<2xf32>) {
  %c = constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %y = add(%x, %c) : tensor<2xf32>
  return %y
})");
  ASSERT_TRUE(g);
  int runs = 0;
  auto rebuild = [&runs](Graph &graph) -> llvm::Expected<bool> {
    Op &c = *graph.ops().begin();
    Tensor copy = c.attr("value").getTensor().clone();
    if (++runs == 1)
      copy.setDouble(0, 3.0); // a real change on the first run only
    c.setAttr("value", copy);
    return true;
  };
  PassManager pm;
  std::vector<std::unique_ptr<Pass>> body;
  body.push_back(fnPass("rebuild", rebuild));
  pm.addFixpoint(std::move(body));
  PassContext ctx;
  EXPECT_EQ(errorText(pm.run(*g, ctx)), "");
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(g->ops().begin()->attr("value").getTensor().getDouble(0), 3.0);
}

TEST(PassManagerTest, FixpointDetectsCycle) {
  auto g = parse(R"(graph @g(%x: tensor<4xf32>, %z: tensor<4xf32>) -> (y: tensor<4xf32>) {
  %y = sub(%x, %z) : tensor<4xf32>
  return %y
})");
  ASSERT_TRUE(g);
  // Swaps the operands of the sub every run: the graph alternates between two states.
  auto swap = [](Graph &graph) -> llvm::Expected<bool> {
    Op &op = *graph.ops().begin();
    Value *a = op.operand(0), *b = op.operand(1);
    op.setOperand(0, b);
    op.setOperand(1, a);
    return true;
  };
  PassManager pm;
  std::vector<std::unique_ptr<Pass>> body;
  body.push_back(fnPass("noop", [](Graph &) -> llvm::Expected<bool> { return false; }));
  body.push_back(fnPass("swap", swap));
  pm.addFixpoint(std::move(body));
  PassContext ctx;
  EXPECT_EQ(errorText(pm.run(*g, ctx)),
            "fixpoint(noop,swap) cycles: graph state after iteration 2 repeats iteration 0");
}

TEST(PassManagerTest, FixpointStopsAtCap) {
  auto g = parse(kNegChain);
  ASSERT_TRUE(g);
  // Grows the graph forever: no state ever repeats.
  auto grow = [](Graph &graph) -> llvm::Expected<bool> {
    Builder(graph).value(OpKind::Neg, {graph.input(0)});
    return true;
  };
  PassManagerOptions opts;
  opts.fixpointCap = 5;
  PassManager pm(opts);
  std::vector<std::unique_ptr<Pass>> body;
  body.push_back(fnPass("grow", grow));
  pm.addFixpoint(std::move(body));
  PassContext ctx;
  EXPECT_EQ(errorText(pm.run(*g, ctx)),
            "fixpoint(grow) did not reach a fixed point within 5 iterations");
  EXPECT_EQ(ctx.stats.get("grow.changed"), 5);
}

TEST(PassManagerTest, VerifyEachNamesTheBreakingPass) {
  auto g = parse(kNegChain);
  ASSERT_TRUE(g);
  // Gives an op a result type inference disagrees with.
  auto breakTypes = [](Graph &graph) -> llvm::Expected<bool> {
    graph.ops().begin()->result()->setType(TensorType(DType::F32, {5}));
    return true;
  };
  PassManagerOptions opts;
  opts.verifyEach = true;
  PassManager pm(opts);
  pm.addPass(fnPass("fine", [](Graph &) -> llvm::Expected<bool> { return false; }));
  pm.addPass(fnPass("breaker", breakTypes));
  PassContext ctx;
  std::string err = errorText(pm.run(*g, ctx));
  EXPECT_EQ(err.rfind("internal: verification failed after pass 'breaker': ", 0), 0u) << err;
}

TEST(PassManagerTest, PassErrorsNameThePass) {
  auto g = parse(kNegChain);
  ASSERT_TRUE(g);
  PassManager pm;
  pm.addPass(fnPass("broken", [](Graph &) -> llvm::Expected<bool> {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no can do");
  }));
  PassContext ctx;
  EXPECT_EQ(errorText(pm.run(*g, ctx)), "pass 'broken' failed: no can do");
}

TEST(PassManagerTest, VerifySemanticsCatchesAWrongPass) {
  auto g = parse(kNegChain);
  ASSERT_TRUE(g);
  // "Simplifies" neg(x) to x: exp(-x) becomes exp(x), which is wrong.
  auto dropNeg = [](Graph &graph) -> llvm::Expected<bool> {
    Op &first = *graph.ops().begin();
    first.result()->replaceAllUsesWith(first.operand(0));
    graph.eraseOp(&first);
    return true;
  };
  PassManagerOptions opts;
  opts.verifySemantics = true;
  PassManager pm(opts);
  pm.addPass(fnPass("undo-neg", removeOneDoubleNeg)); // exact: passes the check
  pm.addPass(fnPass("drop-neg", dropNeg));
  PassContext ctx;
  std::string err = errorText(pm.run(*g, ctx));
  EXPECT_EQ(err.rfind("semantics changed by pass 'drop-neg': output 'y' max error ", 0), 0u)
      << err;
  EXPECT_NE(err.find("(tolerance "), std::string::npos) << err;
  EXPECT_EQ(g->numOps(), 1u); // both passes ran
}

// A pass that changes the graph but returns false escapes a check keyed on its report: the
// state comparison catches it, whether or not the change is also wrong.
TEST(PassManagerTest, VerifySemanticsCatchesAnUnreportedChange) {
  auto g = parse(kNegChain);
  ASSERT_TRUE(g);
  auto silent = [](Graph &graph) -> llvm::Expected<bool> {
    auto removed = removeOneDoubleNeg(graph); // an exact change...
    EXPECT_TRUE(removed && *removed);
    return false; // ...reported as none
  };
  PassManagerOptions opts;
  opts.verifySemantics = true;
  PassManager pm(opts);
  pm.addPass(fnPass("silent", silent));
  PassContext ctx;
  EXPECT_EQ(errorText(pm.run(*g, ctx)), "pass 'silent' changed the graph but reported no change");
  // Without the option nothing compares states: the same pipeline runs through.
  auto g2 = parse(kNegChain);
  PassManager plain;
  plain.addPass(fnPass("silent", silent));
  EXPECT_EQ(errorText(plain.run(*g2, ctx)), "");
}

TEST(PassManagerTest, VerifySemanticsAcceptsExactPassesWithSymbolicDims) {
  auto g = parse(R"(graph @g(%x: tensor<?n x4xf32>) -> (y: tensor<?n x4xf32>) {
  %a = neg(%x) : tensor<?n x4xf32>
  %b = neg(%a) : tensor<?n x4xf32>
  %y = tanh(%b) : tensor<?n x4xf32>
  return %y
})");
  ASSERT_TRUE(g);
  PassManagerOptions opts;
  opts.verifySemantics = true;
  PassManager pm(opts);
  pm.addPass(fnPass("undo-neg", removeOneDoubleNeg));
  PassContext ctx;
  EXPECT_EQ(errorText(pm.run(*g, ctx)), "");
  EXPECT_EQ(g->numOps(), 1u);
}

TEST(PassManagerTest, PrintsIrAfterNamedPassesAndTimings) {
  auto g = parse(kNegChain);
  ASSERT_TRUE(g);
  std::string log;
  llvm::raw_string_ostream os(log);
  PassManagerOptions opts;
  opts.printIrAfter = {"undo-neg"};
  opts.timePasses = true;
  opts.log = &os;
  PassManager pm(opts);
  pm.addPass(fnPass("quiet", [](Graph &) -> llvm::Expected<bool> { return false; }));
  pm.addPass(fnPass("undo-neg", removeOneDoubleNeg));
  PassContext ctx;
  ASSERT_EQ(errorText(pm.run(*g, ctx)), "");
  os.flush();
  EXPECT_EQ(log.find("IR after quiet"), std::string::npos) << log;
  size_t dump = log.find("// -----// IR after undo-neg //----- //\ngraph @g(");
  ASSERT_NE(dump, std::string::npos) << log;
  size_t timing = log.find("pass execution timing report");
  ASSERT_NE(timing, std::string::npos) << log;
  EXPECT_GT(timing, dump);
  EXPECT_NE(log.find("  quiet\n"), std::string::npos) << log;
  EXPECT_NE(log.find("  total\n"), std::string::npos) << log;
}

} // namespace
