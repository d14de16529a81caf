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
  }
  return "?";
}

bool Attribute::operator==(const Attribute &o) const {
  if (kind() != o.kind())
    return false;
  if (kind() == AttrKind::Tensor)
    return getTensor().identical(o.getTensor());
  return v_ == o.v_;
}

} // namespace strata
