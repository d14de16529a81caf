// Memory planning: liveness, reuse across lifetimes, best-fit placement and in-place reuse on
// small hand-written graphs.
#include "PassTestUtil.h"
#include "strata/graph/passes/MemoryPlan.h"

#include "strata/graph/Parser.h"

#include <gtest/gtest.h>

using namespace strata;

namespace {

using strata::testing::parse;

MemoryPlan plan(const Graph &g, MemoryPlanOptions opts = {}) {
  auto p = planMemory(g, opts);
  if (!p) {
    ADD_FAILURE() << llvm::toString(p.takeError());
    return {};
  }
  EXPECT_FALSE(checkMemoryPlan(*p)) << "plan violates its invariants";
  return std::move(*p);
}

const BufferAssignment *find(const MemoryPlan &p, const std::string &name) {
  for (const BufferAssignment &b : p.buffers)
    if (b.value->name() == name)
      return &b;
  ADD_FAILURE() << "no buffer for " << name;
  return nullptr;
}

MemoryPlanOptions noInPlace() {
  MemoryPlanOptions o;
  o.inPlace = false;
  return o;
}

// 256 f32 = 1024 bytes per tensor.
const char *kDiamond = R"(
graph @main(%x: tensor<256xf32>) -> (y: tensor<256xf32>) {
  %c = constant {value = dense<[2.0]> : tensor<f32>} : tensor<f32>
  %a = exp(%x) : tensor<256xf32>
  %b = mul(%a, %c) : tensor<256xf32>
  %s = add(%a, %b) : tensor<256xf32>
  %y = neg(%s) : tensor<256xf32>
  return %y
}
)";

TEST(MemoryPlanTest, LivenessFollowsOpOrderAndExcludesConstantsAndOutputs) {
  auto g = parse(kDiamond);
  MemoryPlan p = plan(*g, noInPlace());
  // Intermediates: a, b, s (not the constant, not the output y).
  ASSERT_EQ(p.buffers.size(), 3u);
  EXPECT_EQ(p.intermediateTotalBytes, 3 * 1024);
  const BufferAssignment *a = find(p, "a"), *b = find(p, "b"), *s = find(p, "s");
  // Op indices count the constant: a=1, b=2, s=3, y=4.
  EXPECT_EQ(a->firstUse, 1);
  EXPECT_EQ(a->lastUse, 3);
  EXPECT_EQ(b->firstUse, 2);
  EXPECT_EQ(b->lastUse, 3);
  EXPECT_EQ(s->firstUse, 3);
  EXPECT_EQ(s->lastUse, 4);
  // All three are live at op 3, so without in-place reuse nothing can share.
  EXPECT_EQ(p.peakLiveBytes, 3 * 1024);
  EXPECT_EQ(p.arenaPeakBytes, 3 * 1024);
  EXPECT_EQ(p.inPlaceCount, 0);
}

TEST(MemoryPlanTest, InPlaceElementwiseTakesOverADyingOperand) {
  auto g = parse(kDiamond);
  MemoryPlan p = plan(*g);
  const BufferAssignment *a = find(p, "a"), *b = find(p, "b"), *s = find(p, "s");
  // b = mul(a, c): a is still needed by s, so b gets its own buffer.
  EXPECT_EQ(b->reusedFrom, nullptr);
  // s = add(a, b): both die here; s overwrites the first (a).
  EXPECT_EQ(s->reusedFrom, a->value);
  EXPECT_EQ(s->offset, a->offset);
  EXPECT_NE(b->offset, a->offset);
  EXPECT_EQ(p.inPlaceCount, 1);
  EXPECT_EQ(p.arenaPeakBytes, 2 * 1024);
}

TEST(MemoryPlanTest, BuffersWithDisjointLifetimesShareMemory) {
  // A chain of transposes: each intermediate dies at the next op, so two slots suffice.
  auto g = parse(R"(
graph @main(%x: tensor<16x16xf32>) -> (y: tensor<16x16xf32>) {
  %t1 = transpose(%x) {perm = [1, 0]} : tensor<16x16xf32>
  %t2 = transpose(%t1) {perm = [1, 0]} : tensor<16x16xf32>
  %t3 = transpose(%t2) {perm = [1, 0]} : tensor<16x16xf32>
  %t4 = transpose(%t3) {perm = [1, 0]} : tensor<16x16xf32>
  %y = transpose(%t4) {perm = [1, 0]} : tensor<16x16xf32>
  return %y
}
)");
  MemoryPlan p = plan(*g);
  EXPECT_EQ(p.inPlaceCount, 0); // transpose is not elementwise
  EXPECT_EQ(p.intermediateTotalBytes, 4 * 1024);
  EXPECT_EQ(p.arenaPeakBytes, 2 * 1024);
  EXPECT_EQ(find(p, "t1")->offset, find(p, "t3")->offset);
  EXPECT_EQ(find(p, "t2")->offset, find(p, "t4")->offset);
  EXPECT_NE(find(p, "t1")->offset, find(p, "t2")->offset);
}

TEST(MemoryPlanTest, BroadcastOperandIsNotOverwritten) {
  // The result is bigger than %a, and %r's result shape differs from %b's: no in-place.
  auto g = parse(R"(
graph @main(%x: tensor<1x64xf32>, %z: tensor<64x64xf32>) -> (y: tensor<64x64xf32>) {
  %a = exp(%x) : tensor<1x64xf32>
  %b = add(%a, %z) : tensor<64x64xf32>
  %r = reduce(%b) {axes = [0], keepdims = 1, kind = "sum"} : tensor<1x64xf32>
  %y = mul(%r, %z) : tensor<64x64xf32>
  return %y
}
)");
  MemoryPlan p = plan(*g);
  EXPECT_EQ(p.inPlaceCount, 0);
}

TEST(MemoryPlanTest, ElementwiseKernelOverwritesItsUnbroadcastInput) {
  // Region: out = relu(p0 * p1 + p2), p1 broadcast. %m may be overwritten by the kernel (reached
  // only through elementwise ops at full shape); %v (broadcast) may not.
  auto g = parse(R"(
graph @main(%x: tensor<8x32xf32>, %w: tensor<32xf32>) -> (y: tensor<8x32xf32>) {
  %v = exp(%w) : tensor<32xf32>
  %m = neg(%x) : tensor<8x32xf32>
  %k = kernel(%m, %v, %x) {kind = "elementwise"} : tensor<8x32xf32> {
    graph @body(%p0: tensor<8x32xf32>, %p1: tensor<32xf32>, %p2: tensor<8x32xf32>) -> (r: tensor<8x32xf32>) {
      %zero = constant {value = dense<[0.0]> : tensor<f32>} : tensor<f32>
      %0 = mul(%p0, %p1) : tensor<8x32xf32>
      %1 = add(%0, %p2) : tensor<8x32xf32>
      %2 = max(%1, %zero) : tensor<8x32xf32>
      return %2
    }
  }
  %y = neg(%k) : tensor<8x32xf32>
  return %y
}
)");
  MemoryPlan p = plan(*g);
  EXPECT_EQ(find(p, "k")->reusedFrom, find(p, "m")->value);
  EXPECT_EQ(find(p, "k")->offset, find(p, "m")->offset);
  EXPECT_EQ(p.inPlaceCount, 1);
}

TEST(MemoryPlanTest, ReductionKernelDoesNotOverwriteItsInput) {
  // softmax-like region: the input feeds a reduction, so element j of the result depends on
  // every input element and the input must survive until the kernel is done.
  auto g = parse(R"(
graph @main(%x: tensor<4x16xf32>) -> (y: tensor<4x16xf32>) {
  %e = exp(%x) : tensor<4x16xf32>
  %k = kernel(%e) {kind = "reduction"} : tensor<4x16xf32> {
    graph @body(%p: tensor<4x16xf32>) -> (r: tensor<4x16xf32>) {
      %s = reduce(%p) {axes = [1], keepdims = 1, kind = "sum"} : tensor<4x1xf32>
      %d = div(%p, %s) : tensor<4x16xf32>
      return %d
    }
  }
  %y = neg(%k) : tensor<4x16xf32>
  return %y
}
)");
  MemoryPlan p = plan(*g);
  EXPECT_EQ(find(p, "k")->reusedFrom, nullptr);
  EXPECT_NE(find(p, "k")->offset, find(p, "e")->offset);
}

TEST(MemoryPlanTest, SymbolicDimsNeedABinding) {
  auto g = parse(R"(
graph @main(%x: tensor<?n x64xf32>) -> (y: tensor<?n x64xf32>) {
  %a = exp(%x) : tensor<?n x64xf32>
  %y = neg(%a) : tensor<?n x64xf32>
  return %y
}
)");
  auto unbound = planMemory(*g);
  ASSERT_FALSE(unbound);
  std::string msg = llvm::toString(unbound.takeError());
  EXPECT_NE(msg.find("?n"), std::string::npos) << msg;

  MemoryPlanOptions opts;
  opts.symbolSizes["n"] = 3;
  MemoryPlan p = plan(*g, opts);
  EXPECT_EQ(p.intermediateTotalBytes, 3 * 64 * 4);
}

TEST(MemoryPlanTest, OffsetsAreAligned) {
  auto g = parse(R"(
graph @main(%x: tensor<3xf32>) -> (y: tensor<3xf32>) {
  %a = exp(%x) : tensor<3xf32>
  %b = exp(%x) : tensor<3xf32>
  %y = add(%a, %b) : tensor<3xf32>
  return %y
}
)");
  MemoryPlan p = plan(*g);
  EXPECT_EQ(find(p, "a")->offset % 64, 0);
  EXPECT_EQ(find(p, "b")->offset % 64, 0);
  EXPECT_EQ(p.arenaPeakBytes, 128); // two 12-byte buffers, each padded to 64
}

TEST(PlaceLiveRangesTest, LargestFirstIntoTheTightestGap) {
  // D (1536 B) is placed first; the 1 KiB ranges follow in order of first use. X conflicts only
  // with C1 and C2, leaving two gaps: [0, 1536) (512 B to spare) and [2560, 3584) (exact fit).
  // Best fit takes the exact one, first fit would take offset 0.
  std::vector<LiveRange> ranges = {
      {1536, 0, 2}, // D
      {1024, 0, 6}, // C1
      {1024, 1, 3}, // E
      {1024, 2, 6}, // C2
      {1024, 4, 6}, // X
  };
  int64_t peak = 0;
  std::vector<int64_t> off = placeLiveRanges(ranges, 64, &peak);
  EXPECT_EQ(off[0], 0);
  EXPECT_EQ(off[1], 1536);
  EXPECT_EQ(off[2], 2560);
  EXPECT_EQ(off[3], 3584);
  EXPECT_EQ(off[4], 2560);
  EXPECT_EQ(peak, 4608);
}

TEST(PlaceLiveRangesTest, DeadLargeBufferIsReusedBySmallerOnes) {
  std::vector<LiveRange> ranges = {{4096, 0, 1}, {2048, 2, 3}, {1024, 2, 3}};
  int64_t peak = 0;
  std::vector<int64_t> off = placeLiveRanges(ranges, 64, &peak);
  EXPECT_EQ(off[1], 0);
  EXPECT_EQ(off[2], 2048);
  EXPECT_EQ(peak, 4096);
}

TEST(PlaceLiveRangesTest, NoTwoLiveRangesOverlapOnRandomInstances) {
  // Property check on pseudo-random instances (fixed LCG seed).
  uint64_t state = 12345;
  auto next = [&](int64_t mod) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(mod));
  };
  for (int round = 0; round < 50; ++round) {
    std::vector<LiveRange> ranges(40);
    for (LiveRange &r : ranges) {
      r.first = next(30);
      r.last = r.first + next(8);
      r.bytes = 1 + next(5000);
    }
    int64_t peak = 0;
    std::vector<int64_t> off = placeLiveRanges(ranges, 64, &peak);
    for (size_t i = 0; i < ranges.size(); ++i) {
      EXPECT_EQ(off[i] % 64, 0);
      EXPECT_LE(off[i] + ranges[i].bytes, peak);
      for (size_t j = i + 1; j < ranges.size(); ++j) {
        bool liveTogether = ranges[i].first <= ranges[j].last && ranges[j].first <= ranges[i].last;
        bool shareBytes = off[i] < off[j] + ranges[j].bytes && off[j] < off[i] + ranges[i].bytes;
        EXPECT_FALSE(liveTogether && shareBytes) << "round " << round << ": " << i << ", " << j;
      }
    }
  }
}

} // namespace
