// The op definitions (OpTable.def) as every rung sees them: groups, typed accessors with enums and
// defaults, the attributes' normal form (verifier and Builder), and the slice normal form built
// from ONNX's lists.
#include "strata/graph/Builder.h"
#include "strata/graph/NormalForm.h"
#include "strata/graph/Ops.h"
#include "strata/graph/Parser.h"
#include "strata/graph/Verifier.h"

#include <gtest/gtest.h>

#include <limits>

using namespace strata;

namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(OpDefinitions, GroupsComeFromTheTable) {
  EXPECT_TRUE(hasTrait(OpKind::Add, T_ELEMENTWISE));
  EXPECT_TRUE(hasTrait(OpKind::Add, T_COMMUTATIVE));
  EXPECT_FALSE(hasTrait(OpKind::Sub, T_COMMUTATIVE));
  for (OpKind k :
       {OpKind::Reshape, OpKind::Transpose, OpKind::Expand, OpKind::Slice, OpKind::Relayout})
    EXPECT_TRUE(hasTrait(k, T_INDEX_MAP)) << opInfo(k).name;
  EXPECT_FALSE(hasTrait(OpKind::Concat, T_INDEX_MAP));
  for (OpKind k : {OpKind::MatMul, OpKind::Conv, OpKind::ConvTranspose})
    EXPECT_TRUE(hasTrait(k, T_ANCHOR)) << opInfo(k).name;
  for (OpKind k :
       {OpKind::Reduce, OpKind::ArgReduce, OpKind::Softmax, OpKind::LogSoftmax, OpKind::LayerNorm})
    EXPECT_TRUE(hasTrait(k, T_REDUCTION)) << opInfo(k).name;
  EXPECT_TRUE(hasTrait(OpKind::Relayout, T_LAYOUT));
  // Every elementwise op has a dtype rule; no other op has one.
  for (size_t i = 0; i < numOpKinds(); ++i) {
    const OpInfo &info = opInfo(static_cast<OpKind>(i));
    EXPECT_EQ(info.has(T_ELEMENTWISE), info.dtypeRule != DTypeRule::Custom) << info.name;
  }
  EXPECT_EQ(opInfo(OpKind::And).onnxOps, (std::vector<std::string>{"And", "BitwiseAnd"}));
}

TEST(OpDefinitions, EnumsRoundTripTheirTexts) {
  EXPECT_EQ(enumName(PadMode::Reflect), "reflect");
  EXPECT_EQ(parseEnum<PadMode>("wrap"), PadMode::Wrap);
  EXPECT_FALSE(parseEnum<PadMode>("mirror").has_value());
  EXPECT_EQ(enumTexts<ScatterReduction>(), "none, add, mul, max, min");
  EXPECT_EQ(parseEnum<CoordinateMode>("tf_crop_and_resize"), CoordinateMode::TfCropAndResize);
  const AttrSpec *mode = opInfo(OpKind::Pad).findAttr("mode");
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ(mode->form, AttrForm::Enum);
  EXPECT_EQ(mode->enumTexts.size(), 4u);
}

TEST(OpDefinitions, TypedAccessorsApplyDefaultsOnce) {
  Graph g;
  Builder b(g);
  Value *x = g.addInput(TensorType::fromShape(DType::F32, {2, 3}), "x");
  Op *r = b.create(OpKind::Reshape, {x}, {{"shape", Ints{3, 2}}});
  EXPECT_FALSE(ops::ReshapeOp(*r).allowzero()); // absent: the table's default
  Op *p = b.create(OpKind::Pad, {x, b.scalar(DType::F32, 0)},
                   {{"pads", Ints{0, 1, 0, 1}}, {"mode", ops::enumAttr(PadMode::Edge)}});
  EXPECT_EQ(ops::PadOp(*p).mode(), PadMode::Edge);
  EXPECT_EQ(ops::PadOp(*p).pads(), (std::vector<Dim>{0, 1, 0, 1}));
  Op *c = b.create(OpKind::Cast, {x}, {{"to", DType::I32}});
  EXPECT_EQ(ops::CastOp(*c).to(), DType::I32);
  // An unverified op with an ill-formed attribute: the accessor names it.
  AttrMap bad = {{"mode", "mirror"}};
  EXPECT_THROW(ops::PadOp(bad).mode(), std::invalid_argument);
  AttrMap none;
  EXPECT_THROW(ops::PadOp(none).pads(), std::invalid_argument);
}

TEST(OpDefinitions, BuilderBringsAxesIntoNormalForm) {
  Graph g;
  Builder b(g);
  Value *x = g.addInput(TensorType::fromShape(DType::F32, {2, 3, 4}), "x");
  Op *s = b.create(OpKind::Softmax, {x}, {{"axis", -1}});
  EXPECT_EQ(ops::SoftmaxOp(*s).axis(), 2);
  Op *r = b.create(OpKind::Reduce, {x}, {{"kind", "sum"}, {"axes", Ints{-1, 0}}, {"keepdims", 0}});
  EXPECT_EQ(ops::ReduceOp(*r).axes(), (Ints{0, 2}));
  EXPECT_EQ(r->result()->type().str(), "tensor<3xf32>");
  g.addOutput(s->result(), "s");
  g.addOutput(r->result(), "r");
  llvm::Error err = verifyGraph(g);
  EXPECT_FALSE(static_cast<bool>(err)) << (err ? llvm::toString(std::move(err)) : "");
  llvm::consumeError(std::move(err));
}

// The verifier requires the normal form of text it did not build.
std::string verifyText(const std::string &text) {
  auto g = parseGraph(text, "t.sg");
  if (!g)
    return llvm::toString(g.takeError());
  llvm::Error err = verifyGraph(**g);
  return err ? llvm::toString(std::move(err)) : "ok";
}

TEST(OpDefinitions, VerifierRejectsWhatIsNotNormal) {
  EXPECT_EQ(verifyText(R"(graph @g(%x: tensor<2x3xf32>) -> (y: tensor<2x3xf32>) {
  %y = softmax(%x) {axis = -1} : tensor<2x3xf32>
  return %y
})"),
            "verifier: op 'softmax' (result %y): attribute 'axis' -1 is not an axis in [0, 2) (the "
            "normal form: negative axes are resolved at import)");
  EXPECT_EQ(verifyText(R"(graph @g(%x: tensor<2x3xf32>) -> (y: tensor<2x3xf32>) {
  %v = constant {value = dense<[0.0]> : tensor<f32>} : tensor<f32>
  %y = pad(%x, %v) {mode = "mirror", pads = [0, 0, 0, 0]} : tensor<2x3xf32>
  return %y
})"),
            "verifier: op 'pad' (result %y): attribute 'mode' is \"mirror\"; expected one of "
            "constant, reflect, edge, wrap");
  EXPECT_EQ(verifyText(R"(graph @g(%x: tensor<2x3xf32>) -> (y: tensor<2x3xf32>) {
  %y = cumsum(%x) {axis = 1, exclusive = 2, reverse = 0} : tensor<2x3xf32>
  return %y
})"),
            "verifier: op 'cumsum' (result %y): attribute 'exclusive' must be 0 or 1, got 2");
  // A slice lists every dim.
  EXPECT_EQ(
      verifyText(R"(graph @g(%x: tensor<2x3xf32>) -> (y: tensor<2x2xf32>) {
  %y = slice(%x) {ends = [3], starts = [1], steps = [1]} : tensor<2x2xf32>
  return %y
})"),
      "verifier: op 'slice' (result %y): attributes 'starts', 'ends' and 'steps' must have one "
      "entry per dim (rank 2; got 1, 1, 1)");
}

TEST(OpDefinitions, SliceAttributesFromOnnxLists) {
  auto a = sliceAttributes(3, {1, -2}, {kMax, 5}, {-1, 0}, {});
  ASSERT_TRUE(static_cast<bool>(a)) << llvm::toString(a.takeError());
  ops::SliceOp s(*a);
  EXPECT_EQ(s.starts(), (Ints{-2, 0, 1}));
  EXPECT_EQ(s.ends(), (Ints{5, kMax, kMax}));
  EXPECT_EQ(s.steps(), (Ints{1, 1, 1}));
  auto leading = sliceAttributes(2, {1}, {2}, {}, {-1});
  ASSERT_TRUE(static_cast<bool>(leading));
  EXPECT_EQ(ops::SliceOp(*leading).steps(), (Ints{-1, 1}));
  auto twice = sliceAttributes(2, {0, 0}, {1, 1}, {1, -1}, {});
  ASSERT_FALSE(static_cast<bool>(twice));
  EXPECT_EQ(llvm::toString(twice.takeError()), "slice: axis 1 is listed twice");
  auto out = sliceAttributes(2, {0}, {1}, {2}, {});
  ASSERT_FALSE(static_cast<bool>(out));
  EXPECT_EQ(llvm::toString(out.takeError()), "slice: axis 2 is out of range for rank 2");
}

} // namespace
