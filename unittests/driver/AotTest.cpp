// AOT libraries end to end: a graph with a dynamic batch compiled to a shared library, loaded
// through its C API (SharedModel), run at two batch sizes and compared with the interpreter.
#include "strata/driver/Aot.h"
#include "strata/driver/CompiledModel.h"
#include "strata/driver/SharedModel.h"

#include "strata/graph/Builder.h"
#include "strata/interp/Interpreter.h"

#include "DriverTestUtil.h"

#include "strata/strata_model.h"
#include "strata/support/Limits.h"

#include "llvm/Support/FileSystem.h"

#include <dlfcn.h>

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

// The MLP built into a program with the default options.
llvm::Expected<Program> mlpProgram() {
  Graph g;
  buildMlp(g);
  auto po = programOptions(CompileOptions{});
  if (!po)
    return po.takeError();
  return buildProgram(g, *po);
}

std::string tempPath(const std::string &name) {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("strata-aot-test", dir));
  return (dir + "/" + name).str();
}

TEST(Aot, SharedLibraryRunsAtAnyBatch) {
  auto prog = mlpProgram();
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

// The run-time limits through the C API itself (ABI 3): set, read back, enforced before a run
// allocates, and refused for compile-time limits, unknown names and negative values.
TEST(Aot, RunTimeLimitsThroughTheCApi) {
  auto prog = mlpProgram();
  ASSERT_TRUE(static_cast<bool>(prog)) << llvm::toString(prog.takeError());
  std::string path = tempPath("mlp.so");
  ASSERT_FALSE(static_cast<bool>(writeAot(*prog, {}, AotOutput::SharedLibrary, path)));
  void *lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  auto sym = [&](const char *name) { return ::dlsym(lib, name); };
  auto abi = reinterpret_cast<int (*)()>(sym("strata_abi_version"));
  auto create = reinterpret_cast<strata_model *(*)(int)>(sym("strata_model_create"));
  auto destroy = reinterpret_cast<void (*)(strata_model *)>(sym("strata_model_destroy"));
  auto run = reinterpret_cast<int (*)(strata_model *, const strata_tensor *, int)>(
      sym("strata_model_run"));
  auto setLimit = reinterpret_cast<int (*)(strata_model *, const char *, int64_t)>(
      sym("strata_model_set_limit"));
  auto limit =
      reinterpret_cast<int64_t (*)(const strata_model *, const char *)>(sym("strata_model_limit"));
  auto lastError = reinterpret_cast<const char *(*)()>(sym("strata_last_error"));
  ASSERT_TRUE(abi && create && destroy && run && setLimit && limit && lastError);
  EXPECT_EQ(abi(), 3);
  strata_model *m = create(1);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(limit(m, "max-arena-bytes"), Limits{}.maxArenaBytes);
  EXPECT_EQ(limit(m, "max-tensor-elements"), Limits{}.maxTensorElements);

  Tensor x = randomTensor({8, 24}, 5);
  const int64_t shape[2] = {8, 24};
  strata_tensor in{x.rawData(), STRATA_F32, 2, shape};
  ASSERT_EQ(run(m, &in, 1), 0) << lastError();

  ASSERT_EQ(setLimit(m, "max-arena-bytes", 64), 0);
  EXPECT_EQ(limit(m, "max-arena-bytes"), 64);
  EXPECT_EQ(run(m, &in, 1), -1);
  EXPECT_NE(std::string(lastError()).find("over the max-arena-bytes limit of 64"),
            std::string::npos)
      << lastError();
  ASSERT_EQ(setLimit(m, "max-arena-bytes", int64_t(1) << 30), 0);
  ASSERT_EQ(run(m, &in, 1), 0) << lastError();

  ASSERT_EQ(setLimit(m, "max-tensor-elements", 100), 0);
  EXPECT_EQ(run(m, &in, 1), -1);
  EXPECT_EQ(std::string(lastError()), "input 0 ('x') of shape [8, 24] has 192 elements, over the "
                                      "max-tensor-elements limit of 100");

  EXPECT_EQ(setLimit(m, "max-ops", 10), -1);
  EXPECT_EQ(std::string(lastError()), "limit max-ops is fixed when the model is compiled");
  EXPECT_EQ(setLimit(m, "max-bananas", 10), -1);
  EXPECT_EQ(setLimit(m, "max-arena-bytes", -1), -1);
  EXPECT_EQ(limit(m, "max-bananas"), -1);
  destroy(m);
  ::dlclose(lib);
}

TEST(Aot, FailedLinkLeavesNothing) {
  auto prog = mlpProgram();
  ASSERT_TRUE(static_cast<bool>(prog)) << llvm::toString(prog.takeError());
  std::string path = tempPath("mlp.so");
  AotOptions ao;
  ao.runtimeObject = path + ".missing.o";
  llvm::Error err = writeAot(*prog, ao, AotOutput::SharedLibrary, path);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("runtime object"), std::string::npos);
  EXPECT_FALSE(llvm::sys::fs::exists(path));
}

} // namespace
