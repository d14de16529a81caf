// The interpreter driver: input checking, symbol binding, evaluation order, freeing of dead
// values, result-type checking and error messages.
#include "KernelTestHelpers.h"

#include "../../lib/interp/Kernels.h" // broadcastShapes (internal)
#include "strata/graph/Builder.h"

using namespace strata;
using namespace strata::testing;

namespace {

TensorType f32Type(std::vector<Dim> dims) { return TensorType(DType::F32, std::move(dims)); }

std::string interpretError(const Graph &g, const std::vector<Tensor> &inputs) {
  auto r = interpret(g, inputs);
  if (r) {
    ADD_FAILURE() << "expected interpret to fail";
    return "";
  }
  return llvm::toString(r.takeError());
}

// y = max(x * 2 + bias, 0) with x : tensor<2x3xf32>.
struct SmallGraph {
  Graph g;
  Value *x;
  SmallGraph() {
    Builder b(g);
    x = g.addInput(f32Type({2, 3}), "x");
    Value *scaled = b.value(OpKind::Mul, {x, b.scalar(DType::F32, 2)});
    Value *biased = b.value(OpKind::Add, {scaled, b.constant(f32({3}, {1, -100, 0}))});
    g.addOutput(b.value(OpKind::Max, {biased, b.scalar(DType::F32, 0)}), "y");
  }
};

TEST(Interpreter, EvaluatesOpsInOrder) {
  SmallGraph s;
  auto out = interpret(s.g, {f32({2, 3}, {1, 2, 3, -4, 5, 6})});
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(doubles((*out)[0]), (std::vector<double>{3, 0, 6, 0, 0, 12}));
}

TEST(Interpreter, ChecksInputCountDTypeRankAndDims) {
  SmallGraph s;
  EXPECT_EQ(interpretError(s.g, {}), "interp: graph 'main' expects 1 inputs, got 0");
  EXPECT_EQ(interpretError(s.g, {i32({2, 3}, {1, 2, 3, 4, 5, 6})}),
            "interp: input 'x': expected dtype f32, got i32");
  EXPECT_EQ(interpretError(s.g, {f32({6}, {1, 2, 3, 4, 5, 6})}),
            "interp: input 'x': expected rank 2, got 1 (shape [6])");
  EXPECT_EQ(interpretError(s.g, {f32({2, 4}, std::vector<double>(8, 0))}),
            "interp: input 'x': expected dim 1 = 3, got 4");
  EXPECT_EQ(interpretError(s.g, {Tensor()}), "interp: input 'x' has no data");
}

TEST(Interpreter, BindsSymbolsAcrossInputs) {
  Graph g;
  Builder b(g);
  Value *x = g.addInput(f32Type({Dim::sym("n"), 2}), "x");
  Value *y = g.addInput(f32Type({Dim::sym("n"), 2}), "y");
  g.addOutput(b.value(OpKind::Sub, {x, y}), "d");
  // The same graph runs at any n ...
  for (int64_t n : {1, 3, 0}) {
    std::vector<double> ones(static_cast<size_t>(2 * n), 1.0);
    auto out = interpret(g, {f32({n, 2}, ones), f32({n, 2}, ones)});
    ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
    EXPECT_EQ((*out)[0].shape(), (Shape{n, 2}));
    EXPECT_EQ(doubles((*out)[0]), std::vector<double>(static_cast<size_t>(2 * n), 0.0));
  }
  // ... but n must agree between the inputs.
  EXPECT_EQ(interpretError(g, {f32({2, 2}, {1, 2, 3, 4}), f32({3, 2}, {1, 2, 3, 4, 5, 6})}),
            "interp: input 'y': dim 0 expected ?n = 2 (bound by input 'x'), got 3");
}

TEST(Interpreter, SymbolicResultsFlowThroughReshape) {
  Graph g;
  Builder b(g);
  Value *x = g.addInput(f32Type({Dim::sym("batch"), 4}), "x");
  Value *flat = b.value(OpKind::Reshape, {x}, {{"shape", std::vector<int64_t>{0, 2, 2}}});
  g.addOutput(b.value(OpKind::Transpose, {flat}, {{"perm", std::vector<int64_t>{0, 2, 1}}}), "y");
  auto out = interpret(g, {f32({1, 4}, {1, 2, 3, 4})});
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(doubles((*out)[0]), (std::vector<double>{1, 3, 2, 4}));
}

TEST(Interpreter, ResultDisagreeingWithItsTypeIsAnError) {
  // A wrongly typed op (as a type-inference bug would produce) is caught after it runs.
  Graph g;
  Value *x = g.addInput(f32Type({2, 3}), "x");
  Op *op = g.createOp(OpKind::Transpose, {x}, {f32Type({2, 3})},
                      {{"perm", std::vector<int64_t>{1, 0}}});
  op->setLocation("T0");
  g.addOutput(op->result(0), "y");
  EXPECT_EQ(interpretError(g, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}),
            "interp: op 'transpose' (node \"T0\"): result 0 dim 0 (expected 2) in [3x2] f32 "
            "disagrees with its type tensor<2x3xf32>");
}

TEST(Interpreter, KernelErrorsNameOpAndNode) {
  Graph g;
  Builder b(g);
  Value *x = g.addInput(f32Type({4}), "x");
  Value *idx = g.addInput(TensorType(DType::I64, {1}), "idx");
  b.setLocation("Gather_7");
  g.addOutput(b.value(OpKind::Gather, {x, idx}, {{"axis", 0}}), "y");
  auto ok = interpret(g, {f32({4}, {5, 6, 7, 8}), i64({1}, {-1})});
  ASSERT_TRUE(static_cast<bool>(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(doubles((*ok)[0]), (std::vector<double>{8}));
  EXPECT_EQ(interpretError(g, {f32({4}, {5, 6, 7, 8}), i64({1}, {9})}),
            "interp: op 'gather' (node \"Gather_7\"): indices into axis 0: index 9 is out of range "
            "[-4, 4)");
}

TEST(Interpreter, SharedValuesAndPassThroughOutputs) {
  // x feeds two ops and is itself an output; a value may be listed as an output twice.
  Graph g;
  Builder b(g);
  Value *x = g.addInput(f32Type({2}), "x");
  Value *neg = b.value(OpKind::Neg, {x});
  Value *sum = b.value(OpKind::Add, {x, neg});
  Value *twice = b.value(OpKind::Add, {neg, neg});
  b.value(OpKind::Exp, {x}); // dead result: computed and dropped
  g.addOutput(sum, "sum");
  g.addOutput(x, "x");
  g.addOutput(twice, "twice");
  g.addOutput(twice, "twice_again");
  auto out = interpret(g, {f32({2}, {1, 2})});
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ(doubles((*out)[0]), (std::vector<double>{0, 0}));
  EXPECT_EQ(doubles((*out)[1]), (std::vector<double>{1, 2}));
  EXPECT_EQ(doubles((*out)[2]), (std::vector<double>{-2, -4}));
  EXPECT_EQ(doubles((*out)[3]), (std::vector<double>{-2, -4}));
}

TEST(Interpreter, IntermediatesAreFreedAfterLastUse) {
  // A chain of 20 adds over 1M floats: the driver must drop each intermediate once its last
  // user has run, which we observe through the buffers' reference counts.
  Graph g;
  Builder b(g);
  Value *x = g.addInput(f32Type({1 << 20}), "x");
  Value *v = x;
  for (int i = 0; i < 20; ++i)
    v = b.value(OpKind::Add, {v, x});
  g.addOutput(v, "y");
  Tensor input(DType::F32, {1 << 20});
  auto out = interpret(g, {input});
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  EXPECT_EQ((*out)[0].buffer().use_count(), 1); // only the caller holds the result
  EXPECT_EQ(input.buffer().use_count(), 1);      // the driver kept no reference to the input
}

TEST(Interpreter, EvaluateOpChecksOperandCount) {
  OpRunner r;
  EXPECT_EQ(r.error(OpKind::Add, {f32({1}, {1})}),
            "interp: op 'add': got 1 operands, expected 2");
  EXPECT_EQ(r.error(OpKind::Neg, {Tensor()}), "interp: op 'neg': operand 0 has no data");
}

TEST(Interpreter, BroadcastShapes) {
  using interp::broadcastShapes;
  EXPECT_EQ(broadcastShapes({2, 1, 3}, {4, 1}), (Shape{2, 4, 3}));
  EXPECT_EQ(broadcastShapes({}, {5}), (Shape{5}));
  EXPECT_EQ(broadcastShapes({0, 1}, {1, 3}), (Shape{0, 3}));
  EXPECT_THROW(broadcastShapes({2}, {3}), interp::InterpError);
}

} // namespace
