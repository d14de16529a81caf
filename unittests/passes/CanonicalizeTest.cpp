// canonicalize: the exactness claims of docs/passes.md, checked bit for bit through the
// interpreter on the inputs random testing misses (-0, infinities, NaN, subnormals, extremes),
// and the cast-chain table checked exhaustively over every dtype triple.
#include "PassTestUtil.h"
#include "strata/graph/Builder.h"
#include "strata/graph/Parser.h"
#include "strata/graph/Verifier.h"
#include "strata/graph/passes/Passes.h"
#include "strata/interp/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace strata;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Values that break inexact rewrites, as f64; converted to each dtype with cast semantics.
const std::vector<double> kSpecials = {
    -kInf, -3.0e38, -70000.5, -129, -128, -1.5, -1, -0.0, 0.0, 1e-45, 1e-40, 0.5, 1, 2.5,
    127,   128,     255,      256,  2049, 65504, 70000, 3.0e9, 1.0e19, 3.0e38, kInf, kNaN};

Tensor specials(DType dt, size_t n = kSpecials.size()) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = kSpecials[i % kSpecials.size()];
  return castTensor(Tensor::fromVector(DType::F64, {static_cast<int64_t>(n)}, v), dt);
}

// Same bits, except that any NaN equals any NaN (payloads are not part of the contract).
bool sameBits(const Tensor &a, const Tensor &b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return false;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    double x = a.getDouble(i), y = b.getDouble(i);
    if (std::isnan(x) && std::isnan(y))
      continue;
    if (std::memcmp(static_cast<const char *>(a.rawData()) + i * dtypeSize(a.dtype()),
                    static_cast<const char *>(b.rawData()) + i * dtypeSize(b.dtype()),
                    dtypeSize(a.dtype())) != 0)
      return false;
  }
  return true;
}

struct Outcome {
  bool changed = false;
  std::vector<Tensor> before, after;
  std::map<std::string, int64_t> stats;
};

// Interprets g, canonicalizes it, verifies it and interprets it again.
Outcome canonicalizeAndRun(Graph &g, const std::vector<Tensor> &inputs, bool fastMath = false) {
  Outcome out;
  auto before = interpret(g, inputs);
  if (!before) {
    ADD_FAILURE() << llvm::toString(before.takeError());
    return out;
  }
  out.before = std::move(*before);
  PassContext ctx;
  ctx.options.fastMath = fastMath;
  auto changed = createCanonicalizePass()->run(g, ctx);
  if (!changed) {
    ADD_FAILURE() << llvm::toString(changed.takeError());
    return out;
  }
  out.changed = *changed;
  out.stats = ctx.stats.all();
  if (llvm::Error err = verifyGraph(g))
    ADD_FAILURE() << llvm::toString(std::move(err));
  auto after = interpret(g, inputs);
  if (!after) {
    ADD_FAILURE() << llvm::toString(after.takeError());
    return out;
  }
  out.after = std::move(*after);
  return out;
}

using strata::testing::parse;

// Every exact algebraic rule at once, on f32, f16 and f64: each output must keep its bits.
TEST(CanonicalizeTest, ExactAlgebraKeepsEveryBit) {
  for (const char *dt : {"f32", "f16", "f64"}) {
    std::string t = std::string("tensor<26x") + dt + ">";
    std::string s = std::string("tensor<") + dt + ">";
    std::string text = "graph @g(%x: " + t + ", %y: " + t + ", %c: tensor<26xbool>) -> (" +
                       "a: " + t + ", b: " + t + ", c: " + t + ", d: " + t + ", e: " + t +
                       ", f: " + t + ", g: " + t + ", h: " + t + ", i: " + t + ", j: " + t +
                       ", k: " + t + ", l: " + t + ", m: " + t + ") {\n" +
                       "  %nz = constant {value = dense<[-0.0]> : " + s + "} : " + s + "\n" +
                       "  %pz = constant {value = dense<[0.0]> : " + s + "} : " + s + "\n" +
                       "  %one = constant {value = dense<[1.0]> : " + s + "} : " + s + "\n" +
                       "  %q = constant {value = dense<[0.25]> : " + s + "} : " + s + "\n" +
                       "  %a = add(%x, %nz) : " + t + "\n" +
                       "  %b = sub(%x, %pz) : " + t + "\n" +
                       "  %c1 = mul(%one, %x) : " + t + "\n" +
                       "  %d = div(%x, %one) : " + t + "\n" +
                       "  %n1 = neg(%x) : " + t + "\n  %e = neg(%n1) : " + t + "\n" +
                       "  %ny = neg(%y) : " + t + "\n  %f = add(%ny, %x) : " + t + "\n" +
                       "  %g1 = sub(%x, %ny) : " + t + "\n" +
                       "  %h = pow(%x, %one) : " + t + "\n" +
                       "  %i = div(%x, %q) : " + t + "\n" +
                       "  %j = select(%c, %x, %x) : " + t + "\n" +
                       "  %k = max(%x, %x) : " + t + "\n  %l = min(%x, %x) : " + t + "\n" +
                       "  %m = add(%a, %nz) : " + t + "\n" +
                       "  return %a, %b, %c1, %d, %e, %f, %g1, %h, %i, %j, %k, %l, %m\n}\n";
    auto g = parse(text);
    ASSERT_TRUE(g);
    DType dtype = *parseDType(dt);
    Tensor y = specials(dtype);
    // Pair every special with a rotated copy so add/sub see mixed signs and infinities.
    Tensor yr(dtype, y.shape());
    for (int64_t i = 0; i < y.numElements(); ++i)
      yr.setDouble(i, y.getDouble((i + 7) % y.numElements()));
    Tensor cond(DType::Bool, {26});
    for (int64_t i = 0; i < 26; ++i)
      cond.setInt(i, i % 3 == 0);
    Outcome o = canonicalizeAndRun(*g, {specials(dtype), yr, cond});
    EXPECT_TRUE(o.changed);
    // Only the constant %q's replacement and the new sub/add remain besides constants.
    for (Op &op : g->ops())
      EXPECT_TRUE(op.kind() == OpKind::Constant || op.kind() == OpKind::Sub ||
                  op.kind() == OpKind::Add || op.kind() == OpKind::Mul)
          << dt << ": unexpected " << op.opName();
    ASSERT_EQ(o.before.size(), o.after.size());
    for (size_t i = 0; i < o.before.size(); ++i)
      EXPECT_TRUE(sameBits(o.before[i], o.after[i])) << dt << " output " << i;
  }
}

// The rules kept behind fastMath really are inexact: each one changes some special input.
TEST(CanonicalizeTest, FastMathRulesAreGatedForAReason) {
  auto g = parse(R"(graph @g(%x: tensor<26xf32>) -> (a: tensor<26xf32>, b: tensor<26xf32>, c: tensor<26xf32>, d: tensor<26xf32>) {
  %pz = constant {value = dense<[0.0]> : tensor<f32>} : tensor<f32>
  %nz = constant {value = dense<[-0.0]> : tensor<f32>} : tensor<f32>
  %half = constant {value = dense<[0.5]> : tensor<f32>} : tensor<f32>
  %ten = constant {value = dense<[10.0]> : tensor<f32>} : tensor<f32>
  %a = add(%x, %pz) : tensor<26xf32>
  %b = sub(%x, %nz) : tensor<26xf32>
  %c = pow(%x, %half) : tensor<26xf32>
  %d = div(%x, %ten) : tensor<26xf32>
  return %a, %b, %c, %d
})");
  ASSERT_TRUE(g);
  Outcome exact = canonicalizeAndRun(*g, {specials(DType::F32)});
  EXPECT_FALSE(exact.changed);
  Outcome fast = canonicalizeAndRun(*g, {specials(DType::F32)}, /*fastMath=*/true);
  EXPECT_TRUE(fast.changed);
  EXPECT_EQ(g->numOps(), 3u) << "add and sub vanish; sqrt, mul and the reciprocal remain";
  for (size_t i = 0; i < fast.before.size(); ++i)
    EXPECT_FALSE(sameBits(fast.before[i], fast.after[i])) << "output " << i << " is exact";
}

// cast(cast(x: A, B), C): whenever the pattern merges, every special value of A (bool and
// integer extremes, -0, infinities, NaN, values that saturate or wrap) converts the same.
TEST(CanonicalizeTest, CastChainsMergeOnlyWhenExact) {
  const std::vector<DType> all = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I8,
                                  DType::I16, DType::I32, DType::I64,  DType::U8,  DType::U16,
                                  DType::U32, DType::U64, DType::Bool};
  int merged = 0;
  for (DType a : all)
    for (DType b : all)
      for (DType c : all) {
        if (a == b || b == c)
          continue; // cast-noop territory
        Graph g;
        Builder bld(g);
        Value *x = g.addInput(TensorType(a, {Dim(26)}), "x");
        Value *mid = bld.value(OpKind::Cast, {x}, {{"to", b}});
        g.addOutput(bld.value(OpKind::Cast, {mid}, {{"to", c}}), "y");
        Outcome o = canonicalizeAndRun(g, {specials(a)});
        if (!o.changed)
          continue;
        ++merged;
        EXPECT_LE(g.numOps(), 1u);
        EXPECT_TRUE(sameBits(o.before[0], o.after[0]))
            << dtypeName(a) << " -> " << dtypeName(b) << " -> " << dtypeName(c);
      }
  // The table is not vacuous: e.g. every widening integer chain merges.
  EXPECT_GT(merged, 200);
}

// pow(x, 2) -> x * x on integers wraps exactly like pow does.
TEST(CanonicalizeTest, IntegerPowTwoWraps) {
  auto g = parse(R"(graph @g(%x: tensor<26xi8>) -> (y: tensor<26xi8>) {
  %two = constant {value = dense<[2]> : tensor<i8>} : tensor<i8>
  %y = pow(%x, %two) : tensor<26xi8>
  return %y
})");
  ASSERT_TRUE(g);
  Outcome o = canonicalizeAndRun(*g, {specials(DType::I8)});
  EXPECT_TRUE(o.changed);
  EXPECT_EQ(o.stats["canonicalize.pow-two-to-mul"], 1);
  EXPECT_TRUE(sameBits(o.before[0], o.after[0]));
}

// Data movement that composes: the composed transpose and merged reshape compute the same.
TEST(CanonicalizeTest, ComposedDataMovementMatches) {
  auto g = parse(
      R"(graph @g(%x: tensor<2x3x4xf32>) -> (a: tensor<4x3x2xf32>, b: tensor<3x8xf32>, c: tensor<2x3x4xf32>, d: tensor<1x2x12xf32>) {
  %t = transpose(%x) {perm = [1, 2, 0]} : tensor<3x4x2xf32>
  %a = transpose(%t) {perm = [1, 0, 2]} : tensor<4x3x2xf32>
  %r = reshape(%x) {shape = [6, 4]} : tensor<6x4xf32>
  %b = reshape(%r) {shape = [3, -1]} : tensor<3x8xf32>
  %s = slice(%x) {ends = [9223372036854775807, 3, 9223372036854775807], starts = [0, -5, 0], steps = [1, 1, 1]} : tensor<2x3x4xf32>
  %c = expand(%s) {shape = [2, 1, 4]} : tensor<2x3x4xf32>
  %u = reshape(%x) {shape = [2, 1, 12]} : tensor<2x1x12xf32>
  %d = transpose(%u) {perm = [1, 0, 2]} : tensor<1x2x12xf32>
  return %a, %b, %c, %d
})");
  ASSERT_TRUE(g);
  Tensor x(DType::F32, {2, 3, 4});
  for (int64_t i = 0; i < 24; ++i)
    x.setDouble(i, static_cast<double>(i));
  Outcome o = canonicalizeAndRun(*g, {x});
  EXPECT_TRUE(o.changed);
  EXPECT_EQ(g->numOps(), 3u); // one transpose, two reshapes
  EXPECT_EQ(o.stats["canonicalize.transpose-transpose"], 1);
  EXPECT_EQ(o.stats["canonicalize.reshape-reshape"], 2);
  EXPECT_EQ(o.stats["canonicalize.transpose-to-reshape"], 1);
  EXPECT_EQ(o.stats["canonicalize.slice-full"], 1);
  EXPECT_EQ(o.stats["canonicalize.expand-noop"], 1);
  for (size_t i = 0; i < o.before.size(); ++i)
    EXPECT_TRUE(sameBits(o.before[i], o.after[i])) << "output " << i;
}

} // namespace
