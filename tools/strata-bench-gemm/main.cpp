// strata-bench-gemm [--threads N] [--shapes MxKxN,...] [--target T]: SGEMM as strata compiles it
// (A an input, B a constant packed into panels at compile time, as a linear layer's weight),
// next to OpenBLAS's cblas_sgemm on the same data, in one run, against this machine's FMA peak
// measured first. `make bench-gemm` builds and runs it. OpenBLAS is the benchmark's reference
// only: nothing of strata links it.
#include "strata/driver/CompiledModel.h"
#include "strata/driver/MachineRoof.h"
#include "strata/graph/Builder.h"

#include <CLI/CLI.hpp>
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <random>
#include <sstream>

using namespace strata;

namespace {

struct Shape3 {
  int64_t m, k, n;
};

using Clock = std::chrono::steady_clock;

// The median of timed runs after warmup: at least 5 runs and about 0.3 s.
double medianMs(const std::function<void()> &run) {
  for (int i = 0; i < 3; ++i)
    run();
  std::vector<double> ms;
  auto start = Clock::now();
  while (ms.size() < 5 ||
         (ms.size() < 1000 && std::chrono::duration<double>(Clock::now() - start).count() < 0.3)) {
    auto t = Clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

Tensor randomMatrix(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DType::F32, {rows, cols});
  auto *p = static_cast<float *>(t.rawData());
  for (int64_t i = 0; i < rows * cols; ++i)
    p[i] = dist(rng);
  return t;
}

std::vector<Shape3> parseShapes(const std::string &text) {
  std::vector<Shape3> shapes;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    Shape3 s{};
    char x1 = 0, x2 = 0;
    std::stringstream is(item);
    if (!(is >> s.m >> x1 >> s.k >> x2 >> s.n) || x1 != 'x' || x2 != 'x' || s.m < 1 || s.k < 1 ||
        s.n < 1)
      throw CLI::ValidationError("--shapes", "expected MxKxN, got '" + item + "'");
    shapes.push_back(s);
  }
  return shapes;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"strata's SGEMM next to OpenBLAS, against this machine's FMA peak"};
  unsigned threads = 2;
  std::string shapesText = "256x256x256,1024x1024x1024,2048x2048x2048,128x768x768,128x3072x768,"
                           "128x768x3072,1x768x768,128x256x1024";
  std::string target = "host";
  app.add_option("--threads", threads, "Threads for both")->capture_default_str();
  app.add_option("--shapes", shapesText, "M x K x N, comma-separated")->capture_default_str();
  app.add_option("--target", target, "CPU strata compiles for")
      ->check(CLI::IsMember({"host", "x86-64-v3", "x86-64-v2"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::vector<Shape3> shapes;
  try {
    shapes = parseShapes(shapesText);
  } catch (const CLI::Error &e) {
    return app.exit(e);
  }

  driver::CompileOptions co;
  co.target = target;
  co.threads = threads;
  auto po = driver::programOptions(co);
  if (!po) {
    fmt::print(stderr, "error: {}\n", llvm::toString(po.takeError()));
    return 2;
  }
  driver::MachineRoof roof =
      driver::measureMachineRoof(threads, static_cast<int>(driver::f32Lanes(po->scheduleTarget)));
  openblas_set_num_threads(static_cast<int>(threads));
  fmt::print("FMA peak {:.1f} GFLOP/s ({} f32 lanes, {} thread{}); OpenBLAS {}\n", roof.peakGflops,
             roof.lanes, roof.threads, roof.threads == 1 ? "" : "s", openblas_get_config());
  fmt::print("{:>16}  {:>9} {:>8} {:>6}  {:>9} {:>8} {:>6}  {:>13}  {:>9}\n", "M x K x N",
             "strata ms", "GFLOP/s", "%peak", "BLAS ms", "GFLOP/s", "%peak", "strata/BLAS",
             "max err");
  int status = 0;
  double logRatio = 0;
  for (const Shape3 &s : shapes) {
    Tensor a = randomMatrix(s.m, s.k, 1), b = randomMatrix(s.k, s.n, 2);
    Graph g;
    Builder bld(g);
    Value *x = g.addInput(TensorType::fromShape(DType::F32, {s.m, s.k}), "a");
    g.addOutput(bld.value(OpKind::MatMul, {x, bld.constant(b)}), "c");
    auto model = driver::compileModel(g, co);
    if (!model) {
      fmt::print(stderr, "error: {}x{}x{}: {}\n", s.m, s.k, s.n, llvm::toString(model.takeError()));
      return 1;
    }
    std::vector<Tensor> inputs = {a}, out;
    double strataMs = medianMs([&]() {
      auto r = (*model)->run(inputs);
      if (r)
        out = std::move(*r);
      else
        llvm::consumeError(r.takeError());
    });
    std::vector<float> c(static_cast<size_t>(s.m * s.n));
    const auto *pa = static_cast<const float *>(a.rawData());
    const auto *pb = static_cast<const float *>(b.rawData());
    double blasMs = medianMs([&]() {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, pa, s.k, pb, s.n,
                  0.0f, c.data(), s.n);
    });
    // The two answers agree (relative to the largest |entry|), or the timing means nothing.
    double err = 0, scale = 0;
    if (out.size() == 1 && out[0].numElements() == s.m * s.n) {
      const auto *pc = static_cast<const float *>(out[0].rawData());
      for (int64_t i = 0; i < s.m * s.n; ++i) {
        err = std::max(err, static_cast<double>(std::abs(pc[i] - c[i])));
        scale = std::max(scale, static_cast<double>(std::abs(c[i])));
      }
      err /= std::max(scale, 1e-30);
    } else {
      err = INFINITY;
    }
    if (!(err <= 1e-4))
      status = 1;
    const double flop = 2.0 * s.m * s.k * s.n;
    double sg = flop / strataMs / 1e6, bg = flop / blasMs / 1e6;
    logRatio += std::log(strataMs / blasMs);
    fmt::print("{:>16}  {:9.3f} {:8.1f} {:5.1f}%  {:9.3f} {:8.1f} {:5.1f}%  {:12.2f}x  {:9.1e}\n",
               fmt::format("{}x{}x{}", s.m, s.k, s.n), strataMs, sg, 100 * sg / roof.peakGflops,
               blasMs, bg, 100 * bg / roof.peakGflops, strataMs / blasMs, err);
  }
  fmt::print("geometric mean strata/BLAS time: {:.2f}x (below 1: strata faster)\n",
             std::exp(logRatio / static_cast<double>(shapes.size())));
  return status;
}
