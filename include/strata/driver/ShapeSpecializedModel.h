// The JIT engine for models whose symbolic dims its kernels cannot take as parameters yet (any
// symbolic dim but a leading batch, e.g. an image's height and width, a sequence length; or shape
// arithmetic the importer can only fold at known sizes): each new set of input shapes gets a graph
// of static shapes from a source, compiled for it, and the compiled models of the most recently
// used shapes are kept, so a stream of inputs at a few sizes compiles each once.
#pragma once
#include "strata/driver/CompiledModel.h"

#include <algorithm>
#include <functional>
#include <list>
#include <map>
#include <mutex>

namespace strata::driver {

// The graph at one binding: the input shapes and the symbol sizes they bind.
using StaticGraphSource = std::function<llvm::Expected<std::unique_ptr<Graph>>(
    const std::vector<Shape> &shapes, const std::map<std::string, int64_t> &sizes)>;

// A source binding an imported graph's symbols (graph/Specialize.h: types inferred again).
StaticGraphSource specializingSource(std::shared_ptr<const Graph> g);
// The static graph at `shapes`: binds them to `inputs` (names and declared types), then asks
// `source`. `bindingFailed` says whether an error came from binding (the inputs' fault).
llvm::Expected<std::unique_ptr<Graph>>
staticGraphAt(const std::vector<std::pair<std::string, TensorType>> &inputs,
              const StaticGraphSource &source, const std::vector<Shape> &shapes,
              bool &bindingFailed);

// (The tools add a source importing an ONNX file again at the bound input shapes, so its shape
// arithmetic folds to constants: the importer is above this layer.)

// The shapes of `tensors`, in order: the key of the caches below.
std::vector<Shape> shapesOf(const std::vector<Tensor> &tensors);

// What was built for the most recently used sets of input shapes (compiled models, libraries,
// graphs), at most `capacity` of them: the least recently used is dropped past that. Pointers
// stay valid until their entry is dropped.
template <typename T> class ShapeKeyedCache {
public:
  explicit ShapeKeyedCache(size_t capacity) : capacity_(capacity) {}
  // The value for `shapes`, marked used; null when there is none.
  T *find(const std::vector<Shape> &shapes) {
    for (Entry &e : entries_)
      if (e.shapes == shapes) {
        e.lastUse = ++clock_;
        return &e.value;
      }
    return nullptr;
  }
  T &insert(std::vector<Shape> shapes, T value) {
    if (entries_.size() >= capacity_)
      entries_.erase(std::min_element(entries_.begin(), entries_.end(),
                                      [](const Entry &a, const Entry &b) {
                                        return a.lastUse < b.lastUse;
                                      }));
    entries_.push_back({std::move(shapes), std::move(value), ++clock_});
    return entries_.back().value;
  }

private:
  struct Entry {
    std::vector<Shape> shapes;
    T value;
    uint64_t lastUse = 0;
  };
  std::list<Entry> entries_;
  size_t capacity_;
  uint64_t clock_ = 0;
};

class ShapeSpecializedModel {
public:
  // How many input-shape sets stay compiled; the least recently used one is dropped past this.
  static constexpr size_t kMaxCompiled = 8;

  // `inputs`: the interface (names and declared types, symbolic dims named) the shapes are bound
  // against; `source` gives the static graph; `opts` is used for every compilation.
  ShapeSpecializedModel(std::vector<std::pair<std::string, TensorType>> inputs,
                        StaticGraphSource source, CompileOptions opts);
  ~ShapeSpecializedModel();

  // The model compiled for these input shapes, compiling it on first sight; the pointer is valid
  // until the next call. Errors name the input and dim, or the node whose shape the sizes break.
  llvm::Expected<CompiledModel *> forShapes(const std::vector<Shape> &shapes);
  // Whether the last failed forShapes failed binding the shapes to the interface rather than
  // building or compiling the graph.
  bool lastErrorWasBinding() const { return lastErrorWasBinding_; }
  // forShapes(the inputs' shapes), then run. One caller at a time.
  llvm::Expected<std::vector<Tensor>> run(const std::vector<Tensor> &inputs);

  size_t compilations() const { return compilations_; }
  // The model of the last forShapes (null before the first), and the optimized graph it came from.
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
  ShapeKeyedCache<Compiled> compiled_{kMaxCompiled};
  Compiled *last_ = nullptr;
  size_t compilations_ = 0;
  bool lastErrorWasBinding_ = false;
  std::mutex mutex_;
};

} // namespace strata::driver
