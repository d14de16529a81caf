// Compiling a model once per set of input shapes (see ShapeSpecializedModel.h).
#include "strata/driver/ShapeSpecializedModel.h"
#include "strata/graph/Specialize.h"
#include "strata/support/Error.h"

namespace strata::driver {

std::vector<Shape> shapesOf(const std::vector<Tensor> &tensors) {
  std::vector<Shape> shapes;
  shapes.reserve(tensors.size());
  for (const Tensor &t : tensors)
    shapes.push_back(t.shape());
  return shapes;
}

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
  if (Compiled *hit = compiled_.find(shapes)) {
    last_ = hit;
    return hit->model.get();
  }
  auto bound = staticGraphAt(inputs_, source_, shapes, lastErrorWasBinding_);
  if (!bound)
    return bound.takeError();
  auto model = compileModel(**bound, opts_);
  if (!model)
    return model.takeError();
  ++compilations_;
  last_ = &compiled_.insert(shapes, Compiled{std::move(*bound), std::move(*model)});
  return last_->model.get();
}

llvm::Expected<std::vector<Tensor>> ShapeSpecializedModel::run(const std::vector<Tensor> &inputs) {
  auto model = forShapes(shapesOf(inputs));
  if (!model)
    return model.takeError();
  return (*model)->run(inputs);
}

} // namespace strata::driver
