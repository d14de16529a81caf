// The JIT engine against the graph interpreter: small graphs compiled whole, arena reuse, and
// input checking.
#include "strata/driver/CompiledModel.h"
#include "strata/runtime/Executor.h"

#include "strata/graph/Builder.h"
#include "strata/graph/Layout.h"
#include "strata/graph/Ops.h"
#include "strata/graph/Walk.h"
#include "strata/interp/Interpreter.h"
#include "strata/loop/Printer.h"

#include "DriverTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <thread>

using namespace strata;
using namespace strata::driver;
using namespace strata::runtime;
using strata::driver::testing::randomTensor;

namespace {

Value *input(Graph &g, const Shape &s, const std::string &name) {
  return g.addInput(TensorType::fromShape(DType::F32, s), name);
}

// Builds the graph twice (the compiler optimizes its copy in place), runs the interpreter on one
// and the JIT on the other, and compares within 1e-5 of the largest |reference|.
void checkAgainstInterpreter(const std::function<void(Graph &)> &build,
                             const std::vector<Tensor> &inputs, size_t minKernels = 1,
                             const CompileOptions &options = {}) {
  Graph ref, jitGraph;
  build(ref);
  build(jitGraph);
  auto want = interpret(ref, inputs);
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
  auto model = compileModel(jitGraph, options);
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

// A constant left operand with a bias per row ([M, 1]) takes the register-tiled kernel, rows
// past a whole tile included (M = 5 with 4-row tiles), batched right operand broadcasting a.
TEST(JitEngine, MatMulRowBias) {
  checkAgainstInterpreter(
      [](Graph &g) {
        Builder b(g);
        Value *x = input(g, {2, 16, 24}, "x");
        g.addOutput(b.value(OpKind::MatMul, {b.constant(randomTensor({5, 16}, 41)), x,
                                             b.constant(randomTensor({5, 1}, 42))}),
                    "out");
      },
      {randomTensor({2, 16, 24}, 43)});
}

// Columns past the last whole vector are computed by scalar tail columns in the last column
// tile: N = 37 and 21 (16 and 8 lanes), with a bias per column, a per-row bias, batched and
// flattened rows, and rows past a whole tile.
TEST(JitEngine, MatMulColumnTails) {
  checkAgainstInterpreter(
      [](Graph &g) {
        Builder b(g);
        Value *x = input(g, {5, 16}, "x"), *y = input(g, {2, 16, 19}, "y"),
              *z = input(g, {2, 3, 16}, "z");
        g.addOutput(b.value(OpKind::MatMul, {x, b.constant(randomTensor({16, 37}, 51)),
                                             b.constant(randomTensor({37}, 52))}),
                    "cols");
        g.addOutput(b.value(OpKind::MatMul, {b.constant(randomTensor({6, 16}, 53)), y,
                                             b.constant(randomTensor({6, 1}, 54))}),
                    "rows");
        g.addOutput(b.value(OpKind::MatMul, {z, b.constant(randomTensor({16, 21}, 55))}), "flat");
      },
      {randomTensor({5, 16}, 56), randomTensor({2, 16, 19}, 57), randomTensor({2, 3, 16}, 58)});
}

// conv1x1-to-matmul in the default pipeline: a 1x1 conv on 12 channels (not blocked) with bias
// and a ReLU, two images, against the interpreter on the unoptimized graph.
TEST(JitEngine, PlainConv1x1AsMatMul) {
  checkAgainstInterpreter(
      [](Graph &g) {
        Builder b(g);
        Value *x = input(g, {2, 12, 7, 7}, "x"); // 49 positions: 3 vectors of 16 and a tail
        AttrMap attrs{{"strides", std::vector<int64_t>{1, 1}},
                      {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                      {"dilations", std::vector<int64_t>{1, 1}},
                      {"group", int64_t{1}}};
        Value *y = b.value(
            OpKind::Conv,
            {x, b.constant(randomTensor({20, 12, 1, 1}, 44)), b.constant(randomTensor({20}, 45))},
            attrs);
        g.addOutput(b.value(OpKind::Max, {y, b.scalar(DType::F32, 0.0)}), "out");
      },
      {randomTensor({2, 12, 7, 7}, 46)});
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

// The vectorized f32 rows (LowerRowVector.cpp) compiled for the host and for AVX2: softmax and
// log_softmax rows with and without a scalar tail, a layer_norm with scale and bias, and a layer
// norm written out as reductions (raise-layer-norm makes it one layer_norm) after a residual add.
TEST(JitEngine, VectorizedSoftmaxAndLayerNormRows) {
  auto build = [](Graph &g) {
    Builder b(g);
    Value *x = input(g, {6, 100}, "x"), *h = input(g, {4, 2, 37}, "h"), *t = input(g, {5, 96}, "t");
    g.addOutput(b.value(OpKind::Softmax, {x}, {{"axis", int64_t{1}}}), "probs");
    g.addOutput(b.value(OpKind::LogSoftmax, {h}, {{"axis", int64_t{2}}}), "logp");
    Value *gamma = b.constant(randomTensor({96}, 21)), *beta = b.constant(randomTensor({96}, 22));
    g.addOutput(
        b.value(OpKind::LayerNorm, {t, gamma, beta}, {{"axis", int64_t{1}}, {"epsilon", 1e-5}}),
        "ln");
    Value *in = b.value(OpKind::Add, {t, b.constant(randomTensor({5, 96}, 23))});
    AttrMap mean = {
        {"kind", std::string("mean")}, {"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}};
    Value *c = b.value(OpKind::Sub, {in, b.value(OpKind::Reduce, {in}, mean)});
    Value *var = b.value(OpKind::Reduce, {b.value(OpKind::Mul, {c, c})}, mean);
    Value *sd = b.value(OpKind::Sqrt, {b.value(OpKind::Add, {var, b.scalar(DType::F32, 1e-5)})});
    Value *n = b.value(OpKind::Div, {c, sd});
    g.addOutput(b.value(OpKind::Add, {b.value(OpKind::Mul, {n, gamma}), beta}), "decomposed");
  };
  std::vector<Tensor> in = {randomTensor({6, 100}, 24), randomTensor({4, 2, 37}, 25),
                            randomTensor({5, 96}, 26)};
  for (const char *target : {"host", "x86-64-v3"}) {
    SCOPED_TRACE(target);
    CompileOptions options;
    options.target = target;
    checkAgainstInterpreter(build, in, 4, options);
  }
}

// The matmul micro-kernel's tiles follow the target's registers (32 with AVX-512, 16 with
// AVX2): a GEMV row, and rows with a tail, N of 13 and 125 vectors (clamped last tiles).
TEST(JitEngine, MatMulTilesForEveryTarget) {
  auto build = [](Graph &g) {
    Builder b(g);
    Value *v = input(g, {1, 160}, "v"), *x = input(g, {37, 64}, "x");
    g.addOutput(b.value(OpKind::MatMul, {v, b.constant(randomTensor({160, 1000}, 31)),
                                         b.constant(randomTensor({1000}, 32))}),
                "gemv");
    g.addOutput(b.value(OpKind::MatMul, {x, b.constant(randomTensor({64, 104}, 33))}), "rows");
  };
  std::vector<Tensor> in = {randomTensor({1, 160}, 34), randomTensor({37, 64}, 35)};
  for (const char *target : {"host", "x86-64-v3"}) {
    SCOPED_TRACE(target);
    CompileOptions options;
    options.target = target;
    checkAgainstInterpreter(build, in, 2, options);
  }
}

// Constant right operands go to column panels (pack-matmul-weights) and the tiled kernel reads
// them there: N = 1024 (rows 4 KiB apart when plain) with a bias and relu fused into the
// kernel, a batched left operand, a GEMV; and a matmul written in panels by hand whose full
// [M, N] bias keeps it off the tiled kernel (the scalar nest indexes the panels).
TEST(JitEngine, MatMulWeightsInPanels) {
  auto build = [](Graph &g) {
    Builder b(g);
    Value *x = input(g, {37, 64}, "x"), *s = input(g, {2, 5, 48}, "s"),
          *v = input(g, {1, 256}, "v");
    Value *mm = b.value(OpKind::MatMul, {x, b.constant(randomTensor({64, 1024}, 41)),
                                         b.constant(randomTensor({1024}, 42))});
    g.addOutput(b.value(OpKind::Max, {mm, b.scalar(DType::F32, 0.0)}), "relu");
    g.addOutput(b.value(OpKind::MatMul, {s, b.constant(randomTensor({48, 96}, 43))}), "batched");
    g.addOutput(b.value(OpKind::MatMul, {v, b.constant(randomTensor({256, 512}, 44))}), "gemv");
    Tensor plain = randomTensor({64, 32}, 45);
    Value *hand = b.value(
        OpKind::MatMul,
        {x, b.constant(packMatMulPanels(plain, 16)), b.constant(randomTensor({37, 32}, 46))},
        {{"b_panel", int64_t{16}}});
    g.addOutput(hand, "full-bias");
  };
  std::vector<Tensor> in = {randomTensor({37, 64}, 47), randomTensor({2, 5, 48}, 48),
                            randomTensor({1, 256}, 49)};
  for (const char *target : {"host", "x86-64-v3"}) {
    SCOPED_TRACE(target);
    CompileOptions options;
    options.target = target;
    checkAgainstInterpreter(build, in, 4, options);
    // Every matmul of the compiled graph reads its weight in panels.
    Graph g;
    build(g);
    auto model = compileModel(g, options);
    ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
    int matmuls = 0, packed = 0;
    forEachOp(g, [&](const Op &op) {
      if (op.kind() == OpKind::MatMul) {
        ++matmuls;
        packed += ops::MatMulOp(op).b_panel() > 0;
      }
    });
    EXPECT_EQ(matmuls, 4);
    EXPECT_EQ(packed, 4);
  }
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
  Tensor in = randomTensor({2, 64}, 11);
  auto first = m->run({in});
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  EXPECT_GT(m->arenaBytes(), 0); // placed at the first run, once the dims are bound
  auto second = m->run({in});
  ASSERT_TRUE(static_cast<bool>(second)) << llvm::toString(second.takeError());
  EXPECT_EQ(m->arenaAllocations(), 1);
  EXPECT_TRUE((*first)[0].identical((*second)[0])); // same inputs, same arena: same bits
  // Outputs are fresh tensors, not views of the arena.
  EXPECT_NE((*first)[0].rawData(), (*second)[0].rawData());
}

// One JIT model, 8 threads x 200 runs, each thread through a context of its own with inputs of
// its own: every output is bit-identical to the one the model's own context gave alone.
TEST(JitEngine, ContextsRunConcurrently) {
  auto m = compileChain();
  ASSERT_TRUE(m);
  constexpr int kThreads = 8, kRuns = 200;
  std::vector<Tensor> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(randomTensor({2, 64}, 100 + t));
    auto r = m->run({inputs.back()});
    ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
    expected.push_back((*r)[0]);
  }
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::unique_ptr<RunContext> ctx = m->createContext();
      for (int r = 0; r < kRuns; ++r) {
        auto got = m->run(*ctx, {inputs[t]});
        if (!got) {
          llvm::consumeError(got.takeError());
          ++failures[t];
        } else if (!(*got)[0].identical(expected[t])) {
          ++failures[t];
        }
      }
    });
  for (std::thread &th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
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

// A dynamic batch: one compiled model, run at several batch sizes, each checked against the
// interpreter; the arena grows only when the bound sizes need more.
// A residual add feeding a layer norm fuses into one kernel whose add result is a temporary: it
// becomes a plan buffer (an extra kernel argument in the arena), not an allocation inside the
// kernel on every run.
TEST(JitEngine, KernelTemporariesLiveInTheArena) {
  auto build = [](Graph &g) {
    Builder b(g);
    Value *x = input(g, {4, 16}, "x"), *y = input(g, {4, 16}, "y");
    Value *sum = b.value(OpKind::Add, {x, y});
    g.addOutput(b.value(OpKind::LayerNorm,
                        {sum, b.constant(randomTensor({16}, 30)), b.constant(randomTensor({16}, 31))},
                        {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}),
                "z");
  };
  Graph g;
  build(g);
  auto po = programOptions(CompileOptions{});
  ASSERT_TRUE(static_cast<bool>(po)) << llvm::toString(po.takeError());
  auto prog = buildProgram(g, *po);
  ASSERT_TRUE(static_cast<bool>(prog)) << llvm::toString(prog.takeError());
  size_t scratch = 0;
  for (size_t k = 0; k < prog->kernels.size(); ++k) {
    std::string text = loop::printFunction(prog->kernels[k]);
    EXPECT_EQ(text.find(" global {"), std::string::npos) << text;
    for (const loop::Param &p : prog->kernels[k].params)
      scratch += p.role == loop::ParamRole::InOut;
  }
  EXPECT_GE(scratch, 1u);
  checkAgainstInterpreter(build, {randomTensor({4, 16}, 32), randomTensor({4, 16}, 33)});
}

TEST(JitEngine, SymbolicBatchRunsAtAnySize) {
  auto build = [](Graph &g) {
    Builder b(g);
    Value *x = g.addInput(TensorType(DType::F32, {Dim::sym("batch"), Dim(16)}), "x");
    Value *w = b.constant(randomTensor({16, 8}, 20));
    Value *h = b.value(OpKind::Tanh, {b.value(OpKind::MatMul, {x, w})});
    g.addOutput(b.value(OpKind::Softmax, {h}, {{"axis", int64_t{1}}}), "y");
  };
  Graph jitGraph;
  build(jitGraph);
  auto m = compileModel(jitGraph);
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  for (int64_t batch : {1, 8, 3}) {
    Graph ref;
    build(ref);
    Tensor in = randomTensor({batch, 16}, static_cast<unsigned>(batch));
    auto want = interpret(ref, {in});
    ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
    auto got = (*m)->run({in});
    ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
    ASSERT_EQ((*got)[0].shape(), (Shape{batch, 8}));
    for (int64_t i = 0; i < batch * 8; ++i)
      ASSERT_NEAR((*got)[0].getDouble(i), (*want)[0].getDouble(i), 1e-6) << "batch " << batch;
  }
  EXPECT_EQ((*m)->arenaAllocations(), 2); // batch 1, then 8; batch 3 fits in batch 8's arena
}

TEST(JitEngine, SymbolsMustAgreeAcrossInputs) {
  Graph g;
  Builder b(g);
  Value *x = g.addInput(TensorType(DType::F32, {Dim::sym("batch"), Dim(4)}), "x");
  Value *y = g.addInput(TensorType(DType::F32, {Dim::sym("batch"), Dim(4)}), "y");
  g.addOutput(b.value(OpKind::Add, {x, y}), "z");
  auto m = compileModel(g);
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  EXPECT_NE(runError(**m, {Tensor(DType::F32, {2, 4}), Tensor(DType::F32, {3, 4})})
                .find("input 1 ('y'): dim 0 ('batch') is 3 but an earlier input bound 'batch' to 2"),
            std::string::npos);
}

TEST(JitEngine, ReducesOverTheBatchWithSymbolicExtents) {
  // A reduction over the dynamic batch cannot be lifted into a loop over the batch: it is
  // lowered with the batch as a run-time extent.
  Graph g;
  Builder b(g);
  Value *x = g.addInput(TensorType(DType::F32, {Dim::sym("batch"), Dim(4)}), "x");
  g.addOutput(b.value(OpKind::Reduce, {x},
                      {{"kind", "sum"}, {"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{1}}}),
              "y");
  CompileOptions opts;
  opts.pipeline = "";
  auto m = compileModel(g, opts);
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  for (int64_t batch : {1, 3}) {
    Tensor in(DType::F32, {batch, 4});
    for (int64_t i = 0; i < in.numElements(); ++i)
      in.setDouble(i, static_cast<double>(i));
    auto out = (*m)->run({in});
    ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
    for (int64_t j = 0; j < 4; ++j) {
      double want = 0;
      for (int64_t r = 0; r < batch; ++r)
        want += static_cast<double>(r * 4 + j);
      EXPECT_EQ((*out)[0].getDouble(j), want) << "batch " << batch;
    }
  }
}

TEST(JitEngine, ChecksTheSizesABroadcastAssumed) {
  // [?n, 4] + [3, 4] is typed [3, 4]: n must be 3 when bound (the kernel reads 3 rows of x).
  Graph g;
  Builder b(g);
  b.setLocation("Add_3");
  Value *x = g.addInput(TensorType(DType::F32, {Dim::sym("n"), Dim(4)}), "x");
  Value *y = g.addInput(TensorType(DType::F32, {Dim(3), Dim(4)}), "y");
  g.addOutput(b.value(OpKind::Add, {x, y}), "z");
  CompileOptions opts;
  opts.pipeline = "";
  auto m = compileModel(g, opts);
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  Tensor three(DType::F32, {3, 4}), one(DType::F32, {1, 4});
  auto out = (*m)->run({three, three});
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  EXPECT_EQ(runError(**m, {one, three}),
            "jit: at the input sizes n = 1, operand 0 dim 0 of op 'add' (node \"Add_3\") is 1 but "
            "must equal 3");
}

TEST(JitEngine, BindsAgainAtEarlierSizes) {
  // A bind at the sizes of an earlier one reuses that shape program's result (formulas and
  // checks); a failed one is never reused: its sizes fail again, and other sizes still run.
  Graph g;
  Builder b(g);
  Value *x = g.addInput(TensorType(DType::F32, {Dim::sym("n"), Dim(4)}), "x");
  Value *y = g.addInput(TensorType(DType::F32, {Dim(3), Dim(4)}), "y");
  Value *sum = b.value(OpKind::Add, {x, y});
  g.addOutput(b.value(OpKind::Reshape, {x},
                      {{"shape", std::vector<int64_t>{-1, 2}}}),
              "flat");
  g.addOutput(sum, "z");
  CompileOptions opts;
  opts.pipeline = "";
  auto m = compileModel(g, opts);
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  Tensor three = randomTensor({3, 4}, 1), one = randomTensor({1, 4}, 2);
  for (int round = 0; round < 2; ++round) {
    auto out = (*m)->run({three, three});
    ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
    EXPECT_EQ((*out)[0].shape(), (Shape{6, 2}));
    EXPECT_EQ((*out)[1].getDouble(5), 2 * three.getDouble(5));
    EXPECT_NE(runError(**m, {one, three}).find("must equal 3"), std::string::npos);
  }
}

TEST(JitEngine, ScansWithSymbolicExtents) {
  // arg max and cumsum along a run-time axis of a [?n, ?m] input; an empty axis has no arg max.
  Graph g;
  Builder b(g);
  b.setLocation("ArgMax_2");
  Value *x = g.addInput(TensorType(DType::F32, {Dim::sym("n"), Dim::sym("m")}), "x");
  g.addOutput(b.value(OpKind::ArgReduce, {x},
                      {{"kind", "max"}, {"axis", 1}, {"keepdims", 0}, {"select_last_index", 0}}),
              "arg");
  g.addOutput(b.value(OpKind::CumSum, {x}, {{"axis", 1}, {"exclusive", 0}, {"reverse", 1}}),
              "sum");
  CompileOptions opts;
  opts.pipeline = "";
  auto m = compileModel(g, opts);
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  Tensor in(DType::F32, {2, 5});
  const double values[] = {1, 7, 3, 7, -2, 0, -1, 4, 9, 2};
  for (int64_t i = 0; i < 10; ++i)
    in.setDouble(i, values[i]);
  auto out = (*m)->run({in});
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  EXPECT_EQ((*out)[0].getInt(0), 1);
  EXPECT_EQ((*out)[0].getInt(1), 3);
  EXPECT_EQ((*out)[1].getDouble(0), 16); // reverse cumsum of row 0 at column 0
  EXPECT_EQ((*out)[1].getDouble(9), 2);
  EXPECT_EQ(runError(**m, {Tensor(DType::F32, {2, 0})}),
            "jit: at the input sizes n = 2, m = 0, the length of axis 1 of op 'arg_reduce' (node "
            "\"ArgMax_2\") is 0 but must be at least 1");
}

TEST(JitEngine, RefusedOpNamesOpAndNode) {
  // Two symbols: no batch lifting, and an f64 layer_norm has no lowering with symbolic extents.
  Graph g;
  Builder b(g);
  b.setLocation("LayerNormalization_7");
  Value *x = g.addInput(TensorType(DType::F64, {Dim::sym("batch"), Dim::sym("n")}), "x");
  Value *s = g.addInput(TensorType(DType::F64, {Dim::sym("n")}), "s");
  Op *rows = b.create(OpKind::LayerNorm, {x, s}, {{"axis", int64_t{1}}, {"epsilon", 1e-5}});
  g.addOutput(rows->result(0), "y");
  CompileOptions opts;
  opts.pipeline = "";
  auto m = compileModel(g, opts);
  ASSERT_FALSE(static_cast<bool>(m));
  EXPECT_EQ(llvm::toString(m.takeError()),
            "jit: op 'layer_norm' (node \"LayerNormalization_7\"): lowering of op 'layer_norm' is "
            "not implemented yet (symbolic dims outside vectorized rows of a static length)");
}

} // namespace

TEST(CompiledModel, SameResultsForAnyThreadCount) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto random = [&](Shape s) {
    Tensor t(DType::F32, std::move(s));
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.setDouble(i, dist(rng));
    return t;
  };
  Tensor x = random({37, 24}), w = random({24, 19}), bias = random({19});
  std::vector<Tensor> first;
  for (unsigned threads : {1u, 2u, 5u}) {
    Graph g;
    Builder b(g);
    Value *in = g.addInput(TensorType::fromShape(DType::F32, {37, 24}), "x");
    Value *mm = b.value(OpKind::Add, {b.value(OpKind::MatMul, {in, b.constant(w)}), b.constant(bias)});
    g.addOutput(b.value(OpKind::Max, {mm, b.scalar(DType::F32, 0.0)}), "out");
    driver::CompileOptions opts;
    opts.threads = threads;
    auto m = driver::compileModel(g, opts);
    ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    EXPECT_EQ((*m)->threads(), threads);
    auto out = (*m)->run({x});
    ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
    if (first.empty())
      first = std::move(*out);
    else
      ASSERT_EQ(std::memcmp(first[0].rawData(), (*out)[0].rawData(), first[0].byteSize()), 0)
          << threads << " threads";
  }
}

// In place (the memory planner's sharing, graph/passes/MemoryPlan.h): an elementwise op whose
// operand dies there writes its result over it. The plan then holds one buffer for the chain, and
// the kernel one inout parameter for both (no two parameters alias, so noalias holds).
TEST(CompiledModel, InPlaceStepsShareOneBuffer) {
  auto build = [](Graph &g) {
    Builder b(g);
    Value *x = input(g, {3, 40}, "x");
    Value *a = b.value(OpKind::Exp, {x});
    Value *n = b.value(OpKind::Neg, {a});  // overwrites a
    Value *t = b.value(OpKind::Tanh, {n}); // overwrites n
    g.addOutput(b.value(OpKind::Mul, {t, x}), "out");
  };
  Graph ref, g;
  build(ref);
  build(g);
  Tensor x = randomTensor({3, 40}, 9);
  auto want = interpret(ref, {x});
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
  CompileOptions opts;
  opts.pipeline = ""; // one step per op
  auto model = compileModel(g, opts);
  ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
  const Plan &plan = (*model)->plan();
  ASSERT_EQ(plan.steps.size(), 4u);
  EXPECT_EQ(plan.buffers.size(), 1u);       // exp, neg and tanh results: one buffer
  EXPECT_EQ(plan.steps[1].args.size(), 1u); // neg: one inout buffer
  EXPECT_EQ(plan.steps[2].args.size(), 1u);
  auto got = (*model)->run({x});
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  for (int64_t i = 0; i < x.numElements(); ++i)
    ASSERT_NEAR((*got)[0].getDouble(i), (*want)[0].getDouble(i), 1e-6) << i;
}
