#include "strata/graph/Type.h"

namespace strata {

std::string Dim::str() const {
  if (isStatic())
    return std::to_string(size);
  if (const std::string *name = symbolName())
    return "?" + *name;
  return "?(" + expr.str() + ")";
}

TensorType TensorType::fromShape(DType dt, const Shape &shape) {
  std::vector<Dim> dims(shape.begin(), shape.end());
  return TensorType(dt, std::move(dims));
}

bool TensorType::isStatic() const {
  for (const Dim &d : dims)
    if (!d.isStatic())
      return false;
  return true;
}

Shape TensorType::staticShape() const {
  Shape s;
  s.reserve(dims.size());
  for (const Dim &d : dims)
    s.push_back(d.isStatic() ? d.size : -1);
  return s;
}

std::optional<int64_t> TensorType::staticNumElements() const {
  if (!isStatic())
    return std::nullopt;
  return numElements(staticShape());
}

std::string TensorType::str() const {
  std::string s = "tensor<";
  for (const Dim &d : dims) {
    s += d.str();
    s += d.isStatic() ? "x" : " x";
  }
  s += dtypeName(dtype);
  if (device == Device::GPU)
    s += ", gpu";
  s += ">";
  return s;
}

} // namespace strata
