// Construction, the text round trip, parse errors and every verifier diagnostic.
#include "strata/loop/Parser.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Schedule.h"
#include "strata/loop/Verifier.h"

#include <gtest/gtest.h>

using namespace strata;
using namespace strata::loop;

namespace {

LoopFunction parseOk(const std::string &text) {
  auto f = parseFunction(text);
  if (!f) {
    ADD_FAILURE() << llvm::toString(f.takeError());
    return {};
  }
  return std::move(*f);
}

std::string parseError(const std::string &text) {
  auto f = parseFunction(text, "t.sl");
  if (f) {
    ADD_FAILURE() << "parsed: " << text;
    return "";
  }
  return llvm::toString(f.takeError());
}

std::string verifyErrors(const std::string &text) {
  LoopFunction f = parseOk(text);
  std::string all;
  for (const std::string &e : verifyFunctionDiagnostics(f))
    all += e + "\n";
  return all;
}

TEST(LoopIRTest, BuildAndPrint) {
  Var n = makeVar("n");
  Buffer a = makeBuffer("a", DType::F32, {intImm(4), var(n)});
  Buffer out = makeBuffer("out", DType::F32, {intImm(4), var(n)});
  EXPECT_EQ(printExpr(a->strides[0]), "%n");
  EXPECT_TRUE(hasContiguousStrides(*a));
  Var i = makeVar("i"), j = makeVar("j");
  LoopFunction f{"relu", {}, nullptr, {}};
  f.addBuffer(a, ParamRole::In);
  f.addBuffer(out, ParamRole::Out);
  f.addScalar(n);
  f.body = forLoop(i, intImm(0), intImm(4), ForKind::Parallel,
                   forLoop(j, intImm(0), var(n), ForKind::Serial,
                           store(out, {var(i), var(j)},
                                 max(load(a, {var(i), var(j)}), floatImm(0)))));
  const char *expected = "func @relu(%a: f32[4, %n] in, %out: f32[4, %n] out, %n: i64) {\n"
                         "  for %i in [0, 4) parallel {\n"
                         "    for %j in [0, %n) serial {\n"
                         "      %out[%i, %j] = max(%a[%i, %j], 0.0)\n"
                         "    }\n"
                         "  }\n"
                         "}\n";
  EXPECT_EQ(printFunction(f), expected);
  EXPECT_FALSE(static_cast<bool>(verifyFunction(f)));
  EXPECT_EQ(printFunction(parseOk(expected)), expected);
}

TEST(LoopIRTest, ExprTypesAndEquality) {
  Var i = makeVar("i", DType::I32);
  Expr r = ramp(var(i), intImm(1, DType::I32), 8);
  EXPECT_EQ(typeName(r.type()), "i32x8");
  Buffer b = makeBuffer("b", DType::F16, {intImm(64)});
  EXPECT_EQ(typeName(load(b, {cast(DType::I64, r)}).type()), "f16x8");
  EXPECT_EQ(typeName(binary(ExprKind::LT, r, r).type()), "boolx8");
  EXPECT_TRUE(equal(var(i) + intImm(1, DType::I32), var(i) + intImm(1, DType::I32)));
  EXPECT_FALSE(equal(var(i), var(makeVar("i", DType::I32)))); // identity, not name
  EXPECT_FALSE(equal(floatImm(0.0), floatImm(-0.0)));
  EXPECT_EQ(printExpr(floatImm(0.1, DType::F64)), "0.1f64");
  EXPECT_EQ(printExpr(floatImm(0.1)), "0.1");
}

TEST(LoopIRTest, PrecedenceRoundTrips) {
  const char *text =
      "func @p(%o: i64[1] out, %x: i64, %y: i64, %z: i64) {\n"
      "  %o[0] = %x - (%y - %z) + %x * (%y + %z) - -3 + (%x - %y) * %z / 2 % 5\n"
      "  if (%x < %y) == (%y < %z) || !(%x == 1) && %z >= -9223372036854775808 {\n"
      "    %o[0] = select(%x != %y, floordiv(%x, 2), floormod(min(%x, 1), max(%y, 2)))\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(printFunction(parseOk(text)), text);
}

TEST(LoopIRTest, ParseErrors) {
  EXPECT_EQ(parseError("func @f() { for %i in [1, 4) serial {} }"),
            "t.sl:1:24: error: a range [a, b) must start at 0; write 'from MIN extent EXTENT'");
  EXPECT_EQ(parseError("func @f(%a: f32[%m] in) {}"),
            "t.sl:1:17: error: use of undeclared scalar parameter %m");
  EXPECT_EQ(parseError("func @f(%a: f32[4] in) {\n  %a[0] = %b[0]\n}"),
            "t.sl:2:11: error: use of undeclared %b");
  EXPECT_EQ(parseError("func @f(%a: f32[4] in, %a: i64) {}"),
            "t.sl:1:24: error: redefinition of %a");
  EXPECT_EQ(parseError("func @f(%a: i64) {\n  for %a in [0, 4) serial {}\n}"),
            "t.sl:2:7: error: redefinition of %a");
  EXPECT_EQ(parseError("func @f(%a: i8[4] out) { %a[0] = 300i8 }"),
            "t.sl:1:34: error: integer 300 does not fit in i8");
  EXPECT_EQ(parseError("func @f(%a: i64) { for %i in [0, 4) sideways {} }"),
            "t.sl:1:37: error: expected a loop kind (serial, parallel, vectorized, unrolled, "
            "gpu_block, gpu_thread), found identifier 'sideways'");
  EXPECT_EQ(parseError("func @f(%a: i64[1] out) { %a[0] = 1 < 2 < 3 }"),
            "t.sl:1:41: error: comparisons do not chain; add parentheses");
  EXPECT_EQ(parseError("func @f(%a: i64[1] out) { %a[0] = -%a[0] }"),
            "t.sl:1:36: error: unary '-' applies only to number literals (write 0 - x), found %a");
  EXPECT_EQ(parseError("func @f() { } junk"),
            "t.sl:1:15: error: expected end of input after the function, found identifier 'junk'");
  // Garbage never crashes: deep nesting is bounded, odd bytes are errors.
  std::string deep = "func @f(%a: i64[1] out) { %a[0] = " + std::string(5000, '(') + "1 }";
  EXPECT_NE(parseError(deep).find("nesting deeper than"), std::string::npos);
  EXPECT_NE(parseError("func @f() { \x01 }").find("unexpected character"), std::string::npos);
  for (size_t cut = 0; cut < 60; ++cut)
    (void)parseFunction(std::string("func @f(%a: f32[4, %n] in, %n: i64) { for %i in [0, 4) "
                                    "serial { %a[%i, 0] = 1.0 } }")
                            .substr(0, cut));
}

TEST(LoopIRTest, NestAnnotationsRoundTripAndFollowTheLoops) {
  const std::string text = R"(func @f(%a: f32[8, 4] in, %b: f32[8] out) {
  for %i in [0, 8) serial [parallel, nest reduce_sum, work 32, register_tiled] {
    %b[%i] = 0.0
    for %k in [0, 4) serial [reduction] {
      %b[%i] = %b[%i] + %a[%i, %k]
    }
  }
}
)";
  LoopFunction f = parseOk(text);
  ASSERT_TRUE(f.notes.roleOf("i") && f.notes.roleOf("k"));
  EXPECT_EQ(*f.notes.roleOf("i"), LoopRole::Parallel);
  EXPECT_EQ(*f.notes.roleOf("k"), LoopRole::Reduction);
  ASSERT_TRUE(f.notes.nestAt("i"));
  EXPECT_EQ(*f.notes.nestAt("i"), (NestInfo{"reduce_sum", 32, true}));
  EXPECT_EQ(printFunction(f), text);
  // A step that replaces a loop drops what was said about it; the rest stays.
  ASSERT_FALSE(static_cast<bool>(applySchedule(f, {{"split", {"k", "2"}}})));
  EXPECT_FALSE(f.notes.roleOf("k"));
  EXPECT_TRUE(f.notes.nestAt("i"));
  EXPECT_EQ(parseError("func @f() { for %i in [0, 4) serial [sideways] {} }"),
            "t.sl:1:38: error: unknown loop annotation 'sideways'");
  EXPECT_EQ(parseError("func @f() { for %i in [0, 4) serial [work 3] {} }"),
            "t.sl:1:38: error: 'work' and 'register_tiled' describe a nest: they need 'nest OP'");
  EXPECT_NE(parseError("func @f() { for %i in [0, 4) serial [nest conv, work -1] {} }")
                .find("expected a count after 'work'"),
            std::string::npos);
}

TEST(LoopIRTest, VerifierDiagnostics) {
  EXPECT_EQ(verifyErrors("func @f(%a: f32[4] out, %b: f64[4] in) {\n"
                         "  for %i in [0, 4) serial { %a[%i] = %b[%i] }\n}"),
            "store to %a: value %b[%i] has type f64 but the buffer holds f32\n");
  EXPECT_EQ(verifyErrors("func @f(%a: f32[4, 4] out) { %a[0] = 1.0 }"),
            "store to %a: 1 indices for buffer %a of rank 2\n");
  EXPECT_EQ(verifyErrors("func @f(%a: f32[4] in) { %a[0] = 1.0 }"),
            "store to %a: buffer is an input\n");
  EXPECT_EQ(verifyErrors("func @f(%a: f32[4] out, %x: i32) { %a[0] = cast<f32>(%x + 1) }"),
            "%x + 1: operand types differ: i32 vs i64\n");
  EXPECT_EQ(verifyErrors("func @f(%a: f32[8] out) { %a[ramp(0, 1, 4)] = 1.0 }"),
            "store to %a: index ramp(0, 1, 4) has 4 lanes, the access has 1\n");
  EXPECT_EQ(verifyErrors("func @f(%a: f32[8] out, %x: f32) {\n"
                         "  if %x { %a[0] = floordiv(%x, 2.0) }\n"
                         "  %a[1] = exp(cast<i32>(%x)) + select(%x < 1.0, broadcast(%x, 2), %x)\n}"),
            "if %x: condition must be a scalar bool, not f32\n"
            "floordiv(%x, 2.0): floordiv needs integer operands, not f32\n"
            "exp(cast<i32>(%x)): exp needs float arguments, not i32\n"
            "select(%x < 1.0, broadcast(%x, 2), %x): select arms differ in type: f32x2 vs f32\n"
            "exp(cast<i32>(%x)) + select(%x < 1.0, broadcast(%x, 2), %x): operand types differ: "
            "i32 vs f32x2\n"
            "store to %a: value exp(cast<i32>(%x)) + select(%x < 1.0, broadcast(%x, 2), %x) has "
            "type i32 but the buffer holds f32\n");
}

TEST(LoopIRTest, VerifierScopesAndNames) {
  // Built in C++: text cannot express these, the parser resolves names by scope.
  Buffer a = makeBuffer("a", DType::I64, {intImm(4)});
  Var i = makeVar("i"), j = makeVar("i");
  LoopFunction f{"f", {}, nullptr, {}};
  f.addBuffer(a, ParamRole::Out);
  // %i used after its loop; a second loop variable named like the first, nested.
  f.body = seq({forLoop(i, intImm(0), intImm(4), ForKind::Serial,
                        forLoop(j, intImm(0), intImm(4), ForKind::Serial,
                                store(a, {var(j)}, var(i)))),
                store(a, {intImm(0)}, var(i))});
  auto errs = verifyFunctionDiagnostics(f);
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_EQ(errs[0], "duplicate name %i");
  EXPECT_EQ(errs[1], "%i: variable is used outside its loop (or is not a parameter)");
  // A buffer not declared anywhere, and a bad name.
  Buffer ghost = makeBuffer("bad name", DType::I64, {intImm(4)});
  f.body = store(ghost, {intImm(0)}, intImm(1));
  errs = verifyFunctionDiagnostics(f);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0], "store to %bad name: buffer is not visible here");
  f.addBuffer(ghost, ParamRole::Out);
  EXPECT_EQ(verifyFunctionDiagnostics(f)[0], "name 'bad name' is not an identifier ([A-Za-z0-9_.]+)");
}

} // namespace
