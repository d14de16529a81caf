// Schedule primitives: each result verifies, and the interpreter computes exactly the same outputs
// before and after scheduling on random inputs; failing steps report why and change nothing.
#include "ScheduleCheck.h"

using namespace strata;
using namespace strata::loop;
using namespace strata::loop::testing;

namespace {

const char *kAdd10 = R"(func @add(%a: f32[10] in, %b: f32[10] in, %c: f32[10] out) {
  for %i in [0, 10) serial {
    %c[%i] = %a[%i] + %b[%i]
  }
})";

const char *kMatmul = R"(func @matmul(%A: f32[%m, 8] in, %B: f32[8, %n] in, %C: f32[%m, %n] out,
                                     %m: i64, %n: i64) {
  for %i in [0, %m) serial {
    for %j in [0, %n) serial {
      %C[%i, %j] = 0.0
      for %k in [0, 8) serial {
        %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]
      }
    }
  }
})";

// A reversed copy over [2, n): a loop with a non-zero min and a symbolic extent.
const char *kReverse = R"(func @rev(%x: f32[%n] in, %y: f32[%n] out, %n: i64) {
  for %i from 2 extent %n - 2 serial {
    %y[%i] = %x[%n - 1 - %i]
  }
})";

const char *kScale = R"(func @scale(%x: f32[3, %n] in, %y: f32[3, %n] out, %n: i64) {
  for %i in [0, 3) parallel {
    for %j in [0, %n) serial {
      %y[%i, %j] = %x[%i, %j] * 2.0 + cast<f32>(%i * 100 + %j)
    }
  }
})";

const std::vector<std::map<std::string, int64_t>> kMatmulSizes = {
    {{"m", 1}, {"n", 1}}, {{"m", 4}, {"n", 8}}, {{"m", 5}, {"n", 11}}, {{"m", 9}, {"n", 3}}};

TEST(ScheduleTextTest, RoundTrip) {
  auto s = parseSchedule(" split(%i,8,io,ii) ;vectorize( ii );tile(x, y, 4, 8); ");
  ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0], (Step{"split", {"i", "8", "io", "ii"}}));
  std::string text = printSchedule(*s);
  EXPECT_EQ(text, "split(i, 8, io, ii); vectorize(ii); tile(x, y, 4, 8)");
  auto again = parseSchedule(text);
  ASSERT_TRUE(static_cast<bool>(again));
  EXPECT_EQ(*again, *s);
  auto empty = parseSchedule("");
  ASSERT_TRUE(static_cast<bool>(empty));
  EXPECT_TRUE(empty->empty());
}

TEST(ScheduleTextTest, Errors) {
  auto msg = [](const char *t) {
    auto s = parseSchedule(t);
    return s ? std::string("ok") : llvm::toString(s.takeError());
  };
  EXPECT_EQ(msg("shuffle(i)"), "schedule: 'shuffle(i)': unknown primitive 'shuffle'");
  EXPECT_EQ(msg("split(i, 4, io)"),
            "schedule: 'split(i, 4, io)': expected split(loop, factor [, outer, inner])");
  EXPECT_EQ(msg("parallel(i"), "schedule: 'parallel(i': expected 'primitive(args)'");
  EXPECT_EQ(msg("reorder(i, j k)"), "schedule: 'reorder(i, j k)': bad argument 'j k'");
}

TEST(ScheduleSplitTest, ConstantExtentWithTail) {
  // 10 split by 4: the last outer iteration runs 2 of 4 inner iterations under the guard.
  std::string out = checkSchedule(kAdd10, "split(i, 4, io, ii)", {{}});
  EXPECT_NE(out.find("for %io in [0, 3) serial"), std::string::npos) << out;
  EXPECT_NE(out.find("if %io * 4 + %ii < 10"), std::string::npos) << out;
}

TEST(ScheduleSplitTest, DivisibleExtentHasNoGuard) {
  std::string out = checkSchedule(kAdd10, "split(i, 5)", {{}});
  EXPECT_EQ(out.find("if "), std::string::npos) << out;
  EXPECT_NE(out.find("for %i.o in [0, 2) serial"), std::string::npos) << out;
}

TEST(ScheduleSplitTest, SymbolicExtentAndNonZeroMin) {
  std::vector<std::map<std::string, int64_t>> sizes;
  for (int64_t n = 2; n <= 11; ++n)
    sizes.push_back({{"n", n}});
  checkSchedule(kReverse, "split(i, 4)", sizes);
  checkSchedule(kReverse, "split(i, 3); split(i.i, 2)", sizes);
  checkSchedule(kScale, "split(j, 4, jo, ji); split(i, 2, io, ii)", sizes);
}

TEST(ScheduleTileTest, Matmul) {
  std::string out = checkSchedule(kMatmul, "tile(i, j, 4, 8)", kMatmulSizes);
  // The two outer loops come first, then the two inner ones, then both guards.
  EXPECT_NE(out.find("for %i.o in [0, floordiv(%m + 3, 4)) serial {\n"
                     "    for %j.o in [0, floordiv(%n + 7, 8)) serial {\n"
                     "      for %i.i in [0, 4) serial {\n"
                     "        for %j.i in [0, 8) serial {\n"
                     "          if %i.o * 4 + %i.i < %m {\n"
                     "            if %j.o * 8 + %j.i < %n {"),
            std::string::npos)
      << out;
  checkSchedule(kMatmul, "tile(i, j, 2, 3, a, b, c, d)", kMatmulSizes);
}

TEST(ScheduleReorderTest, PermutesAPerfectNest) {
  std::string out = checkSchedule(kMatmul, "reorder(j, i)", kMatmulSizes);
  EXPECT_LT(out.find("for %j"), out.find("for %i")) << out;
  // Named loops take the named loops' positions; i.i stays between them.
  checkSchedule(kMatmul, "split(i, 2); reorder(j, i.o)", kMatmulSizes);
  checkSchedule(kMatmul, "split(j, 4); split(i, 2); reorder(j.i, i.i, i.o, j.o)", kMatmulSizes);
}

TEST(ScheduleReorderTest, Errors) {
  // k is not perfectly nested in j: the zeroing store sits beside it.
  EXPECT_EQ(applyError(kMatmul, "reorder(k, j)"),
            "schedule: reorder(k, j): the loops are not perfectly nested");
  EXPECT_EQ(applyError(kMatmul, "reorder(i, z)"), "schedule: reorder(i, z): no loop named %z");
  EXPECT_EQ(applyError(kMatmul, "reorder(i, i)"), "schedule: reorder(i, i): a loop is named twice");
  const char *triangle = R"(func @tri(%x: f32[8, 8] inout) {
  for %i in [0, 8) serial {
    for %j in [0, %i + 1) serial {
      %x[%i, %j] = 0.0
    }
  }
})";
  EXPECT_EQ(applyError(triangle, "reorder(j, i)"),
            "schedule: reorder(j, i): the bounds of %j depend on %i");
}

TEST(ScheduleFuseTest, FusesTwoLoops) {
  std::vector<std::map<std::string, int64_t>> sizes = {{{"n", 1}}, {{"n", 5}}, {{"n", 8}}};
  // Bounds analysis cannot see through floordiv by a symbol, so only equivalence is checked.
  std::string out = checkSchedule(kScale, "fuse(i, j, ij)", sizes, /*provenInBounds=*/false);
  EXPECT_NE(out.find("for %ij in [0, %n * 3) parallel"), std::string::npos) << out;
  checkSchedule(kScale, "fuse(i, j); split(i.j, 4); vectorize(i.j.i)", sizes, false);
  // With constant extents the fused indices are proven in bounds.
  checkSchedule(kAdd10, "split(i, 5); fuse(i.o, i.i, f)", {{}});
}

TEST(ScheduleFuseTest, Errors) {
  EXPECT_EQ(applyError(kMatmul, "fuse(i, k)"),
            "schedule: fuse(i, k): %k is not the whole body of %i");
}

TEST(ScheduleAnnotateTest, SetsLoopKinds) {
  std::string out = checkSchedule(kAdd10, "vectorize(i)", {{}});
  EXPECT_NE(out.find("for %i in [0, 10) vectorized"), std::string::npos) << out;
  out = checkSchedule(kMatmul, "unroll(k); parallel(i)", kMatmulSizes);
  EXPECT_NE(out.find("for %k in [0, 8) unrolled"), std::string::npos) << out;
  EXPECT_NE(out.find("for %i in [0, %m) parallel"), std::string::npos) << out;
  out = checkSchedule(kMatmul, "vectorize(j, 4); unroll(i, 2)", kMatmulSizes);
  EXPECT_NE(out.find("for %j.i in [0, 4) vectorized"), std::string::npos) << out;
  EXPECT_NE(out.find("for %i.i in [0, 2) unrolled"), std::string::npos) << out;
}

TEST(ScheduleAnnotateTest, Errors) {
  EXPECT_EQ(applyError(kMatmul, "vectorize(j)"),
            "schedule: vectorize(j): %j has an extent that is not a constant");
  EXPECT_EQ(applyError(kMatmul, "unroll(i)"),
            "schedule: unroll(i): %i has an extent that is not a constant");
  EXPECT_EQ(applyError(kMatmul, "vectorize(j, 0)"),
            "schedule: vectorize(j, 0): argument 2 must be a positive integer, not '0'");
}

const char *kBlurWithParams = R"(func @blur(%x: f32[%n + 2] in, %y: f32[%n] out, %n: i64) {
  for %i in [0, %n) serial {
    %y[%i] = %x[%i] + %x[%i + 1] + %x[%i + 2]
  }
})";

TEST(ScheduleCacheTest, WriteAccumulatorAndReadTile) {
  std::string out = checkSchedule(kMatmul, "cache_write(C, k, acc)", kMatmulSizes);
  EXPECT_NE(out.find("allocate %acc: f32[1, 1] local {\n"
                     "        %acc[0, 0] = %C[%i, %j]\n"
                     "        for %k in [0, 8) serial {\n"
                     "          %acc[0, 0] = %acc[0, 0] + %A[%i, %k] * %B[%k, %j]\n"
                     "        }\n"
                     "        %C[%i, %j] = %acc[0, 0]\n"),
            std::string::npos)
      << out;
  // A tile-sized accumulator whose copies are guarded at the tails, and a cached column of B.
  out = checkSchedule(kMatmul, "tile(i, j, 4, 8); cache_write(C, i.i); cache_read(B, k)",
                      kMatmulSizes);
  EXPECT_NE(out.find("allocate %C.local: f32[4, 8] local"), std::string::npos) << out;
  EXPECT_NE(out.find("allocate %B.local: f32[8, 1] local"), std::string::npos) << out;
  checkSchedule(kMatmul, "tile(i, j, 2, 4); cache_read(A, j.o); vectorize(j.i)", kMatmulSizes);
}

TEST(ScheduleCacheTest, OverlappingReadsShareOneRegion) {
  std::vector<std::map<std::string, int64_t>> sizes;
  for (int64_t n = 1; n <= 9; ++n)
    sizes.push_back({{"n", n}});
  std::string out = checkSchedule(kBlurWithParams, "split(i, 4); cache_read(x, i.i, win)", sizes);
  EXPECT_NE(out.find("allocate %win: f32[6] local"), std::string::npos) << out;
  checkSchedule(kBlurWithParams, "split(i, 4); cache_write(y, i.i); cache_read(x, i.i)", sizes);
}

TEST(ScheduleCacheTest, Errors) {
  EXPECT_EQ(applyError(kMatmul, "cache_read(C, k)"),
            "schedule: cache_read(C, k): %k stores to %C; use cache_write");
  EXPECT_EQ(applyError(kMatmul, "cache_write(A, k)"),
            "schedule: cache_write(A, k): %k does not store to %A");
  EXPECT_EQ(applyError(kMatmul, "cache_write(C, i)"),
            "schedule: cache_write(C, i): the region's extent in dimension 0 is not a constant");
  EXPECT_EQ(applyError(kMatmul, "cache_read(Z, i)"),
            "schedule: cache_read(Z, i): no buffer named %Z");
}

TEST(ScheduleTest, NewNamesMustNotShadow) {
  std::string err = applyError(kMatmul, "split(i, 4, io, j)");
  EXPECT_EQ(err.rfind("schedule: split(i, 4, io, j): result does not verify:", 0), 0u) << err;
}

TEST(ScheduleTest, FullMatmulSchedule) {
  checkSchedule(kMatmul, "tile(i, j, 4, 8); parallel(i.o); vectorize(j.i); unroll(k)",
                kMatmulSizes);
  checkSchedule(kMatmul, "tile(i, j, 2, 4); fuse(i.o, j.o, ij); parallel(ij); unroll(i.i)",
                kMatmulSizes, false);
}

} // namespace
