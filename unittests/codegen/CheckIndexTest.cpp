// check_index through the JIT: in-range indices (negatives wrapped) give the interpreter's
// results; an out-of-range one fails the call with the interpreter's message, for a scalar
// check, a vector check (lanes of indices) and a check inside a parallel loop (the run status
// reaches the outlined body), and no element outside the buffers is touched.
#include "strata/codegen/Jit.h"
#include "strata/loop/Interpreter.h"
#include "strata/loop/Parser.h"
#include "strata/loop/Verifier.h"

#include <gtest/gtest.h>

using namespace strata;

namespace {

codegen::LoopJit &twoThreadJit() {
  static auto j = codegen::LoopJit::create("host", 2);
  return **j;
}

constexpr const char *kScalar =
    R"(func @g(%data: f32[3, 4] in, %idx: i64[5] in, %out: f32[5, 4] out) {
  for %i in [0, 5) serial {
    for %j in [0, 4) serial {
      %out[%i, %j] = %data[check_index(%idx[%i], 3, "rows"), %j]
    }
  }
})";

constexpr const char *kParallel =
    R"(func @g(%data: f32[3, 4] in, %idx: i64[5] in, %out: f32[5, 4] out) {
  for %i in [0, 5) parallel {
    for %j in [0, 4) serial {
      %out[%i, %j] = %data[check_index(%idx[%i], 3, "rows"), %j]
    }
  }
})";

// Four indices at once: a vector load of %idx, a vector check, a gather from %data.
constexpr const char *kVector = R"(func @g(%data: f32[3] in, %idx: i64[8] in, %out: f32[8] out) {
  for %i in [0, 2) serial {
    %out[ramp(%i * 4, 1, 4)] = %data[check_index(%idx[ramp(%i * 4, 1, 4)], 3, "lanes")]
  }
})";

loop::LoopFunction parse(const char *text) {
  auto f = loop::parseFunction(text);
  EXPECT_TRUE(!!f) << llvm::toString(f.takeError());
  EXPECT_FALSE(!!loop::verifyFunction(*f));
  return std::move(*f);
}

Tensor floats(Shape shape) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, static_cast<double>(i) + 0.5);
  return t;
}

Tensor indices(std::vector<int64_t> v) {
  Tensor t(DType::I64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i)
    t.setInt(static_cast<int64_t>(i), v[i]);
  return t;
}

// Runs `text` on the interpreter and the JIT with `idx`; returns both errors ("" when none) and
// checks that the outputs agree when both succeed.
std::pair<std::string, std::string> runBoth(const char *text, Shape dataShape, Shape outShape,
                                            std::vector<int64_t> idx) {
  loop::LoopFunction f = parse(text);
  auto k = twoThreadJit().compile(f);
  EXPECT_TRUE(!!k) << llvm::toString(k.takeError());
  std::vector<Tensor> ref = {floats(dataShape), indices(idx), Tensor(DType::F32, outShape)};
  std::vector<Tensor> got = {floats(dataShape), indices(idx), Tensor(DType::F32, outShape)};
  std::string refErr, gotErr;
  if (llvm::Error e = loop::evaluate(f, ref))
    refErr = llvm::toString(std::move(e));
  if (llvm::Error e = codegen::LoopJit::call(*k, got))
    gotErr = llvm::toString(std::move(e));
  if (refErr.empty() && gotErr.empty())
    for (int64_t i = 0; i < ref[2].numElements(); ++i)
      EXPECT_EQ(ref[2].getDouble(i), got[2].getDouble(i)) << "element " << i;
  return {refErr, gotErr};
}

TEST(CheckIndex, InRangeAndNegativeIndicesMatchTheInterpreter) {
  for (const char *text : {kScalar, kParallel}) {
    auto [ref, got] = runBoth(text, {3, 4}, {5, 4}, {0, 2, -1, -3, 1});
    EXPECT_EQ(ref, "");
    EXPECT_EQ(got, "");
  }
  auto [ref, got] = runBoth(kVector, {3}, {8}, {0, 1, 2, -1, -2, -3, 2, 0});
  EXPECT_EQ(ref, "");
  EXPECT_EQ(got, "");
}

TEST(CheckIndex, OutOfRangeFailsWithTheInterpretersMessage) {
  for (const char *text : {kScalar, kParallel}) {
    for (int64_t bad : std::vector<int64_t>{3, -4, INT64_MAX, INT64_MIN}) {
      auto [ref, got] = runBoth(text, {3, 4}, {5, 4}, {0, 1, bad, 2, 0});
      std::string want = "@g: rows: index " + std::to_string(bad) + " is out of range [-3, 3)";
      EXPECT_EQ(ref, want);
      EXPECT_EQ(got, want);
    }
  }
  // One failing lane of eight: the vector check reports it.
  auto [ref, got] = runBoth(kVector, {3}, {8}, {0, 1, 2, 0, 1, 7, 2, 0});
  EXPECT_EQ(ref, "@g: lanes: index 7 is out of range [-3, 3)");
  EXPECT_EQ(got, ref);
}

} // namespace
