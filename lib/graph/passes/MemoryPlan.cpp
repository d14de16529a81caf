// Memory planning: liveness over the top-level op order and in-place reuse for elementwise ops
// (planBufferSharing), then "greedy by size" placement (largest buffer first, each into the
// tightest gap left by the already placed buffers whose lifetimes overlap it).
#include "strata/graph/passes/MemoryPlan.h"
#include "strata/support/Error.h"

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace strata {
namespace {

llvm::Error planError(const std::string &msg) { return makeError("memory plan: " + msg); }

int64_t alignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// Bytes of a value's tensor, binding symbolic dims through `symbols`.
llvm::Expected<int64_t> byteSize(const Value &v, const std::map<std::string, int64_t> &symbols) {
  int64_t n = static_cast<int64_t>(dtypeSize(v.type().dtype));
  for (const Dim &d : v.type().dims) {
    int64_t size = d.size;
    if (!d.isStatic()) {
      std::optional<int64_t> value = d.expr.evaluate([&](const std::string &n) {
        auto it = symbols.find(n);
        return it == symbols.end() ? std::nullopt : std::optional<int64_t>(it->second);
      });
      if (!value || *value < 0) {
        std::set<std::string> names;
        d.expr.collectSymbols(names);
        std::string bind;
        for (const std::string &n : names)
          if (!symbols.count(n))
            bind += (bind.empty() ? "?" : ", ?") + n;
        return planError("needs static shapes, but '" + (v.name().empty() ? "<unnamed>" : v.name()) +
                         "' has type " + v.type().str() + "; bind " +
                         (bind.empty() ? d.str() : bind) + " to a size");
      }
      size = *value;
    }
    if (size != 0 && n > std::numeric_limits<int64_t>::max() / 4 / size)
      return planError("size of " + v.type().str() + " overflows");
    n *= size;
  }
  return n;
}

// The top-level op that contains `op` (itself when it is top-level).
const Op *topLevelAncestor(const Op *op, const Graph &top) {
  while (op && op->parentGraph() != &top) {
    const Graph *g = op->parentGraph();
    op = g ? g->parentOp() : nullptr;
  }
  return op;
}

bool sameDims(const TensorType &a, const TensorType &b) { return a.dims == b.dims; }

// Whether, inside a kernel region, everything computed from region input `in` is elementwise
// without broadcasting it, ending in output `outIndex`: then result element j depends on element j
// of that input only, so the kernel may overwrite the input as it writes the result.
bool regionIsElementwiseFrom(const Graph &region, const Value *in, unsigned outIndex) {
  const TensorType &outType = region.output(outIndex)->type();
  std::vector<const Value *> work{in};
  std::unordered_set<const Value *> seen{in};
  while (!work.empty()) {
    const Value *v = work.back();
    work.pop_back();
    if (!sameDims(v->type(), outType) || dtypeSize(v->type().dtype) != dtypeSize(outType.dtype))
      return false;
    for (unsigned i = 0; i < region.numOutputs(); ++i)
      if (region.output(i) == v && i != outIndex)
        return false; // also escapes through another result
    for (const Use &u : v->uses()) {
      const Op *user = u.user;
      if (user->parentGraph() != &region || !user->hasTrait(T_ELEMENTWISE) ||
          user->numResults() != 1 || user->numRegions() != 0)
        return false;
      if (seen.insert(user->result(0)).second)
        work.push_back(user->result(0));
    }
  }
  return true;
}

// Whether `op` may write its single result over operand `k`: the same dims and dtype (so the
// same size for any binding of the symbols), and result element j reads only element j of it.
bool mayOverwriteOperand(const Op &op, unsigned k) {
  if (op.numResults() != 1)
    return false;
  const Value *operand = op.operand(k);
  const TensorType &resultType = op.result(0)->type();
  if (!sameDims(operand->type(), resultType) || operand->type().dtype != resultType.dtype)
    return false;
  if (op.kind() == OpKind::Kernel) {
    if (op.numRegions() != 1)
      return false;
    const Graph &region = op.region(0);
    if (k >= region.numInputs() || region.numOutputs() != 1)
      return false;
    return regionIsElementwiseFrom(region, region.input(k), 0);
  }
  return op.hasTrait(T_ELEMENTWISE) && op.numRegions() == 0;
}

// One buffer of the plan: the values of one sharing group.
struct BufferGroup {
  int64_t bytes = 0;
  int64_t padded = 0;
  int64_t first = 0, last = 0;
};

} // namespace

const SharedBuffer *BufferSharing::find(const Value *v) const {
  for (const SharedBuffer &b : values)
    if (b.value == v)
      return &b;
  return nullptr;
}

BufferSharing planBufferSharing(const Graph &g, bool inPlace) {
  std::unordered_set<const Value *> outputs;
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    outputs.insert(g.output(i));
  std::unordered_map<const Op *, int64_t> position;
  int64_t index = 0;
  for (const Op &op : g.ops())
    position[&op] = index++;

  BufferSharing sharing;
  std::unordered_map<const Value *, size_t> entryOf; // value -> index in sharing.values
  std::vector<int64_t> groupLast;                    // group -> last use of its chain so far
  for (const Op &op : g.ops()) {
    const int64_t at = position[&op];
    if (op.kind() == OpKind::Constant)
      continue;
    for (unsigned r = 0; r < op.numResults(); ++r) {
      const Value *v = op.result(r);
      if (outputs.count(v))
        continue;
      SharedBuffer b;
      b.value = v;
      b.firstUse = b.lastUse = at;
      for (const Use &u : v->uses())
        if (const Op *user = topLevelAncestor(u.user, g))
          b.lastUse = std::max(b.lastUse, position[user]);
      b.group = -1;
      // In place: take over the buffer of an operand that dies at this op. Every read of the
      // operand at this op must be one of its operands (not a value the kernel's region
      // captures directly, which could be read after the write).
      for (unsigned k = 0; inPlace && k < op.numOperands() && b.group < 0; ++k) {
        const Value *operand = op.operand(k);
        auto it = entryOf.find(operand);
        if (it == entryOf.end())
          continue; // graph input, constant or graph output: not ours to overwrite
        const SharedBuffer &src = sharing.values[it->second];
        if (groupLast[src.group] != at || src.lastUse != at || !mayOverwriteOperand(op, k))
          continue;
        bool onlyDirect = std::all_of(operand->uses().begin(), operand->uses().end(),
                                      [&](const Use &u) {
                                        return topLevelAncestor(u.user, g) != &op || u.user == &op;
                                      });
        if (!onlyDirect)
          continue;
        b.reusedFrom = operand;
        b.group = src.group;
      }
      if (b.group < 0) {
        b.group = sharing.numGroups++;
        groupLast.push_back(b.lastUse);
      } else {
        groupLast[b.group] = std::max(groupLast[b.group], b.lastUse);
      }
      entryOf[v] = sharing.values.size();
      sharing.values.push_back(b);
    }
  }
  return sharing;
}

llvm::Expected<MemoryPlan> planMemory(const Graph &g, const MemoryPlanOptions &opts) {
  if (opts.alignment <= 0)
    return planError("alignment must be positive");
  BufferSharing sharing = planBufferSharing(g, opts.inPlace);
  MemoryPlan plan;
  std::vector<BufferGroup> groups(static_cast<size_t>(sharing.numGroups));
  std::vector<bool> seen(groups.size(), false);
  for (const SharedBuffer &s : sharing.values) {
    auto bytes = byteSize(*s.value, opts.symbolSizes);
    if (!bytes)
      return bytes.takeError();
    BufferAssignment b;
    b.value = s.value;
    b.bytes = *bytes;
    b.firstUse = s.firstUse;
    b.lastUse = s.lastUse;
    b.reusedFrom = s.reusedFrom;
    plan.intermediateTotalBytes += b.bytes;
    plan.inPlaceCount += s.reusedFrom != nullptr;
    BufferGroup &grp = groups[s.group];
    if (!seen[s.group]) {
      seen[s.group] = true;
      grp.bytes = b.bytes;
      grp.first = b.firstUse;
      grp.last = b.lastUse;
    } else {
      grp.bytes = std::max(grp.bytes, b.bytes);
      grp.last = std::max(grp.last, b.lastUse);
    }
    plan.buffers.push_back(b);
  }

  // Lower bound: the most bytes live at any one op (sweep over interval starts and ends).
  {
    std::vector<std::pair<int64_t, int64_t>> events; // (time, +bytes at start / -bytes after end)
    for (BufferGroup &grp : groups) {
      grp.padded = alignUp(grp.bytes, opts.alignment);
      events.push_back({2 * grp.first, grp.padded});
      events.push_back({2 * grp.last + 1, -grp.padded});
    }
    std::sort(events.begin(), events.end());
    int64_t live = 0;
    for (auto &[t, delta] : events)
      plan.peakLiveBytes = std::max(plan.peakLiveBytes, live += delta);
  }

  std::vector<LiveRange> ranges;
  for (const BufferGroup &grp : groups)
    ranges.push_back({grp.bytes, grp.first, grp.last});
  std::vector<int64_t> offsets = placeLiveRanges(ranges, opts.alignment, &plan.arenaPeakBytes);
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    plan.buffers[i].offset = offsets[sharing.values[i].group];

  // The invariant check is a sort plus a sweep: cheap enough to run on every plan.
  if (llvm::Error err = checkMemoryPlan(plan, opts.alignment))
    return err;
  return plan;
}

llvm::Error checkMemoryPlan(const MemoryPlan &plan, int64_t alignment) {
  const auto &bs = plan.buffers;
  auto describe = [](const BufferAssignment &b) {
    return (b.value->name().empty() ? std::string("<unnamed>") : b.value->name()) + " [" +
           std::to_string(b.offset) + ", +" + std::to_string(b.bytes) + ") live " +
           std::to_string(b.firstUse) + ".." + std::to_string(b.lastUse);
  };
  for (const BufferAssignment &b : bs) {
    if (b.offset < 0 || b.offset % alignment != 0)
      return planError("misaligned buffer " + describe(b));
    if (b.offset + b.bytes > plan.arenaPeakBytes)
      return planError("buffer outside the arena: " + describe(b));
  }
  // Sort by offset so only buffers that can overlap in memory are compared pairwise.
  std::vector<const BufferAssignment *> byOffset;
  for (const BufferAssignment &b : bs)
    byOffset.push_back(&b);
  std::sort(byOffset.begin(), byOffset.end(),
            [](auto *a, auto *b) { return a->offset < b->offset; });
  for (size_t i = 0; i < byOffset.size(); ++i) {
    const BufferAssignment &a = *byOffset[i];
    for (size_t j = i + 1; j < byOffset.size() && byOffset[j]->offset < a.offset + a.bytes; ++j) {
      const BufferAssignment &b = *byOffset[j];
      if (b.bytes == 0 || a.bytes == 0)
        continue;
      if (a.lastUse < b.firstUse || b.lastUse < a.firstUse)
        continue; // never live together
      // In place: the result takes over the operand's bytes at the op where the operand dies.
      bool inPlacePair = (b.reusedFrom == a.value && a.lastUse == b.firstUse) ||
                         (a.reusedFrom == b.value && b.lastUse == a.firstUse);
      if (!inPlacePair)
        return planError("overlapping live buffers: " + describe(a) + " and " + describe(b));
    }
  }
  return llvm::Error::success();
}

void printMemoryPlan(const MemoryPlan &plan, llvm::raw_ostream &os) {
  os << "memory plan: arena_peak_bytes = " << plan.arenaPeakBytes
     << ", intermediate_total_bytes = " << plan.intermediateTotalBytes
     << ", peak_live_bytes = " << plan.peakLiveBytes << ", buffers = " << plan.buffers.size()
     << ", in_place = " << plan.inPlaceCount << "\n";
  // Unnamed values are identified by their defining op's position and kind.
  auto label = [](const BufferAssignment &b) {
    if (!b.value->name().empty())
      return "%" + b.value->name();
    return std::string("<") + std::string(b.value->definingOp()->opName()) + "@" +
           std::to_string(b.firstUse) + "#" + std::to_string(b.value->resultIndex()) + ">";
  };
  for (const BufferAssignment &b : plan.buffers) {
    os << "  " << label(b) << ": offset = " << b.offset << ", bytes = " << b.bytes
       << ", live = [" << b.firstUse << ", " << b.lastUse << "]";
    if (b.reusedFrom) {
      auto it = std::find_if(plan.buffers.begin(), plan.buffers.end(),
                             [&](const BufferAssignment &o) { return o.value == b.reusedFrom; });
      os << ", in_place_of = " << label(*it);
    }
    os << "\n";
  }
}

} // namespace strata
