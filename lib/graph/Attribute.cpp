#include "strata/graph/Attribute.h"

namespace strata {

std::string_view attrKindName(AttrKind k) {
  switch (k) {
  case AttrKind::Int: return "int";
  case AttrKind::Float: return "float";
  case AttrKind::String: return "string";
  case AttrKind::Ints: return "ints";
  case AttrKind::Floats: return "floats";
  case AttrKind::Tensor: return "tensor";
  case AttrKind::DType: return "dtype";
  case AttrKind::Dims: return "dims";
  }
  return "?";
}

Attribute Attribute::dims(const std::vector<Dim> &d) {
  std::vector<int64_t> sizes;
  for (const Dim &x : d) {
    if (!x.isStatic())
      return Attribute(Storage(d));
    sizes.push_back(x.size);
  }
  return Attribute(std::move(sizes));
}

std::vector<Dim> Attribute::asDims() const {
  if (kind() == AttrKind::Dims)
    return getDims();
  const std::vector<int64_t> &sizes = getInts();
  return std::vector<Dim>(sizes.begin(), sizes.end());
}

bool Attribute::operator==(const Attribute &o) const {
  if (kind() != o.kind())
    return false;
  if (kind() == AttrKind::Tensor)
    return getTensor().identical(o.getTensor());
  return v_ == o.v_;
}

} // namespace strata
