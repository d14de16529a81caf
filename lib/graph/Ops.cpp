// Attribute access behind the typed op views (Ops.h).
#include "strata/graph/Ops.h"

#include "strata/graph/Layout.h"

namespace strata::ops {

const Attribute *OpView::find(const char *n, AttrKind kind) const {
  auto it = attrs_->find(n);
  if (it == attrs_->end())
    return nullptr;
  if (it->second.kind() != kind)
    throw std::invalid_argument("attribute '" + std::string(n) + "' has kind " +
                                std::string(attrKindName(it->second.kind())) + " but " +
                                std::string(attrKindName(kind)) + " is expected");
  return &it->second;
}

const Attribute &OpView::get(const char *n, AttrKind kind) const {
  if (const Attribute *a = find(n, kind))
    return *a;
  throw std::invalid_argument("missing required attribute '" + std::string(n) + "' (" +
                              std::string(attrKindName(kind)) + ")");
}

std::vector<Dim> OpView::dimsOf(const char *n) const {
  auto it = attrs_->find(n);
  if (it != attrs_->end() && it->second.kind() == AttrKind::Dims)
    return it->second.getDims();
  return get(n, AttrKind::Ints).asDims();
}

Dim OpView::dimOf(const char *n) const {
  auto it = attrs_->find(n);
  if (it != attrs_->end() && it->second.kind() == AttrKind::Dims) {
    if (it->second.getDims().size() != 1)
      throw std::invalid_argument("attribute '" + std::string(n) + "' must be one dim");
    return it->second.getDims()[0];
  }
  return Dim(get(n, AttrKind::Int).getInt());
}

bool OpView::checkFlag(const char *n, int64_t v) {
  if (v != 0 && v != 1)
    throw std::invalid_argument("attribute '" + std::string(n) + "' must be 0 or 1, got " +
                                std::to_string(v));
  return v == 1;
}

int64_t OpView::layoutOf(const char *n) const {
  get(n, AttrKind::String);
  return layoutOr(n);
}

int64_t OpView::layoutOr(const char *n) const {
  const Attribute *a = find(n, AttrKind::String);
  if (!a)
    return 0;
  std::optional<int64_t> block = parseChannelLayout(a->getString());
  if (!block)
    throw std::invalid_argument("attribute '" + std::string(n) + "' \"" + a->getString() +
                                "\" is not a channel layout (\"NCHW\" or \"NCHW<c>c\")");
  return *block;
}

} // namespace strata::ops
