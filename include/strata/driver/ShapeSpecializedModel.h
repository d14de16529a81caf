// The JIT engine for models whose symbolic dims its kernels cannot take as parameters yet (any
// symbolic dim but a leading batch, e.g. an image's height and width, a sequence length; or shape
// arithmetic the importer can only fold at known sizes), and for models with inputs whose values
// decide shapes or attributes (a Reshape's shape, TopK's k, Resize's sizes given as graph inputs):
// each new binding (input shapes, and the values of those inputs) gets a graph of static shapes
// from a source, compiled for it, and the compiled models of the most recently used bindings are
// kept, so a stream of inputs at a few sizes compiles each once.
#pragma once
#include "strata/driver/CompiledModel.h"
#include "strata/graph/Specialize.h"

#include <algorithm>
#include <functional>
#include <list>
#include <map>
#include <mutex>

namespace strata::driver {

// What one compilation is specialized for: every input's shape and the values of the inputs whose
// values decide shapes at import ("value inputs": they become constants of the graph built for
// the binding, which no longer takes them as inputs).
struct InputBinding {
  std::vector<Shape> shapes;
  std::vector<std::pair<std::string, Tensor>> values; // value inputs in interface order
  bool operator==(const InputBinding &o) const;
  std::map<std::string, Tensor> valueMap() const {
    return std::map<std::string, Tensor>(values.begin(), values.end());
  }
};

// Refuses a value input of more than kMaxValueInputElements elements, naming it.
llvm::Error checkValueInputSize(const std::string &name, int64_t elements);
// The binding of `inputs` (interface order); `valueInputs` are indices into the interface. Errors
// name a value input too large to key a compilation (kMaxValueInputElements, graph/Specialize.h).
llvm::Expected<InputBinding>
bindingOf(const std::vector<std::pair<std::string, TensorType>> &interface,
          const std::vector<Tensor> &inputs, const std::vector<size_t> &valueInputs);
// `inputs` without the value inputs: what the graph built for a binding takes.
std::vector<Tensor> runtimeInputs(const std::vector<Tensor> &inputs,
                                  const std::vector<size_t> &valueInputs);
// The interface's indices of the inputs named in `names`.
std::vector<size_t> inputIndices(const std::vector<std::pair<std::string, TensorType>> &interface,
                                 const std::vector<std::string> &names);

// The graph at one binding, given the symbol sizes its shapes bind.
using StaticGraphSource = std::function<llvm::Expected<std::unique_ptr<Graph>>(
    const InputBinding &binding, const std::map<std::string, int64_t> &sizes)>;

// A source binding an imported graph's symbols (graph/Specialize.h: types inferred again).
StaticGraphSource specializingSource(std::shared_ptr<const Graph> g);
// The static graph at `binding`: binds its shapes to `inputs` (names and declared types), then
// asks `source`. `bindingFailed` says whether an error came from binding (the inputs' fault).
llvm::Expected<std::unique_ptr<Graph>>
staticGraphAt(const std::vector<std::pair<std::string, TensorType>> &inputs,
              const StaticGraphSource &source, const InputBinding &binding,
              bool &bindingFailed);

// (The tools add a source importing an ONNX file again at the bound input shapes, so its shape
// arithmetic folds to constants: the importer is above this layer.)

// What was built for the most recently used bindings (compiled models, libraries, graphs), at
// most `capacity` of them: the least recently used is dropped past that. Pointers stay valid
// until their entry is dropped.
template <typename T> class BindingKeyedCache {
public:
  explicit BindingKeyedCache(size_t capacity) : capacity_(capacity) {}
  // The value for `binding`, marked used; null when there is none.
  T *find(const InputBinding &binding) {
    for (Entry &e : entries_)
      if (e.binding == binding) {
        e.lastUse = ++clock_;
        return &e.value;
      }
    return nullptr;
  }
  T &insert(InputBinding binding, T value) {
    if (entries_.size() >= capacity_)
      entries_.erase(std::min_element(entries_.begin(), entries_.end(),
                                      [](const Entry &a, const Entry &b) {
                                        return a.lastUse < b.lastUse;
                                      }));
    entries_.push_back({std::move(binding), std::move(value), ++clock_});
    return entries_.back().value;
  }

private:
  struct Entry {
    InputBinding binding;
    T value;
    uint64_t lastUse = 0;
  };
  std::list<Entry> entries_;
  size_t capacity_;
  uint64_t clock_ = 0;
};

class ShapeSpecializedModel {
public:
  // How many bindings stay compiled; the least recently used one is dropped past this.
  static constexpr size_t kMaxCompiled = 8;

  // `inputs`: the interface (names and declared types, symbolic dims named) the shapes are bound
  // against; `source` gives the static graph; `opts` is used for every compilation;
  // `valueInputs`: indices of the inputs whose values key the compilation too.
  ShapeSpecializedModel(std::vector<std::pair<std::string, TensorType>> inputs,
                        StaticGraphSource source, CompileOptions opts,
                        std::vector<size_t> valueInputs = {});
  ~ShapeSpecializedModel();

  // The model compiled for these inputs' binding, compiling it on first sight; the pointer is
  // valid until the next call. It takes runtimeInputs(inputs). Errors name the input and dim, or
  // the node whose shape the sizes break.
  llvm::Expected<CompiledModel *> forInputs(const std::vector<Tensor> &inputs);
  // The same for a binding built by the caller (bindingOf, or shapes and values it read itself).
  llvm::Expected<CompiledModel *> forBinding(InputBinding binding);
  const std::vector<size_t> &valueInputs() const { return valueInputs_; }
  // `inputs` as the compiled models take them (without the value inputs).
  std::vector<Tensor> runtimeInputs(const std::vector<Tensor> &inputs) const {
    return driver::runtimeInputs(inputs, valueInputs_);
  }
  // Whether the last failed forInputs failed binding the shapes to the interface rather than
  // building or compiling the graph.
  bool lastErrorWasBinding() const { return lastErrorWasBinding_; }
  // forInputs(inputs), then run. One caller at a time.
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs);

  size_t compilations() const { return compilations_; }
  // The model of the last forInputs (null before the first), and the optimized graph it came from.
  CompiledModel *lastModel() const { return last_ ? last_->model.get() : nullptr; }
  const Graph *lastGraph() const { return last_ ? last_->graph.get() : nullptr; }

private:
  struct Compiled {
    std::unique_ptr<Graph> graph; // kept: the model's kernelOps point into it
    std::unique_ptr<CompiledModel> model;
  };
  std::vector<std::pair<std::string, TensorType>> inputs_;
  StaticGraphSource source_;
  CompileOptions opts_;
  std::vector<size_t> valueInputs_;
  BindingKeyedCache<Compiled> compiled_{kMaxCompiled};
  Compiled *last_ = nullptr;
  size_t compilations_ = 0;
  bool lastErrorWasBinding_ = false;
  std::mutex mutex_;
};

} // namespace strata::driver
