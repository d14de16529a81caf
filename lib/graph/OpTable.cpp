// The op registry, built once from the op definitions (OpTable.def).
#include "strata/graph/Graph.h"
#include "strata/graph/OpEnums.h"

#include <unordered_map>

namespace strata {

namespace {

template <typename T> std::vector<std::string_view> textsOf() {
  return {std::begin(EnumTraits<T>::names), std::end(EnumTraits<T>::names)};
}

AttrSpec spec(const char *name, AttrKind kind, AttrForm form = AttrForm::Plain,
              bool optional = false, std::vector<std::string_view> texts = {}) {
  return AttrSpec{name, kind, form, optional, std::move(texts)};
}

std::vector<std::string> splitNames(std::string_view list) {
  std::vector<std::string> names;
  while (!list.empty()) {
    size_t comma = list.find(',');
    names.emplace_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return names;
}

struct Registry {
  std::vector<OpInfo> infos;
  std::unordered_map<std::string_view, OpKind> byName;
  Registry() {
#define A_INT(n) spec(#n, AttrKind::Int),
#define A_FLOAT(n) spec(#n, AttrKind::Float),
#define A_STRING(n) spec(#n, AttrKind::String),
#define A_STRING_OR(n) spec(#n, AttrKind::String, AttrForm::Plain, true),
#define A_INTS(n) spec(#n, AttrKind::Ints),
#define A_INTS_OR(n) spec(#n, AttrKind::Ints, AttrForm::Plain, true),
#define A_DIMS(n) spec(#n, AttrKind::Dims),
#define A_DIM(n) spec(#n, AttrKind::Dims, AttrForm::Dim),
#define A_DIM_OR(n) spec(#n, AttrKind::Dims, AttrForm::Dim, true),
#define A_FLOATS(n) spec(#n, AttrKind::Floats),
#define A_TENSOR(n) spec(#n, AttrKind::Tensor),
#define A_DTYPE(n) spec(#n, AttrKind::DType),
#define A_FLAG(n) spec(#n, AttrKind::Int, AttrForm::Flag),
#define A_INT_OR(n, d) spec(#n, AttrKind::Int, AttrForm::Plain, true),
#define A_FLAG_OR(n, d) spec(#n, AttrKind::Int, AttrForm::Flag, true),
#define A_AXIS(n) spec(#n, AttrKind::Int, AttrForm::Axis),
#define A_AXES(n) spec(#n, AttrKind::Ints, AttrForm::Axes),
#define A_ENUM(T, n) spec(#n, AttrKind::String, AttrForm::Enum, false, textsOf<T>()),
#define A_LAYOUT(n) spec(#n, AttrKind::String, AttrForm::Layout),
#define A_LAYOUT_OR(n) spec(#n, AttrKind::String, AttrForm::Layout, true),
#define OP(e, name, lo, hi, res, traits, dtypes, shape, onnx, ...)                                 \
  infos.push_back(OpInfo{OpKind::e, name, lo, hi, res, static_cast<uint32_t>(traits),              \
                         DTypeRule::dtypes, std::vector<AttrSpec>{__VA_ARGS__},                    \
                         splitNames(onnx)});
#include "strata/graph/OpTable.def"
    for (const OpInfo &i : infos)
      byName[i.name] = i.kind;
  }
};

const Registry &registry() {
  static const Registry r;
  return r;
}

} // namespace

const AttrSpec *OpInfo::findAttr(std::string_view n) const {
  for (const AttrSpec &a : attrs)
    if (a.name == n)
      return &a;
  return nullptr;
}

const OpInfo &opInfo(OpKind kind) { return registry().infos[static_cast<size_t>(kind)]; }

const OpInfo *lookupOp(std::string_view name) {
  auto it = registry().byName.find(name);
  return it == registry().byName.end() ? nullptr : &opInfo(it->second);
}

size_t numOpKinds() { return registry().infos.size(); }

} // namespace strata
