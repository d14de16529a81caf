// Where a plan's intermediate buffers live for one binding of its symbols: the placement the
// executor uses (support/LiveRanges.h over the plan's live ranges) and the arena size
// `strata compile --stats` reports, so the two cannot differ.
#pragma once
#include "strata/runtime/Plan.h"
#include "strata/support/Diagnostic.h"

#include <cstdint>
#include <vector>

namespace strata::runtime {

constexpr int64_t kArenaAlign = 64;             // every buffer offset is a multiple
constexpr int64_t kMaxBytes = int64_t(1) << 50; // larger tensors are an error, not a request

struct ArenaLayout {
  std::vector<int64_t> offsets; // per plan buffer
  int64_t bytes = 0;            // the arena size
};

// Sizes the plan's buffers for `symbolValues` (one per Plan::symbols entry) and places them.
// Errors: a buffer beyond kMaxBytes, an arena beyond `maxArenaBytes` (the max-arena-bytes limit).
Status layoutArena(const Plan &plan, const std::vector<int64_t> &symbolValues, ArenaLayout &out,
                   int64_t maxArenaBytes);

} // namespace strata::runtime
