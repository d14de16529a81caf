// Placement of buffers with known live ranges in one arena: shared by the graph memory planner
// and the runtime, which re-places buffers whose sizes depend on symbolic dims once they are bound.
// No LLVM dependency: compiled into the runtime archive of AOT shared libraries.
#pragma once
#include <cstdint>
#include <vector>

namespace strata {

// The placement step on its own: one (bytes, first, last) live range per buffer, returned
// offsets (multiples of `alignment`) such that ranges live at a common op index never share
// bytes. Greedy by size: largest first, each into the tightest gap among the already placed
// ranges it conflicts with, else above them all. `peakBytes` receives the arena size.
struct LiveRange {
  int64_t bytes = 0;
  int64_t first = 0, last = 0; // inclusive op indices
};
std::vector<int64_t> placeLiveRanges(const std::vector<LiveRange> &ranges, int64_t alignment,
                                     int64_t *peakBytes);

} // namespace strata
