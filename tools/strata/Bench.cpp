// strata bench MODEL [--engine jit|interp] [--threads N] [--iters N] [--warmup N] [--json]
// [--input NAME=FILE]... [--dim NAME=SIZE]... [--target T]: times a model's runs (.onnx, graph
// IR, or an AOT library .so). The engine is prepared once (its compile or load time reported
// apart), run --warmup times untimed, then --iters times timed.
#include "Commands.h"
#include "Engine.h"

#include "strata/driver/CompiledModel.h"
#include "strata/driver/MachineRoof.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>

namespace strata::cli {

namespace {

struct BenchOpts {
  std::string model, engine = "jit", target = "host";
  unsigned threads = 0, iters = 20, warmup = 3;
  std::vector<std::string> inputs, dims;
  bool json = false, anyShape = false;
  int64_t winogradTile = 0;
  unsigned profile = 0; // print the N slowest kernels
};

using Clock = std::chrono::steady_clock;

// Runs `runOnce` `warmup` times untimed, then `iters` times, returning each timed run's latency.
llvm::Expected<std::vector<double>> timeRuns(const std::function<llvm::Error()> &runOnce,
                                             unsigned warmup, unsigned iters) {
  for (unsigned i = 0; i < warmup; ++i)
    if (auto err = runOnce())
      return err;
  std::vector<double> ms;
  ms.reserve(iters);
  for (unsigned i = 0; i < iters; ++i) {
    auto start = Clock::now();
    if (auto err = runOnce())
      return err;
    ms.push_back(msSince(start));
  }
  return ms;
}

struct Stats {
  double median, min, max, mean;
};

Stats summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  return {median, ms.front(), ms.back(), std::accumulate(ms.begin(), ms.end(), 0.0) / n};
}

int benchModel(const BenchOpts &o) {
  EngineOptions eo;
  eo.engine = o.engine;
  eo.threads = o.threads;
  eo.target = o.target;
  eo.keepGraph = o.profile > 0;
  eo.anyShape = o.anyShape;
  eo.winogradTile = o.winogradTile;
  std::unique_ptr<Engine> engine = openEngine(o.model, eo);
  if (!engine)
    return failedCode();
  auto inputs = modelInputs(*engine, o.inputs, o.dims, 0);
  if (!inputs)
    return fail(kBadInput, llvm::toString(inputs.takeError()));
  bool inputError = false;
  if (llvm::Error err = engine->prepare(*inputs, inputError))
    return fail(inputError ? kBadInput : kBadModel, o.model + ": " + llvm::toString(std::move(err)));
  auto runOnce = [&]() -> llvm::Error {
    auto outputs = engine->run(*inputs);
    return outputs ? llvm::Error::success() : outputs.takeError();
  };
  if (o.profile && !engine->setProfiling(true))
    return fail(kUsage, "--profile needs the jit engine");
  auto ms = timeRuns(runOnce, o.warmup, o.iters);
  if (!ms)
    return fail(kBadInput, o.model + ": " + llvm::toString(ms.takeError()));
  Stats s = summarize(*ms);
  unsigned threads = engine->name == "interp" ? 1 : engine->threads;

  if (o.json) {
    // Ordered: the keys print in this order, the same as scripts/bench_ort.js.
    nlohmann::ordered_json j = {{"model", o.model},
                                {"engine", engine->name},
                                {"threads", threads},
                                {"iters", o.iters},
                                {"warmup", o.warmup},
                                {"compile_ms", engine->compileMs},
                                {"median_ms", s.median},
                                {"min_ms", s.min},
                                {"max_ms", s.max},
                                {"mean_ms", s.mean}};
    std::cout << j.dump() << "\n";
    return 0;
  }
  fmt::print("model: {}\n", o.model);
  fmt::print("engine: {} ({} thread{}{})\n", engine->name, threads, threads == 1 ? "" : "s",
             engine->name == "jit" ? ", target " + o.target : "");
  fmt::print("{}: {:.1f} ms\n", engine->name == "aot" ? "load" : "compile", engine->compileMs);
  fmt::print("latency over {} runs after {} warmup: median {:.3f} ms, min {:.3f} ms, "
             "max {:.3f} ms, mean {:.3f} ms\n",
             o.iters, o.warmup, s.median, s.min, s.max, s.mean);
  if (o.profile) {
    // Summed over warmup and timed runs alike; shares are what matters.
    struct Row {
      std::string name;
      double ms;
      driver::KernelCost cost;
    };
    std::vector<Row> rows;
    auto steps = engine->profile();
    auto costs = engine->kernelCosts(*inputs);
    unsigned runs = o.warmup + o.iters;
    double total = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      rows.push_back({steps[i].first, steps[i].second / runs,
                      i < costs.size() ? costs[i] : driver::KernelCost{}});
      total += rows.back().ms;
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row &a, const Row &b) { return a.ms > b.ms; });
    // The roof the kernels are measured against: this machine, these threads, the target's width.
    driver::CompileOptions co;
    co.target = o.target;
    auto po = driver::programOptions(co);
    int lanes = po ? static_cast<int>(driver::f32Lanes(po->scheduleTarget)) : 8;
    if (!po)
      llvm::consumeError(po.takeError());
    driver::MachineRoof roof = driver::measureMachineRoof(threads, lanes);
    fmt::print("roofline: FMA peak {:.1f} GFLOP/s ({} f32 lanes, {} thread{}), memory bandwidth "
               "{:.1f} GB/s\n",
               roof.peakGflops, roof.lanes, roof.threads, roof.threads == 1 ? "" : "s",
               roof.bandwidthGBs);
    fmt::print("slowest kernels (share of kernel time, ms per run, GFLOP/s, GB/s, % of the roof at "
               "the kernel's flop/byte):\n");
    for (size_t i = 0; i < rows.size() && i < o.profile; ++i) {
      const Row &r = rows[i];
      double sec = r.ms / 1e3;
      double gflops = sec > 0 ? r.cost.flops / sec / 1e9 : 0,
             gbs = sec > 0 ? r.cost.bytes / sec / 1e9 : 0;
      double intensity = r.cost.bytes > 0 ? r.cost.flops / r.cost.bytes : 0;
      double attainable = std::min(roof.peakGflops, intensity * roof.bandwidthGBs);
      fmt::print("  {:5.1f}%  {:9.3f}  {:8.1f} GFLOP/s  {:7.1f} GB/s  {:5.1f}%  {}\n",
                 total > 0 ? 100 * r.ms / total : 0.0, r.ms, gflops, gbs,
                 attainable > 0 ? 100 * gflops / attainable : 0.0, r.name);
    }
  }
  return 0;
}

} // namespace

Action addBenchCommand(CLI::App &app) {
  auto o = std::make_shared<BenchOpts>();
  CLI::App *cmd = app.add_subcommand("bench", "Time a model's runs: compile time and latency");
  addLimitOption(cmd);
  addModelOptions(cmd, o->model, o->engine);
  addAnyShapeOption(cmd, o->anyShape);
  addWinogradOption(cmd, o->winogradTile);
  cmd->add_option("--threads", o->threads,
                  "Threads for parallel loops of the jit and aot engines (0: one per core)")
      ->capture_default_str();
  cmd->add_option("--iters", o->iters, "Timed runs")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed runs before the timed ones")
      ->check(CLI::Range(0u, 1000000u))
      ->capture_default_str();
  cmd->add_option("--input,-i", o->inputs,
                  "Input as NAME=FILE (.npy); inputs not given get seeded random data");
  cmd->add_option("--dim", o->dims,
                  "Size of a symbolic dim for random inputs: NAME=SIZE (default 1)");
  cmd->add_option("--target", o->target, "CPU the jit engine compiles for")
      ->check(CLI::IsMember({"host", "x86-64-v3", "x86-64-v2"}))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON object instead of text");
  cmd->add_option("--profile", o->profile,
                  "Also print the N slowest kernels with their share of the time (jit)");
  return [o]() { return benchModel(*o); };
}

} // namespace strata::cli
