// Compiling a model once per set of input shapes (see ShapeSpecializedModel.h).
#include "strata/driver/ShapeSpecializedModel.h"
#include "strata/graph/Specialize.h"
#include "strata/support/Error.h"

#include <algorithm>

namespace strata::driver {

StaticGraphSource specializingSource(std::shared_ptr<const Graph> g) {
  return [g](const std::vector<Shape> &, const std::map<std::string, int64_t> &sizes) {
    return specializeGraph(*g, sizes);
  };
}

llvm::Expected<std::unique_ptr<Graph>>
staticGraphAt(const std::vector<std::pair<std::string, TensorType>> &inputs,
              const StaticGraphSource &source, const std::vector<Shape> &shapes,
              bool &bindingFailed) {
  bindingFailed = true;
  auto sizes = bindInputSymbols(inputs, shapes);
  if (!sizes)
    return sizes.takeError();
  bindingFailed = false;
  return source(shapes, *sizes);
}

ShapeSpecializedModel::ShapeSpecializedModel(
    std::vector<std::pair<std::string, TensorType>> inputs, StaticGraphSource source,
    CompileOptions opts)
    : inputs_(std::move(inputs)), source_(std::move(source)), opts_(std::move(opts)) {}

ShapeSpecializedModel::~ShapeSpecializedModel() = default;

llvm::Expected<CompiledModel *> ShapeSpecializedModel::forShapes(const std::vector<Shape> &shapes) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &e : entries_)
    if (e->shapes == shapes) {
      e->lastUse = ++clock_;
      last_ = e.get();
      return e->model.get();
    }
  auto bound = staticGraphAt(inputs_, source_, shapes, lastErrorWasBinding_);
  if (!bound)
    return bound.takeError();
  auto model = compileModel(**bound, opts_);
  if (!model)
    return model.takeError();
  ++compilations_;
  if (entries_.size() >= kMaxCompiled) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(), [](const auto &a, const auto &b) {
      return a->lastUse < b->lastUse;
    });
    if (last_ == oldest->get())
      last_ = nullptr;
    entries_.erase(oldest);
  }
  auto entry = std::make_unique<Entry>();
  entry->shapes = shapes;
  entry->graph = std::move(*bound);
  entry->model = std::move(*model);
  entry->lastUse = ++clock_;
  last_ = entry.get();
  entries_.push_back(std::move(entry));
  return last_->model.get();
}

llvm::Expected<std::vector<Tensor>> ShapeSpecializedModel::run(const std::vector<Tensor> &inputs) {
  std::vector<Shape> shapes;
  shapes.reserve(inputs.size());
  for (const Tensor &t : inputs)
    shapes.push_back(t.shape());
  auto model = forShapes(shapes);
  if (!model)
    return model.takeError();
  return (*model)->run(inputs);
}

} // namespace strata::driver
