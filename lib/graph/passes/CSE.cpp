// cse: merges ops that compute the same thing: same kind, operands, attributes and result
// types. Every op is pure, so the later one is replaced by the earlier (which dominates it in
// the topological order). Constants compare by content, so equal weights become one constant.
#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_map>

namespace strata {
namespace {

size_t combine(size_t seed, size_t h) {
  return seed ^ (h + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

// A constant's bucket: dtype, shape and a few sampled 64-byte windows (start, middle, end).
// Reading every byte of every weight on each run of the pass cost resnet50 0.6 s; distinct
// weights of one shape differ within the first bytes almost always, and a match is checked
// byte-wise anyway, so sampling changes the cost, never the answer.
size_t sampleHash(const Tensor &t) {
  size_t h = combine(static_cast<size_t>(t.dtype()), t.byteSize());
  for (int64_t d : t.shape())
    h = combine(h, std::hash<int64_t>()(d));
  if (t.isElided())
    return combine(h, std::hash<std::string>()(t.contentHash()));
  const auto *p = static_cast<const uint8_t *>(t.rawData());
  const size_t n = t.byteSize(), window = 64;
  for (size_t start : {size_t(0), n / 2, n > window ? n - window : 0})
    for (size_t i = start; i < std::min(n, start + window); i += sizeof(uint64_t)) {
      uint64_t word = 0;
      std::memcpy(&word, p + i, std::min(sizeof word, n - i));
      h = combine(h, std::hash<uint64_t>()(word));
    }
  return h;
}

size_t hashAttribute(const Attribute &a) {
  size_t h = std::hash<int>()(static_cast<int>(a.kind()));
  switch (a.kind()) {
  case AttrKind::Int:
    return combine(h, std::hash<int64_t>()(a.getInt()));
  case AttrKind::Float:
    return combine(h, std::hash<double>()(a.getFloat()));
  case AttrKind::String:
    return combine(h, std::hash<std::string>()(a.getString()));
  case AttrKind::Ints:
    for (int64_t x : a.getInts())
      h = combine(h, std::hash<int64_t>()(x));
    return h;
  case AttrKind::Floats:
    for (double x : a.getFloats())
      h = combine(h, std::hash<double>()(x));
    return h;
  case AttrKind::Tensor:
    return combine(h, sampleHash(a.getTensor()));
  case AttrKind::DType:
    return combine(h, static_cast<size_t>(a.getDType()));
  case AttrKind::Dims:
    for (const Dim &d : a.getDims())
      h = combine(h, std::hash<std::string>()(d.str()));
    return h;
  }
  return h;
}

// Operands in the order that identifies the computation: a commutative binary op sorts them,
// so add(a, b) and add(b, a) are one value. Not max/min: with signed zeros they return their
// first operand (max(-0, +0) is -0, max(+0, -0) is +0), so the order is observable.
std::vector<Value *> keyOperands(const Op &op) {
  std::vector<Value *> operands = op.operands();
  bool orderFree =
      op.hasTrait(T_COMMUTATIVE) && op.kind() != OpKind::Max && op.kind() != OpKind::Min;
  if (orderFree && operands.size() == 2 && std::less<>()(operands[1], operands[0]))
    std::swap(operands[0], operands[1]);
  return operands;
}

size_t hashOp(const Op &op) {
  size_t h = std::hash<int>()(static_cast<int>(op.kind()));
  for (Value *v : keyOperands(op))
    h = combine(h, std::hash<const void *>()(v));
  for (const auto &[name, attr] : op.attrs())
    h = combine(combine(h, std::hash<std::string>()(name)), hashAttribute(attr));
  return h;
}

// Attribute equality that also tells -0.0 from +0.0 (Attribute== compares floats numerically,
// and a pad value or clip bound of -0 is observable).
bool sameBits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

bool sameAttribute(const Attribute &a, const Attribute &b) {
  if (a.kind() == AttrKind::Float && b.kind() == AttrKind::Float)
    return sameBits(a.getFloat(), b.getFloat());
  if (a.kind() == AttrKind::Floats && b.kind() == AttrKind::Floats)
    return std::equal(a.getFloats().begin(), a.getFloats().end(), b.getFloats().begin(),
                      b.getFloats().end(), sameBits);
  return a == b;
}

bool sameAttributes(const AttrMap &a, const AttrMap &b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto &x, const auto &y) {
    return x.first == y.first && sameAttribute(x.second, y.second);
  });
}

bool sameComputation(const Op &a, const Op &b) {
  if (a.kind() != b.kind() || a.numResults() != b.numResults() ||
      keyOperands(a) != keyOperands(b) || !sameAttributes(a.attrs(), b.attrs()))
    return false;
  for (unsigned r = 0; r < a.numResults(); ++r)
    if (a.result(r)->type() != b.result(r)->type())
      return false;
  return true;
}

int64_t mergeInGraph(Graph &g) {
  int64_t merged = 0;
  std::unordered_map<size_t, std::vector<Op *>> seen; // hash -> earlier distinct ops
  for (Op *op : g.opList()) {
    if (op->numRegions() != 0)
      continue; // region ops are never merged; their regions are graphs of their own
    std::vector<Op *> &bucket = seen[hashOp(*op)];
    Op *earlier = nullptr;
    for (Op *candidate : bucket)
      if (sameComputation(*candidate, *op)) {
        earlier = candidate;
        break;
      }
    if (!earlier) {
      bucket.push_back(op);
      continue;
    }
    for (unsigned r = 0; r < op->numResults(); ++r) {
      // Keep a name a graph output or reader may know, if the survivor has none.
      if (earlier->result(r)->name().empty())
        earlier->result(r)->setName(op->result(r)->name());
      op->result(r)->replaceAllUsesWith(earlier->result(r));
    }
    g.eraseOp(op);
    ++merged;
  }
  return merged;
}

class CSEPass final : public Pass {
public:
  std::string_view name() const override { return "cse"; }
  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    int64_t merged = 0;
    forEachGraph(g, [&](Graph &graph) { merged += mergeInGraph(graph); });
    if (merged)
      ctx.stats.add("cse.merged", merged);
    return merged > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createCSEPass() { return std::make_unique<CSEPass>(); }

} // namespace strata
