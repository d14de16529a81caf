// The op registry, built once from OpTable.def.
#include "strata/graph/Graph.h"

#include <array>
#include <stdexcept>
#include <unordered_map>

namespace strata {

namespace {

AttrKind parseKind(std::string_view k) {
  static const std::pair<std::string_view, AttrKind> kinds[] = {
      {"int", AttrKind::Int},       {"float", AttrKind::Float},   {"string", AttrKind::String},
      {"ints", AttrKind::Ints},     {"floats", AttrKind::Floats}, {"tensor", AttrKind::Tensor},
      {"dtype", AttrKind::DType}};
  for (auto &[n, kind] : kinds)
    if (n == k)
      return kind;
  throw std::logic_error("bad attribute kind in OpTable.def: " + std::string(k));
}

// "a:int,b:ints?" -> specs
std::vector<AttrSpec> parseSpecs(std::string_view s) {
  std::vector<AttrSpec> specs;
  while (!s.empty()) {
    size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    bool optional = !item.empty() && item.back() == '?';
    if (optional)
      item.remove_suffix(1);
    size_t colon = item.find(':');
    specs.push_back({std::string(item.substr(0, colon)), parseKind(item.substr(colon + 1)), optional});
  }
  return specs;
}

struct Registry {
  std::vector<OpInfo> infos;
  std::unordered_map<std::string_view, OpKind> byName;
  Registry() {
#define OP(e, n, lo, hi, res, traits, attrs)                                                       \
  infos.push_back(OpInfo{OpKind::e, n, lo, hi, res, static_cast<uint32_t>(traits), parseSpecs(attrs)});
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
