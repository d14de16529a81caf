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
  auto decidesSizes = reinterpret_cast<int (*)(const strata_model *, int)>(
      sym("strata_model_input_decides_sizes"));
  ASSERT_TRUE(abi && create && destroy && run && setLimit && limit && lastError && decidesSizes);
  EXPECT_EQ(abi(), STRATA_ABI_VERSION);
  strata_model *m = create(1);
  ASSERT_NE(m, nullptr);
  // Plain data in, no sizes read from it (ABI 5); a bad index is an error.
  EXPECT_EQ(decidesSizes(m, 0), 0);
  EXPECT_EQ(decidesSizes(m, 7), -1);
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

// ABI 4: strata_model_run_into writes each output where the allocator says, with the same
// values strata_model_run keeps in the model; an allocator that returns NULL fails the run.
TEST(Aot, RunIntoWritesCallerMemory) {
  auto prog = mlpProgram();
  ASSERT_TRUE(static_cast<bool>(prog)) << llvm::toString(prog.takeError());
  std::string path = tempPath("mlp-into.so");
  ASSERT_FALSE(static_cast<bool>(writeAot(*prog, {}, AotOutput::SharedLibrary, path)));
  void *lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  auto sym = [&](const char *name) { return ::dlsym(lib, name); };
  auto create = reinterpret_cast<decltype(&strata_model_create)>(sym("strata_model_create"));
  auto destroy = reinterpret_cast<decltype(&strata_model_destroy)>(sym("strata_model_destroy"));
  auto run = reinterpret_cast<decltype(&strata_model_run)>(sym("strata_model_run"));
  auto runInto = reinterpret_cast<decltype(&strata_model_run_into)>(sym("strata_model_run_into"));
  auto data =
      reinterpret_cast<decltype(&strata_model_output_data)>(sym("strata_model_output_data"));
  auto lastError = reinterpret_cast<decltype(&strata_last_error)>(sym("strata_last_error"));
  ASSERT_TRUE(create && destroy && run && runInto && data && lastError);
  strata_model *m = create(1);
  ASSERT_NE(m, nullptr);
  Tensor x = randomTensor({8, 24}, 5);
  const int64_t shape[2] = {8, 24};
  strata_tensor in{x.rawData(), STRATA_F32, 2, shape};
  ASSERT_EQ(run(m, &in, 1), 0) << lastError();
  // Every output (the mlp has two, both f32) into memory of the caller's.
  struct Target {
    std::vector<std::vector<float>> memory;
    std::vector<std::vector<int64_t>> shapes;
  } target;
  auto allocate = [](void *user, int index, int32_t dtype, int32_t rank,
                     const int64_t *dims) -> void * {
    auto *t = static_cast<Target *>(user);
    EXPECT_EQ(index, static_cast<int>(t->memory.size()));
    EXPECT_EQ(dtype, STRATA_F32);
    t->shapes.emplace_back(dims, dims + rank);
    int64_t n = 1;
    for (int32_t d = 0; d < rank; ++d)
      n *= dims[d];
    t->memory.emplace_back(static_cast<size_t>(n), -1.0f);
    return t->memory.back().data();
  };
  // What strata_model_run kept, per output (both rank 2).
  auto outShape =
      reinterpret_cast<decltype(&strata_model_output_shape)>(sym("strata_model_output_shape"));
  ASSERT_TRUE(outShape);
  std::vector<std::vector<float>> kept;
  for (int o = 0; o < 2; ++o) {
    const float *p = static_cast<const float *>(data(m, o));
    const int64_t *dims = outShape(m, o);
    ASSERT_TRUE(p && dims);
    kept.emplace_back(p, p + dims[0] * dims[1]);
  }
  ASSERT_EQ(runInto(m, &in, 1, allocate, &target), 0) << lastError();
  ASSERT_EQ(target.memory.size(), 2u);
  EXPECT_EQ(target.shapes[1], (std::vector<int64_t>{8, 24})) << "the echo output";
  for (int o = 0; o < 2; ++o)
    EXPECT_EQ(target.memory[o], kept[o]) << "output " << o;
  EXPECT_EQ(data(m, 0), nullptr) << "a run into the caller's memory leaves nothing in the model";

  auto refuse = [](void *, int, int32_t, int32_t, const int64_t *) -> void * { return nullptr; };
  EXPECT_EQ(runInto(m, &in, 1, refuse, nullptr), -1);
  EXPECT_NE(std::string(lastError()).find("output 0"), std::string::npos) << lastError();
  EXPECT_EQ(runInto(m, &in, 1, nullptr, nullptr), -1);
  EXPECT_EQ(std::string(lastError()), "null allocator");
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
