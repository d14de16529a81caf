// Use-list maintenance of the graph core: setOperand, replaceAllUsesWith (including graph
// outputs), eraseOp, insertion order and regions.
#include "strata/graph/Builder.h"
#include "strata/graph/Ops.h"
#include "strata/graph/Verifier.h"
#include "strata/graph/Walk.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace strata;

namespace {

bool hasUse(const Value *v, const Op *op, unsigned idx) {
  return std::count(v->uses().begin(), v->uses().end(), Use{const_cast<Op *>(op), idx}) == 1;
}

void expectVerifies(const Graph &g) {
  llvm::Error err = verifyGraph(g);
  EXPECT_FALSE(static_cast<bool>(err)) << (err ? llvm::toString(std::move(err)) : "");
  llvm::consumeError(std::move(err));
}

class GraphTest : public ::testing::Test {
protected:
  Graph g;
  Builder b{g};
  Value *x = g.addInput(TensorType(DType::F32, {2, 3}), "x");
  Value *y = g.addInput(TensorType(DType::F32, {2, 3}), "y");
};

TEST_F(GraphTest, OpTableLookup) {
  EXPECT_EQ(opInfo(OpKind::Add).name, "add");
  EXPECT_TRUE(opInfo(OpKind::Add).traits & T_COMMUTATIVE);
  ASSERT_NE(lookupOp("conv_transpose"), nullptr);
  EXPECT_EQ(lookupOp("conv_transpose")->kind, OpKind::ConvTranspose);
  EXPECT_EQ(lookupOp("nonsense"), nullptr);
  EXPECT_EQ(numOpKinds(), static_cast<size_t>(OpKind::NumKinds));
  const AttrSpec *shape = opInfo(OpKind::Reshape).findAttr("allowzero");
  ASSERT_NE(shape, nullptr);
  EXPECT_TRUE(shape->optional);
}

TEST_F(GraphTest, CreateRecordsUses) {
  Op *add = b.create(OpKind::Add, {x, x});
  EXPECT_EQ(x->uses().size(), 2u);
  EXPECT_TRUE(hasUse(x, add, 0));
  EXPECT_TRUE(hasUse(x, add, 1));
  EXPECT_EQ(add->result()->definingOp(), add);
  EXPECT_EQ(add->parentGraph(), &g);
  EXPECT_TRUE(x->isGraphInput());
  EXPECT_EQ(x->ownerGraph(), &g);
  expectVerifies(g);
}

TEST_F(GraphTest, SetOperandMovesTheUse) {
  Op *add = b.create(OpKind::Add, {x, x});
  add->setOperand(1, y);
  EXPECT_EQ(x->uses().size(), 1u);
  EXPECT_TRUE(hasUse(x, add, 0));
  EXPECT_TRUE(hasUse(y, add, 1));
  add->setOperand(1, y); // no-op
  EXPECT_EQ(y->uses().size(), 1u);
  expectVerifies(g);
}

TEST_F(GraphTest, ReplaceAllUsesWithUpdatesOperandsAndOutputs) {
  Value *n = b.value(OpKind::Neg, {x});
  Op *add = b.create(OpKind::Add, {n, x});
  g.addOutput(n, "neg_out");
  g.addOutput(add->result(), "sum");
  // Replacements must be defined before the users (the verifier checks this below).
  b.setInsertBefore(add);
  Value *e = b.value(OpKind::Exp, {x});
  n->replaceAllUsesWith(e);
  EXPECT_FALSE(n->hasUses());
  EXPECT_EQ(add->operand(0), e);
  EXPECT_TRUE(hasUse(e, add, 0));
  EXPECT_EQ(g.output(0), e);
  EXPECT_EQ(g.outputName(0), "neg_out");
  // The graph output now refers to `e`, so a later RAUW on `e` must move it again.
  Value *s = b.value(OpKind::Sqrt, {x});
  e->replaceAllUsesWith(s);
  EXPECT_EQ(g.output(0), s);
  EXPECT_EQ(add->operand(0), s);
  // The original op is now dead and can be erased; its operand use goes away.
  Op *negOp = n->definingOp();
  size_t xUses = x->uses().size();
  g.eraseOp(negOp);
  EXPECT_EQ(x->uses().size(), xUses - 1);
  expectVerifies(g);
}

TEST_F(GraphTest, EraseOpAndInsertBefore) {
  Op *first = b.create(OpKind::Neg, {x});
  Op *last = b.create(OpKind::Abs, {x});
  b.setInsertBefore(last);
  Op *middle = b.create(OpKind::Mul, {first->result(), y});
  std::vector<Op *> order = g.opList();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0], first);
  EXPECT_EQ(order[1], middle);
  EXPECT_EQ(order[2], last);
  g.eraseOp(middle);
  EXPECT_FALSE(first->result()->hasUses());
  EXPECT_EQ(y->uses().size(), 0u);
  EXPECT_EQ(g.numOps(), 2u);
  g.moveBefore(last, first);
  EXPECT_EQ(g.opList().front(), last);
  expectVerifies(g);
}

TEST_F(GraphTest, RegionsSeeEnclosingValues) {
  Op *outer = b.create(OpKind::Neg, {x});
  // Any op may own a region; fused kernels will. The region reads an enclosing value directly.
  Graph &region = outer->addRegion();
  EXPECT_EQ(region.parentOp(), outer);
  Value *inner = region.addInput(TensorType(DType::F32, {2, 3}), "a");
  Builder rb(region);
  Value *sum = rb.value(OpKind::Add, {inner, y});
  region.addOutput(sum, "r");
  EXPECT_TRUE(hasUse(y, sum->definingOp(), 1));
  EXPECT_EQ(g.numOpsRecursive(), 2u);
  g.addOutput(outer->result(), "out");
  expectVerifies(g);
}

TEST_F(GraphTest, LocationsAndAttributes) {
  b.setLocation("Conv_7");
  Op *t = b.create(OpKind::Transpose, {x}, {{"perm", std::vector<int64_t>{1, 0}}});
  EXPECT_EQ(t->location(), "Conv_7");
  EXPECT_EQ(ops::TransposeOp(*t).perm(), (std::vector<int64_t>{1, 0}));
  EXPECT_THROW(t->attr("missing"), std::out_of_range);
  EXPECT_EQ(t->result()->type().str(), "tensor<3x2xf32>");
}

} // namespace

// The nested-graph walks: inner graphs before the graph holding them, kernel regions skipped by
// rewriting walks (sealed) and visited by read-only ones.
TEST(GraphWalk, VisitsNestedGraphsInnerFirstAndSkipsKernelsWhenAsked) {
  Graph g;
  Builder b(g);
  Value *x = g.addInput(TensorType::fromShape(DType::F32, {2}), "x");
  Op *k = g.createOp(OpKind::Kernel, {x}, {x->type()}, {{"kind", "elementwise"}});
  Graph &region = k->addRegion();
  region.setName("inner");
  Builder rb(region);
  region.addOutput(rb.value(OpKind::Neg, {region.addInput(x->type(), "p")}), "r");
  g.addOutput(b.value(OpKind::Exp, {k->result(0)}), "y");

  std::vector<std::string> graphs;
  forEachGraph(
      g, [&](Graph &sub) { graphs.push_back(sub.name()); }, KernelRegions::Visit);
  EXPECT_EQ(graphs, (std::vector<std::string>{"inner", "main"}));
  graphs.clear();
  forEachGraph(g, [&](Graph &sub) { graphs.push_back(sub.name()); });
  EXPECT_EQ(graphs, (std::vector<std::string>{"main"}));

  std::vector<std::string_view> ops;
  forEachOp(g, [&](const Op &op) { ops.push_back(op.opName()); });
  EXPECT_EQ(ops, (std::vector<std::string_view>{"kernel", "neg", "exp"}));
  ops.clear();
  forEachOp(
      g, [&](const Op &op) { ops.push_back(op.opName()); }, KernelRegions::Skip);
  EXPECT_EQ(ops, (std::vector<std::string_view>{"kernel", "exp"}));
}
