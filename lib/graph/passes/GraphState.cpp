// Graph state fingerprints for fixpoint groups (see GraphState.h).
#include "GraphState.h"

#include <cstring>
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
    case AttrKind::Dims:
      number(static_cast<int64_t>(a.getDims().size()));
      for (const Dim &d : a.getDims())
        word(d.str());
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

// 128 bits over the data a 64-bit word at a time (Tensor::contentHash goes byte by byte, which
// made fingerprinting resnet50's 100 MB of weights cost a quarter of a second per group). Only
// equality of states depends on it, never a printed name.
std::string wordHash(const Tensor &t) {
  uint64_t h1 = 0x9e3779b97f4a7c15ull ^ t.byteSize(), h2 = 0xc2b2ae3d27d4eb4full;
  const auto *p = static_cast<const uint8_t *>(t.rawData());
  const size_t n = t.byteSize();
  auto mix = [&](uint64_t w) {
    h1 = (h1 ^ w) * 0x100000001b3ull;
    h1 ^= h1 >> 29;
    h2 = (h2 + w) * 0xff51afd7ed558ccdull;
    h2 ^= h2 >> 32;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    mix(w);
  }
  if (i < n) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, n - i);
    mix(w ^ (uint64_t(n - i) << 56));
  }
  std::string out(16, '\0');
  std::memcpy(out.data(), &h1, 8);
  std::memcpy(out.data() + 8, &h2, 8);
  return out;
}

} // namespace

std::string GraphStateFingerprinter::tensorHash(const Tensor &t) {
  std::string typeKey = std::string(dtypeName(t.dtype())) + "[" + shapeToString(t.shape()) + "]";
  if (!t.buffer()) // elided: its hash is stored, nothing to compute
    return typeKey + t.contentHash();
  Key key(std::weak_ptr<Buffer>(t.buffer()), typeKey);
  auto it = hashes_.find(key);
  if (it == hashes_.end())
    it = hashes_.emplace(std::move(key), typeKey + wordHash(t)).first;
  return it->second;
}

std::string GraphStateFingerprinter::fingerprint(const Graph &g) {
  std::erase_if(hashes_, [](const auto &entry) { return entry.first.first.expired(); });
  std::string out;
  Writer(out, *this).graph(g);
  return out;
}

} // namespace strata
