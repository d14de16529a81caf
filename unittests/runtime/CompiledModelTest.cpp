// The JIT engine against the graph interpreter: small graphs compiled whole, arena reuse, and
// input checking.
#include "strata/runtime/CompiledModel.h"

#include "strata/graph/Builder.h"
#include "strata/interp/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

using namespace strata;
using namespace strata::runtime;

namespace {

Tensor randomTensor(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, dist(rng));
  return t;
}

Value *input(Graph &g, const Shape &s, const std::string &name) {
  return g.addInput(TensorType::fromShape(DType::F32, s), name);
}

// Builds the graph twice (the compiler optimizes its copy in place), runs the interpreter on one
// and the JIT on the other, and compares within 1e-5 of the largest |reference|.
void checkAgainstInterpreter(const std::function<void(Graph &)> &build,
                             const std::vector<Tensor> &inputs, size_t minKernels = 1) {
  Graph ref, jitGraph;
  build(ref);
  build(jitGraph);
  auto want = interpret(ref, inputs);
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
  auto model = compileModel(jitGraph);
  ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
  EXPECT_GE((*model)->numKernels(), minKernels);
  auto got = (*model)->run(inputs);
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  ASSERT_EQ(got->size(), want->size());
  for (size_t o = 0; o < want->size(); ++o) {
    const Tensor &w = (*want)[o], &r = (*got)[o];
    ASSERT_EQ(r.shape(), w.shape());
    ASSERT_EQ(r.dtype(), w.dtype());
    double scale = 0;
    for (int64_t i = 0; i < w.numElements(); ++i)
      scale = std::max(scale, std::abs(w.getDouble(i)));
    for (int64_t i = 0; i < w.numElements(); ++i)
      ASSERT_LE(std::abs(r.getDouble(i) - w.getDouble(i)), 1e-5 * std::max(scale, 1e-30))
          << "output " << o << " element " << i;
  }
}

TEST(JitEngine, ElementwiseChain) {
  checkAgainstInterpreter(
      [](Graph &g) {
        Builder b(g);
        Value *x = input(g, {4, 33}, "x"), *y = input(g, {33}, "y");
        Value *s = b.value(OpKind::Add, {x, y});
        Value *e = b.value(OpKind::Exp, {b.value(OpKind::Neg, {s})});
        g.addOutput(b.value(OpKind::Mul, {e, b.value(OpKind::Tanh, {x})}), "out");
      },
      {randomTensor({4, 33}, 1), randomTensor({33}, 2)});
}

TEST(JitEngine, MatMulBiasRelu) {
  // The default pipeline fuses bias and relu; whatever kernel results must still be exact.
  checkAgainstInterpreter(
      [](Graph &g) {
        Builder b(g);
        Value *x = input(g, {5, 16}, "x");
        Value *w = b.constant(randomTensor({16, 7}, 3));
        Value *bias = b.constant(randomTensor({7}, 4));
        Value *mm = b.value(OpKind::Add, {b.value(OpKind::MatMul, {x, w}), bias});
        g.addOutput(b.value(OpKind::Max, {mm, b.scalar(DType::F32, 0.0)}), "out");
      },
      {randomTensor({5, 16}, 5)});
}

TEST(JitEngine, ConvThenSoftmax) {
  checkAgainstInterpreter(
      [](Graph &g) {
        Builder b(g);
        Value *x = input(g, {1, 3, 8, 8}, "x");
        Value *w = b.constant(randomTensor({4, 3, 3, 3}, 6));
        Value *c = b.value(OpKind::Conv, {x, w},
                           {{"strides", std::vector<int64_t>{1, 1}},
                            {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                            {"dilations", std::vector<int64_t>{1, 1}},
                            {"group", int64_t{1}}});
        g.addOutput(c, "conv");
        g.addOutput(b.value(OpKind::Softmax, {c}, {{"axis", int64_t{1}}}), "probs");
      },
      {randomTensor({1, 3, 8, 8}, 7)}, 2);
}

TEST(JitEngine, OutputsThatAreInputsOrConstants) {
  checkAgainstInterpreter(
      [](Graph &g) {
        Builder b(g);
        Value *x = input(g, {3}, "x");
        g.addOutput(x, "same");
        g.addOutput(b.constant(randomTensor({2}, 8)), "const");
        Value *s = b.value(OpKind::Sqrt, {b.value(OpKind::Abs, {x})});
        g.addOutput(s, "a");
        g.addOutput(s, "b");
      },
      {randomTensor({3}, 9)});
}

std::unique_ptr<CompiledModel> compileChain() {
  Graph g;
  Builder b(g);
  Value *x = input(g, {2, 64}, "x");
  Value *t = b.value(OpKind::Exp, {b.value(OpKind::MatMul, {x, b.constant(randomTensor({64, 64}, 10))})});
  g.addOutput(b.value(OpKind::Softmax, {t}, {{"axis", int64_t{1}}}), "y");
  auto m = compileModel(g);
  EXPECT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  return m ? std::move(*m) : nullptr;
}

TEST(JitEngine, ArenaAllocatedOnceAndReused) {
  auto m = compileChain();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->arenaAllocations(), 0);
  EXPECT_GT(m->arenaBytes(), 0);
  Tensor in = randomTensor({2, 64}, 11);
  auto first = m->run({in});
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  auto second = m->run({in});
  ASSERT_TRUE(static_cast<bool>(second)) << llvm::toString(second.takeError());
  EXPECT_EQ(m->arenaAllocations(), 1);
  EXPECT_TRUE((*first)[0].identical((*second)[0])); // same inputs, same arena: same bits
  // Outputs are fresh tensors, not views of the arena.
  EXPECT_NE((*first)[0].rawData(), (*second)[0].rawData());
}

std::string runError(CompiledModel &m, std::vector<Tensor> inputs) {
  auto r = m.run(inputs);
  if (r)
    return "";
  return llvm::toString(r.takeError());
}

TEST(JitEngine, InputCheckingBeforeAnyKernel) {
  auto m = compileChain();
  ASSERT_TRUE(m);
  EXPECT_NE(runError(*m, {}).find("expected 1 inputs, got 0"), std::string::npos);
  EXPECT_NE(runError(*m, {Tensor(DType::I32, {2, 64})}).find("expected dtype f32, got i32"),
            std::string::npos);
  EXPECT_NE(runError(*m, {Tensor(DType::F32, {128})}).find("expected rank 2, got 1"),
            std::string::npos);
  EXPECT_NE(runError(*m, {Tensor(DType::F32, {2, 63})}).find("dim 1 is 63 but the model expects 64"),
            std::string::npos);
  EXPECT_EQ(m->arenaAllocations(), 0); // nothing ran
}

TEST(JitEngine, SymbolicDimsAreRejected) {
  Graph g;
  Builder b(g);
  Value *x = g.addInput(TensorType(DType::F32, {Dim::sym("batch"), Dim(4)}), "x");
  g.addOutput(b.value(OpKind::Exp, {x}), "y");
  auto m = compileModel(g);
  ASSERT_FALSE(static_cast<bool>(m));
  EXPECT_NE(llvm::toString(m.takeError()).find("dynamic shapes not supported by the jit engine yet"),
            std::string::npos);
}

TEST(JitEngine, MissingLoweringNamesOpAndNode) {
  Graph g;
  Builder b(g);
  b.setLocation("Einsum_7");
  Value *x = input(g, {4, 5}, "x");
  g.addOutput(b.value(OpKind::Einsum, {x}, {{"equation", "ij->ji"}}), "y");
  CompileOptions opts;
  opts.pipeline = "";
  auto m = compileModel(g, opts);
  ASSERT_FALSE(static_cast<bool>(m));
  EXPECT_EQ(llvm::toString(m.takeError()).rfind(
                "jit: op 'einsum' (node Einsum_7): lowering of op 'einsum' is not implemented yet",
                0),
            0u);
}

} // namespace
