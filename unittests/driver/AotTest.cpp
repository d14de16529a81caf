// AOT libraries end to end: a graph with a dynamic batch compiled to a shared library, loaded
// through its C API (SharedModel), run at two batch sizes and compared with the interpreter.
#include "strata/driver/Aot.h"
#include "strata/driver/CompiledModel.h"
#include "strata/driver/SharedModel.h"

#include "strata/graph/Builder.h"
#include "strata/interp/Interpreter.h"

#include "DriverTestUtil.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

using namespace strata;
using namespace strata::driver;
using namespace strata::runtime;
using strata::driver::testing::randomTensor;

namespace {

void buildMlp(Graph &g) {
  Builder b(g);
  Value *x = g.addInput(TensorType(DType::F32, {Dim::sym("n"), Dim(24)}), "x");
  Value *h = b.value(OpKind::MatMul, {x, b.constant(randomTensor({24, 16}, 1))});
  h = b.value(OpKind::Add, {h, b.constant(randomTensor({16}, 2))});
  h = b.value(OpKind::Sigmoid, {h});
  g.addOutput(b.value(OpKind::Softmax, {h}, {{"axis", int64_t{-1}}}), "probs");
  g.addOutput(x, "echo");
}

std::string tempPath(const std::string &name) {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("strata-aot-test", dir));
  return (dir + "/" + name).str();
}

TEST(Aot, SharedLibraryRunsAtAnyBatch) {
  Graph g;
  buildMlp(g);
  auto po = programOptions(CompileOptions{});
  ASSERT_TRUE(static_cast<bool>(po)) << llvm::toString(po.takeError());
  auto prog = buildProgram(g, *po);
  ASSERT_TRUE(static_cast<bool>(prog)) << llvm::toString(prog.takeError());
  std::string path = tempPath("mlp.so");
  ASSERT_FALSE(static_cast<bool>(writeAot(*prog, {}, AotOutput::SharedLibrary, path)));

  auto m = SharedModel::open(path, 2);
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  ASSERT_EQ((*m)->inputs().size(), 1u);
  EXPECT_EQ((*m)->inputs()[0].name, "x");
  EXPECT_EQ((*m)->inputs()[0].type.str(), "tensor<?n x24xf32>");
  ASSERT_EQ((*m)->outputs().size(), 2u);
  EXPECT_EQ((*m)->outputs()[1].name, "echo");

  for (int64_t batch : {1, 8}) {
    Graph ref;
    buildMlp(ref);
    Tensor x = randomTensor({batch, 24}, static_cast<unsigned>(10 + batch));
    auto want = interpret(ref, {x});
    ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
    auto got = (*m)->run({x});
    ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
    ASSERT_EQ((*got)[0].shape(), (Shape{batch, 16}));
    for (int64_t i = 0; i < batch * 16; ++i)
      ASSERT_NEAR((*got)[0].getDouble(i), (*want)[0].getDouble(i), 1e-6) << "batch " << batch;
    EXPECT_TRUE((*got)[1].identical(x));
  }
  auto bad = (*m)->run({randomTensor({2, 23}, 3)});
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "aot: input 0 ('x'): dim 1 is 23 but the model expects 24");
}

TEST(Aot, FailedLinkLeavesNothing) {
  Graph g;
  buildMlp(g);
  auto po = programOptions(CompileOptions{});
  ASSERT_TRUE(static_cast<bool>(po));
  auto prog = buildProgram(g, *po);
  ASSERT_TRUE(static_cast<bool>(prog));
  std::string path = tempPath("mlp.so");
  AotOptions ao;
  ao.runtimeArchive = path + ".missing.a";
  llvm::Error err = writeAot(*prog, ao, AotOutput::SharedLibrary, path);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("runtime archive"), std::string::npos);
  EXPECT_FALSE(llvm::sys::fs::exists(path));
}

} // namespace
