// Compiling a model once per set of input shapes (see ShapeSpecializedModel.h).
#include "strata/driver/ShapeSpecializedModel.h"
#include "strata/graph/Specialize.h"
#include "strata/support/Error.h"

#include <algorithm>

namespace strata::driver {

bool InputBinding::operator==(const InputBinding &o) const {
  if (shapes != o.shapes || values.size() != o.values.size())
    return false;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].first != o.values[i].first || !values[i].second.identical(o.values[i].second))
      return false;
  return true;
}

llvm::Error checkValueInputSize(const std::string &name, int64_t elements) {
  if (elements <= kMaxValueInputElements)
    return llvm::Error::success();
  return makeError("input '" + name + "' has " + std::to_string(elements) +
                   " elements, but its values are needed at import (they decide shapes, "
                   "attributes or control flow), so they key the compilation: at most " +
                   std::to_string(kMaxValueInputElements) + " elements");
}

llvm::Expected<InputBinding>
bindingOf(const std::vector<std::pair<std::string, TensorType>> &interface,
          const std::vector<Tensor> &inputs, const std::vector<size_t> &valueInputs) {
  InputBinding b;
  b.shapes.reserve(inputs.size());
  for (const Tensor &t : inputs)
    b.shapes.push_back(t.shape());
  for (size_t i : valueInputs) {
    if (i >= inputs.size() || i >= interface.size())
      continue; // too few inputs: binding the shapes names the missing one
    const Tensor &t = inputs[i];
    if (llvm::Error err = checkValueInputSize(interface[i].first, t.numElements()))
      return std::move(err);
    b.values.emplace_back(interface[i].first, t);
  }
  return b;
}

std::vector<Tensor> runtimeInputs(const std::vector<Tensor> &inputs,
                                  const std::vector<size_t> &valueInputs) {
  if (valueInputs.empty())
    return inputs;
  std::vector<Tensor> kept;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (std::find(valueInputs.begin(), valueInputs.end(), i) == valueInputs.end())
      kept.push_back(inputs[i]);
  return kept;
}

std::vector<size_t> inputIndices(const std::vector<std::pair<std::string, TensorType>> &interface,
                                 const std::vector<std::string> &names) {
  std::vector<size_t> indices;
  for (size_t i = 0; i < interface.size(); ++i)
    if (std::find(names.begin(), names.end(), interface[i].first) != names.end())
      indices.push_back(i);
  return indices;
}

StaticGraphSource specializingSource(std::shared_ptr<const Graph> g) {
  return [g](const InputBinding &, const std::map<std::string, int64_t> &sizes) {
    return specializeGraph(*g, sizes);
  };
}

llvm::Expected<std::unique_ptr<Graph>>
staticGraphAt(const std::vector<std::pair<std::string, TensorType>> &inputs,
              const StaticGraphSource &source, const InputBinding &binding,
              bool &bindingFailed) {
  bindingFailed = true;
  auto sizes = bindInputSymbols(inputs, binding.shapes);
  if (!sizes)
    return sizes.takeError();
  bindingFailed = false;
  auto graph = source(binding, *sizes);
  if (graph || binding.values.empty())
    return graph;
  // The model imports at other values, so these are at fault: say which.
  bindingFailed = true;
  std::string values;
  for (const auto &[name, t] : binding.values) {
    values += (values.empty() ? "" : ", ") + name + " = [";
    for (int64_t i = 0; i < std::min<int64_t>(t.numElements(), 8); ++i)
      values += (i ? ", " : "") + (isFloat(t.dtype()) ? std::to_string(t.getDouble(i))
                                                      : std::to_string(t.getInt(i)));
    values += t.numElements() > 8 ? ", ...]" : "]";
  }
  return makeError("at the values of its inputs " + values + ": " +
                   llvm::toString(graph.takeError()));
}

ShapeSpecializedModel::ShapeSpecializedModel(
    std::vector<std::pair<std::string, TensorType>> inputs, StaticGraphSource source,
    CompileOptions opts, std::vector<size_t> valueInputs)
    : inputs_(std::move(inputs)), source_(std::move(source)), opts_(std::move(opts)),
      valueInputs_(std::move(valueInputs)) {}

ShapeSpecializedModel::~ShapeSpecializedModel() = default;

llvm::Expected<CompiledModel *> ShapeSpecializedModel::forInputs(const std::vector<Tensor> &inputs) {
  auto binding = bindingOf(inputs_, inputs, valueInputs_);
  if (!binding) {
    lastErrorWasBinding_ = true;
    return binding.takeError();
  }
  return forBinding(std::move(*binding));
}

llvm::Expected<CompiledModel *> ShapeSpecializedModel::forBinding(InputBinding binding) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (Compiled *hit = compiled_.find(binding)) {
    last_ = hit;
    return hit->model.get();
  }
  auto bound = staticGraphAt(inputs_, source_, binding, lastErrorWasBinding_);
  if (!bound)
    return bound.takeError();
  auto model = compileModel(**bound, opts_);
  if (!model)
    return model.takeError();
  ++compilations_;
  last_ = &compiled_.insert(std::move(binding), Compiled{std::move(*bound), std::move(*model)});
  return last_->model.get();
}

llvm::Expected<std::vector<Tensor>> ShapeSpecializedModel::run(const std::vector<Tensor> &inputs) {
  auto model = forInputs(inputs);
  if (!model)
    return model.takeError();
  return (*model)->run(runtimeInputs(inputs));
}

} // namespace strata::driver
