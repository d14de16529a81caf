#include "strata/support/LiveRanges.h"

#include <algorithm>
#include <limits>

namespace strata {

namespace {
int64_t alignUp(int64_t n, int64_t a) { return (n + a - 1) / a * a; }
} // namespace

std::vector<int64_t> placeLiveRanges(const std::vector<LiveRange> &ranges, int64_t alignment,
                                     int64_t *peakBytes) {
  std::vector<int64_t> padded(ranges.size()), offsets(ranges.size(), 0);
  for (size_t i = 0; i < ranges.size(); ++i)
    padded[i] = alignUp(ranges[i].bytes, alignment);
  std::vector<size_t> order(ranges.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (padded[a] != padded[b])
      return padded[a] > padded[b];
    return ranges[a].first < ranges[b].first;
  });
  int64_t peak = 0;
  std::vector<size_t> placed; // kept sorted by offset
  for (size_t ri : order) {
    const LiveRange &r = ranges[ri];
    int64_t bestOffset = -1, bestWaste = std::numeric_limits<int64_t>::max();
    int64_t cursor = 0; // end of the highest conflicting range below the current gap
    for (size_t pi : placed) {
      const LiveRange &other = ranges[pi];
      if (other.last < r.first || r.last < other.first)
        continue; // never live together
      int64_t gap = offsets[pi] - cursor;
      if (gap >= padded[ri] && gap - padded[ri] < bestWaste) {
        bestWaste = gap - padded[ri];
        bestOffset = cursor;
      }
      cursor = std::max(cursor, offsets[pi] + padded[pi]);
    }
    offsets[ri] = bestOffset >= 0 ? bestOffset : cursor;
    auto pos = std::upper_bound(placed.begin(), placed.end(), ri,
                                [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
    placed.insert(pos, ri);
    peak = std::max(peak, offsets[ri] + padded[ri]);
  }
  if (peakBytes)
    *peakBytes = peak;
  return offsets;
}

} // namespace strata
