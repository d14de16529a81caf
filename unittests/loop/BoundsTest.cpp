// Bounds analysis: intervals of index expressions and the prover behind them.
#include "strata/loop/Bounds.h"
#include "strata/loop/Printer.h"

#include <gtest/gtest.h>

using namespace strata;
using namespace strata::loop;

namespace {

std::string str(const Interval &iv) {
  return "[" + (iv.min ? printExpr(iv.min) : "?") + ", " + (iv.max ? printExpr(iv.max) : "?") + "]";
}

class BoundsTest : public ::testing::Test {
protected:
  Var iv = makeVar("i"), jv = makeVar("j"), nv = makeVar("n");
  Expr i = var(iv), j = var(jv), n = var(nv);
  BoundsScope scope;
  void SetUp() override {
    scope[iv.get()] = loopBounds(intImm(0), intImm(4), {}); // [0, 3]
    scope[jv.get()] = loopBounds(intImm(0), n, {});         // [0, n - 1]
  }
  std::string b(const Expr &e) { return str(boundsOf(e, scope)); }
  Expr c(int64_t v) { return intImm(v); }
};

TEST_F(BoundsTest, Affine) {
  EXPECT_EQ(b(i), "[0, 3]");
  EXPECT_EQ(b(j), "[0, %n - 1]");
  EXPECT_EQ(b(i * c(4) + c(1)), "[1, 13]");
  EXPECT_EQ(b(c(10) - i), "[7, 10]");
  EXPECT_EQ(b(i * c(-2)), "[-6, 0]");
  EXPECT_EQ(b(j * c(4) + i), "[0, (%n - 1) * 4 + 3]");
  EXPECT_EQ(b(n), "[%n, %n]");
}
TEST_F(BoundsTest, DivModMinMaxSelectVector) {
  EXPECT_EQ(b(binary(ExprKind::FloorDiv, i * c(4) + c(3), c(2))), "[1, 7]");
  EXPECT_EQ(b(binary(ExprKind::FloorMod, j, c(8))), "[0, 7]");
  EXPECT_EQ(b(binary(ExprKind::FloorMod, i, c(8))), "[0, 3]");
  EXPECT_EQ(b(min(i, c(2))), "[0, 2]");
  EXPECT_EQ(b(max(i, c(2))), "[2, 3]");
  EXPECT_EQ(b(select(binary(ExprKind::LT, i, c(2)), i, c(9))), "[0, 9]");
  EXPECT_EQ(b(ramp(i * c(4), c(1), 4)), "[0, 15]");
  EXPECT_EQ(b(i * j), "[0, (%n - 1) * 3]");
  EXPECT_EQ(b(i * (j - c(1))), "[?, ?]"); // j - 1 may be negative
}
TEST_F(BoundsTest, Prover) {
  EXPECT_TRUE(proveLE(c(0), n - c(1)));            // n >= 1
  EXPECT_FALSE(proveLE(c(1), n - c(1)));
  EXPECT_TRUE(proveLE((n - c(1)) * c(4) + c(3), n * c(4) - c(1)));
  EXPECT_TRUE(proveLE(min(n, c(4)), c(4)));
  EXPECT_TRUE(proveLE(c(0), max(n - c(4), c(0))));
  EXPECT_FALSE(proveLE(n, c(4)));
  EXPECT_TRUE(proveLE(c(1), binary(ExprKind::FloorDiv, n + c(3), c(4)))); // ceil(n / 4) >= 1
  // Not proven (a known limit: an atom's upper bound in terms of a parameter is not tracked).
  EXPECT_FALSE(proveLE(binary(ExprKind::FloorDiv, n + c(3), c(4)), n));
  EXPECT_EQ(constantValue((c(2) + c(3)) * c(4) - c(1)), 19);
  EXPECT_FALSE(constantValue(n * c(0) + n).has_value());
}
TEST_F(BoundsTest, CheckBoundsFindsOutOfRangeAccesses) {
  Buffer a = makeBuffer("a", DType::F32, {c(4), n});
  LoopFunction f{"k", {}, nullptr, {}};
  f.addBuffer(a, ParamRole::InOut);
  f.addScalar(nv);
  Var io = makeVar("io"), ii = makeVar("ii");
  // A split loop over n with a guarded tail: in bounds.
  Expr idx = var(io) * c(4) + var(ii);
  Stmt st = store(a, {i, idx}, floatImm(0));
  Stmt guarded = forLoop(io, c(0), binary(ExprKind::FloorDiv, n + c(3), c(4)), ForKind::Serial,
                         forLoop(ii, c(0), c(4), ForKind::Serial,
                                 ifThenElse(binary(ExprKind::LT, idx, n), st)));
  f.body = forLoop(iv, c(0), c(4), ForKind::Serial, guarded);
  EXPECT_TRUE(checkBounds(f).empty());
  // Without the guard the tail can overrun.
  f.body = forLoop(iv, c(0), c(4), ForKind::Serial,
                   forLoop(io, c(0), binary(ExprKind::FloorDiv, n + c(3), c(4)), ForKind::Serial,
                           forLoop(ii, c(0), c(4), ForKind::Serial, st)));
  auto msgs = checkBounds(f);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_NE(msgs[0].find("dimension 1"), std::string::npos) << msgs[0];
  // Guarding the loop variable itself tightens its interval.
  f.body = forLoop(iv, c(0), c(8), ForKind::Serial,
                   ifThenElse(binary(ExprKind::LT, i, c(4)), store(a, {i, c(0)}, floatImm(0))));
  EXPECT_TRUE(checkBounds(f).empty());
}

} // namespace
