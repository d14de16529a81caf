// `parallel` loops outlined onto the thread pool: results must equal the interpreter's (which runs
// them serially) bit for bit, for any pool size, including extents below the thread count and 0.
#include "CodegenTestUtil.h"
#include "strata/codegen/Jit.h"
#include "strata/loop/Interpreter.h"
#include "strata/loop/Parser.h"
#include "strata/support/ThreadPool.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace strata;

namespace {

using strata::testing::jit;

// Runs `text` with scalar params `n` (all scalars get n) on pools of several sizes.
void check(const std::string &text, int64_t n) {
  llvm::Expected<loop::LoopFunction> f = loop::parseFunction(text);
  ASSERT_TRUE(!!f) << llvm::toString(f.takeError());
  llvm::Expected<codegen::CompiledKernel> k = jit().compile(*f);
  ASSERT_TRUE(!!k) << llvm::toString(k.takeError());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<Tensor> ref;
  for (const loop::Param &p : f->params) {
    if (!p.isBuffer()) {
      ref.push_back(Tensor::scalar(p.scalar->dtype, static_cast<double>(n)));
      continue;
    }
    Shape shape;
    for (const loop::Expr &e : p.buffer->shape)
      shape.push_back(e.asInt() ? *e.asInt() : n);
    Tensor t(p.buffer->dtype, shape);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.setDouble(i, dist(rng));
    ref.push_back(std::move(t));
  }
  std::vector<Tensor> init;
  for (const Tensor &t : ref) {
    Tensor c(t.dtype(), t.shape());
    if (t.byteSize())
      std::memcpy(c.rawData(), t.rawData(), t.byteSize());
    init.push_back(std::move(c));
  }
  ASSERT_FALSE(!!loop::evaluate(*f, ref));
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    ThreadPool pool(threads);
    ThreadPool::ScopedPool scope(&pool);
    std::vector<Tensor> got;
    for (const Tensor &t : init) {
      Tensor c(t.dtype(), t.shape());
      if (t.byteSize())
        std::memcpy(c.rawData(), t.rawData(), t.byteSize());
      got.push_back(std::move(c));
    }
    llvm::Error err = codegen::LoopJit::call(*k, got);
    ASSERT_FALSE(!!err) << llvm::toString(std::move(err));
    for (size_t i = 0; i < ref.size(); ++i)
      ASSERT_TRUE(ref[i].byteSize() == 0 ||
                  std::memcmp(ref[i].rawData(), got[i].rawData(), ref[i].byteSize()) == 0)
          << "param " << f->params[i].name() << " with " << threads << " threads, n = " << n;
  }
}

const char *kElementwise = R"(func @ew(%a: f32[%n, 16] in, %b: f32[16] in, %y: f32[%n, 16] out, %n: i64) {
  for %i in [0, %n) parallel {
    for %j in [0, 16) vectorized {
      %y[%i, %j] = max(%a[%i, %j] * %b[%j] + 1.5, 0.0)
    }
  }
})";

TEST(ParallelLoop, ElementwiseMatchesSerial) {
  for (int64_t n : {0, 1, 2, 5, 203})
    check(kElementwise, n);
}

TEST(ParallelLoop, MatmulOuterParallelWithLocalAccumulator) {
  for (int64_t n : {1, 3, 37})
    check(R"(func @mm(%a: f32[%n, 24] in, %b: f32[24, 19] in, %c: f32[%n, 19] out, %n: i64) {
  for %i in [0, %n) parallel {
    for %j in [0, 19) serial {
      allocate %acc: f32[1] local {
        %acc[0] = 0.0
        for %k in [0, 24) serial {
          %acc[0] = %acc[0] + %a[%i, %k] * %b[%k, %j]
        }
        %c[%i, %j] = %acc[0]
      }
    }
  }
})",
          n);
}

// Nested parallel loops run serially inside the outlined body; a parallel loop inside a serial one
// and with a nonzero min in a 32-bit variable captures the enclosing variable.
TEST(ParallelLoop, NestedAndInsideSerialLoops) {
  check(R"(func @nest(%x: f32[6, 10] in, %y: f32[6, 10] out, %n: i64) {
  for %i in [0, 6) parallel {
    for %j in [0, 10) parallel {
      %y[%i, %j] = %x[%i, %j] * 2.0
    }
  }
})",
        0);
  check(R"(func @inner(%x: f32[6, 12] in, %y: f32[6, 12] out, %n: i64) {
  for %i in [0, 6) serial {
    for %j from 2i32 extent 8i32 parallel {
      %y[%i, %j] = %x[%i, %j] * %x[%i, 0] + %x[%i, %j - 2i32]
    }
  }
})",
        0);
}

TEST(ParallelLoop, OutlinesIntoParallelFor) {
  llvm::Expected<loop::LoopFunction> f = loop::parseFunction(kElementwise);
  ASSERT_TRUE(!!f) << llvm::toString(f.takeError());
  llvm::LLVMContext ctx;
  llvm::Module m("m", ctx);
  llvm::Expected<llvm::Function *> fn = codegen::emitLoopFunction(*f, m, {});
  ASSERT_TRUE(!!fn) << llvm::toString(fn.takeError());
  EXPECT_NE(m.getFunction("strata_parallel_for"), nullptr);
  EXPECT_NE(m.getFunction("ew.par.i"), nullptr);
}

} // namespace
