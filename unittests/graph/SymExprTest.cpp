// Symbolic dims (support/SymExpr.h): canonical forms, the window-size formulas type inference
// builds, evaluation against concrete sizes, and the text form.
#include "strata/support/SymExpr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace strata;

namespace {

SymExpr S(const char *n) { return SymExpr::symbol(n); }

std::optional<int64_t> eval(const SymExpr &e, std::map<std::string, int64_t> env) {
  return e.evaluate([&](const std::string &n) -> std::optional<int64_t> {
    auto it = env.find(n);
    return it == env.end() ? std::nullopt : std::optional<int64_t>(it->second);
  });
}

TEST(SymExpr, PolynomialsAreCanonical) {
  SymExpr h = S("h"), w = S("w");
  EXPECT_EQ((h + 1 + w).str(), "h+w+1");
  EXPECT_EQ(h + w, w + h);
  EXPECT_EQ((h * w).str(), (w * h).str());
  EXPECT_EQ((h * 3 - h - h - h), SymExpr(0));
  EXPECT_TRUE((h - h).isConstant());
  EXPECT_EQ(((h + 1) * (h - 1)).str(), "h*h-1");
  EXPECT_EQ((SymExpr(2) * h - 5).str(), "2*h-5");
  EXPECT_EQ((-h).str(), "-h");
  ASSERT_NE(h.symbolName(), nullptr);
  EXPECT_EQ(*h.symbolName(), "h");
  EXPECT_EQ((h + 0).symbolName() != nullptr, true);
  EXPECT_EQ((h * 2).symbolName(), nullptr);
  EXPECT_EQ(SymExpr(7).constant(), 7);
}

TEST(SymExpr, WindowSizesSimplify) {
  SymExpr h = S("h"), w = S("w");
  // A 3x3 stride-2 conv with padding 1: ⌊(h + 2 - 2 - 1)/2⌋ + 1.
  SymExpr conv = SymExpr::floorDiv(h + 2 - 2 - 1, 2) + 1;
  EXPECT_EQ(conv.str(), "fdiv(h+1,2)");
  // Then a 3x3 stride-2 pool with padding 1: one division of h.
  SymExpr pool = SymExpr::floorDiv(conv + 2 - 2 - 1, 2) + 1;
  EXPECT_EQ(pool.str(), "fdiv(h+3,4)");
  for (int64_t v : {0, 1, 2, 3, 7, 224, 225, 1000}) {
    int64_t c = (v - 1) >= 0 ? (v - 1) / 2 + 1 : 0 + ((v - 1) % 2 ? 0 : 1); // v >= 1 below
    if (v < 1)
      continue;
    EXPECT_EQ(eval(conv, {{"h", v}}), c) << v;
    EXPECT_EQ(eval(pool, {{"h", v}}), (c - 1) / 2 + 1) << v;
  }
  // Exact parts come out of the division: ⌊(4h + 6)/2⌋ = 2h + 3; ⌊(2h+1)/2⌋ = h.
  EXPECT_EQ(SymExpr::floorDiv(h * 4 + 6, 2).str(), "2*h+3");
  EXPECT_EQ(SymExpr::floorDiv(h * 2 + 1, 2), h);
  // A common factor cancels: ⌊(2h + 2)/4⌋ = ⌊(h + 1)/2⌋.
  EXPECT_EQ(SymExpr::floorDiv(h * 2 + 2, 4), SymExpr::floorDiv(h + 1, 2));
  EXPECT_EQ(SymExpr::ceilDiv(h, 2).str(), "fdiv(h+1,2)");
  EXPECT_EQ(eval(SymExpr::ceilDiv(h, w), {{"h", 5}, {"w", 2}}), 3);
  EXPECT_EQ(eval(SymExpr::ceilDiv(h, 2), {{"h", 5}}), 3);
  EXPECT_EQ(eval(SymExpr::mod(h, 3), {{"h", 11}}), 2);
}

TEST(SymExpr, DivisionBySymbols) {
  SymExpr n = S("n"), s = S("s");
  EXPECT_EQ(SymExpr::floorDiv(n * s * 768, s * 12), n * 64);
  EXPECT_EQ(SymExpr::floorDiv(n * s, n * s), SymExpr(1));
  SymExpr opaque = SymExpr::floorDiv(n, s);
  EXPECT_EQ(opaque.str(), "fdiv(n,s)");
  EXPECT_EQ(eval(opaque, {{"n", 7}, {"s", 2}}), 3);
  EXPECT_EQ(eval(opaque, {{"n", 7}, {"s", 0}}), std::nullopt);
  EXPECT_THROW(SymExpr::floorDiv(n, 0), SymExprError);
  // By a sum, when some monomial times it is the dividend (windows of a batch over the window
  // count: n * k / k with k = hp * wp - 2 * hp); otherwise an opaque division.
  SymExpr h = S("h"), w = S("w"), k = SymExpr::floorDiv(h, 7) * SymExpr::floorDiv(w, 7) - h * 2;
  EXPECT_EQ(SymExpr::floorDiv(n * k * 3, k), n * 3);
  EXPECT_EQ(SymExpr::floorDiv(k * n + 1, k).str().rfind("fdiv(", 0), 0u);
}

TEST(SymExpr, MinMaxUseNonNegativeSymbols) {
  SymExpr h = S("h"), w = S("w");
  EXPECT_EQ(SymExpr::max(h, 0), h);
  EXPECT_EQ(SymExpr::min(h, 0), SymExpr(0));
  EXPECT_EQ(SymExpr::min(h + 3, h + 1), h + 1);
  EXPECT_EQ(SymExpr::min(h, w), SymExpr::min(w, h));
  EXPECT_EQ(SymExpr::min(h, w).str(), "min(h,w)");
  EXPECT_EQ(eval(SymExpr::max(h - 4, SymExpr(0)), {{"h", 2}}), 0);
  EXPECT_TRUE(SymExpr::min(h, w).provablyNonNegative());
  EXPECT_FALSE((h - 1).provablyNonNegative());
}

TEST(SymExpr, EvaluationChecksOverflowAndBindings) {
  SymExpr h = S("h");
  EXPECT_EQ(eval(h * h, {{"h", int64_t(1) << 40}}), std::nullopt);
  EXPECT_EQ(eval(h + 1, {}), std::nullopt);
  EXPECT_THROW(SymExpr(INT64_MAX) + 1, SymExprError);
  EXPECT_THROW(SymExpr(INT64_MIN) * -1, SymExprError);
  SymExpr big = h + 1;
  for (int i = 0; i < 7; ++i) // 256 terms
    big = big * (S(("x" + std::to_string(i)).c_str()) + 1);
  EXPECT_THROW(big * (S("y") + 1), SymExprError); // more than 256 terms
  SymExpr sum(0); // a sum of 256 atoms is fine, 257 are not
  for (int i = 0; i < 256; ++i)
    sum = sum + S(("s" + std::to_string(i)).c_str());
  EXPECT_THROW(sum + S("one_more"), SymExprError);
}

TEST(SymExpr, SubstituteAndSymbols) {
  SymExpr h = S("h"), w = S("w");
  SymExpr e = SymExpr::floorDiv(h + 1, 2) * w;
  std::set<std::string> syms;
  e.collectSymbols(syms);
  EXPECT_EQ(syms, (std::set<std::string>{"h", "w"}));
  SymExpr bound = e.substitute([](const std::string &n) -> std::optional<SymExpr> {
    return n == "h" ? std::optional<SymExpr>(SymExpr(223)) : std::nullopt;
  });
  EXPECT_EQ(bound, w * 112);
}

TEST(SymExpr, TextRoundTrips) {
  SymExpr h = S("h"), w = S("w");
  for (const SymExpr &e :
       {h, h * w + 3, SymExpr::floorDiv(h + 3, 4), SymExpr::min(h, w * 2) - 1,
        SymExpr::floorDiv(h, w), -h + 7, SymExpr::max(h - 2, w), SymExpr(-4)}) {
    std::string err;
    std::optional<SymExpr> back = SymExpr::parse(e.str(), err);
    ASSERT_TRUE(back) << e.str() << ": " << err;
    EXPECT_EQ(*back, e) << e.str();
  }
  std::string err;
  std::optional<SymExpr> p = SymExpr::parse("cdiv(h, 2) + 2*(w - 1)", err);
  ASSERT_TRUE(p) << err;
  EXPECT_EQ(*p, SymExpr::ceilDiv(h, 2) + w * 2 - 2);
  for (const char *bad : {"", "h+", "fdiv(h)", "frob(h,2)", "fdiv(h,0)", "(h", "h)", "2**h",
                          "99999999999999999999"}) {
    EXPECT_FALSE(SymExpr::parse(bad, err)) << bad;
    EXPECT_FALSE(err.empty());
  }
}

// torchvision's resize to a minimum side of 800 and a maximum of 1333, as its ONNX export computes
// it in f32: floor(h * min(800 / min(h, w), 1333 / max(h, w))).
SymExpr resizedHeight(bool wide) {
  SymExpr h = S("h"), w = S("w");
  auto f = [&](const SymExpr &e) { return SymFloat::fromInt(e, wide); };
  auto k = [&](double v) { return SymFloat::constant(v, wide); };
  SymFloatRef one = k(1);
  SymFloatRef byMin = SymFloat::binary(
      SymFloat::Mul, SymFloat::binary(SymFloat::Div, one, f(SymExpr::min(h, w))), k(800));
  SymFloatRef byMax = SymFloat::binary(
      SymFloat::Mul, SymFloat::binary(SymFloat::Div, one, f(SymExpr::max(h, w))), k(1333));
  SymFloatRef scale = SymFloat::binary(SymFloat::Min, byMin, byMax);
  return SymExpr::fromFloat(
      SymFloat::unary(SymFloat::Floor, SymFloat::binary(SymFloat::Mul, f(h), scale), wide));
}

TEST(SymExpr, FloatSizesEvaluateInTheirWidth) {
  for (bool wide : {false, true}) {
    SymExpr e = resizedHeight(wide);
    EXPECT_TRUE(e.provablyNonNegative()) << e.str();
    for (auto [hv, wv] : {std::pair<int64_t, int64_t>{480, 640}, {427, 640}, {333, 500},
                          {1000, 3}, {17, 17}}) {
      auto ref = [&]<typename T>(T) {
        T one = 1, scale = std::min(one / T(std::min(hv, wv)) * T(800),
                                    one / T(std::max(hv, wv)) * T(1333));
        return static_cast<int64_t>(std::floor(T(hv) * scale));
      };
      EXPECT_EQ(eval(e, {{"h", hv}, {"w", wv}}), wide ? ref(double()) : ref(float()))
          << e.str() << " at " << hv << "x" << wv;
    }
    // Both sides 0: the scale is +inf and 0 * inf is NaN, which no size takes.
    EXPECT_EQ(eval(e, {{"h", 0}, {"w", 0}}), std::nullopt);
    EXPECT_EQ(eval(e, {{"h", 0}, {"w", 5}}), 0);
    std::string err;
    std::optional<SymExpr> back = SymExpr::parse(e.str(), err);
    ASSERT_TRUE(back) << e.str() << ": " << err;
    EXPECT_EQ(*back, e);
    std::set<std::string> syms;
    e.collectSymbols(syms);
    EXPECT_EQ(syms, (std::set<std::string>{"h", "w"}));
    SymExpr bound = e.substitute([](const std::string &n) -> std::optional<SymExpr> {
      return SymExpr(n == "h" ? 480 : 640);
    });
    EXPECT_EQ(bound, SymExpr(*eval(e, {{"h", 480}, {"w", 640}})));
  }
  std::string err;
  for (const char *bad : {"ftoi(f32c(1e999x))", "ftoi(fadd(i2f32(h),i2f64(w)))", "ftoi(i2f32(h)",
                          "ftoi(frob(i2f32(h)))", "ftoi(f32c(nan))", "ftoi(f64c(1e300))"})
    EXPECT_FALSE(SymExpr::parse(bad, err)) << bad;
  std::optional<SymExpr> half = SymExpr::parse("ftoi(fround(f64c(2.5)))+ftoi(fceil(i2f64(h)))", err);
  ASSERT_TRUE(half) << err;
  EXPECT_EQ(eval(*half, {{"h", 3}}), 5); // half to even: 2
  // An integer-valued float made a size and read back as a float is that float; a quotient is
  // not integer-valued and keeps its conversions.
  std::optional<SymExpr> twice = SymExpr::parse("ftoi(fmul(i2f32(ftoi(fceil(i2f32(h)))),f32c(2)))", err);
  std::optional<SymExpr> once = SymExpr::parse("ftoi(fmul(fceil(i2f32(h)),f32c(2)))", err);
  ASSERT_TRUE(twice && once) << err;
  EXPECT_EQ(*twice, *once);
  std::optional<SymExpr> quotient = SymExpr::parse("ftoi(i2f32(ftoi(fquo(i2f32(h),f32c(2)))))", err);
  ASSERT_TRUE(quotient) << err;
  EXPECT_EQ(quotient->str(), "ftoi(i2f32(ftoi(fquo(i2f32(h),f32c(2)))))");
  EXPECT_EQ(eval(*quotient, {{"h", 7}}), 3);
}

} // namespace
