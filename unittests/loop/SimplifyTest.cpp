// One test per simplifier rule: each builds the rule's left side and checks the printed result.
#include "strata/loop/Printer.h"
#include "strata/loop/Simplify.h"

#include <gtest/gtest.h>

using namespace strata;
using namespace strata::loop;

namespace {

class SimplifyTest : public ::testing::Test {
protected:
  Var xv = makeVar("x"), yv = makeVar("y"), iv = makeVar("i"), nv = makeVar("n");
  Expr x = var(xv), y = var(yv), i = var(iv), n = var(nv);
  Var fv = makeVar("f", DType::F32);
  Expr f = var(fv);
  BoundsScope scope; // i in [0, 3], n a parameter

  void SetUp() override { scope[iv.get()] = {intImm(0), intImm(3)}; }
  Expr c(int64_t v) { return intImm(v); }
  std::string s(const Expr &e) { return printExpr(simplify(e)); }
  std::string sb(const Expr &e) { return printExpr(simplify(e, &scope)); }
  Expr bin(ExprKind k, Expr a, Expr b) { return binary(k, std::move(a), std::move(b)); }
};

TEST_F(SimplifyTest, ConstantFolding) {
  EXPECT_EQ(s(c(2) + c(3) * c(4)), "14");
  EXPECT_EQ(s(bin(ExprKind::FloorDiv, c(-7), c(2))), "-4");
  EXPECT_EQ(s(bin(ExprKind::Div, c(-7), c(2))), "-3");
  EXPECT_EQ(s(bin(ExprKind::FloorMod, c(-7), c(2))), "1");
  EXPECT_EQ(s(bin(ExprKind::Mod, c(-7), c(2))), "-1");
  EXPECT_EQ(s(bin(ExprKind::Div, c(1), c(0))), "1 / 0"); // left for the interpreter to report
  EXPECT_EQ(s(intImm(100, DType::I8) + intImm(100, DType::I8)), "-56i8"); // wraps
  EXPECT_EQ(s(floatImm(0.1) + floatImm(0.2)), printExpr(floatImm(0.1f + 0.2f)));
  EXPECT_EQ(s(cast(DType::I32, floatImm(-2.7))), "-2i32");
  EXPECT_EQ(s(cast(DType::F32, c(3))), "3.0");
}
TEST_F(SimplifyTest, BitwiseFoldingAndIdentities) {
  EXPECT_EQ(s(bin(ExprKind::Shl, intImm(1, DType::I8), intImm(7, DType::I8))), "-128i8");
  EXPECT_EQ(s(bin(ExprKind::Shr, intImm(-128, DType::I8), intImm(7, DType::I8))), "1i8"); // logical
  EXPECT_EQ(s(bin(ExprKind::Shl, c(1), c(64))), "0");    // amount >= width
  EXPECT_EQ(s(bin(ExprKind::Shr, c(-1), c(-1))), "0");   // the amount reads unsigned
  EXPECT_EQ(s(bin(ExprKind::BitXor, intImm(255, DType::U8), intImm(15, DType::U8))), "240u8");
  EXPECT_EQ(s(bin(ExprKind::BitAnd, c(6), x)), "bitand(%x, 6)"); // constant moves right
  EXPECT_EQ(s(bin(ExprKind::BitAnd, x, c(0))), "0");
  EXPECT_EQ(s(bin(ExprKind::BitAnd, x, c(-1))), "%x");
  EXPECT_EQ(s(bin(ExprKind::BitOr, x, c(0))), "%x");
  EXPECT_EQ(s(bin(ExprKind::Shr, x, c(0))), "%x");
  EXPECT_EQ(s(bin(ExprKind::Mod, floatImm(5.5), floatImm(-2))), "1.5"); // float mod is C fmod
}

TEST_F(SimplifyTest, ConstantMovesRight) { EXPECT_EQ(s(c(3) + x), "%x + 3"); }
TEST_F(SimplifyTest, AddZero) { EXPECT_EQ(s(x + c(0)), "%x"); }
TEST_F(SimplifyTest, AddNegativeBecomesSub) { EXPECT_EQ(s(x + c(-2)), "%x - 2"); }
TEST_F(SimplifyTest, AddConstants) { EXPECT_EQ(s((x + c(1)) + c(2)), "%x + 3"); }
TEST_F(SimplifyTest, SubThenAdd) { EXPECT_EQ(s((x - c(1)) + c(1)), "%x"); }
TEST_F(SimplifyTest, AddCancelsSub) {
  EXPECT_EQ(s(x + (y - x)), "%y");
  EXPECT_EQ(s((x - y) + y), "%x");
}
TEST_F(SimplifyTest, SubZero) { EXPECT_EQ(s(x - c(0)), "%x"); }
TEST_F(SimplifyTest, SubSelf) { EXPECT_EQ(s(x * c(4) - x * c(4)), "0"); }
TEST_F(SimplifyTest, SubNegative) { EXPECT_EQ(s(x - c(-2)), "%x + 2"); }
TEST_F(SimplifyTest, SubConstants) {
  EXPECT_EQ(s((x + c(5)) - c(2)), "%x + 3");
  EXPECT_EQ(s((x - c(5)) - c(2)), "%x - 7");
}
TEST_F(SimplifyTest, SubOfSum) {
  EXPECT_EQ(s((x + y) - x), "%y");
  EXPECT_EQ(s((x + y) - y), "%x");
  EXPECT_EQ(s(x - (x + y)), "0 - %y");
  EXPECT_EQ(s((x + c(5)) - (y + c(2))), "%x - %y + 3");
}
TEST_F(SimplifyTest, MulOneAndZero) {
  EXPECT_EQ(s(x * c(1)), "%x");
  EXPECT_EQ(s(x * c(0)), "0");
  EXPECT_EQ(s(c(2) * x * c(3)), "%x * 6");
}
TEST_F(SimplifyTest, DivAndModByOne) {
  EXPECT_EQ(s(bin(ExprKind::FloorDiv, x, c(1))), "%x");
  EXPECT_EQ(s(bin(ExprKind::Div, x, c(1))), "%x");
  EXPECT_EQ(s(bin(ExprKind::FloorMod, x, c(1))), "0");
  EXPECT_EQ(s(bin(ExprKind::Mod, x, c(1))), "0");
}
TEST_F(SimplifyTest, MulThenDiv) {
  EXPECT_EQ(s(bin(ExprKind::FloorDiv, x * c(8), c(8))), "%x");
  EXPECT_EQ(s(bin(ExprKind::Div, x * c(8), c(8))), "%x");
  EXPECT_EQ(s(bin(ExprKind::FloorMod, x * c(8), c(8))), "0");
  EXPECT_EQ(s(bin(ExprKind::FloorDiv, x * c(8), c(4))), "%x * 2");
}
TEST_F(SimplifyTest, SplitIndexRecombines) {
  // (x * 4 + i) / 4 and % 4 with i in [0, 4): the index math of a split loop.
  EXPECT_EQ(sb(bin(ExprKind::FloorDiv, x * c(4) + i, c(4))), "%x");
  EXPECT_EQ(sb(bin(ExprKind::FloorMod, x * c(4) + i, c(4))), "%i");
  EXPECT_EQ(sb(bin(ExprKind::FloorDiv, i, c(4))), "0");
  EXPECT_EQ(sb(bin(ExprKind::FloorMod, i, c(4))), "%i");
  EXPECT_EQ(sb(bin(ExprKind::FloorMod, i, c(3))), "floormod(%i, 3)");
}
TEST_F(SimplifyTest, MinMax) {
  EXPECT_EQ(s(min(c(3), c(5))), "3");
  EXPECT_EQ(s(max(x, x)), "%x");
  EXPECT_EQ(s(min(min(x, c(7)), c(5))), "min(%x, 5)");
  EXPECT_EQ(s(max(max(x, c(7)), c(5))), "max(%x, 7)");
  EXPECT_EQ(s(min(c(4), x)), "min(%x, 4)");
}
TEST_F(SimplifyTest, MinMaxFromBounds) {
  EXPECT_EQ(sb(min(i, c(10))), "%i");
  EXPECT_EQ(sb(max(i, c(10))), "10");
  EXPECT_EQ(sb(min(i + c(1), n + c(3))), "%i + 1"); // n >= 1
  EXPECT_EQ(sb(min(i, c(2))), "min(%i, 2)");       // not decidable
  EXPECT_EQ(s(min(i, c(10))), "min(%i, 10)");      // no bounds without a scope
}
TEST_F(SimplifyTest, Comparisons) {
  EXPECT_EQ(s(bin(ExprKind::LT, c(2), c(3))), "true");
  EXPECT_EQ(s(bin(ExprKind::GE, c(2), c(3))), "false");
  EXPECT_EQ(s(bin(ExprKind::LE, x, x)), "true");
  EXPECT_EQ(s(bin(ExprKind::LT, x, x)), "false");
  EXPECT_EQ(sb(bin(ExprKind::LT, i, c(4))), "true");
  EXPECT_EQ(sb(bin(ExprKind::GT, i, c(3))), "false");
  EXPECT_EQ(sb(bin(ExprKind::LT, i, c(3))), "%i < 3");
  EXPECT_EQ(sb(bin(ExprKind::LT, i, n + c(3))), "true");
}
TEST_F(SimplifyTest, Logic) {
  Expr p = bin(ExprKind::LT, x, y);
  EXPECT_EQ(s(bin(ExprKind::And, boolImm(true), p)), "%x < %y");
  EXPECT_EQ(s(bin(ExprKind::And, p, boolImm(false))), "false");
  EXPECT_EQ(s(bin(ExprKind::Or, p, boolImm(true))), "true");
  EXPECT_EQ(s(bin(ExprKind::Or, boolImm(false), p)), "%x < %y");
  EXPECT_EQ(s(logicalNot(logicalNot(p))), "%x < %y");
  EXPECT_EQ(s(logicalNot(boolImm(true))), "false");
}
TEST_F(SimplifyTest, Select) {
  EXPECT_EQ(s(select(boolImm(true), x, y)), "%x");
  EXPECT_EQ(s(select(bin(ExprKind::LT, c(3), c(2)), x, y)), "%y");
  EXPECT_EQ(s(select(bin(ExprKind::LT, x, y), x + c(0), x)), "%x");
}
TEST_F(SimplifyTest, CastToSameType) { EXPECT_EQ(s(cast(DType::I64, x)), "%x"); }
TEST_F(SimplifyTest, FloatRulesAreExactOnly) {
  EXPECT_EQ(s(f * floatImm(1.0)), "%f");
  EXPECT_EQ(s(f - floatImm(0.0)), "%f");
  EXPECT_EQ(s(f + floatImm(-0.0)), "%f");
  EXPECT_EQ(s(f + floatImm(0.0)), "%f + 0.0"); // -0.0 + 0.0 is +0.0
  EXPECT_EQ(s(f * floatImm(0.0)), "%f * 0.0"); // NaN * 0 is NaN
  EXPECT_EQ(s(f - f), "%f - %f");
}
TEST_F(SimplifyTest, StatementsDropDeadCode) {
  Var j = makeVar("j");
  loop::Buffer b = makeBuffer("b", DType::F32, {intImm(4)});
  Stmt st = store(b, {var(j)}, floatImm(1));
  Stmt body = seq({forLoop(j, c(0), c(4), ForKind::Serial,
                           ifThenElse(bin(ExprKind::LT, var(j), c(4)), st, st)),
                   forLoop(makeVar("k"), c(0), c(2) - c(2), ForKind::Serial, st)});
  EXPECT_EQ(printStmt(simplify(body)), "for %j in [0, 4) serial {\n  %b[%j] = 1.0\n}\n");
}

} // namespace
