// Symbolic dims beyond a leading batch: a conv net whose batch, height and width are all symbolic
// is typed with window formulas, run by the interpreter at any size, and run by the JIT compiled
// once per set of input shapes (driver/ShapeSpecializedModel.h), against the interpreter.
#include "strata/driver/CompiledModel.h"
#include "strata/driver/ShapeSpecializedModel.h"

#include "strata/graph/Builder.h"
#include "strata/graph/Specialize.h"
#include "strata/interp/Interpreter.h"

#include "DriverTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace strata;
using namespace strata::driver;
using strata::driver::testing::randomTensor;

namespace {

AttrMap convAttrs(int64_t stride, int64_t pad) {
  return {{"strides", std::vector<int64_t>{stride, stride}},
          {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
          {"dilations", std::vector<int64_t>{1, 1}},
          {"group", int64_t{1}}};
}

// x [?n, 3, ?h, ?w] -> conv 3x3/2 pad 1 (16 ch) -> relu -> max pool 3x3/2 pad 1 (ceil mode)
// -> conv 3x3/1 pad 1 -> residual add -> mean over h, w -> flatten -> matmul [16, 5].
std::unique_ptr<Graph> buildNet() {
  auto g = std::make_unique<Graph>("dyn");
  Builder b(*g);
  TensorType t(DType::F32, {Dim::sym("n"), Dim(3), Dim::sym("h"), Dim::sym("w")});
  Value *x = g->addInput(t, "x");
  Value *c1 = b.value(OpKind::Conv,
                      {x, b.constant(randomTensor({16, 3, 3, 3}, 1)),
                       b.constant(randomTensor({16}, 2))},
                      convAttrs(2, 1));
  Value *r1 = b.value(OpKind::Max, {c1, b.scalar(DType::F32, 0.0)});
  Value *p = b.value(OpKind::Pool, {r1},
                     {{"kind", "max"},
                      {"kernel", std::vector<int64_t>{3, 3}},
                      {"strides", std::vector<int64_t>{2, 2}},
                      {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                      {"dilations", std::vector<int64_t>{1, 1}},
                      {"ceil_mode", int64_t{1}},
                      {"count_include_pad", int64_t{0}},
                      {"p", int64_t{2}}});
  Value *c2 = b.value(OpKind::Conv, {p, b.constant(randomTensor({16, 16, 3, 3}, 3))},
                      convAttrs(1, 1));
  Value *sum = b.value(OpKind::Add, {c2, p});
  Value *mean = b.value(OpKind::Reduce, {sum},
                        {{"kind", "mean"},
                         {"axes", std::vector<int64_t>{2, 3}},
                         {"keepdims", int64_t{0}}});
  Value *logits = b.value(OpKind::MatMul, {mean, b.constant(randomTensor({16, 5}, 4))});
  g->addOutput(logits, "logits");
  g->addOutput(p, "pooled");
  return g;
}

void expectClose(const Tensor &got, const Tensor &want) {
  ASSERT_EQ(got.shape(), want.shape());
  double scale = 1e-30;
  for (int64_t i = 0; i < want.numElements(); ++i)
    scale = std::max(scale, std::abs(want.getDouble(i)));
  for (int64_t i = 0; i < want.numElements(); ++i)
    ASSERT_LE(std::abs(got.getDouble(i) - want.getDouble(i)), 1e-5 * scale) << "element " << i;
}

TEST(SymbolicDims, WindowFormulasTypeTheGraph) {
  auto g = buildNet();
  // conv 3x3/2 pad 1: ⌊(h - 1)/2⌋ + 1; the residual add unifies the conv and pool branches.
  const TensorType &pooled = g->output(1)->type();
  ASSERT_EQ(pooled.rank(), 4);
  EXPECT_FALSE(pooled.dims[2].isStatic());
  EXPECT_EQ(pooled.dims[1], Dim(16));
  EXPECT_TRUE(needsShapeSpecialization(*g));
  EXPECT_EQ(g->output(0)->type().str(), "tensor<?n x5xf32>");
}

TEST(SymbolicDims, SpecializeBindsEveryFormula) {
  auto g = buildNet();
  auto sizes = bindInputSymbols(*g, {{2, 3, 37, 50}});
  ASSERT_TRUE(static_cast<bool>(sizes)) << llvm::toString(sizes.takeError());
  auto bound = specializeGraph(*g, *sizes);
  ASSERT_TRUE(static_cast<bool>(bound)) << llvm::toString(bound.takeError());
  EXPECT_TRUE((*bound)->output(1)->type().isStatic());
  // conv: (37 + 2 - 3)/2 + 1 = 19, (50 - 1)/2 + 1 = 25; pool (ceil): 10, 13.
  EXPECT_EQ((*bound)->output(1)->type().str(), "tensor<2x16x10x13xf32>");
  EXPECT_FALSE(needsShapeSpecialization(**bound));
}

TEST(SymbolicDims, BindingErrorsNameTheInput) {
  auto g = buildNet();
  auto rank = bindInputSymbols(*g, {{2, 3, 37}});
  ASSERT_FALSE(static_cast<bool>(rank));
  EXPECT_NE(llvm::toString(rank.takeError()).find("input 'x': expected rank 4"), std::string::npos);
  auto channels = bindInputSymbols(*g, {{2, 4, 37, 50}});
  ASSERT_FALSE(static_cast<bool>(channels));
  EXPECT_NE(llvm::toString(channels.takeError()).find("expected dim 1 = 3, got 4"),
            std::string::npos);
  // An image smaller than an unpadded 3x3 window: refused naming the node, not a crash.
  Graph small("small");
  Builder b(small);
  Value *x = small.addInput(TensorType(DType::F32, {Dim(1), Dim(1), Dim::sym("h"), Dim::sym("w")}),
                            "x");
  small.addOutput(
      b.value(OpKind::Conv, {x, b.constant(randomTensor({1, 1, 3, 3}, 7))}, convAttrs(1, 0)),
      "y");
  auto sizes = bindInputSymbols(small, {{1, 1, 2, 5}});
  ASSERT_TRUE(static_cast<bool>(sizes)) << llvm::toString(sizes.takeError());
  auto bound = specializeGraph(small, *sizes);
  ASSERT_FALSE(static_cast<bool>(bound));
  std::string msg = llvm::toString(bound.takeError());
  EXPECT_NE(msg.find("at the bound sizes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not fit"), std::string::npos) << msg;
}

TEST(SymbolicDims, InterpreterAndJitAtThreeSizes) {
  auto ref = buildNet();
  std::shared_ptr<const Graph> g = buildNet();
  std::vector<std::pair<std::string, TensorType>> interface = {{"x", g->input(0)->type()}};
  ShapeSpecializedModel model(interface, specializingSource(g), CompileOptions{});
  const std::vector<Shape> shapes = {{1, 3, 32, 32}, {2, 3, 45, 61}, {1, 3, 17, 9}};
  unsigned seed = 10;
  for (const Shape &s : shapes) {
    std::vector<Tensor> in = {randomTensor(s, seed++)};
    auto want = interpret(*ref, in);
    ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
    auto got = model.run(in);
    ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
    ASSERT_EQ(got->size(), 2u);
    expectClose((*got)[0], (*want)[0]);
    expectClose((*got)[1], (*want)[1]);
  }
  EXPECT_EQ(model.compilations(), 3u);
  // The first size again: compiled already.
  auto again = model.run({randomTensor(shapes[0], 99)});
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(model.compilations(), 3u);
  // A wrong channel count is an error naming the input, not a crash.
  auto bad = model.run({randomTensor({1, 4, 32, 32}, 5)});
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("input 'x'"), std::string::npos);
}

// Symbolic extents: the same net compiled once, its kernels taking n, h and w as run-time
// extents (the pool's ceil-mode formula and the convs' strides computed by the plan's shape
// program), runs at every size like the interpreter.
TEST(SymbolicDims, OneCompiledModelRunsEverySize) {
  auto ref = buildNet();
  auto g = buildNet();
  auto model = compileModel(*g, CompileOptions{});
  ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
  unsigned seed = 20;
  for (const Shape &s :
       std::vector<Shape>{{1, 3, 32, 32}, {2, 3, 45, 61}, {1, 3, 17, 9}, {3, 3, 1, 2}, {1, 3, 9, 150}}) {
    std::vector<Tensor> in = {randomTensor(s, seed++)};
    auto want = interpret(*ref, in);
    ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
    auto got = (*model)->run(in);
    ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
    ASSERT_EQ(got->size(), 2u);
    expectClose((*got)[0], (*want)[0]);
    expectClose((*got)[1], (*want)[1]);
  }
}

TEST(SymbolicDims, InterpreterChecksFormulaInputDims) {
  // An input typed with a formula dim: checked against the symbols other inputs bind.
  Graph g("f");
  Builder b(g);
  Value *a = g.addInput(TensorType(DType::F32, {Dim::sym("s")}), "a");
  std::string err;
  auto twice = SymExpr::parse("2*s", err);
  ASSERT_TRUE(twice.has_value()) << err;
  Value *c = g.addInput(TensorType(DType::F32, {Dim::of(*twice)}), "c");
  g.addOutput(a, "a_out");
  g.addOutput(c, "c_out");
  EXPECT_TRUE(static_cast<bool>(interpret(g, {randomTensor({3}, 1), randomTensor({6}, 2)})));
  auto bad = interpret(g, {randomTensor({3}, 1), randomTensor({5}, 2)});
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("2*s"), std::string::npos);
}

} // namespace

// Inputs whose values decide shapes: a binding compares their values bytewise, the graph built
// for it takes the other inputs only, and a value input too large to key a compilation is refused
// by name.
TEST(InputBinding, ValuesKeyTheBindingAndLeaveTheRuntimeInputs) {
  std::vector<std::pair<std::string, TensorType>> interface = {
      {"x", TensorType(DType::F32, {Dim::sym("n"), Dim(4)})},
      {"shape", TensorType(DType::I64, {Dim(2)})}};
  std::vector<size_t> valueInputs = inputIndices(interface, {"shape"});
  ASSERT_EQ(valueInputs, std::vector<size_t>{1});
  Tensor x = randomTensor({3, 4}, 7);
  auto shapeOf = [](std::vector<int64_t> v) { return Tensor::fromVector(DType::I64, {2}, v); };
  auto a = bindingOf(interface, {x, shapeOf({6, 2})}, valueInputs);
  auto b = bindingOf(interface, {x, shapeOf({2, 6})}, valueInputs);
  auto a2 = bindingOf(interface, {randomTensor({3, 4}, 8), shapeOf({6, 2})}, valueInputs);
  ASSERT_TRUE(a && b && a2);
  EXPECT_EQ(a->shapes, b->shapes);
  EXPECT_FALSE(*a == *b);  // same shapes, other values
  EXPECT_TRUE(*a == *a2);  // data inputs' values are not part of it
  ASSERT_EQ(a->valueMap().count("shape"), 1u);
  std::vector<Tensor> kept = runtimeInputs({x, shapeOf({6, 2})}, valueInputs);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_TRUE(kept[0].identical(x));

  std::vector<std::pair<std::string, TensorType>> big = {
      {"table", TensorType(DType::F32, {Dim::sym("k")})}};
  auto tooLarge =
      bindingOf(big, {Tensor(DType::F32, {kMaxValueInputElements + 1})}, inputIndices(big, {"table"}));
  ASSERT_FALSE(tooLarge);
  EXPECT_NE(llvm::toString(tooLarge.takeError()).find("input 'table'"), std::string::npos);
}
