#include "strata/graph/Type.h"

namespace strata {

std::string Dim::str() const { return isStatic() ? std::to_string(size) : "?" + symbol; }

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

std::optional<std::vector<Dim>> broadcastDims(const std::vector<Dim> &a, const std::vector<Dim> &b,
                                              std::string *why) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim *da = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const Dim *db = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (!da) {
      out[i] = *db;
    } else if (!db) {
      out[i] = *da;
    } else if (*da == *db) {
      out[i] = *da;
    } else if (da->isStatic() && da->size == 1) {
      out[i] = *db;
    } else if (db->isStatic() && db->size == 1) {
      out[i] = *da;
    } else if (!da->isStatic() && db->isStatic()) {
      out[i] = *db; // the symbol must equal the static size at run time
    } else if (da->isStatic() && !db->isStatic()) {
      out[i] = *da;
    } else {
      if (why)
        *why = "cannot broadcast dimension " + da->str() + " with " + db->str();
      return std::nullopt;
    }
  }
  return out;
}

} // namespace strata
