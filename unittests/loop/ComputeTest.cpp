// compute_at and compute_inline: the scheduled function computes exactly what the original does
// (interpreter on random inputs, several sizes including ones no split factor divides), its
// accesses are proven in bounds, and unsupported producers are rejected with a reason.
#include "ScheduleCheck.h"

using namespace strata;
using namespace strata::loop;
using namespace strata::loop::testing;

namespace {

// A three-point blur of an intermediate: the classic compute_at example.
const char *kBlur = R"(func @blur(%x: f32[%n + 2] in, %y: f32[%n] out, %n: i64) {
  allocate %bx: f32[%n + 2] global {
    for %i in [0, %n + 2) serial {
      %bx[%i] = %x[%i] * 2.0 + 1.0
    }
    for %j in [0, %n) serial {
      %y[%j] = %bx[%j] + %bx[%j + 1] + %bx[%j + 2]
    }
  }
})";

// A 2-d stencil over a transposed intermediate; the producer stores t[j, i] from loops i, j.
const char *kStencil = R"(func @st(%x: f32[%m + 1, %n + 1] in, %y: f32[%n, %m] out, %m: i64,
                                  %n: i64) {
  allocate %t: f32[%n + 1, %m + 1] local {
    for %i in [0, %m + 1) serial {
      for %j in [0, %n + 1) serial {
        %t[%j, %i] = %x[%i, %j] * 3.0
      }
    }
    for %a in [0, %n) serial {
      for %b in [0, %m) serial {
        %y[%a, %b] = %t[%a, %b] - %t[%a + 1, %b + 1]
      }
    }
  }
})";

// A matmul into an intermediate (init and update in one nest), then a relu of it.
const char *kMatmulRelu = R"(func @mmr(%A: f32[%m, 6] in, %B: f32[6, %n] in, %D: f32[%m, %n] out,
                                      %m: i64, %n: i64) {
  allocate %C: f32[%m, %n] local {
    for %i in [0, %m) serial {
      for %j in [0, %n) serial {
        %C[%i, %j] = 0.0
        for %k in [0, 6) serial {
          %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]
        }
      }
    }
    for %y in [0, %m) serial {
      for %x in [0, %n) serial {
        %D[%y, %x] = max(%C[%y, %x], 0.0)
      }
    }
  }
})";

// Two chained intermediates, read by a loop that also writes a buffer.
const char *kChain = R"(func @chain(%x: f32[8] in, %y: f32[8] out) {
  allocate %u: f32[8] local {
    for %i in [0, 8) serial {
      %u[%i] = %x[%i] + 1.0
    }
    allocate %v: f32[8] local {
      for %j in [0, 8) serial {
        %v[%j] = %u[7 - %j] * %u[%j]
      }
      for %k in [0, 8) serial {
        %y[%k] = %v[%k] - %u[%k]
      }
    }
  }
})";

std::vector<std::map<std::string, int64_t>> sizesN(int64_t hi) {
  std::vector<std::map<std::string, int64_t>> s;
  for (int64_t n = 1; n <= hi; ++n)
    s.push_back({{"n", n}});
  return s;
}

const std::vector<std::map<std::string, int64_t>> kSizes2 = {
    {{"m", 1}, {"n", 1}}, {{"m", 4}, {"n", 8}}, {{"m", 5}, {"n", 7}}, {{"m", 9}, {"n", 3}}};

TEST(ComputeTextTest, RoundTrip) {
  auto s = parseSchedule("compute_at( %t ,j.o );compute_inline(u)");
  ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(printSchedule(*s), "compute_at(t, j.o); compute_inline(u)");
  auto again = parseSchedule(printSchedule(*s));
  ASSERT_TRUE(static_cast<bool>(again));
  EXPECT_EQ(*again, *s);
  auto bad = parseSchedule("compute_at(t)");
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "schedule: 'compute_at(t)': expected compute_at(buffer, loop)");
}

TEST(ComputeInlineTest, ReplacesLoadsByTheProducedExpression) {
  std::string out = checkSchedule(kBlur, "compute_inline(bx)", sizesN(6));
  EXPECT_EQ(out.find("allocate"), std::string::npos) << out;
  EXPECT_NE(out.find("%y[%j] = %x[%j] * 2.0 + 1.0 + (%x[%j + 1] * 2.0 + 1.0)"), std::string::npos)
      << out;
  // A consumer split with a tail, and a transposed producer.
  checkSchedule(kBlur, "split(j, 4); compute_inline(bx)", sizesN(9));
  out = checkSchedule(kStencil, "compute_inline(t)", kSizes2);
  EXPECT_NE(out.find("%y[%a, %b] = %x[%b, %a] * 3.0 - %x[%b + 1, %a + 1] * 3.0"),
            std::string::npos)
      << out;
  checkSchedule(kStencil, "tile(a, b, 4, 4); compute_inline(t)", kSizes2);
}

TEST(ComputeInlineTest, Chains) {
  std::string out = checkSchedule(kChain, "compute_inline(v); compute_inline(u)", {{}});
  EXPECT_NE(out.find("%y[%k] = (%x[7 - %k] + 1.0) * (%x[%k] + 1.0) - (%x[%k] + 1.0)"),
            std::string::npos)
      << out;
  checkSchedule(kChain, "compute_inline(u); compute_inline(v)", {{}});
}

TEST(ComputeAtTest, ShrinksToTheWindowPerIteration) {
  std::string out = checkSchedule(kBlur, "compute_at(bx, j)", sizesN(6));
  EXPECT_NE(out.find("  for %j in [0, %n) serial {\n"
                     "    allocate %bx: f32[3] global {\n"
                     "      for %i in [0, 3) serial {\n"
                     "        %bx[%i] = %x[%j + %i] * 2.0 + 1.0\n"
                     "      }\n"
                     "      %y[%j] = %bx[0] + %bx[1] + %bx[2]\n"),
            std::string::npos)
      << out;
}

TEST(ComputeAtTest, SplitTailIsGuarded) {
  // 4 outputs need a 6-element window; n = 1..9 leaves every kind of tail, where the window
  // sticks out of the buffer and the guard keeps the producer inside it.
  std::string out = checkSchedule(kBlur, "split(j, 4); compute_at(bx, j.o)", sizesN(9));
  EXPECT_NE(out.find("allocate %bx: f32[6] global"), std::string::npos) << out;
  EXPECT_NE(out.find("if %j.o * 4 + %i < %n + 2 {"), std::string::npos) << out;
  checkSchedule(kBlur, "split(j, 3); compute_at(bx, j.i)", sizesN(9));
  checkSchedule(kBlur, "split(j, 4); vectorize(j.i); compute_at(bx, j.o)", sizesN(9));
}

TEST(ComputeAtTest, TransposedTileWithTails) {
  std::string out = checkSchedule(kStencil, "tile(a, b, 4, 4); compute_at(t, b.o)", kSizes2);
  EXPECT_NE(out.find("allocate %t: f32[5, 5] local"), std::string::npos) << out;
  checkSchedule(kStencil, "tile(a, b, 2, 3); compute_at(t, a.i)", kSizes2);
  checkSchedule(kStencil, "compute_at(t, b)", kSizes2);
}

TEST(ComputeAtTest, SymbolicRegionIsComputedInPlace) {
  // Per row a of y, the region is rows [a, a + 1] by columns [0, m]: not a constant extent, so
  // the full buffer stays allocated outside and each iteration computes its two rows in it.
  std::string out = checkSchedule(kStencil, "compute_at(t, a)", kSizes2);
  EXPECT_NE(out.find("allocate %t: f32[%n + 1, %m + 1] local {\n"
                     "    for %a in [0, %n) serial {\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("for %i in [0, %m + 1) serial"), std::string::npos) << out;
}

TEST(ComputeAtTest, ReductionProducer) {
  std::string out = checkSchedule(kMatmulRelu, "compute_at(C, x)", kSizes2);
  EXPECT_NE(out.find("allocate %C: f32[1, 1] local {\n"
                     "        %C[0, 0] = 0.0\n"
                     "        for %k in [0, 6) serial {\n"
                     "          %C[0, 0] = %C[0, 0] + %A[%y, %k] * %B[%k, %x]\n"),
            std::string::npos)
      << out;
  out = checkSchedule(kMatmulRelu, "tile(y, x, 4, 4); compute_at(C, x.o)", kSizes2);
  EXPECT_NE(out.find("allocate %C: f32[4, 4] local"), std::string::npos) << out;
  checkSchedule(kMatmulRelu, "tile(y, x, 2, 3); compute_at(C, y.i); parallel(y.o)", kSizes2);
}

TEST(ComputeAtTest, ThenInline) {
  checkSchedule(kChain, "compute_at(v, k); compute_inline(u)", {{}});
  checkSchedule(kChain, "compute_at(v, k); compute_at(u, k)", {{}});
}

TEST(ComputeTest, Errors) {
  EXPECT_EQ(applyError(kBlur, "compute_inline(x)"),
            "schedule: compute_inline(x): %x is a parameter; only an allocated buffer has a "
            "producer");
  EXPECT_EQ(applyError(kBlur, "compute_at(q, j)"), "schedule: compute_at(q, j): no buffer named %q");
  EXPECT_EQ(applyError(kMatmulRelu, "compute_inline(C)"),
            "schedule: compute_inline(C): %C is read by its own producer (a reduction)");
  EXPECT_EQ(applyError(kBlur, "compute_at(bx, i)"),
            "schedule: compute_at(bx, i): %i is inside the producer of %bx");
  EXPECT_EQ(applyError(kChain, "compute_at(u, k)"),
            "schedule: compute_at(u, k): %u is also read outside the body of %k");
  EXPECT_EQ(applyError(kBlur, "split(i, 4); compute_inline(bx)"),
            "schedule: compute_inline(bx): the store to %bx at [%i.o * 4 + %i.i] is not indexed "
            "by plain variables of its producer's perfect loop nest");

  const char *twoStores = R"(func @f(%x: f32[4] in, %y: f32[4] out) {
  allocate %t: f32[4] local {
    for %i in [0, 4) serial {
      %t[%i] = 0.0
    }
    for %i2 in [0, 4) serial {
      %t[%i2] = %x[%i2]
    }
    for %j in [0, 4) serial {
      %y[%j] = %t[%j]
    }
  }
})";
  EXPECT_EQ(applyError(twoStores, "compute_inline(t)"),
            "schedule: compute_inline(t): %t is stored by 2 separate statements; one loop nest "
            "must compute it");
  EXPECT_EQ(applyError(twoStores, "compute_at(t, j)"),
            "schedule: compute_at(t, j): %t is stored by 2 separate statements; one loop nest "
            "must compute it");

  const char *clobber = R"(func @f(%x: f32[4] inout, %y: f32[4] out) {
  allocate %t: f32[4] local {
    for %i in [0, 4) serial {
      %t[%i] = %x[%i]
    }
    for %j in [0, 4) serial {
      %x[%j] = 0.0
      %y[%j] = %t[3 - %j]
    }
  }
})";
  EXPECT_EQ(applyError(clobber, "compute_inline(t)"),
            "schedule: compute_inline(t): %x, which the producer of %t reads, is stored before "
            "the last read of %t");

  const char *partial = R"(func @f(%x: f32[8] in, %y: f32[8] out) {
  allocate %t: f32[8] local {
    for %i from 2 extent 6 serial {
      %t[%i] = %x[%i]
    }
    for %j in [0, 8) serial {
      %y[%j] = %t[%j]
    }
  }
})";
  EXPECT_EQ(applyError(partial, "compute_inline(t)"),
            "schedule: compute_inline(t): the producer of %t writes part of it, and the reads are "
            "not proven inside that part");
  // compute_at stays exact: unwritten elements read as zero before and after.
  checkSchedule(partial, "split(j, 3); compute_at(t, j.o)", {{}});

  const char *vectorRead = R"(func @f(%x: f32[8] in, %y: f32[8] out) {
  allocate %t: f32[8] local {
    for %i in [0, 8) serial {
      %t[%i] = %x[%i]
    }
    %y[ramp(0, 1, 8)] = %t[ramp(0, 1, 8)]
  }
})";
  EXPECT_EQ(applyError(vectorRead, "compute_inline(t)"),
            "schedule: compute_inline(t): %t is read with vector indices; vectorize after "
            "compute_inline");
}

} // namespace
