// Graph state fingerprints for fixpoint groups (see GraphState.h).
#include "GraphState.h"

#include <unordered_map>

namespace strata {

namespace {

class Writer {
public:
  Writer(std::string &out, GraphStateFingerprinter &owner) : out_(out), owner_(owner) {}

  void graph(const Graph &g) {
    word("graph");
    word(g.name());
    for (unsigned i = 0; i < g.numInputs(); ++i)
      define(g.input(i));
    for (const Op &op : g.ops()) {
      word(op.opName());
      for (Value *v : op.operands())
        number(v ? use(v) : -1);
      word("->");
      for (unsigned r = 0; r < op.numResults(); ++r)
        define(op.result(r));
      for (const auto &[name, attr] : op.attrs()) {
        word(name);
        attribute(attr);
      }
      word(op.location());
      for (unsigned r = 0; r < op.numRegions(); ++r)
        graph(op.region(r));
      word(";");
    }
    word("return");
    for (unsigned i = 0; i < g.numOutputs(); ++i) {
      number(use(g.output(i)));
      word(g.outputName(i));
    }
  }

private:
  void define(const Value *v) {
    ids_.emplace(v, static_cast<int64_t>(ids_.size()));
    word(v->name());
    word(v->type().str());
  }
  int64_t use(const Value *v) {
    auto it = ids_.find(v);
    return it == ids_.end() ? -2 : it->second; // -2: defined outside (malformed)
  }
  void attribute(const Attribute &a) {
    number(static_cast<int64_t>(a.kind()));
    switch (a.kind()) {
    case AttrKind::Int:
      number(a.getInt());
      break;
    case AttrKind::Float:
      real(a.getFloat());
      break;
    case AttrKind::String:
      word(a.getString());
      break;
    case AttrKind::Ints:
      number(static_cast<int64_t>(a.getInts().size()));
      for (int64_t x : a.getInts())
        number(x);
      break;
    case AttrKind::Floats:
      number(static_cast<int64_t>(a.getFloats().size()));
      for (double x : a.getFloats())
        real(x);
      break;
    case AttrKind::Tensor:
      word(owner_.tensorHash(a.getTensor()));
      break;
    case AttrKind::DType:
      word(dtypeName(a.getDType()));
      break;
    }
  }
  // Length-prefixed, so no two different sequences serialize alike.
  void word(std::string_view s) {
    number(static_cast<int64_t>(s.size()));
    out_.append(s);
  }
  void number(int64_t x) { out_.append(reinterpret_cast<const char *>(&x), sizeof x); }
  void real(double x) { out_.append(reinterpret_cast<const char *>(&x), sizeof x); }

  std::string &out_;
  GraphStateFingerprinter &owner_;
  std::unordered_map<const Value *, int64_t> ids_;
};

} // namespace

std::string GraphStateFingerprinter::tensorHash(const Tensor &t) {
  std::string typeKey = std::string(dtypeName(t.dtype())) + "[" + shapeToString(t.shape()) + "]";
  if (!t.buffer()) // elided: its hash is stored, nothing to compute
    return typeKey + t.contentHash();
  Key key(std::weak_ptr<Buffer>(t.buffer()), typeKey);
  auto it = hashes_.find(key);
  if (it == hashes_.end())
    it = hashes_.emplace(std::move(key), typeKey + t.contentHash()).first;
  return it->second;
}

std::string GraphStateFingerprinter::fingerprint(const Graph &g) {
  std::erase_if(hashes_, [](const auto &entry) { return entry.first.first.expired(); });
  std::string out;
  Writer(out, *this).graph(g);
  return out;
}

} // namespace strata
