// Schedule primitives: transformations of loop IR that change how a kernel iterates, never what
// it computes (docs/loop-ir.md, "Schedules").
//
// A schedule is a list of steps, each a primitive name and its arguments, e.g.
//   split(i, 8, io, ii); vectorize(ii)
// Steps name loops by their printed variable names (without the `%`), the handle that survives
// printing, storing and replaying; a step resolves its names to loop nodes when it is applied. The
// text form round-trips: printSchedule(parseSchedule(t)) is canonical and parses back equal.
#pragma once
#include "strata/loop/IR.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace strata::loop {

struct Step {
  std::string primitive;         // "split", "tile", "reorder", "vectorize", "cache_read", ...
  std::vector<std::string> args; // loop names and integers, as written
  bool operator==(const Step &) const = default;
};
using Schedule = std::vector<Step>;

// `step; step; ...` with `step = name "(" [arg {"," arg}] ")"`; whitespace is free, a `%` before
// a loop name is accepted and dropped. Unknown primitives and wrong argument counts are errors.
llvm::Expected<Schedule> parseSchedule(llvm::StringRef text);
std::string printSchedule(const Schedule &s); // "split(i, 8, io, ii); vectorize(ii)"
std::string printStep(const Step &s);

// Applies one step to `f` and verifies the result; on error `f` is unchanged.
llvm::Error applyStep(LoopFunction &f, const Step &step);
// Applies the steps in order; stops at the first failing step (steps before it stay applied).
llvm::Error applySchedule(LoopFunction &f, const Schedule &s);

// --- the default schedule (lib/loop/schedule/DefaultSchedule.cpp, docs/loop-ir.md "Default
// schedule"): per top-level loop nest, tile matmul/conv-like nests (tileRows x tileCols, reduction
// loops moved outside the tile when the nest is perfect, the accumulator tile cached locally),
// vectorize innermost loops that index the stored buffer's unit-stride dim, and mark the
// outermost independent loop parallel. Only transformations proven not to change results. A nest
// that lowering annotated as register-tiled keeps its structure: only its outermost parallel axis
// may be marked parallel. The schedule's thresholds are these named constants (and the target's
// fields below); nothing else in the compiler decides tiling, vectorization or parallelism.

// A nest doing less work than this (iterations of all its loops, or a register-tiled nest's
// multiply-adds) stays serial: handing ~16K operations to the thread pool costs more than it saves.
constexpr int64_t kMinParallelWork = int64_t(1) << 14;

struct ScheduleTarget {
  int vectorBytes = 32;           // SIMD register width (AVX2); lanes = vectorBytes / dtype size
  int vectorRegisters = 16;       // architectural SIMD registers: 16 (SSE, AVX2), 32 (AVX-512)
  int64_t tileRows = 4;           // rows of a matmul/conv output tile
  int64_t tileColVectors = 2;     // tile columns, in vectors
  int64_t minParallelExtent = 2;  // a constant-extent loop needs this many iterations to go parallel
  // A nest doing less work than this stays serial (kMinParallelWork); 0: no minimum.
  int64_t minParallelWork = kMinParallelWork;
};
// The steps for `f` (which is not modified); `why`, if given, gets one line per decision;
// `scheduled`, if given, gets `f` with the steps applied (each was applied and verified while
// choosing them, so a caller need not replay them).
Schedule defaultSchedule(const LoopFunction &f, const ScheduleTarget &t = {},
                         std::string *why = nullptr, LoopFunction *scheduled = nullptr);
// defaultSchedule + applySchedule.
llvm::Error applyDefaultSchedule(LoopFunction &f, const ScheduleTarget &t = {});

} // namespace strata::loop
