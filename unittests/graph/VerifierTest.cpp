// One hand-built graph per verifier error kind, plus graphs that must pass.
#include "strata/graph/Verifier.h"
#include "strata/graph/Builder.h"
#include "strata/graph/TypeInference.h"
#include "strata/support/Limits.h"

#include <gtest/gtest.h>

using namespace strata;

namespace {

using Ints = std::vector<int64_t>;

std::string verify(const Graph &g) {
  llvm::Error err = verifyGraph(g);
  return err ? llvm::toString(std::move(err)) : "ok";
}

class VerifierTest : public ::testing::Test {
protected:
  Graph g;
  Builder b{g};
  TensorType f32x3 = TensorType(DType::F32, {3});
  Value *x = g.addInput(f32x3, "x");
};

TEST_F(VerifierTest, WellFormedGraphPasses) {
  Value *n = b.value(OpKind::Neg, {x});
  Value *s = b.value(OpKind::Add, {n, x});
  g.addOutput(s, "out");
  EXPECT_EQ(verify(g), "ok");
}

TEST_F(VerifierTest, OperandDTypeMismatchMessageFormat) {
  Value *i = g.addInput(TensorType(DType::I64, {3}), "i");
  Op *add = g.createOp(OpKind::Add, {x, i}, {f32x3});
  add->setLocation("Add_3");
  EXPECT_EQ(verify(g),
            "verifier: op 'add' (node \"Add_3\"): operand 1 has dtype i64 but operand 0 has f32");
}

TEST_F(VerifierTest, NamesResultWhenNoLocation) {
  Value *i = g.addInput(TensorType(DType::I64, {3}), "i");
  Op *add = g.createOp(OpKind::Add, {x, i}, {f32x3});
  add->result()->setName("sum");
  EXPECT_EQ(verify(g),
            "verifier: op 'add' (result %sum): operand 1 has dtype i64 but operand 0 has f32");
}

TEST_F(VerifierTest, NullOperand) {
  g.createOp(OpKind::Neg, {nullptr}, {f32x3});
  EXPECT_EQ(verify(g), "verifier: op 'neg': operand 0 is null");
}

TEST_F(VerifierTest, UseBeforeDefinition) {
  Op *a = b.create(OpKind::Neg, {x});
  a->result()->setName("a");
  Op *user = b.create(OpKind::Abs, {a->result()});
  g.moveBefore(user, a);
  EXPECT_EQ(verify(g), "verifier: op 'abs': operand 0 (%a) is used before its definition (or "
                       "forms a cycle)");
}

TEST_F(VerifierTest, Cycle) {
  Op *a = b.create(OpKind::Neg, {x});
  Op *c = b.create(OpKind::Neg, {a->result()});
  c->result()->setName("c");
  a->setOperand(0, c->result()); // a <- c <- a
  EXPECT_EQ(verify(g), "verifier: op 'neg': operand 0 (%c) is used before its definition (or "
                       "forms a cycle)");
}

TEST_F(VerifierTest, ValueFromAnotherGraph) {
  Graph other;
  Value *foreign = other.addInput(f32x3, "foreign");
  Op *op = g.createOp(OpKind::Neg, {foreign}, {f32x3});
  EXPECT_EQ(verify(g), "verifier: op 'neg': operand 0 (%foreign) is not defined in this graph or "
                       "an enclosing one");
  op->setOperand(0, x); // drop the cross-graph use before `other` dies
}

TEST_F(VerifierTest, RegionMayUseEarlierButNotLaterEnclosingValues) {
  Op *owner = b.create(OpKind::Neg, {x});
  Graph &region = owner->addRegion();
  Builder rb(region);
  Value *inner = rb.value(OpKind::Abs, {x}); // x is an enclosing input: fine
  region.addOutput(inner, "r");
  EXPECT_EQ(verify(g), "ok");

  Value *later = b.value(OpKind::Exp, {x});
  later->setName("later");
  Op *bad = rb.create(OpKind::Sqrt, {later});
  EXPECT_EQ(verify(g), "verifier: op 'sqrt': operand 0 (%later) is not defined in this graph or "
                       "an enclosing one");
  bad->setOperand(0, inner);
  EXPECT_EQ(verify(g), "ok");
  // The owner's own result is not visible inside its region.
  bad->setOperand(0, owner->result());
  EXPECT_EQ(verify(g), "verifier: op 'sqrt': operand 0 (result 0 of 'neg') is not defined in this "
                       "graph or an enclosing one");
  bad->setOperand(0, inner);
}

TEST_F(VerifierTest, ValuesOfARegionAreNotVisibleOutside) {
  Op *owner = b.create(OpKind::Neg, {x});
  Graph &region = owner->addRegion();
  Value *inner = Builder(region).value(OpKind::Abs, {x});
  inner->setName("inner");
  Op *user = b.create(OpKind::Exp, {inner});
  EXPECT_EQ(verify(g), "verifier: op 'exp': operand 0 (%inner) is not defined in this graph or an "
                       "enclosing one");
  user->setOperand(0, x);
}

TEST_F(VerifierTest, WrongArity) {
  g.createOp(OpKind::Add, {x}, {f32x3});
  EXPECT_EQ(verify(g), "verifier: op 'add': expected 2 operands, got 1");
}

TEST_F(VerifierTest, WrongResultCount) {
  g.createOp(OpKind::Neg, {x}, {f32x3, f32x3});
  EXPECT_EQ(verify(g), "verifier: op 'neg': has 2 results; expected 1");
}

TEST_F(VerifierTest, MissingAttribute) {
  g.createOp(OpKind::Softmax, {x}, {f32x3});
  EXPECT_EQ(verify(g), "verifier: op 'softmax': missing required attribute 'axis' (int)");
}

TEST_F(VerifierTest, UnknownAttribute) {
  g.createOp(OpKind::Neg, {x}, {f32x3}, {{"alpha", 0.5}});
  EXPECT_EQ(verify(g), "verifier: op 'neg': unknown attribute 'alpha'");
}

TEST_F(VerifierTest, AttributeOfWrongKind) {
  g.createOp(OpKind::Transpose, {x}, {f32x3}, {{"perm", 0}});
  EXPECT_EQ(verify(g), "verifier: op 'transpose': attribute 'perm' has kind int but ints is "
                       "expected");
}

TEST_F(VerifierTest, InvalidAttributeValue) {
  g.createOp(OpKind::Transpose, {x}, {f32x3}, {{"perm", Ints{1}}});
  EXPECT_EQ(verify(g), "verifier: op 'transpose': attribute 'perm' [1] is not a permutation of "
                       "[0, 1)");
}

TEST_F(VerifierTest, ResultTypeDiffersFromInference) {
  g.createOp(OpKind::IsNaN, {x}, {f32x3});
  EXPECT_EQ(verify(g), "verifier: op 'isnan': result 0 has type tensor<3xf32> but inference gives "
                       "tensor<3xbool>");
}

TEST_F(VerifierTest, SymbolicResultsCompareExactly) {
  Value *s = g.addInput(TensorType(DType::F32, {Dim::sym("b"), 4}), "s");
  g.createOp(OpKind::Neg, {s}, {TensorType(DType::F32, {Dim::sym("n"), 4})});
  EXPECT_EQ(verify(g), "verifier: op 'neg': result 0 has type tensor<?n x4xf32> but inference "
                       "gives tensor<?b x4xf32>");
}

TEST_F(VerifierTest, FreshSymbolsAcceptAnySymbolButNoSize) {
  Value *s = g.addInput(TensorType(DType::F32, {Dim::sym("b"), 2}), "s");
  Value *count = g.addInput(TensorType(DType::I64, {}), "count");
  // Inference invents nonzero's count (known only when it runs); a renamed symbol is accepted,
  // a static size is not.
  Op *renamed = g.createOp(OpKind::NonZero, {s, count},
                           {TensorType(DType::I64, {2, Dim::sym("n")})});
  EXPECT_EQ(verify(g), "ok");
  g.eraseOp(renamed);
  g.createOp(OpKind::NonZero, {s, count}, {TensorType(DType::I64, {2, 8})});
  const std::string got = verify(g);
  EXPECT_TRUE(llvm::StringRef(got).starts_with("verifier: op 'nonzero': result 0 has type "
                                               "tensor<2x8xi64> but inference gives tensor<2x?nonzero"))
      << got;
}

TEST_F(VerifierTest, ConstantTypeMustMatchItsTensor) {
  Tensor t = Tensor::fromVector<float>(DType::F32, {2}, {1, 2});
  g.createOp(OpKind::Constant, {}, {TensorType(DType::F32, {3})}, {{"value", t}});
  EXPECT_EQ(verify(g), "verifier: op 'constant': result 0 has type tensor<3xf32> but inference "
                       "gives tensor<2xf32>");
}

TEST_F(VerifierTest, ConstantMayLiveOnAnyDevice) {
  Tensor t = Tensor::fromVector<float>(DType::F32, {2}, {1, 2});
  g.createOp(OpKind::Constant, {}, {TensorType(DType::F32, {2}, Device::GPU)}, {{"value", t}});
  EXPECT_EQ(verify(g), "ok");
}

TEST_F(VerifierTest, ConstantWithoutData) {
  g.createOp(OpKind::Constant, {}, {f32x3}, {{"value", Tensor()}});
  EXPECT_EQ(verify(g), "verifier: op 'constant': attribute 'value' holds no tensor data");
}

TEST_F(VerifierTest, ElidedConstantIsWellTyped) {
  Tensor t = Tensor::elided(DType::F16, {4, 2}, "0123456789abcdef0123456789abcdef");
  g.createOp(OpKind::Constant, {}, {TensorType(DType::F16, {4, 2})}, {{"value", t}});
  EXPECT_EQ(verify(g), "ok");
}

TEST_F(VerifierTest, MixedDevices) {
  Value *gpu = g.addInput(TensorType(DType::F32, {3}, Device::GPU), "gpu");
  g.createOp(OpKind::Add, {x, gpu}, {f32x3});
  EXPECT_EQ(verify(g), "verifier: op 'add': operand 1 is on gpu but operand 0 is on cpu");
}

TEST_F(VerifierTest, DuplicateValueNames) {
  Value *n = b.value(OpKind::Neg, {x});
  n->setName("x");
  EXPECT_EQ(verify(g), "verifier: graph 'main': value name %x is used more than once");
  n->setName(""); // empty names never clash
  b.value(OpKind::Neg, {x});
  EXPECT_EQ(verify(g), "ok");
}

TEST_F(VerifierTest, SameNameInDifferentGraphsIsFine) {
  Op *owner = b.create(OpKind::Neg, {x});
  Graph &region = owner->addRegion();
  region.addInput(f32x3, "x");
  EXPECT_EQ(verify(g), "ok");
}

TEST_F(VerifierTest, OutputFromAnotherGraph) {
  Op *owner = b.create(OpKind::Neg, {x});
  Graph &region = owner->addRegion();
  Value *inner = Builder(region).value(OpKind::Abs, {x});
  inner->setName("inner");
  g.addOutput(inner, "leak");
  EXPECT_EQ(verify(g), "verifier: graph 'main': output 0 (\"leak\") %inner is not defined in this "
                       "graph or an enclosing one");
  g.setOutput(0, x);
}

TEST_F(VerifierTest, ErrorsInsideRegionsAreFound) {
  Op *owner = b.create(OpKind::Neg, {x});
  Graph &region = owner->addRegion();
  Value *i = region.addInput(TensorType(DType::I32, {3}), "i");
  Op *bad = region.createOp(OpKind::Mul, {x, i}, {f32x3});
  bad->setLocation("fused/Mul_1");
  EXPECT_EQ(verify(g), "verifier: op 'mul' (node \"fused/Mul_1\"): operand 1 has dtype i32 but "
                       "operand 0 has f32");
}

// --- limits (support/Limits.h) -------------------------------------------------------------------

// Sets the process limits for one test and restores the previous ones.
class ScopedLimits {
public:
  explicit ScopedLimits(const Limits &l) : saved_(processLimits()) { setProcessLimits(l); }
  ~ScopedLimits() { setProcessLimits(saved_); }

private:
  Limits saved_;
};

TEST(Limits, ParseAssignments) {
  Limits l;
  EXPECT_FALSE(parseLimitAssignment("max-ops=12", l));
  EXPECT_EQ(l.maxOps, 12);
  EXPECT_FALSE(parseLimitAssignment("max-arena-bytes=3G", l));
  EXPECT_EQ(l.maxArenaBytes, int64_t(3) << 30);
  EXPECT_FALSE(parseLimitAssignment("max-tensor-elements=9223372036854775807", l));
  EXPECT_EQ(l.maxTensorElements, INT64_MAX);
  EXPECT_EQ(*parseLimitAssignment("max-tensor-elements=9223372036854775808", l),
            "limit max-tensor-elements value '9223372036854775808' is too large");
  EXPECT_EQ(*parseLimitAssignment("max-rank=9000000000000T", l),
            "limit max-rank value '9000000000000T' is too large");
  EXPECT_EQ(*parseLimitAssignment("max-rank=-1", l),
            "limit max-rank needs a non-negative integer, got '-1'");
  EXPECT_EQ(*parseLimitAssignment("max-rank", l), "expected NAME=VALUE, got 'max-rank'");
  EXPECT_NE(parseLimitAssignment("max-bananas=1", l)
                ->find("unknown limit 'max-bananas' (known: "
                       "max-rank, max-tensor-elements"),
            std::string::npos);
  EXPECT_EQ(l.maxRank, Limits{}.maxRank); // failed assignments change nothing
}

TEST_F(VerifierTest, OpCountLimit) {
  Value *v = x;
  for (int i = 0; i < 5; ++i)
    v = b.value(OpKind::Neg, {v});
  g.addOutput(v, "out");
  Limits l;
  l.maxOps = 4;
  ScopedLimits scope(l);
  EXPECT_EQ(verify(g), "verifier: graph 'main': has more than 4 ops, over the max-ops limit of 4");
}

TEST_F(VerifierTest, ConstantBytesLimitCountsSharedDataOnce) {
  Tensor t(DType::F32, {16}); // 64 bytes, used by two constant ops
  g.addOutput(b.value(OpKind::Add, {b.constant(t), b.constant(t)}), "out");
  Limits l;
  l.maxConstantBytes = 64;
  {
    ScopedLimits scope(l);
    EXPECT_EQ(verify(g), "ok");
  }
  g.addOutput(b.constant(Tensor(DType::F32, {1})), "more");
  ScopedLimits scope(l);
  EXPECT_NE(verify(g).find("constants total 68 bytes, over the max-constant-bytes limit of 64"),
            std::string::npos);
}

TEST_F(VerifierTest, InputRankAndSizeLimits) {
  g.addInput(TensorType(DType::F32, {2, 2, 2}), "cube");
  Limits l;
  l.maxRank = 2;
  {
    ScopedLimits scope(l);
    EXPECT_EQ(verify(g), "verifier: graph 'main': input 'cube' has rank 3, over the max-rank "
                         "limit of 2");
  }
  l = Limits{};
  l.maxTensorElements = 7;
  ScopedLimits scope(l);
  EXPECT_EQ(verify(g), "verifier: graph 'main': input 'cube' tensor<2x2x2xf32> has 8 elements, "
                       "over the max-tensor-elements limit of 7");
}

TEST(Limits, TypeInferenceRefusesResultsBeyondThem) {
  Limits l;
  l.maxTensorElements = 1000;
  ScopedLimits scope(l);
  TensorType big(DType::F32, {100, 100});
  auto t = inferResultTypes(OpKind::Neg, {big}, {});
  ASSERT_FALSE(static_cast<bool>(t));
  EXPECT_EQ(llvm::toString(t.takeError()), "the result [100, 100] has 10000 elements, over the "
                                           "max-tensor-elements limit of 1000");
  l.maxRank = 1;
  l.maxTensorElements = Limits{}.maxTensorElements;
  ScopedLimits rank(l);
  auto u = inferResultTypes(OpKind::Neg, {big}, {});
  ASSERT_FALSE(static_cast<bool>(u));
  EXPECT_EQ(llvm::toString(u.takeError()), "the result has rank 2, over the max-rank limit of 1");
}

TEST(Limits, TensorAllocationRefusedBeyondThem) {
  Limits l;
  l.maxTensorElements = 10;
  ScopedLimits scope(l);
  EXPECT_NO_THROW(Tensor(DType::F32, {10}));
  try {
    Tensor t(DType::F32, {11});
    FAIL() << "allocated beyond the limit";
  } catch (const std::length_error &e) {
    EXPECT_STREQ(e.what(),
                 "tensor<11xf32> has 11 elements, over the max-tensor-elements limit of 10");
  }
}

} // namespace
