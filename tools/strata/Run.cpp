// strata run MODEL [--engine jit|interp] [--input NAME=FILE]... [--output-dir DIR]: executes a
// model (.onnx, graph IR, or an AOT library .so) and reports its outputs. Without --input, inputs
// are seeded random tensors.
#include "Commands.h"
#include "Engine.h"

#include "strata/io/Npy.h"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

namespace strata::cli {

namespace {

struct RunOpts {
  std::string model, engine = "jit", outputDir, labels, target = "host";
  unsigned threads = 0;
  bool anyShape = false;
  int64_t winogradTile = 0;
  std::vector<std::string> inputs, dims;
  unsigned seed = 0;
  bool noCache = false;
};

std::string fileNameFor(std::string name) {
  for (char &c : name)
    if (c == '/' || c == '\\' || c == ':' || c == '\0')
      c = '_';
  return name.empty() ? "output" : name;
}

int runModel(const RunOpts &o) {
  EngineOptions eo;
  eo.engine = o.engine;
  eo.threads = o.threads;
  eo.cache = !o.noCache;
  eo.target = o.target;
  eo.anyShape = o.anyShape;
  eo.winogradTile = o.winogradTile;
  std::unique_ptr<Engine> engine = openEngine(o.model, eo);
  if (!engine)
    return failedCode();

  auto inputs = modelInputs(*engine, o.inputs, o.dims, o.seed);
  if (!inputs)
    return fail(kBadInput, llvm::toString(inputs.takeError()));

  // Compilation (jit) or loading (aot) is timed apart; the latency is that of one run.
  bool inputError = false;
  if (llvm::Error err = engine->prepare(*inputs, inputError))
  {
    std::string message = llvm::toString(std::move(err));
    if (message.rfind(o.model + ":", 0) != 0) // import errors name the file already
      message = o.model + ": " + message;
    return fail(inputError ? kBadInput : kBadModel, message);
  }
  if (engine->cache == "hit")
    fmt::print("compile: cache hit, loaded {} in {:.1f} ms\n", engine->cachePath,
               engine->compileMs);
  else if (engine->cache == "miss")
    fmt::print("compile: {:.1f} ms (cache miss, wrote {})\n", engine->compileMs, engine->cachePath);
  else if (engine->name == "jit")
    fmt::print("compile: {:.1f} ms ({} kernels)\n", engine->compileMs, engine->kernels);
  else if (engine->name == "aot")
    fmt::print("load: {:.1f} ms\n", engine->compileMs);
  auto start = std::chrono::steady_clock::now();
  auto outputs = engine->run(*inputs);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  if (!outputs) // the inputs fit the model's interface: a failure here is on their data
    return fail(kBadInput, o.model + ": " + llvm::toString(outputs.takeError()));

  if (!o.outputDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.outputDir, ec);
    if (ec)
      return fail(kIoError, o.outputDir + ": " + ec.message());
  }
  for (unsigned i = 0; i < outputs->size(); ++i) {
    const Tensor &t = (*outputs)[i];
    const std::string &name = engine->outputNames[i];
    fmt::print("output {}: shape [{}] dtype {}\n", name, fmt::join(t.shape(), ", "),
               dtypeName(t.dtype()));
    if (!o.outputDir.empty()) {
      std::string path = (std::filesystem::path(o.outputDir) / (fileNameFor(name) + ".npy")).string();
      if (auto err = writeNpy(path, t))
        return fail(kIoError, llvm::toString(std::move(err)));
    }
  }

  if (!o.labels.empty()) {
    auto labels = readNpy(o.labels);
    if (!labels)
      return fail(kBadInput, llvm::toString(labels.takeError()));
    const Tensor &logits = (*outputs)[0];
    int64_t classes = logits.rank() ? logits.shape().back() : 1;
    int64_t rows = classes ? logits.numElements() / classes : 0;
    if (rows != labels->numElements())
      return fail(kBadInput, o.labels + ": " + std::to_string(labels->numElements()) +
                                 " labels for " + std::to_string(rows) + " predictions");
    int64_t correct = 0;
    std::vector<int64_t> predictions;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (logits.getDouble(r * classes + c) > logits.getDouble(r * classes + best))
          best = c;
      predictions.push_back(best);
      correct += best == labels->getInt(r);
    }
    size_t shown = std::min<size_t>(predictions.size(), 20);
    fmt::print("predictions (first {}): [{}]\n", shown,
               fmt::join(predictions.begin(), predictions.begin() + shown, ", "));
    fmt::print("accuracy: {:.2f}% ({}/{})\n", rows ? 100.0 * correct / rows : 0.0, correct, rows);
  }
  if (engine->arenaBytes())
    fmt::print("arena: {} bytes\n", engine->arenaBytes());
  fmt::print("latency: {:.3f} ms ({} engine)\n", ms, engine->name);
  return 0;
}

} // namespace

Action addRunCommand(CLI::App &app) {
  auto o = std::make_shared<RunOpts>();
  CLI::App *cmd = app.add_subcommand("run", "Run a model (.onnx, graph IR text, or an AOT library .so) on inputs");
  addLimitOption(cmd);
  addModelOptions(cmd, o->model, o->engine);
  addInputOptions(cmd, o->inputs, o->dims, o->seed);
  cmd->add_option("--output-dir", o->outputDir, "Write <output name>.npy files here");
  addAnyShapeOption(cmd, o->anyShape);
  addWinogradOption(cmd, o->winogradTile);
  cmd->add_option("--threads", o->threads,
                  "Threads for parallel loops of the jit and aot engines (0: one per core)")
      ->capture_default_str();
  addTargetOption(cmd, o->target);
  cmd->add_flag("--no-cache", o->noCache,
                "jit: compile in memory, neither reading nor writing the compile cache "
                "($XDG_CACHE_HOME/strata; STRATA_CACHE=0 does the same)");
  cmd->add_option("--labels", o->labels,
                  "Integer labels (.npy): print argmax predictions of output 0 and the accuracy");
  return [o]() { return runModel(*o); };
}

} // namespace strata::cli
