// Memory planning, in two steps that every consumer shares (docs/passes.md, "Memory planning"):
//   1. planBufferSharing decides, without sizes, the live range of every intermediate tensor of a
//      (fused) top-level graph and which of them share one buffer: an elementwise op (or
//      elementwise kernel) writes its result over an operand that dies there (in place);
//   2. placement (support/LiveRanges.h) puts the buffers at offsets in one arena, reusing memory
//      between buffers whose lifetimes do not overlap.
// The compiled program's plan takes its buffers from step 1 and the runtime places them at bind
// time with the same placement, so the arena `strata compile --stats` reports is the one that
// runs. planMemory does both steps on the graph alone (strata-opt --print-memory-plan).
//
// Intermediates are the results of top-level ops that are neither constants (they live in the
// weights section) nor graph outputs (they live in memory the caller provides). Kernels are
// treated as single ops: values inside their regions never reach memory.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/support/LiveRanges.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace strata {

struct BufferAssignment {
  const Value *value = nullptr;
  int64_t offset = 0;   // bytes from the arena start; a multiple of the alignment
  int64_t bytes = 0;    // the tensor's size (unpadded)
  int64_t firstUse = 0; // index of the defining top-level op
  int64_t lastUse = 0;  // index of the last top-level op reading it (firstUse if unused)
  // The operand whose buffer this value overwrites in place (same offset), or null.
  const Value *reusedFrom = nullptr;
};

struct MemoryPlan {
  std::vector<BufferAssignment> buffers; // in definition order
  int64_t arenaPeakBytes = 0;            // arena size needed (end of the highest buffer)
  int64_t intermediateTotalBytes = 0;    // sum of all intermediate sizes (no reuse at all)
  int64_t inPlaceCount = 0;              // buffers that overwrite a dying operand
  // The largest total size of intermediates live at one op: a lower bound for any placement.
  int64_t peakLiveBytes = 0;
};

// Step 1: which intermediates share a buffer. Values of one group are an in-place chain: each
// overwrites the one before it (`reusedFrom`) at the op where that one dies; equal dims and dtype
// make their sizes equal for any binding of the symbols.
struct SharedBuffer {
  const Value *value = nullptr;
  int64_t group = 0;                 // buffer index: values of one group share it
  int64_t firstUse = 0, lastUse = 0; // top-level op indices (defining op, last reader)
  const Value *reusedFrom = nullptr; // the operand this value overwrites in place, or null
};
struct BufferSharing {
  std::vector<SharedBuffer> values; // every intermediate, in definition order
  int64_t numGroups = 0;
  const SharedBuffer *find(const Value *v) const;
};
BufferSharing planBufferSharing(const Graph &g, bool inPlace = true);

struct MemoryPlanOptions {
  // Sizes for symbolic dims (e.g. {"batch", 1}); a symbol missing here is an error.
  std::map<std::string, int64_t> symbolSizes;
  int64_t alignment = 64; // bytes; every offset is a multiple
  bool inPlace = true;    // allow elementwise results to overwrite dying operands
};

// Plans the top-level graph `g`. Errors: a symbolic dim without a binding, a size overflow.
llvm::Expected<MemoryPlan> planMemory(const Graph &g, const MemoryPlanOptions &opts = {});

// Checks the plan's invariants: buffers whose lifetimes overlap occupy disjoint bytes unless one
// overwrites the other in place, offsets are aligned, everything fits in arenaPeakBytes.
llvm::Error checkMemoryPlan(const MemoryPlan &plan, int64_t alignment = 64);

// One header line with the totals, then one line per buffer in definition order.
void printMemoryPlan(const MemoryPlan &plan, llvm::raw_ostream &os);

} // namespace strata
