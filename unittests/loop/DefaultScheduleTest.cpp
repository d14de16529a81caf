// The default schedule: the steps it picks for elementwise, reduction, matmul and conv nests, that
// they replay from text, verify with every access proven in bounds, and leave the interpreter's
// results bit-identical on random inputs; nests with loop-carried dependences are left alone.
#include "ScheduleCheck.h"

#include <cstring>

using namespace strata;
using namespace strata::loop;
using namespace strata::loop::testing;

namespace {

// The test nests are tiny: without a work minimum their structural decisions show.
constexpr ScheduleTarget kNoWorkMinimum{.minParallelWork = 0};

// Picks the default schedule for `text`, replays it from its printed form, checks the result
// verifies with accesses proven in bounds and computes exactly what the original does. Returns the
// printed schedule.
std::string checkDefault(const char *text,
                         const std::vector<std::map<std::string, int64_t>> &scalarSets = {{}},
                         const ScheduleTarget &target = kNoWorkMinimum) {
  LoopFunction f = parse(text), g = f;
  std::string why;
  Schedule s = defaultSchedule(f, target, &why);
  std::string printed = printSchedule(s);
  auto replay = parseSchedule(printed);
  if (!replay) {
    ADD_FAILURE() << llvm::toString(replay.takeError());
    return "";
  }
  EXPECT_EQ(*replay, s);
  if (llvm::Error err = applySchedule(g, *replay)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return "";
  }
  llvm::Error err = verifyFunction(g, {.checkBounds = true});
  EXPECT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err)) << printFunction(g);
  for (const auto &scalars : scalarSets)
    EXPECT_EQ(run(f, scalars, 7), run(g, scalars, 7)) << printed << "\n" << printFunction(g);
  LoopFunction h = f;
  EXPECT_FALSE(static_cast<bool>(applyDefaultSchedule(h, target)));
  EXPECT_EQ(printFunction(h), printFunction(g));
  return printed + (why.empty() ? "" : "\n" + why);
}

std::string stepsOnly(const std::string &checked) { return checked.substr(0, checked.find('\n')); }

TEST(DefaultSchedule, ElementwiseVectorizesTheRowAndParallelizesTheOuterLoop) {
  const char *add = R"(func @add(%a: f32[4, 37] in, %b: f32[4, 37] in, %c: f32[4, 37] out) {
  for %i in [0, 4) serial {
    for %j in [0, 37) serial {
      %c[%i, %j] = %a[%i, %j] + %b[%i, %j]
    }
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(add)), "vectorize(j, 8); parallel(i)");
  // 16-byte vectors give 4 lanes; the 1-d case parallelizes the vector loop's outer part.
  const char *add1 = R"(func @add(%a: f64[%n] in, %b: f64[%n] out, %n: i64) {
  for %i in [0, %n) serial {
    %b[%i] = %a[%i] + %a[%i]
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(add1, {{{"n", 13}}, {{"n", 1}}})),
            "vectorize(i, 4); parallel(i.o)");
  EXPECT_EQ(stepsOnly(checkDefault(add1, {{{"n", 13}}}, {.vectorBytes = 16, .minParallelWork = 0})),
            "vectorize(i, 2); parallel(i.o)");
}

TEST(DefaultSchedule, ShortRowsAreNotVectorized) {
  const char *narrow = R"(func @f(%a: f32[64, 5] in, %b: f32[64, 5] out) {
  for %i in [0, 64) serial {
    for %j in [0, 5) serial {
      %b[%i, %j] = %a[%i, %j]
    }
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(narrow)), "parallel(i)");
}

TEST(DefaultSchedule, RowReductionParallelizesRowsOnly) {
  const char *rowsum = R"(func @rowsum(%x: f32[%n, 100] in, %y: f32[%n] out, %n: i64) {
  for %i in [0, %n) serial {
    %y[%i] = 0.0
    for %j in [0, 100) serial {
      %y[%i] = %y[%i] + %x[%i, %j]
    }
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(rowsum, {{{"n", 5}}})), "parallel(i)");
}

TEST(DefaultSchedule, MatmulWithInitIsTiledAndCached) {
  const char *mm = R"(func @matmul(%A: f32[33, 29] in, %B: f32[29, 47] in, %C: f32[33, 47] out) {
  for %i in [0, 33) serial {
    for %j in [0, 47) serial {
      %C[%i, %j] = 0.0
      for %k in [0, 29) serial {
        %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]
      }
    }
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(mm)),
            "tile(i, j, 4, 16); cache_write(C, i.i); vectorize(C.local.in1, 8); "
            "vectorize(C.local.out1, 8); parallel(i.o)");
}

TEST(DefaultSchedule, AccumulatingMatmulMovesTheReductionOutsideTheTile) {
  const char *mm = R"(func @matmul(%A: f32[%m, 29] in, %B: f32[29, %n] in, %C: f32[%m, %n] inout,
                                   %m: i64, %n: i64) {
  for %i in [0, %m) serial {
    for %j in [0, %n) serial {
      for %k in [0, 29) serial {
        %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]
      }
    }
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(mm, {{{"m", 33}, {"n", 47}}, {{"m", 1}, {"n", 1}},
                                        {{"m", 8}, {"n", 32}}})),
            "tile(i, j, 4, 16); reorder(k, i.i, j.i); cache_write(C, k); "
            "vectorize(C.local.in1, 8); vectorize(j.i, 8); vectorize(C.local.out1, 8); "
            "fuse(i.o, j.o, i.o.j.o); parallel(i.o.j.o)");
}

TEST(DefaultSchedule, LoweredMatmulWithLocalAccumulatorIsTiled) {
  // The shape lib/lower gives a matmul: a one-element local accumulator per output element.
  const char *mm = R"(func @matmul(%A: f32[33, 29] in, %B: f32[29, 47] in, %C: f32[33, 47] out) {
  for %i in [0, 33) serial {
    for %j in [0, 47) serial {
      allocate %acc: f32[1] local {
        %acc[0] = 0.0
        for %k in [0, 29) serial {
          %acc[0] = %acc[0] + %A[%i, %k] * %B[%k, %j]
        }
        %C[%i, %j] = %acc[0]
      }
    }
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(mm)), "tile(i, j, 4, 16); parallel(i.o)");
}

TEST(DefaultSchedule, ConvNestTilesTheOutputPlane) {
  const char *conv = R"(func @conv(%x: f32[3, 18, 18] in, %w: f32[8, 3, 3, 3] in,
                                   %y: f32[8, 16, 16] inout) {
  for %oc in [0, 8) serial {
    for %oh in [0, 16) serial {
      for %ow in [0, 16) serial {
        for %ic in [0, 3) serial {
          for %kh in [0, 3) serial {
            for %kw in [0, 3) serial {
              %y[%oc, %oh, %ow] = %y[%oc, %oh, %ow] + %w[%oc, %ic, %kh, %kw] * %x[%ic, %oh + %kh, %ow + %kw]
            }
          }
        }
      }
    }
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(conv)),
            "tile(oh, ow, 4, 16); reorder(ic, kh, kw, oh.i, ow.i); cache_write(y, ic); "
            "vectorize(y.local.in2, 8); vectorize(ow.i, 8); vectorize(y.local.out2, 8); "
            "parallel(oc)");
}

TEST(DefaultSchedule, LoopCarriedDependencesAreLeftAlone) {
  // A prefix sum: iteration i reads what i - 1 wrote.
  const char *scan = R"(func @scan(%x: f32[%n] in, %y: f32[%n] inout, %n: i64) {
  for %i from 1 extent %n - 1 serial {
    %y[%i] = %y[%i - 1] + %x[%i]
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(scan, {{{"n", 20}}})), "");
  // A transposing store: j indexes the strided dim, so only i goes parallel.
  const char *transpose = R"(func @t(%x: f32[16, 16] in, %y: f32[16, 16] out) {
  for %i in [0, 16) serial {
    for %j in [0, 16) serial {
      %y[%j, %i] = %x[%i, %j]
    }
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(transpose)), "parallel(i)");
  // A full reduction to one element: nothing is independent.
  const char *sum = R"(func @sum(%x: f32[64] in, %y: f32[1] inout) {
  for %i in [0, 64) serial {
    %y[0] = %y[0] + %x[%i]
  }
})";
  EXPECT_EQ(stepsOnly(checkDefault(sum)), "");
}

TEST(DefaultSchedule, EachNestIsScheduledAndReasonsAreGiven) {
  const char *two = R"(func @two(%a: f32[64] in, %b: f32[64] out, %c: f32[64] out) {
  for %i in [0, 64) serial {
    %b[%i] = %a[%i] + 1.0
  }
  for %j in [0, 64) serial {
    %c[%j] = %b[%j] * 2.0
  }
})";
  std::string out = checkDefault(two);
  EXPECT_EQ(stepsOnly(out), "vectorize(i, 8); parallel(i.o); vectorize(j, 8); parallel(j.o)");
  EXPECT_NE(out.find("nest %i: vectorize(i, 8): innermost contiguous loop"), std::string::npos)
      << out;
}

TEST(DefaultSchedule, SmallNestsStaySerial) {
  // 4 x 5 x 8 iterations (after vectorizing) are far below kMinParallelWork: not handed to the
  // thread pool.
  const char *add = R"(func @add(%a: f32[4, 37] in, %b: f32[4, 37] in, %c: f32[4, 37] out) {
  for %i in [0, 4) serial {
    for %j in [0, 37) serial {
      %c[%i, %j] = %a[%i, %j] + %b[%i, %j]
    }
  }
})";
  std::string out = checkDefault(add, {{}}, {});
  EXPECT_EQ(stepsOnly(out), "vectorize(j, 8)");
  EXPECT_NE(out.find("not parallelized: 160 iterations in all"), std::string::npos) << out;
}

// The reasons a loop stays scalar, as strata explain shows them: a store strided in the loop
// (a transpose's inner loop) and a loop carrying a value from one iteration to the next.
TEST(DefaultSchedule, SaysWhyALoopIsNotVectorized) {
  const char *transpose = R"(func @t(%a: f32[16, 16] in, %c: f32[16, 16] out) {
  for %i in [0, 16) serial {
    for %j in [0, 16) serial {
      %c[%j, %i] = %a[%i, %j]
    }
  }
})";
  std::string out = checkDefault(transpose);
  EXPECT_NE(out.find("%j not vectorized: its stores into %c are not unit-stride in it"),
            std::string::npos)
      << out;
  const char *scan = R"(func @s(%a: f32[64] in, %c: f32[64] inout) {
  for %i in [0, 63) serial {
    %c[%i + 1] = %c[%i] + %a[%i]
  }
})";
  out = checkDefault(scan);
  EXPECT_NE(out.find("%i not vectorized: its iterations depend on each other"), std::string::npos)
      << out;
}

// A register-tiled nest as lowering states it: q runs over flattened output rows (an index the
// independence check cannot see through), owo over column tiles, k is summed; the unrolled
// accumulator tile lives in a local buffer.
const char *kTiled = R"(func @mk(%x: f32[64, 4] in, %y: f32[64, 8] out) {
  for %q in [0, 16) serial [parallel, nest matmul, work WORK, register_tiled] {
    for %owo in [0, 2) serial [parallel] {
      allocate %acc: f32[4] local {
        %acc[0] = 0.0
        %acc[1] = 0.0
        %acc[2] = 0.0
        %acc[3] = 0.0
        for %k in [0, 4) serial [reduction] {
          %acc[0] = %acc[0] + %x[%q * 4, %k]
          %acc[1] = %acc[1] + %x[%q * 4 + 1, %k]
          %acc[2] = %acc[2] + %x[%q * 4 + 2, %k]
          %acc[3] = %acc[3] + %x[%q * 4 + 3, %k]
        }
        %y[%q * 4, %owo * 4] = %acc[0]
        %y[%q * 4 + 1, %owo * 4 + 1] = %acc[1]
        %y[%q * 4 + 2, %owo * 4 + 2] = %acc[2]
        %y[%q * 4 + 3, %owo * 4 + 3] = %acc[3]
      }
    }
  }
})";

std::string tiledWithWork(int64_t work) {
  std::string text = kTiled;
  text.replace(text.find("WORK"), 4, std::to_string(work));
  return text;
}

TEST(DefaultSchedule, RegisterTiledNestsOnlyChooseParallelism) {
  // Enough work: the outermost parallel axis goes parallel; nothing inside is tiled or vectorized.
  std::string big = tiledWithWork(kMinParallelWork);
  std::string out = checkDefault(big.c_str(), {{}}, {});
  EXPECT_EQ(stepsOnly(out), "parallel(q)");
  EXPECT_NE(
      out.find("outermost parallel axis of a register-tiled matmul nest, 16384 multiply-adds"),
      std::string::npos)
      << out;
  // Too little: kept serial, and still not restructured.
  std::string small = tiledWithWork(512);
  out = checkDefault(small.c_str(), {{}}, {});
  EXPECT_EQ(stepsOnly(out), "");
  EXPECT_NE(out.find("kept serial: register-tiled matmul nest, 512 multiply-adds"),
            std::string::npos)
      << out;
  // The same nest without lowering's annotations: the scheduler cannot prove q independent.
  std::string plain = big;
  for (const char *a :
       {" [parallel, nest matmul, work 16384, register_tiled]", " [parallel]", " [reduction]"})
    plain.erase(plain.find(a), std::strlen(a));
  EXPECT_EQ(stepsOnly(checkDefault(plain.c_str())).find("parallel(q)"), std::string::npos);
}

} // namespace
