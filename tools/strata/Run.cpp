// strata run MODEL [--input NAME=FILE]... [--output-dir DIR]: executes a model and reports its
// outputs. Without --input, inputs are seeded random tensors.
#include "Commands.h"

#include "strata/interp/Interpreter.h"
#include "strata/support/Npy.h"
#include "strata/runtime/CompiledModel.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <fmt/format.h>
#include <iostream>
#include <random>

namespace strata::cli {

namespace {

struct RunOpts {
  std::string model, engine = "interp", outputDir, labels;
  unsigned threads = 0;
  std::vector<std::string> inputs, dims;
  unsigned seed = 0;
};

llvm::Expected<Tensor> loadTensor(const std::string &path) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".pb") == 0)
    return readTensorProtoFile(path);
  return readNpy(path);
}

// Seeded random data: floats uniform in [-1, 1), integers in [0, 4), bools fair coins.
Tensor randomTensor(DType dtype, const Shape &shape, std::mt19937_64 &rng) {
  Tensor t(dtype, shape);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 3);
  for (int64_t i = 0, n = t.numElements(); i < n; ++i) {
    if (isFloat(dtype))
      t.setDouble(i, real(rng));
    else if (dtype == DType::Bool)
      t.setInt(i, small(rng) & 1);
    else
      t.setInt(i, small(rng));
  }
  return t;
}

std::string fileNameFor(std::string name) {
  for (char &c : name)
    if (c == '/' || c == '\\' || c == ':' || c == '\0')
      c = '_';
  return name.empty() ? "output" : name;
}

int runModel(const RunOpts &o) {
  auto graph = loadModel(o.model);
  if (!graph)
    return 1;

  // Inputs: explicit files by name (NAME=FILE) or position (FILE), else random.
  std::map<std::string, Tensor> byName;
  std::vector<Tensor> positional;
  for (const std::string &spec : o.inputs) {
    size_t eq = spec.find('=');
    std::string file = eq == std::string::npos ? spec : spec.substr(eq + 1);
    auto t = loadTensor(file);
    if (!t) {
      std::cerr << "error: " << llvm::toString(t.takeError()) << "\n";
      return 1;
    }
    if (eq == std::string::npos)
      positional.push_back(std::move(*t));
    else
      byName[spec.substr(0, eq)] = std::move(*t);
  }
  std::map<std::string, int64_t> symbolSizes;
  for (const std::string &d : o.dims) {
    size_t eq = d.find('=');
    if (eq == std::string::npos) {
      std::cerr << "error: --dim expects NAME=SIZE, got '" << d << "'\n";
      return 1;
    }
    symbolSizes[d.substr(0, eq)] = std::stoll(d.substr(eq + 1));
  }

  std::mt19937_64 rng(o.seed);
  std::vector<Tensor> inputs;
  for (unsigned i = 0; i < graph->numInputs(); ++i) {
    Value *in = graph->input(i);
    if (auto it = byName.find(in->name()); it != byName.end()) {
      inputs.push_back(it->second);
      byName.erase(it);
    } else if (i < positional.size()) {
      inputs.push_back(positional[i]);
    } else if (!o.inputs.empty()) {
      std::cerr << "error: no value given for input '" << in->name() << "'\n";
      return 1;
    } else {
      Shape shape;
      for (const Dim &d : in->type().dims)
        shape.push_back(d.isStatic() ? d.size
                                     : (symbolSizes.count(d.symbol) ? symbolSizes[d.symbol] : 1));
      // Refuse absurd sizes before allocating (2^31 elements is far beyond any sane input).
      if (numElements(shape) > (int64_t{1} << 31)) {
        std::cerr << "error: input '" << in->name() << "' of shape [" << shapeToString(shape)
                  << "] is too large to generate\n";
        return 1;
      }
      inputs.push_back(randomTensor(in->type().dtype, shape, rng));
    }
  }
  if (!byName.empty()) {
    std::cerr << "error: the model has no input named '" << byName.begin()->first << "'\n";
    return 1;
  }

  // The jit engine compiles first (timed apart); the latency is that of one run.
  std::function<llvm::Expected<std::vector<Tensor>>()> execute = [&] {
    return interpret(*graph, inputs);
  };
  std::unique_ptr<runtime::CompiledModel> compiled;
  if (o.engine == "jit") {
    auto compileStart = std::chrono::steady_clock::now();
    runtime::CompileOptions copts;
    copts.threads = o.threads;
    auto m = runtime::compileModel(*graph, copts);
    if (!m) {
      std::cerr << "error: " << o.model << ": " << llvm::toString(m.takeError()) << "\n";
      return 1;
    }
    compiled = std::move(*m);
    fmt::print("compile: {:.1f} ms ({} kernels, {} arena bytes)\n",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                         compileStart)
                   .count(),
               compiled->numKernels(), compiled->arenaBytes());
    execute = [&] { return compiled->run(inputs); };
  }
  auto start = std::chrono::steady_clock::now();
  auto outputs = execute();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  if (!outputs) {
    std::cerr << "error: " << o.model << ": " << llvm::toString(outputs.takeError()) << "\n";
    return 1;
  }

  if (!o.outputDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.outputDir, ec);
    if (ec) {
      std::cerr << "error: " << o.outputDir << ": " << ec.message() << "\n";
      return 1;
    }
  }
  for (unsigned i = 0; i < outputs->size(); ++i) {
    const Tensor &t = (*outputs)[i];
    const std::string &name = graph->outputName(i);
    fmt::print("output {}: shape [{}] dtype {}\n", name, fmt::join(t.shape(), ", "),
               dtypeName(t.dtype()));
    if (!o.outputDir.empty()) {
      std::string path = (std::filesystem::path(o.outputDir) / (fileNameFor(name) + ".npy")).string();
      if (auto err = writeNpy(path, t)) {
        std::cerr << "error: " << llvm::toString(std::move(err)) << "\n";
        return 1;
      }
    }
  }

  if (!o.labels.empty()) {
    auto labels = readNpy(o.labels);
    if (!labels) {
      std::cerr << "error: " << llvm::toString(labels.takeError()) << "\n";
      return 1;
    }
    const Tensor &logits = (*outputs)[0];
    int64_t classes = logits.rank() ? logits.shape().back() : 1;
    int64_t rows = classes ? logits.numElements() / classes : 0;
    if (rows != labels->numElements()) {
      std::cerr << "error: " << o.labels << ": " << labels->numElements()
                << " labels for " << rows << " predictions\n";
      return 1;
    }
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
  fmt::print("latency: {:.3f} ms ({} engine)\n", ms, o.engine);
  return 0;
}

} // namespace

Action addRunCommand(CLI::App &app) {
  auto o = std::make_shared<RunOpts>();
  CLI::App *cmd = app.add_subcommand("run", "Run a model (.onnx or graph IR text) on inputs");
  cmd->add_option("model", o->model, "Model file (.onnx or .sg graph IR)")->required();
  cmd->add_option("--engine", o->engine, "Execution engine")
      ->check(CLI::IsMember({"interp", "jit"}))
      ->capture_default_str();
  cmd->add_option("--input,-i", o->inputs, "Input as NAME=FILE or FILE (.npy or TensorProto .pb)");
  cmd->add_option("--output-dir", o->outputDir, "Write <output name>.npy files here");
  cmd->add_option("--dim", o->dims, "Size of a symbolic dim for random inputs: NAME=SIZE");
  cmd->add_option("--threads", o->threads,
                  "Threads for the jit engine's parallel loops (0: one per core)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_option("--labels", o->labels,
                  "Integer labels (.npy): print argmax predictions of output 0 and the accuracy");
  return [o]() { return runModel(*o); };
}

} // namespace strata::cli
