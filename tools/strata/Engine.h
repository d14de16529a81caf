// A model ready to run, whichever engine runs it: the graph interpreter, the JIT, or an AOT
// library (a path ending in .so). `strata run` and `strata bench` drive models through this.
#pragma once
#include "Commands.h"

#include "strata/driver/KernelCost.h"
#include "strata/driver/SharedModel.h"
#include "strata/support/Tensor.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace strata::cli {

struct EngineOptions {
  std::string engine = "jit"; // "jit" or "interp"; ignored for .so files ("aot")
  unsigned threads = 0;       // jit and aot: 0 = one per core
  std::string target = "host";
  // jit: keep the compiled model in the compile cache (driver/CompileCache.h) and load it from
  // there next time; off when $STRATA_CACHE=0.
  bool cache = false;
  // jit: keep the optimized graph, so kernelCosts() can read the kernels' ops (strata bench
  // --profile); otherwise it is freed once the model is compiled.
  bool keepGraph = false;
  // jit: compile a model with symbolic dims once, its kernels taking them as run-time extents,
  // instead of once per input shape (the default, whose kernels are specialized and faster).
  bool anyShape = false;
  // jit: the winograd pass's tile (--winograd; PassOptions::winogradTile).
  int64_t winogradTile = 0;
};

class Engine {
public:
  virtual ~Engine() = default;
  virtual llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs) = 0;
  // Work a first run on inputs of these shapes would do before its kernels (the jit engine of a
  // model compiled per input shape compiles here), so callers can time it as compile time.
  // `inputError` says whether a failure is the inputs' fault (their shapes) or the model's.
  virtual llvm::Error prepare(const std::vector<Tensor> &, bool &inputError) {
    inputError = false;
    return llvm::Error::success();
  }
  // Bytes of intermediate memory of the last run (0 for the interpreter, which allocates per op).
  virtual int64_t arenaBytes() const { return 0; }
  // Per-kernel timing where the engine supports it (jit): on/off, then (step, total ms).
  virtual bool setProfiling(bool) { return false; }
  virtual std::vector<std::pair<std::string, double>> profile() const { return {}; }
  // Each kernel's FLOPs and bytes for a run on `inputs`, in profile() order (jit), else empty.
  virtual std::vector<driver::KernelCost> kernelCosts(const std::vector<Tensor> &) const {
    return {};
  }

  std::string name;                          // "interp", "jit" or "aot"
  std::vector<driver::IOSpec> inputs;       // symbolic dims carry their names
  // Inputs whose values the model is compiled for (OnnxInterface::valueInputs): never random.
  std::vector<std::string> valueInputs;
  std::vector<std::string> outputNames;
  double compileMs = 0;                      // jit: import excluded; aot: library load
  size_t kernels = 0;
  unsigned threads = 1;                      // threads parallel loops run on
  std::string cache;     // jit with the cache: "hit" or "miss" (then written), else empty
  std::string cachePath; // the cached library
};

// Loads `model` and prepares it for `opts.engine`. Prints the error (naming the file) and returns
// null on failure.
std::unique_ptr<Engine> openEngine(const std::string &model, const EngineOptions &opts);

bool isSharedLibrary(const std::string &path);

// The `model` positional and `--engine` option shared by `strata run` and `strata bench`.
void addAnyShapeOption(CLI::App *cmd, bool &anyShape);
void addModelOptions(CLI::App *cmd, std::string &model, std::string &engine);

// --input/-i NAME=FILE, --dim NAME=SIZE and --seed N: what modelInputs takes.
void addInputOptions(CLI::App *cmd, std::vector<std::string> &inputs,
                     std::vector<std::string> &dims, unsigned &seed);
// --target host|x86-64-v3|x86-64-v2.
void addTargetOption(CLI::App *cmd, std::string &target);

// The model's inputs in order. `specs`: NAME=FILE, or FILE for the input at that position
// (.npy, or TensorProto .pb); an input no spec names gets seeded random data of its dtype
// (floats in [-1, 1), integers in [0, 4), bools fair coins), its symbolic dims sized by `dims`
// (NAME=SIZE, default 1).
llvm::Expected<std::vector<Tensor>> modelInputs(const Engine &e,
                                                const std::vector<std::string> &specs,
                                                const std::vector<std::string> &dims,
                                                unsigned seed);
// The model as one static-enough graph for tools that compile it whole for one run (explain,
// bisect): as imported when its kernels can take its symbolic dims, else at the shapes `--shape`
// gives, else at the shapes of its inputs (`specs`/`dims`/`seed` as for modelInputs), which are
// returned in `inputs`. `nodes` receives the ONNX nodes. Reports the error and returns null.
std::unique_ptr<Graph> loadModelForRun(const std::string &path,
                                       const std::vector<std::string> &shapeSpecs,
                                       const std::vector<std::string> &specs,
                                       const std::vector<std::string> &dims, unsigned seed,
                                       std::vector<Tensor> &inputs,
                                       std::vector<OnnxNode> *nodes = nullptr);

// A graph's input interface (names and types, symbolic dims named).
std::vector<driver::IOSpec> graphInterface(const Graph &g);

// The same for a model's input interface; the inputs named in `given` must come from `specs`
// (value inputs: random values would only make a model of random shapes).
llvm::Expected<std::vector<Tensor>> modelInputs(const std::vector<driver::IOSpec> &interface,
                                                const std::vector<std::string> &specs,
                                                const std::vector<std::string> &dims,
                                                unsigned seed,
                                                const std::vector<std::string> &given = {});

} // namespace strata::cli
