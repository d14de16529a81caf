// One executor serving many threads: each thread binds its own batch size in a RunContext of its
// own and runs it again and again while the others do the same; every output must equal the one
// computed alone. The kernels' parallel loops share the executor's pool (a loop that finds the
// pool busy runs on its caller's thread). Built under ThreadSanitizer by `make tsan`.
#include "strata/runtime/Executor.h"
#include "strata/support/ThreadPool.h"

#include <gtest/gtest.h>

#include <thread>

using namespace strata;
using namespace strata::runtime;

namespace {

struct Scale {
  const float *x;
  float *y;
  float factor;
};

// y = x * 3 over n * 4 floats, as a parallel loop over rows; args: x, y, &n.
void scaleKernel(void **args) {
  Scale s{static_cast<const float *>(args[0]), static_cast<float *>(args[1]), 3.0f};
  int64_t n = *static_cast<const int64_t *>(args[2]);
  strata_parallel_for(
      n,
      [](void *c, int64_t b, int64_t e) {
        auto *s = static_cast<Scale *>(c);
        for (int64_t i = b * 4; i < e * 4; ++i)
          s->y[i] = s->x[i] * s->factor;
      },
      &s);
}

// z = t + w (a constant row of 4), n * 4 floats; args: t, w, z, &n.
void biasKernel(void **args) {
  auto *t = static_cast<const float *>(args[0]), *w = static_cast<const float *>(args[1]);
  auto *z = static_cast<float *>(args[2]);
  int64_t n = *static_cast<const int64_t *>(args[3]);
  for (int64_t i = 0; i < n * 4; ++i)
    z[i] = t[i] + w[i % 4];
}

// x: [batch, 4] -> t = 3x (an arena buffer) -> out = t + w.
Plan plan() {
  Plan p;
  p.symbols = {"batch"};
  p.inputs = {{"x", DType::F32, {{0, 0}, {4, -1}}}};
  p.outputs = {{"out", DType::F32, {{0, 0}, {4, -1}}}};
  p.outputSources = {{PlanArg::Output, 0}};
  p.buffers = {{{16, {0}}, 0, 1}};
  p.constants = {{0, 16}};
  p.weightsBytes = 64;
  p.numKernels = 2;
  p.steps = {
      {"scale (node t)", 0, {{PlanArg::Input, 0}, {PlanArg::Buffer, 0}, {PlanArg::Symbol, 0}}},
      {"bias (node out)",
       1,
       {{PlanArg::Buffer, 0}, {PlanArg::Constant, 0}, {PlanArg::Output, 0}, {PlanArg::Symbol, 0}}}};
  return p;
}

alignas(64) const float kWeights[16] = {10, 20, 30, 40};

std::vector<float> inputFor(int64_t batch) {
  std::vector<float> x(static_cast<size_t>(batch * 4));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i) * 0.5f + static_cast<float>(batch);
  return x;
}

TEST(Concurrency, ContextsOfOneExecutorRunTogether) {
  Executor ex(plan(), {&scaleKernel, &biasKernel}, reinterpret_cast<const uint8_t *>(kWeights), 2);
  constexpr int kThreads = 8, kRuns = 200;
  // The reference: each thread's batch alone, on the executor's own context.
  std::vector<std::vector<float>> expected(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    int64_t batch = 8 * (t + 1); // different bindings: each context places its own arena
    std::vector<float> x = inputFor(batch);
    expected[t].resize(x.size());
    ASSERT_EQ(ex.bind({DType::F32}, {{batch, 4}}).message(), "");
    const void *in[] = {x.data()};
    void *out[] = {expected[t].data()};
    ASSERT_EQ(ex.run(in, out).message(), "");
  }
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      RunContext ctx(ex);
      int64_t batch = 8 * (t + 1);
      std::vector<float> x = inputFor(batch), y(x.size());
      for (int r = 0; r < kRuns; ++r) {
        std::fill(y.begin(), y.end(), -1.0f);
        const void *in[] = {x.data()};
        void *out[] = {y.data()};
        if (ex.bind(ctx, {DType::F32}, {{batch, 4}}) || ex.run(ctx, in, out) || y != expected[t])
          ++failures[t];
      }
      if (ctx.arenaAllocations() != 1) // one binding: one arena for all its runs
        ++failures[t];
    });
  for (std::thread &th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(Concurrency, AContextBelongsToItsExecutor) {
  Executor a(plan(), {&scaleKernel, &biasKernel}, reinterpret_cast<const uint8_t *>(kWeights), 1);
  Executor b(plan(), {&scaleKernel, &biasKernel}, reinterpret_cast<const uint8_t *>(kWeights), 1);
  RunContext ctx(a);
  EXPECT_EQ(b.bind(ctx, {DType::F32}, {{1, 4}}).message(),
            "the run context belongs to another model");
  EXPECT_EQ(b.run(ctx, nullptr, nullptr).message(), "the run context belongs to another model");
}

} // namespace
