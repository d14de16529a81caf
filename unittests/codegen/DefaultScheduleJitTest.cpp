// The default schedule through the JIT: a 256x256x256 matmul compiled unscheduled and
// default-scheduled gives bit-identical results (each C[i, j] still sums k ascending); both times
// are printed for the record, nothing is asserted about them.
#include "strata/codegen/Jit.h"
#include "strata/loop/Parser.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Schedule.h"
#include "strata/loop/Verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

using namespace strata;

namespace {

// Compiles `f` and returns the best of a few runs in milliseconds; `out` gets the result C.
double timeMatmul(codegen::LoopJit &jit, const loop::LoopFunction &f, const Tensor &a,
                  const Tensor &b, std::vector<float> &out) {
  auto k = jit.compile(f);
  if (!k) {
    ADD_FAILURE() << llvm::toString(k.takeError());
    return 0;
  }
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<Tensor> args = {a, b, Tensor(DType::F32, {256, 256})};
    auto t0 = std::chrono::steady_clock::now();
    if (llvm::Error err = codegen::LoopJit::call(*k, args)) {
      ADD_FAILURE() << llvm::toString(std::move(err));
      return 0;
    }
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
    const float *c = args[2].data<float>();
    out.assign(c, c + args[2].numElements());
  }
  return best;
}

TEST(DefaultScheduleJit, Matmul256SameResultsScheduledAndNot) {
  // The init-in-nest form, the accumulating form (C starts at zero) and lib/lower's form.
  const char *kernels[] = {
      R"(func @mm(%A: f32[256, 256] in, %B: f32[256, 256] in, %C: f32[256, 256] out) {
  for %i in [0, 256) serial {
    for %j in [0, 256) serial {
      %C[%i, %j] = 0.0
      for %k in [0, 256) serial {
        %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]
      }
    }
  }
})",
      R"(func @mm(%A: f32[256, 256] in, %B: f32[256, 256] in, %C: f32[256, 256] inout) {
  for %i in [0, 256) serial {
    for %j in [0, 256) serial {
      for %k in [0, 256) serial {
        %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]
      }
    }
  }
})",
      R"(func @mm(%A: f32[256, 256] in, %B: f32[256, 256] in, %C: f32[256, 256] out) {
  for %i in [0, 256) serial {
    for %j in [0, 256) serial {
      allocate %acc: f32[1] local {
        %acc[0] = 0.0
        for %k in [0, 256) serial {
          %acc[0] = %acc[0] + %A[%i, %k] * %B[%k, %j]
        }
        %C[%i, %j] = %acc[0]
      }
    }
  }
})"};
  auto jit = codegen::LoopJit::create("host", 2);
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  Tensor a(DType::F32, {256, 256}), b(DType::F32, {256, 256});
  for (int64_t i = 0; i < a.numElements(); ++i) {
    a.data<float>()[i] = dist(rng);
    b.data<float>()[i] = dist(rng);
  }
  for (const char *text : kernels) {
    auto f = loop::parseFunction(text);
    ASSERT_TRUE(static_cast<bool>(f)) << llvm::toString(f.takeError());
    loop::LoopFunction g = *f;
    loop::Schedule s = loop::defaultSchedule(g);
    ASSERT_FALSE(s.empty());
    ASSERT_FALSE(static_cast<bool>(loop::applySchedule(g, s)));
    ASSERT_FALSE(static_cast<bool>(loop::verifyFunction(g, {.checkBounds = true})));
    std::vector<float> plain, scheduled;
    double tPlain = timeMatmul(**jit, *f, a, b, plain);
    double tSched = timeMatmul(**jit, g, a, b, scheduled);
    std::printf("matmul 256^3 [%s]: unscheduled %.2f ms, default schedule %.2f ms\n",
                loop::printSchedule(s).c_str(), tPlain, tSched);
    ASSERT_EQ(plain.size(), scheduled.size());
    EXPECT_EQ(0, std::memcmp(plain.data(), scheduled.data(), plain.size() * sizeof(float)));
  }
}

} // namespace
