#include "Engine.h"
#include "strata/support/Error.h"
#include "strata/support/Limits.h"
#include "strata/support/ShapeMath.h"

#include "strata/driver/Aot.h"
#include "strata/driver/CompileCache.h"
#include "strata/driver/CompiledModel.h"
#include "strata/driver/ShapeSpecializedModel.h"
#include "strata/graph/Specialize.h"
#include "strata/graph/ValueSymbols.h"
#include "strata/interp/Interpreter.h"

#include "strata/io/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <thread>

namespace strata::cli {

namespace {

// The interface as imported (before any pass rewrites the graph).
void describeGraph(Engine &e, const Graph &g) {
  e.inputs = graphInterface(g);
  e.valueInputs.clear(); // sizes read from their data: never made up at random
  for (unsigned i : sizeDecidingInputs(g))
    e.valueInputs.push_back(g.input(i)->name());
  e.outputNames.clear();
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    e.outputNames.push_back(g.outputName(i));
}

class InterpEngine : public Engine {
public:
  explicit InterpEngine(std::unique_ptr<Graph> g) : graph_(std::move(g)) {}
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs) override {
    return interpret(*graph_, inputs);
  }

private:
  std::unique_ptr<Graph> graph_;
};

class JitEngine : public Engine {
public:
  explicit JitEngine(std::unique_ptr<driver::CompiledModel> m) : model_(std::move(m)) {}
  // With `graph` (EngineOptions::keepGraph), the kernels' costs are read from its ops.
  void setModel(std::unique_ptr<driver::CompiledModel> m, std::unique_ptr<Graph> graph) {
    model_ = std::move(m);
    graph_ = std::move(graph);
  }
  const driver::CompiledModel *model() const { return model_.get(); }
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs) override {
    return model_->run(inputs);
  }
  int64_t arenaBytes() const override { return model_->arenaBytes(); }
  bool setProfiling(bool on) override {
    model_->setProfiling(on);
    return true;
  }
  std::vector<std::pair<std::string, double>> profile() const override {
    return model_->profile();
  }
  std::vector<driver::KernelCost> kernelCosts(const std::vector<Tensor> &inputs) const override {
    std::vector<driver::KernelCost> costs;
    if (!graph_)
      return costs;
    auto symbols = driver::symbolSizes(*graph_, inputs);
    for (const Op *op : model_->stepOps())
      costs.push_back(driver::kernelCost(*op, symbols));
    return costs;
  }

private:
  std::unique_ptr<driver::CompiledModel> model_;
  std::unique_ptr<Graph> graph_;
};

// The jit engine for graphs with symbolic dims the kernels cannot take as parameters, or inputs
// whose values decide shapes: compiled per binding (driver/ShapeSpecializedModel.h); kernel
// counts and profiles are the last run's.
class ShapeSpecializedJitEngine : public Engine {
public:
  ShapeSpecializedJitEngine(std::vector<std::pair<std::string, TensorType>> inputs,
                            driver::StaticGraphSource source, driver::CompileOptions co,
                            std::vector<size_t> valueInputs)
      : model_(std::move(inputs), std::move(source), std::move(co), std::move(valueInputs)) {}
  llvm::Error prepare(const std::vector<Tensor> &inputs, bool &inputError) override {
    auto start = std::chrono::steady_clock::now();
    size_t before = model_.compilations();
    auto m = model_.forInputs(inputs);
    if (!m) {
      inputError = model_.lastErrorWasBinding();
      return m.takeError();
    }
    inputError = false;
    if (model_.compilations() != before) { // compiled for new shapes: report it as compile time
      compileMs += msSince(start);
      kernels = (*m)->numKernels();
      threads = (*m)->threads();
      (*m)->setProfiling(profiling_);
    }
    return llvm::Error::success();
  }
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs) override {
    bool inputError = false;
    if (llvm::Error err = prepare(inputs, inputError))
      return err;
    return model_.lastModel()->run(model_.runtimeInputs(inputs));
  }
  int64_t arenaBytes() const override {
    return model_.lastModel() ? model_.lastModel()->arenaBytes() : 0;
  }
  bool setProfiling(bool on) override {
    profiling_ = on;
    if (model_.lastModel())
      model_.lastModel()->setProfiling(on);
    return true;
  }
  std::vector<std::pair<std::string, double>> profile() const override {
    return model_.lastModel() ? model_.lastModel()->profile()
                              : std::vector<std::pair<std::string, double>>{};
  }
  std::vector<driver::KernelCost> kernelCosts(const std::vector<Tensor> &inputs) const override {
    std::vector<driver::KernelCost> costs;
    if (!model_.lastModel())
      return costs;
    auto symbols = driver::symbolSizes(*model_.lastGraph(), model_.runtimeInputs(inputs));
    for (const Op *op : model_.lastModel()->stepOps())
      costs.push_back(driver::kernelCost(*op, symbols));
    return costs;
  }

private:
  mutable driver::ShapeSpecializedModel model_;
  bool profiling_ = false;
};

// The jit engine of a model compiled per input shape, through the compile cache: each shape set's
// library is kept next to the model's own entry (KEY-<shapes>.so), so a later process at the same
// shapes loads it instead of compiling. The libraries of the most recently used shape sets stay
// open. (Models with value inputs compile in memory: see perShapeJitEngine.)
class ShapeSpecializedCachedEngine : public Engine {
public:
  ShapeSpecializedCachedEngine(std::vector<std::pair<std::string, TensorType>> inputs,
                               driver::StaticGraphSource source, driver::CompileOptions co,
                               std::string entry, unsigned threads)
      : inputs_(std::move(inputs)), source_(std::move(source)), co_(std::move(co)),
        entry_(std::move(entry)), poolThreads_(threads) {}

  llvm::Error prepare(const std::vector<Tensor> &in, bool &inputError) override {
    inputError = false;
    // No value inputs here, so binding cannot fail: it is the shapes.
    auto binding = llvm::cantFail(driver::bindingOf(inputs_, in, {}));
    if (auto *hit = libs_.find(binding)) {
      last_ = hit->get();
      return llvm::Error::success();
    }
    std::string key;
    for (const Shape &s : binding.shapes)
      key += (key.empty() ? "" : "_") + (s.empty() ? std::string("s") : shapeToString(s));
    if (key.size() > 96) // file names stay short: a long key is hashed
      key = "h" + std::to_string(std::hash<std::string>{}(key));
    std::string lib = entry_.substr(0, entry_.size() - 3) + "-" + key + ".so";
    auto start = std::chrono::steady_clock::now();
    cache = "hit";
    if (!llvm::sys::fs::exists(lib)) {
      cache = "miss";
      auto graph = driver::staticGraphAt(inputs_, source_, binding, inputError);
      if (!graph)
        return graph.takeError();
      if (llvm::Error err = driver::compileLibrary(**graph, co_, lib, /*withHeader=*/false))
        return err;
    }
    auto m = driver::SharedModel::open(lib, poolThreads_);
    if (!m) {
      llvm::sys::fs::remove(lib); // damaged: the next run writes it again
      return m.takeError();
    }
    cachePath = lib;
    compileMs += msSince(start);
    last_ = libs_.insert(std::move(binding), std::move(*m)).get();
    return llvm::Error::success();
  }
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &in) override {
    bool inputError = false;
    if (llvm::Error err = prepare(in, inputError))
      return err;
    return last_->run(in);
  }
  int64_t arenaBytes() const override { return last_ ? last_->arenaBytes() : 0; }

private:
  std::vector<std::pair<std::string, TensorType>> inputs_;
  driver::StaticGraphSource source_;
  driver::CompileOptions co_;
  std::string entry_;
  unsigned poolThreads_;
  driver::BindingKeyedCache<std::unique_ptr<driver::SharedModel>> libs_{
      driver::ShapeSpecializedModel::kMaxCompiled};
  driver::SharedModel *last_ = nullptr;
};

// The interpreter for a model imported per binding (its shape arithmetic folds only at known sizes,
// or some input's values decide shapes): the graphs of the most recently used bindings are kept.
class ShapeSpecializedInterpEngine : public Engine {
public:
  ShapeSpecializedInterpEngine(std::vector<std::pair<std::string, TensorType>> inputs,
                               driver::StaticGraphSource source, std::vector<size_t> valueInputs)
      : inputs_(std::move(inputs)), source_(std::move(source)),
        valueInputs_(std::move(valueInputs)) {}
  llvm::Error prepare(const std::vector<Tensor> &inputs, bool &inputError) override {
    inputError = false;
    auto binding = driver::bindingOf(inputs_, inputs, valueInputs_);
    if (!binding) {
      inputError = true;
      return binding.takeError();
    }
    if (auto *hit = graphs_.find(*binding)) {
      last_ = hit->get();
      return llvm::Error::success();
    }
    auto g = driver::staticGraphAt(inputs_, source_, *binding, inputError);
    if (!g)
      return g.takeError();
    last_ = graphs_.insert(std::move(*binding), std::move(*g)).get();
    return llvm::Error::success();
  }
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs) override {
    bool inputError = false;
    if (llvm::Error err = prepare(inputs, inputError))
      return err;
    return interpret(*last_, driver::runtimeInputs(inputs, valueInputs_));
  }

private:
  std::vector<std::pair<std::string, TensorType>> inputs_;
  driver::StaticGraphSource source_;
  std::vector<size_t> valueInputs_;
  driver::BindingKeyedCache<std::unique_ptr<Graph>> graphs_{
      driver::ShapeSpecializedModel::kMaxCompiled};
  const Graph *last_ = nullptr;
};

// A source importing the ONNX file again with its inputs at the bound shapes
// (ImportOptions::inputShapes) and its value inputs as constants, so every shape computation in it
// folds to constants.
driver::StaticGraphSource onnxImportSource(const std::string &path,
                                           const std::vector<std::pair<std::string, TensorType>> &inputs) {
  std::vector<std::string> names;
  for (const auto &in : inputs)
    names.push_back(in.first);
  return [path, names](const driver::InputBinding &binding,
                       const std::map<std::string, int64_t> &) {
    return importOnnxFileAtShapes(path, names, binding.shapes, binding.valueMap());
  };
}

std::vector<std::pair<std::string, TensorType>> namedInputs(const Graph &g) {
  std::vector<std::pair<std::string, TensorType>> inputs;
  for (unsigned i = 0; i < g.numInputs(); ++i)
    inputs.emplace_back(g.input(i)->name(), g.input(i)->type());
  return inputs;
}

class AotEngine : public Engine {
public:
  explicit AotEngine(std::unique_ptr<driver::SharedModel> m) : model_(std::move(m)) {}
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs) override {
    return model_->run(inputs);
  }
  int64_t arenaBytes() const override { return model_->arenaBytes(); }

private:
  std::unique_ptr<driver::SharedModel> model_;
};

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

std::unique_ptr<Engine> libraryEngine(std::unique_ptr<driver::SharedModel> m) {
  std::vector<driver::IOSpec> ins = m->inputs(), outs = m->outputs();
  auto e = std::make_unique<AotEngine>(std::move(m));
  e->name = "aot";
  for (const driver::IOSpec &in : ins) // sizes read from their data: never made up at random
    if (in.decidesSizes)
      e->valueInputs.push_back(in.name);
  e->inputs = std::move(ins);
  for (const driver::IOSpec &o : outs)
    e->outputNames.push_back(o.name);
  return e;
}

// The jit engine through the compile cache: the cached library when there is one, else the model
// compiled into the cache and loaded from it. `engine` stays null when the cache cannot be used
// (after a warning: the caller compiles in memory) or when the model failed (`failed`, reported).
struct CachedEngine {
  std::unique_ptr<Engine> engine;
  bool failed = false;
  std::unique_ptr<Graph> graph; // imported on a miss that cannot go through the cache
  std::optional<OnnxInterface> perShape; // or: an ONNX model to import per input shape

  static CachedEngine failedModel() {
    CachedEngine c;
    c.failed = true;
    return c;
  }
  static CachedEngine of(std::unique_ptr<Engine> e) {
    CachedEngine c;
    c.engine = std::move(e);
    return c;
  }
  static CachedEngine inMemory(std::unique_ptr<Graph> g) {
    CachedEngine c;
    c.graph = std::move(g);
    return c;
  }
  static CachedEngine perShapeImport(OnnxInterface interface) {
    CachedEngine c;
    c.perShape = std::move(interface);
    return c;
  }
};

CachedEngine cachedJitEngine(const std::string &model, const EngineOptions &opts,
                             const driver::CompileOptions &co) {
  auto entry = driver::compileCachePath(model, co);
  if (!entry) {
    llvm::consumeError(entry.takeError()); // the import reports an unreadable model
    return {};
  }
  if (entry->empty())
    return {};
  // A model compiled once for every shape (--any-shape) is an entry of its own: runs without
  // the flag keep their per-shape kernels.
  const std::string lib =
      opts.anyShape ? entry->substr(0, entry->size() - 3) + "-any-shape.so" : *entry;
  auto start = std::chrono::steady_clock::now();
  std::string status = "hit";
  if (!llvm::sys::fs::exists(lib)) {
    status = "miss";
    llvm::StringRef dir = llvm::sys::path::parent_path(lib);
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      std::cerr << "warning: compile cache " << dir.str() << ": " << ec.message()
                << "; compiling in memory\n";
      return {};
    }
    std::unique_ptr<Graph> graph;
    if (endsWith(model, ".onnx")) {
      auto imported = importOnnxFile(model);
      if (!imported) {
        // Shape arithmetic that folds only at known sizes: openEngine imports it per input shape.
        if (auto interface = perShapeInterface(model)) {
          llvm::consumeError(imported.takeError());
          return CachedEngine::perShapeImport(std::move(*interface));
        }
        fail(kBadModel, llvm::toString(imported.takeError()));
        return CachedEngine::failedModel();
      }
      graph = std::move(imported->graph);
    } else {
      graph = loadModel(model);
    }
    if (!graph)
      return CachedEngine::failedModel();
    if (needsShapeSpecialization(*graph) && !opts.anyShape) // per input shape, in memory
      return CachedEngine::inMemory(std::move(graph));
    if (llvm::Error err = driver::compileLibrary(*graph, co, lib, /*withHeader=*/false)) {
      fail(kBadModel, model + ": " + llvm::toString(std::move(err)));
      return CachedEngine::failedModel();
    }
  }
  auto m = driver::SharedModel::open(lib, opts.threads);
  if (!m) {
    // A damaged entry: drop it; the next run writes it again.
    std::cerr << "warning: compile cache: " << llvm::toString(m.takeError())
              << "; removed it, compiling in memory\n";
    llvm::sys::fs::remove(lib);
    return {};
  }
  auto e = libraryEngine(std::move(*m));
  e->name = "jit";
  e->cache = status;
  e->cachePath = lib;
  e->compileMs = msSince(start);
  e->threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
  return CachedEngine::of(std::move(e));
}

} // namespace

llvm::Expected<Tensor> loadTensor(const std::string &path) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".pb") == 0)
    return readTensorProtoFile(path);
  return readNpy(path);
}

void addValueOption(CLI::App *cmd, std::vector<std::string> &values) {
  cmd->add_option("--value", values,
                  "Compile for this value of an input that decides shapes or attributes at "
                  "import (a Reshape's shape, TopK's k, ...): NAME=FILE (.npy or .pb; "
                  "repeatable); the input becomes a constant");
}

llvm::Expected<std::map<std::string, Tensor>>
parseValueHints(const std::vector<std::string> &specs) {
  std::map<std::string, Tensor> values;
  for (const std::string &spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return makeError("--value expects NAME=FILE, got '" + spec + "'");
    auto t = loadTensor(spec.substr(eq + 1));
    if (!t)
      return t.takeError();
    values[spec.substr(0, eq)] = std::move(*t);
  }
  return values;
}

std::unique_ptr<Graph> loadModelForRun(const std::string &path,
                                       const std::vector<std::string> &shapeSpecs,
                                       const std::vector<std::string> &specs,
                                       const std::vector<std::string> &dims, unsigned seed,
                                       std::vector<Tensor> &inputs, std::vector<OnnxNode> *nodes) {
  auto hinted = parseShapeHints(shapeSpecs);
  if (!hinted) {
    fail(kUsage, llvm::toString(hinted.takeError()));
    return nullptr;
  }
  std::unique_ptr<Graph> g;
  std::vector<driver::IOSpec> interface;
  std::vector<std::string> valueInputs; // imported per binding with these inputs' values
  if (!hinted->empty()) {
    g = loadModelAtShapes(path, *hinted, nodes);
  } else if (endsWith(path, ".onnx")) {
    auto imported = importOnnxFile(path);
    if (imported) {
      g = std::move(imported->graph);
      if (nodes)
        *nodes = std::move(imported->nodes);
    } else {
      auto onnxInterface = perShapeInterface(path);
      if (!onnxInterface) {
        fail(kBadModel, llvm::toString(imported.takeError()));
        return nullptr;
      }
      llvm::consumeError(imported.takeError());
      for (auto &[name, type] : onnxInterface->inputs)
        interface.push_back({name, type});
      valueInputs = onnxInterface->valueInputs;
    }
  } else {
    g = loadModel(path);
  }
  std::vector<std::string> mustGive = valueInputs;
  if (g) {
    interface = graphInterface(*g);
    for (unsigned i : sizeDecidingInputs(*g)) // sizes read from their data: never made up
      mustGive.push_back(g->input(i)->name());
  } else if (interface.empty()) {
    return nullptr;
  }
  auto in = modelInputs(interface, specs, dims, seed, mustGive);
  if (!in) {
    fail(kBadInput, llvm::toString(in.takeError()));
    return nullptr;
  }
  inputs = std::move(*in);
  if (g && !needsShapeSpecialization(*g))
    return g;
  // Bind every input's symbols from the inputs' shapes, and the value inputs to their values.
  std::map<std::string, Shape> shapes;
  std::map<std::string, Tensor> values;
  for (size_t i = 0; i < interface.size() && i < inputs.size(); ++i) {
    shapes[interface[i].name] = inputs[i].shape();
    if (std::find(valueInputs.begin(), valueInputs.end(), interface[i].name) != valueInputs.end())
      values[interface[i].name] = inputs[i];
  }
  g = loadModelAtShapes(path, shapes, nodes, values);
  if (g && !values.empty()) { // the graph no longer takes the value inputs
    std::vector<Tensor> kept;
    for (size_t i = 0; i < interface.size() && i < inputs.size(); ++i)
      if (!values.count(interface[i].name))
        kept.push_back(std::move(inputs[i]));
    inputs = std::move(kept);
  }
  return g;
}

std::vector<driver::IOSpec> graphInterface(const Graph &g) {
  std::vector<driver::IOSpec> interface;
  for (unsigned i = 0; i < g.numInputs(); ++i)
    interface.push_back({g.input(i)->name(), g.input(i)->type()});
  return interface;
}

llvm::Expected<std::vector<Tensor>> modelInputs(const Engine &e,
                                                const std::vector<std::string> &specs,
                                                const std::vector<std::string> &dims,
                                                unsigned seed) {
  return modelInputs(e.inputs, specs, dims, seed, e.valueInputs);
}

llvm::Expected<std::vector<Tensor>> modelInputs(const std::vector<driver::IOSpec> &interface,
                                                const std::vector<std::string> &specs,
                                                const std::vector<std::string> &dims,
                                                unsigned seed,
                                                const std::vector<std::string> &given) {
  std::map<std::string, Tensor> byName;
  std::map<size_t, Tensor> byPosition;
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string &spec = specs[i];
    size_t eq = spec.find('=');
    if (eq == 0)
      return makeError("--input expects NAME=FILE or FILE, got '" + spec + "'");
    auto t = loadTensor(eq == std::string::npos ? spec : spec.substr(eq + 1));
    if (!t)
      return t.takeError();
    if (eq == std::string::npos)
      byPosition[i] = std::move(*t);
    else
      byName[spec.substr(0, eq)] = std::move(*t);
  }
  std::map<std::string, int64_t> symbolSizes;
  for (const std::string &d : dims) {
    size_t eq = d.find('=');
    int64_t size = -1;
    if (eq != std::string::npos && eq > 0) {
      std::string digits = d.substr(eq + 1);
      if (!digits.empty() && digits.size() < 10 &&
          std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        size = std::stoll(digits);
    }
    if (size < 0)
      return makeError("--dim expects NAME=SIZE, got '" + d + "'");
    symbolSizes[d.substr(0, eq)] = size;
  }

  std::mt19937_64 rng(seed);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < interface.size(); ++i) {
    const driver::IOSpec &in = interface[i];
    if (auto it = byName.find(in.name); it != byName.end()) {
      inputs.push_back(std::move(it->second));
      byName.erase(it);
      continue;
    }
    if (auto it = byPosition.find(i); it != byPosition.end()) {
      inputs.push_back(std::move(it->second));
      byPosition.erase(it);
      continue;
    }
    if (std::find(given.begin(), given.end(), in.name) != given.end())
      return makeError("input '" + in.name +
                       "' decides shapes or attributes (sizes are read from its values): give "
                       "it with --input " + in.name + "=FILE");
    Shape shape;
    for (const Dim &d : in.type.dims)
      shape.push_back(d.isStatic() ? d.size
                                   : d.expr
                                         .evaluate([&](const std::string &n) {
                                           auto it = symbolSizes.find(n);
                                           return std::optional<int64_t>(
                                               it == symbolSizes.end() ? 1 : it->second);
                                         })
                                         .value_or(1));
    // Refuse absurd sizes before allocating.
    const int64_t limit = processLimits().maxTensorElements;
    if (!shape::strideExtent(shape))
      return makeError("input '" + in.name + "' of shape [" + shapeToString(shape) +
                       "] has dims whose product overflows int64");
    if (numElements(shape) > limit)
      return makeError("input '" + in.name + "' of shape [" + shapeToString(shape) +
                       "] is too large to generate, " +
                       overLimit(&Limits::maxTensorElements, limit));
    inputs.push_back(randomTensor(in.type.dtype, shape, rng));
  }
  if (!byName.empty())
    return makeError("the model has no input named '" + byName.begin()->first + "'");
  if (!byPosition.empty())
    return makeError("the model has " + std::to_string(interface.size()) + " inputs, --input " +
                     std::to_string(byPosition.begin()->first + 1) + " has no position");
  return inputs;
}

bool isSharedLibrary(const std::string &path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0;
}

void addAnyShapeOption(CLI::App *cmd, bool &anyShape) {
  cmd->add_flag("--any-shape", anyShape,
                "jit: compile a model with symbolic dims once for every input shape (its kernels "
                "take them as run-time extents) instead of once per input shape");
}

void addModelOptions(CLI::App *cmd, std::string &model, std::string &engine) {
  cmd->add_option("model", model,
                  "Model file: .onnx, .sg graph IR, or a library from `strata compile -o m.so`")
      ->required();
  cmd->add_option("--engine", engine, "Execution engine for .onnx/.sg models (.so: aot)")
      ->check(CLI::IsMember({"interp", "jit"}))
      ->capture_default_str();
}

void addInputOptions(CLI::App *cmd, std::vector<std::string> &inputs,
                     std::vector<std::string> &dims, unsigned &seed) {
  cmd->add_option("--input,-i", inputs, "Input as NAME=FILE or FILE (.npy or TensorProto .pb)");
  cmd->add_option("--dim", dims, "Size of a symbolic dim for random inputs: NAME=SIZE");
  cmd->add_option("--seed", seed, "Seed of the random inputs")->capture_default_str();
}

void addTargetOption(CLI::App *cmd, std::string &target) {
  cmd->add_option("--target", target, "CPU to compile for")
      ->check(CLI::IsMember({"host", "x86-64-v3", "x86-64-v2"}))
      ->capture_default_str();
}

// The jit engine of a model compiled per input shape: through the compile cache when it is on.
std::unique_ptr<Engine> perShapeJitEngine(const std::string &model,
                                          std::vector<std::pair<std::string, TensorType>> inputs,
                                          driver::StaticGraphSource source,
                                          const EngineOptions &opts,
                                          const driver::CompileOptions &co,
                                          std::vector<size_t> valueInputs = {}) {
  std::unique_ptr<Engine> e;
  // Bindings with values compile in memory only: values can be many (an If on a scalar input),
  // and the cache never evicts.
  if (opts.cache && valueInputs.empty()) {
    auto entry = driver::compileCachePath(model, co);
    if (!entry)
      llvm::consumeError(entry.takeError());
    else if (!entry->empty() &&
             !llvm::sys::fs::create_directories(llvm::sys::path::parent_path(*entry)))
      e = std::make_unique<ShapeSpecializedCachedEngine>(std::move(inputs), std::move(source), co,
                                                         *entry, opts.threads);
  }
  if (!e)
    e = std::make_unique<ShapeSpecializedJitEngine>(std::move(inputs), std::move(source), co,
                                                    std::move(valueInputs));
  e->name = "jit";
  e->threads = co.threads ? co.threads : std::max(1u, std::thread::hardware_concurrency());
  return e;
}

// The engine of an ONNX model imported once per set of input shapes.
std::unique_ptr<Engine> perShapeImportEngine(const std::string &model, OnnxInterface interface,
                                             const EngineOptions &opts,
                                             const driver::CompileOptions &co) {
  driver::StaticGraphSource source = onnxImportSource(model, interface.inputs);
  std::vector<size_t> valueInputs = driver::inputIndices(interface.inputs, interface.valueInputs);
  std::unique_ptr<Engine> e;
  if (opts.engine == "interp") {
    e = std::make_unique<ShapeSpecializedInterpEngine>(interface.inputs, std::move(source),
                                                       std::move(valueInputs));
    e->name = "interp";
  } else if (opts.engine == "jit") {
    e = perShapeJitEngine(model, interface.inputs, std::move(source), opts, co,
                          std::move(valueInputs));
  } else {
    fail(kUsage, "unknown engine '" + opts.engine + "' (expected jit or interp)");
    return nullptr;
  }
  for (auto &[name, type] : interface.inputs)
    e->inputs.push_back({name, type});
  e->valueInputs = interface.valueInputs;
  for (const auto &out : interface.outputs)
    e->outputNames.push_back(out.first);
  return e;
}

std::unique_ptr<Engine> openEngine(const std::string &model, const EngineOptions &opts) {
  auto start = std::chrono::steady_clock::now();
  if (isSharedLibrary(model)) {
    auto m = driver::SharedModel::open(model, opts.threads);
    if (!m) {
      fail(kBadModel, llvm::toString(m.takeError()));
      return nullptr;
    }
    auto e = libraryEngine(std::move(*m));
    e->compileMs = msSince(start);
    e->threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
    return e;
  }
  driver::CompileOptions co;
  co.threads = opts.threads;
  co.target = opts.target;
  co.winogradTile = opts.winogradTile;
  std::unique_ptr<Graph> graph;
  if (opts.engine == "jit" && opts.cache) {
    CachedEngine cached = cachedJitEngine(model, opts, co);
    if (cached.engine || cached.failed)
      return std::move(cached.engine);
    if (cached.perShape)
      return perShapeImportEngine(model, std::move(*cached.perShape), opts, co);
    graph = std::move(cached.graph);
  }
  if (!graph && endsWith(model, ".onnx")) {
    auto imported = importOnnxFile(model);
    if (!imported) {
      // A model with symbolic input dims whose shape arithmetic only folds at known sizes (a Shape
      // of a dynamic dim feeding a Reshape, Range, Slice, ...): imported again at each set of
      // input shapes. Anything else is the error.
      auto interface = perShapeInterface(model);
      if (!interface) {
        fail(kBadModel, llvm::toString(imported.takeError()));
        return nullptr;
      }
      llvm::consumeError(imported.takeError());
      return perShapeImportEngine(model, std::move(*interface), opts, co);
    }
    graph = std::move(imported->graph);
  }
  if (!graph)
    graph = loadModel(model);
  if (!graph)
    return nullptr;
  if (opts.engine == "interp") {
    const Graph &g = *graph;
    auto e = std::make_unique<InterpEngine>(std::move(graph));
    e->name = "interp";
    describeGraph(*e, g);
    return e;
  }
  if (opts.engine != "jit") {
    fail(kUsage, "unknown engine '" + opts.engine + "' (expected jit or interp)");
    return nullptr;
  }
  start = std::chrono::steady_clock::now();
  if (needsShapeSpecialization(*graph) && !opts.anyShape) {
    std::vector<std::pair<std::string, TensorType>> inputs = namedInputs(*graph);
    std::shared_ptr<const Graph> shared(std::move(graph));
    auto e = perShapeJitEngine(model, inputs, driver::specializingSource(shared), opts, co);
    describeGraph(*e, *shared);
    return e;
  }
  auto e = std::make_unique<JitEngine>(nullptr);
  describeGraph(*e, *graph);
  auto m = driver::compileModel(*graph, co);
  if (!m) {
    fail(kBadModel, model + ": " + llvm::toString(m.takeError()));
    return nullptr;
  }
  e->setModel(std::move(*m), opts.keepGraph ? std::move(graph) : nullptr);
  e->name = "jit";
  e->compileMs = msSince(start);
  e->kernels = e->model()->numKernels();
  e->threads = e->model()->threads();
  return e;
}

} // namespace strata::cli
