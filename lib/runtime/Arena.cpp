// Arena layout of a plan's buffers (Arena.h).
#include "strata/runtime/Arena.h"

#include "strata/support/Limits.h"
#include "strata/support/LiveRanges.h"

#include <limits>

namespace strata::runtime {

namespace {

// a * b, or -1 on overflow past int64 (sizes are non-negative).
int64_t checkedMul(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    return -1;
  return a * b;
}

} // namespace

Status layoutArena(const Plan &plan, const std::vector<int64_t> &symbolValues, ArenaLayout &out,
                   int64_t maxArenaBytes) {
  std::vector<LiveRange> ranges;
  for (const PlanBuffer &b : plan.buffers) {
    int64_t bytes = b.size.bytes;
    for (int s : b.size.symbols)
      bytes = bytes < 0 ? -1 : checkedMul(bytes, symbolValues[s]);
    if (bytes < 0 || bytes > kMaxBytes)
      return Status::error("intermediate buffer too large for the bound dims");
    if (bytes > maxArenaBytes) // refused before the placement sums sizes
      return Status::error("an intermediate buffer needs " + std::to_string(bytes) + " bytes, " +
                           overLimit(&Limits::maxArenaBytes, maxArenaBytes));
    ranges.push_back({bytes, b.first, b.last});
  }
  out.offsets = placeLiveRanges(ranges, kArenaAlign, &out.bytes);
  if (out.bytes > maxArenaBytes)
    return Status::error("the intermediate buffers need a " + std::to_string(out.bytes) +
                         "-byte arena, " + overLimit(&Limits::maxArenaBytes, maxArenaBytes));
  return Status();
}

} // namespace strata::runtime
