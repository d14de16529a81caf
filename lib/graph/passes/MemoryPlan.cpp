// Memory planning: liveness over the top-level op order, in-place reuse for elementwise ops,
// then "greedy by size" placement (largest buffer first, each into the tightest gap left by
// the already placed buffers whose lifetimes overlap it).
#include "strata/graph/passes/MemoryPlan.h"
#include "strata/support/Error.h"

#include <algorithm>
#include <limits>
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
      auto it = symbols.find(d.symbol);
      if (it == symbols.end())
        return planError("needs static shapes, but '" + (v.name().empty() ? "<unnamed>" : v.name()) +
                         "' has type " + v.type().str() + "; bind ?" + d.symbol +
                         " to a size");
      size = it->second;
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

// Whether `op` may write its single result over operand `k`.
bool mayOverwriteOperand(const Op &op, unsigned k) {
  if (op.numResults() != 1)
    return false;
  const Value *operand = op.operand(k);
  const TensorType &resultType = op.result(0)->type();
  if (!sameDims(operand->type(), resultType) ||
      dtypeSize(operand->type().dtype) != dtypeSize(resultType.dtype))
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

// A set of values sharing one buffer through in-place chains.
struct BufferGroup {
  int64_t bytes = 0;
  int64_t padded = 0;
  int64_t first = 0, last = 0;
};

} // namespace

llvm::Expected<MemoryPlan> planMemory(const Graph &g, const MemoryPlanOptions &opts) {
  if (opts.alignment <= 0)
    return planError("alignment must be positive");
  std::unordered_set<const Value *> outputs;
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    outputs.insert(g.output(i));

  std::unordered_map<const Op *, int64_t> position;
  int64_t index = 0;
  for (const Op &op : g.ops())
    position[&op] = index++;

  MemoryPlan plan;
  std::unordered_map<const Value *, size_t> bufferOf; // value -> index in plan.buffers
  std::vector<size_t> groupOf;                         // buffer index -> group index
  std::vector<BufferGroup> groups;

  for (const Op &op : g.ops()) {
    const int64_t at = position[&op];
    if (op.kind() == OpKind::Constant)
      continue;
    for (unsigned r = 0; r < op.numResults(); ++r) {
      const Value *v = op.result(r);
      if (outputs.count(v))
        continue;
      auto bytes = byteSize(*v, opts.symbolSizes);
      if (!bytes)
        return bytes.takeError();
      BufferAssignment b;
      b.value = v;
      b.bytes = *bytes;
      b.firstUse = b.lastUse = at;
      for (const Use &u : v->uses())
        if (const Op *user = topLevelAncestor(u.user, g))
          b.lastUse = std::max(b.lastUse, position[user]);
      bufferOf[v] = plan.buffers.size();
      plan.buffers.push_back(b);
      plan.intermediateTotalBytes += b.bytes;
    }
  }

  // In-place: an op may take over the buffer of an operand that dies at this op. The buffer is
  // then shared (one group) and its lifetime is the union of both values' lifetimes.
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    BufferAssignment &b = plan.buffers[i];
    const Op &op = *b.value->definingOp();
    size_t group = groups.size();
    if (opts.inPlace) {
      for (unsigned k = 0; k < op.numOperands(); ++k) {
        const Value *operand = op.operand(k);
        auto it = bufferOf.find(operand);
        if (it == bufferOf.end())
          continue; // graph input, constant or graph output: not ours to overwrite
        const BufferAssignment &src = plan.buffers[it->second];
        if (src.lastUse != b.firstUse || src.bytes != b.bytes || !mayOverwriteOperand(op, k))
          continue;
        // Every read of the operand at this op must be one of its operands (not a value the
        // kernel's region captures directly, which could be read after the write).
        bool onlyDirect = std::all_of(operand->uses().begin(), operand->uses().end(),
                                      [&](const Use &u) {
                                        return topLevelAncestor(u.user, g) != &op || u.user == &op;
                                      });
        if (!onlyDirect)
          continue;
        b.reusedFrom = operand;
        group = groupOf[it->second];
        ++plan.inPlaceCount;
        break;
      }
    }
    if (group == groups.size()) {
      BufferGroup fresh;
      fresh.bytes = b.bytes;
      fresh.first = b.firstUse;
      fresh.last = b.lastUse;
      groups.push_back(fresh);
    } else {
      groups[group].bytes = std::max(groups[group].bytes, b.bytes);
      groups[group].last = std::max(groups[group].last, b.lastUse);
    }
    groupOf.push_back(group);
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
    plan.buffers[i].offset = offsets[groupOf[i]];

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
