// The Builder creating ops of every family with inferred result types, and inference errors.
#include "strata/graph/Builder.h"
#include "strata/graph/Verifier.h"

#include <gtest/gtest.h>

#include <limits>

using namespace strata;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
using Ints = std::vector<int64_t>;

class InferTest : public ::testing::Test {
protected:
  Graph g;
  Builder b{g};

  Value *in(DType dt, std::vector<Dim> dims) { return g.addInput(TensorType(dt, std::move(dims))); }
  Value *f32(std::vector<Dim> dims) { return in(DType::F32, std::move(dims)); }
  std::string type(OpKind k, const std::vector<Value *> &ops, AttrMap attrs = {}) {
    return b.value(k, ops, std::move(attrs))->type().str();
  }
  // Error text of inference for these operands, or "ok".
  std::string error(OpKind k, const std::vector<Value *> &ops, AttrMap attrs = {}) {
    std::vector<TensorType> types;
    for (Value *v : ops)
      types.push_back(v->type());
    auto r = inferResultTypes(k, types, attrs);
    return r ? "ok" : llvm::toString(r.takeError());
  }
  void TearDown() override {
    // Everything the builder made must also pass the verifier.
    llvm::Error err = verifyGraph(g);
    EXPECT_FALSE(static_cast<bool>(err)) << (err ? llvm::toString(std::move(err)) : "");
    llvm::consumeError(std::move(err));
  }
};

const Dim B = Dim::sym("b");
const Dim S = Dim::sym("s");

TEST_F(InferTest, ElementwiseUnary) {
  Value *x = f32({B, 3});
  EXPECT_EQ(type(OpKind::Neg, {x}), "tensor<?b x3xf32>");
  EXPECT_EQ(type(OpKind::Exp, {x}), "tensor<?b x3xf32>");
  EXPECT_EQ(type(OpKind::IsNaN, {x}), "tensor<?b x3xbool>");
  EXPECT_EQ(type(OpKind::IsInf, {x}, {{"detect_negative", 1}, {"detect_positive", 0}}),
            "tensor<?b x3xbool>");
  EXPECT_EQ(type(OpKind::Cast, {x}, {{"to", DType::I32}}), "tensor<?b x3xi32>");
  Value *i = in(DType::I32, {4});
  EXPECT_EQ(type(OpKind::Not, {i}), "tensor<4xi32>");
  EXPECT_EQ(error(OpKind::Sqrt, {i}), "operand 0 has dtype i32; expected a float dtype");
}

TEST_F(InferTest, ElementwiseBinaryBroadcasts) {
  Value *x = f32({2, 1, 3}), *y = f32({4, 3}), *sym = f32({B, 1, 1});
  EXPECT_EQ(type(OpKind::Add, {x, y}), "tensor<2x4x3xf32>");
  EXPECT_EQ(type(OpKind::Mul, {sym, y}), "tensor<?b x4x3xf32>");
  EXPECT_EQ(type(OpKind::Lt, {x, y}), "tensor<2x4x3xbool>");
  Value *e = in(DType::I64, {});
  EXPECT_EQ(type(OpKind::Pow, {x, e}), "tensor<2x1x3xf32>") << "pow's exponent may differ";
  EXPECT_EQ(type(OpKind::Mod, {e, e}, {{"fmod", 0}}), "tensor<i64>");
  EXPECT_EQ(error(OpKind::Add, {x, e}), "operand 1 has dtype i64 but operand 0 has f32");
  EXPECT_EQ(error(OpKind::Sub, {x, f32({5})}),
            "operand 1 shape [5] does not broadcast with [2, 1, 3]: cannot broadcast dimension 3 "
            "with 5");
  EXPECT_EQ(error(OpKind::BitShift, {e, e}, {{"direction", "up"}}),
            "attribute 'direction' is \"up\"; expected one of left, right");
}

TEST_F(InferTest, SelectAndConstant) {
  Value *cond = in(DType::Bool, {3, 1});
  Value *a = f32({1, 4}), *c = b.scalar(DType::F32, 2.0);
  EXPECT_EQ(c->type().str(), "tensor<f32>");
  EXPECT_EQ(type(OpKind::Select, {cond, a, c}), "tensor<3x4xf32>");
  EXPECT_EQ(error(OpKind::Select, {a, a, c}), "operand 0 has dtype f32; expected bool for the condition");
  Value *k = b.constant(Tensor::fromVector<int32_t>(DType::I32, {2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(k->type().str(), "tensor<2x2xi32>");
}

TEST_F(InferTest, ReshapeStatic) {
  Value *x = f32({2, 3, 4});
  EXPECT_EQ(type(OpKind::Reshape, {x}, {{"shape", Ints{0, -1}}}), "tensor<2x12xf32>");
  EXPECT_EQ(type(OpKind::Reshape, {x}, {{"shape", Ints{4, 0, 2}}}), "tensor<4x3x2xf32>");
  Value *empty = f32({0, 3});
  EXPECT_EQ(type(OpKind::Reshape, {empty}, {{"shape", Ints{3, 0}}, {"allowzero", 1}}),
            "tensor<3x0xf32>");
  EXPECT_EQ(error(OpKind::Reshape, {x}, {{"shape", Ints{5, -1}}}),
            "attribute 'shape' [5, -1]: cannot infer -1 for input [2, 3, 4]");
  EXPECT_EQ(error(OpKind::Reshape, {x}, {{"shape", Ints{-1, -1}}}),
            "attribute 'shape' [-1, -1] has more than one -1");
  EXPECT_EQ(error(OpKind::Reshape, {x}, {{"shape", Ints{5, 5}}}),
            "attribute 'shape' [5, 5] has 25 elements but input [2, 3, 4] has 24");
}

TEST_F(InferTest, ReshapeSymbolic) {
  Value *x = f32({B, 3, 4});
  EXPECT_EQ(type(OpKind::Reshape, {x}, {{"shape", Ints{0, -1}}}), "tensor<?b x12xf32>");
  EXPECT_EQ(type(OpKind::Reshape, {x}, {{"shape", Ints{-1, 12}}}), "tensor<?b x12xf32>");
  EXPECT_EQ(type(OpKind::Reshape, {x}, {{"shape", Ints{0, 2, 6}}}), "tensor<?b x2x6xf32>");
  // -1 absorbs ?b times 3: the formula, exact since 4 divides the static 12.
  EXPECT_EQ(type(OpKind::Reshape, {x}, {{"shape", Ints{-1, 4}}}), "tensor<?(3*b) x4xf32>");
  Value *y = f32({B, S, 64});
  EXPECT_EQ(type(OpKind::Reshape, {y}, {{"shape", Ints{-1, 64}}}), "tensor<?(b*s) x64xf32>");
  // Whole only for some sizes (?b x 3 into rows of 6): the quotient as a formula (the plan
  // checks the element counts when bound); a symbolic dim's factor may complete the division
  // (?(4*b) x 8 into rows of 32).
  Value *z = f32({B, 3});
  EXPECT_EQ(type(OpKind::Reshape, {z}, {{"shape", Ints{-1, 6}}}), "tensor<?(fdiv(b,2)) x6xf32>");
  EXPECT_EQ(type(OpKind::Reshape, {z}, {{"shape", Ints{-1, 9}}}), "tensor<?(fdiv(b,3)) x9xf32>");
  Value *heads = f32({Dim::of(SymExpr::symbol("b") * SymExpr(4)), 8});
  EXPECT_EQ(type(OpKind::Reshape, {heads}, {{"shape", Ints{-1, 32}}}), "tensor<?b x32xf32>");
  // A target of formulas: each symbolic entry is that dim exactly (moving ?b and ?s).
  EXPECT_EQ(type(OpKind::Reshape, {y},
                 {{"shape", Attribute::dims({8, Dim::sym("s"), Dim::sym("b"), 8})}}),
            "tensor<8x?s x?b x8xf32>");
  EXPECT_EQ(error(OpKind::Reshape, {y},
                  {{"shape", Attribute(Attribute::Storage(std::vector<Dim>{Dim(2), Dim(3)}))}}),
            "attribute 'shape' lists static dims only: the normal form is ints");
  EXPECT_EQ(type(OpKind::Reshape, {y}, {{"shape", Ints{0, 0, 8, 8}}}), "tensor<?b x?s x8x8xf32>");
  // A static target for symbolic dims (an export traced at one size) holds where the element
  // counts agree: checked when the sizes are bound.
  EXPECT_EQ(type(OpKind::Reshape, {x}, {{"shape", Ints{6, 8}}}), "tensor<6x8xf32>");
  EXPECT_EQ(error(OpKind::Reshape, {x}, {{"shape", Ints{-1, 5}}}),
            "attribute 'shape' [-1, 5]: cannot infer -1 for input [?b, 3, 4] (static sizes do not "
            "divide)");
}

TEST_F(InferTest, TransposeExpand) {
  Value *x = f32({B, 3, 4});
  EXPECT_EQ(type(OpKind::Transpose, {x}, {{"perm", Ints{2, 0, 1}}}), "tensor<4x?b x3xf32>");
  EXPECT_EQ(error(OpKind::Transpose, {x}, {{"perm", Ints{0, 0, 1}}}),
            "attribute 'perm' [0, 0, 1] is not a permutation of [0, 3)");
  Value *y = f32({3, 1});
  EXPECT_EQ(type(OpKind::Expand, {y}, {{"shape", Ints{2, 1, 5}}}), "tensor<2x3x5xf32>");
  EXPECT_EQ(error(OpKind::Expand, {y}, {{"shape", Ints{4, 5}}}),
            "operand 0 shape [3, 1] cannot expand to attribute 'shape' [4, 5]: cannot broadcast "
            "dimension 3 with 4");
}

TEST_F(InferTest, SliceClampsAndNegativeSteps) {
  Value *x = f32({10, 8});
  AttrMap attrs = {{"starts", Ints{-1, 0}}, {"ends", Ints{kMin, 8}}, {"steps", Ints{-1, 3}}};
  EXPECT_EQ(type(OpKind::Slice, {x}, attrs), "tensor<10x3xf32>");
  EXPECT_EQ(type(OpKind::Slice, {x},
                 {{"starts", Ints{8, 0}}, {"ends", Ints{2, kMax}}, {"steps", Ints{-2, 1}}}),
            "tensor<3x8xf32>");
  EXPECT_EQ(type(OpKind::Slice, {x},
                 {{"starts", Ints{0, -100}}, {"ends", Ints{kMax, 100}}, {"steps", Ints{1, 1}}}),
            "tensor<10x8xf32>");
  EXPECT_EQ(type(OpKind::Slice, {x},
                 {{"starts", Ints{5, 0}}, {"ends", Ints{2, kMax}}, {"steps", Ints{1, 1}}}),
            "tensor<0x8xf32>");
}

TEST_F(InferTest, SliceSymbolic) {
  Value *x = f32({B, 10});
  EXPECT_EQ(type(OpKind::Slice, {x},
                 {{"starts", Ints{0, 2}}, {"ends", Ints{kMax, -1}}, {"steps", Ints{1, 1}}}),
            "tensor<?b x7xf32>");
  // Cutting a symbolic dim: ONNX's clamping as a formula.
  EXPECT_EQ(type(OpKind::Slice, {x},
                 {{"starts", Ints{1, 0}}, {"ends", Ints{kMax, kMax}}, {"steps", Ints{1, 1}}}),
            "tensor<?(max(0,b-min(1,b))) x10xf32>");
  EXPECT_EQ(type(OpKind::Slice, {x},
                 {{"starts", Ints{kMax, 0}}, {"ends", Ints{-kMax, kMax}}, {"steps", Ints{-2, 1}}}),
            "tensor<?(fdiv(b+1,2)) x10xf32>");
}

TEST_F(InferTest, ConcatAndPad) {
  Value *a = f32({B, 3}), *c = f32({B, 5});
  EXPECT_EQ(type(OpKind::Concat, {a, c, a}, {{"axis", -1}}), "tensor<?b x11xf32>");
  EXPECT_EQ(error(OpKind::Concat, {a, c}, {{"axis", 0}}),
            "operand 1 dim 1 is 5 but operand 0 has 3 (only the concat axis may differ)");
  EXPECT_EQ(type(OpKind::Concat, {a, a}, {{"axis", 0}}), "tensor<?(2*b) x3xf32>");
  Value *x = f32({2, 3}), *v = b.scalar(DType::F32, 0);
  EXPECT_EQ(type(OpKind::Pad, {x, v}, {{"pads", Ints{1, 0, 2, -1}}, {"mode", "constant"}}),
            "tensor<5x2xf32>");
  EXPECT_EQ(error(OpKind::Pad, {x, v}, {{"pads", Ints{1, 0}}, {"mode", "constant"}}),
            "attribute 'pads' [1, 0] must have 2 * rank = 4 entries");
}

TEST_F(InferTest, GatherScatter) {
  Value *data = f32({5, 4, 3});
  Value *idx = in(DType::I64, {2, 7});
  EXPECT_EQ(type(OpKind::Gather, {data, idx}, {{"axis", 1}}), "tensor<5x2x7x3xf32>");
  EXPECT_EQ(error(OpKind::Gather, {data, data}, {{"axis", 0}}),
            "operand 1 has dtype f32; expected i32 or i64 indices");
  Value *m = f32({3, 4}), *ei = in(DType::I32, {3, 2});
  EXPECT_EQ(type(OpKind::GatherElements, {m, ei}, {{"axis", 1}}), "tensor<3x2xf32>");
  Value *nd = f32({2, 3, 4, 5}), *ndi = in(DType::I64, {2, 6, 2});
  EXPECT_EQ(type(OpKind::GatherND, {nd, ndi}, {{"batch_dims", 1}}), "tensor<2x6x5xf32>");
  Value *upd = f32({3, 2});
  EXPECT_EQ(type(OpKind::ScatterElements, {m, ei, upd}, {{"axis", -1}, {"reduction", "add"}}),
            "tensor<3x4xf32>");
  Value *sd = f32({4, 5, 6}), *si = in(DType::I64, {3, 2}), *su = f32({3, 6});
  EXPECT_EQ(type(OpKind::ScatterND, {sd, si, su}, {{"reduction", "none"}}), "tensor<4x5x6xf32>");
  EXPECT_EQ(error(OpKind::ScatterND, {sd, si, upd}, {{"reduction", "none"}}),
            "operand 2 (updates) shape [3, 2] should be [3, 6]");
}

TEST_F(InferTest, MatMulPromotionAndBatchBroadcast) {
  Value *v = f32({3}), *m = f32({2, 3, 4}), *w = f32({4});
  EXPECT_EQ(type(OpKind::MatMul, {v, v}), "tensor<f32>");
  EXPECT_EQ(type(OpKind::MatMul, {v, m}), "tensor<2x4xf32>");
  EXPECT_EQ(type(OpKind::MatMul, {m, w}), "tensor<2x3xf32>");
  Value *a = f32({B, 1, 3, 4}), *c = f32({5, 4, 6});
  EXPECT_EQ(type(OpKind::MatMul, {a, c}), "tensor<?b x5x3x6xf32>");
  Value *q = f32({B, 12, S, 64}), *k = f32({B, 12, 64, S});
  EXPECT_EQ(type(OpKind::MatMul, {q, k}), "tensor<?b x12x?s x?s xf32>");
  EXPECT_EQ(error(OpKind::MatMul, {m, m}),
            "contraction dims differ: operand 0 has 4 (shape [2, 3, 4]) but operand 1 has 3 (shape "
            "[2, 3, 4])");
}

TEST_F(InferTest, ConvWithPadsStridesDilationsGroups) {
  Value *x = f32({B, 4, 10, 12}), *w = f32({8, 2, 3, 3}), *bias = f32({8});
  AttrMap attrs = {{"strides", Ints{2, 1}},
                   {"pads", Ints{1, 2, 1, 0}},
                   {"dilations", Ints{1, 2}},
                   {"group", 2}};
  EXPECT_EQ(type(OpKind::Conv, {x, w, bias}, attrs), "tensor<?b x8x5x10xf32>");
  attrs["group"] = Attribute(1);
  EXPECT_EQ(error(OpKind::Conv, {x, w, bias}, attrs),
            "operand 0 has 4 channels but operand 1 (weight) expects 2 x group 1");
  Value *sym = f32({1, 4, S, 12});
  attrs["group"] = Attribute(2);
  // A symbolic spatial dim: the window formula, (s + 1 + 1 - 3) / 2 + 1.
  EXPECT_EQ(type(OpKind::Conv, {sym, w}, attrs), "tensor<1x8x?(fdiv(s+1,2)) x10xf32>");
}

TEST_F(InferTest, ConvTranspose) {
  Value *x = f32({1, 4, 5, 5}), *w = f32({4, 3, 3, 3});
  AttrMap attrs = {{"strides", Ints{2, 2}},         {"pads", Ints{1, 1, 1, 1}},
                   {"dilations", Ints{1, 1}},       {"group", 1},
                   {"output_padding", Ints{1, 1}}};
  EXPECT_EQ(type(OpKind::ConvTranspose, {x, w}, attrs), "tensor<1x3x10x10xf32>");
}

AttrMap poolAttrs(Ints kernel, Ints strides, Ints pads, int ceil) {
  return {{"kind", "max"},           {"kernel", kernel},  {"strides", strides},     {"pads", pads},
          {"dilations", Ints{1, 1}}, {"ceil_mode", ceil}, {"count_include_pad", 0}, {"p", 2}};
}

TEST_F(InferTest, PoolFloorAndCeilMode) {
  Value *x = f32({B, 3, 6, 6});
  EXPECT_EQ(type(OpKind::Pool, {x}, poolAttrs({3, 3}, {2, 2}, {0, 0, 0, 0}, 0)),
            "tensor<?b x3x2x2xf32>");
  EXPECT_EQ(type(OpKind::Pool, {x}, poolAttrs({3, 3}, {2, 2}, {0, 0, 0, 0}, 1)),
            "tensor<?b x3x3x3xf32>");
  // The extra ceil window would start in the end padding, so ONNX drops it.
  Value *small = f32({1, 1, 3, 3});
  EXPECT_EQ(type(OpKind::Pool, {small}, poolAttrs({1, 1}, {2, 2}, {0, 0, 1, 1}, 1)),
            "tensor<1x1x2x2xf32>");
  EXPECT_EQ(error(OpKind::Pool, {small}, poolAttrs({5, 5}, {1, 1}, {0, 0, 0, 0}, 0)),
            "window of effective size 5 does not fit padded size 3 on spatial axis 0");
}

TEST_F(InferTest, Reductions) {
  Value *x = f32({2, B, 4});
  EXPECT_EQ(type(OpKind::Reduce, {x}, {{"kind", "sum"}, {"axes", Ints{1, -1}}, {"keepdims", 1}}),
            "tensor<2x1x1xf32>");
  EXPECT_EQ(type(OpKind::Reduce, {x}, {{"kind", "mean"}, {"axes", Ints{2}}, {"keepdims", 0}}),
            "tensor<2x?b xf32>");
  EXPECT_EQ(type(OpKind::Reduce, {x}, {{"kind", "max"}, {"axes", Ints{0, 1, 2}}, {"keepdims", 0}}),
            "tensor<f32>");
  EXPECT_EQ(type(OpKind::Reduce, {x}, {{"kind", "max"}, {"axes", Ints{}}, {"keepdims", 0}}),
            "tensor<2x?b x4xf32>"); // no axes listed: nothing reduced
  EXPECT_EQ(type(OpKind::ArgReduce, {x},
                 {{"kind", "max"}, {"axis", 0}, {"keepdims", 0}, {"select_last_index", 0}}),
            "tensor<?b x4xi64>");
  EXPECT_EQ(type(OpKind::Softmax, {x}, {{"axis", -1}}), "tensor<2x?b x4xf32>");
  EXPECT_EQ(type(OpKind::LogSoftmax, {x}, {{"axis", 1}}), "tensor<2x?b x4xf32>");
  EXPECT_EQ(type(OpKind::CumSum, {x}, {{"axis", 1}, {"exclusive", 0}, {"reverse", 1}}),
            "tensor<2x?b x4xf32>");
  EXPECT_EQ(error(OpKind::Reduce, {x}, {{"kind", "avg"}, {"axes", Ints{}}, {"keepdims", 0}}),
            "attribute 'kind' is \"avg\"; expected one of sum, prod, max, min, mean");
  EXPECT_EQ(error(OpKind::Softmax, {x}, {{"axis", 3}}),
            "attribute 'axis' 3 is not an axis in [0, 3) (the normal form: negative axes are "
            "resolved at import)");
  // The normal form: inference sees only non-negative axes, sorted lists; Builder makes them so.
  EXPECT_EQ(error(OpKind::Softmax, {x}, {{"axis", -1}}),
            "attribute 'axis' -1 is not an axis in [0, 3) (the normal form: negative axes are "
            "resolved at import)");
  EXPECT_EQ(error(OpKind::Reduce, {x}, {{"kind", "sum"}, {"axes", Ints{2, 1}}, {"keepdims", 1}}),
            "attribute 'axes' [2, 1] must list distinct axes in [0, 3) in increasing order (the "
            "normal form)");
}

TEST_F(InferTest, LayerNorm) {
  Value *x = f32({B, S, 8}), *scale = f32({8}), *bias = f32({8});
  EXPECT_EQ(type(OpKind::LayerNorm, {x, scale, bias}, {{"axis", -1}, {"epsilon", 1e-5}}),
            "tensor<?b x?s x8xf32>");
  EXPECT_EQ(error(OpKind::LayerNorm, {x, f32({4})}, {{"axis", 2}, {"epsilon", 1e-5}}),
            "operand 1 (scale) shape [4] does not broadcast to the normalized dims [8]");
}

TEST_F(InferTest, TopKHasTwoResults) {
  Value *x = f32({B, 10});
  Op *op = b.create(OpKind::TopK, {x}, {{"axis", -1}, {"k", 4}, {"largest", 1}, {"sorted", 1}});
  ASSERT_EQ(op->numResults(), 2u);
  EXPECT_EQ(op->result(0)->type().str(), "tensor<?b x4xf32>");
  EXPECT_EQ(op->result(1)->type().str(), "tensor<?b x4xi64>");
  EXPECT_EQ(error(OpKind::TopK, {x}, {{"axis", 1}, {"k", 11}, {"largest", 1}, {"sorted", 1}}),
            "attribute 'k' = 11 is out of range for axis 1 of size 10");
}

TEST_F(InferTest, Resize) {
  Value *x = f32({1, 3, 10, 15});
  AttrMap attrs = {{"sizes", Ints{1, 3, 20, 30}},
                   {"scales", std::vector<double>{}},
                   {"mode", "linear"},
                   {"coordinate_transformation_mode", "half_pixel"},
                   {"nearest_mode", "round_prefer_floor"},
                   {"cubic_coeff_a", -0.75},
                   {"exclude_outside", 0},
                   {"extrapolation_value", 0.0}};
  EXPECT_EQ(type(OpKind::Resize, {x}, attrs), "tensor<1x3x20x30xf32>");
  attrs["sizes"] = Attribute(Ints{20, 30});
  EXPECT_EQ(error(OpKind::Resize, {x}, attrs),
            "attribute 'sizes' [20, 30] must have one entry per dim (rank 4)");
}

TEST_F(InferTest, Einsum) {
  Value *a = f32({2, 3, 4}), *c = f32({2, 4, 5});
  EXPECT_EQ(type(OpKind::Einsum, {a, c}, {{"equation", "bij,bjk->bik"}}), "tensor<2x3x5xf32>");
  Value *m = f32({3, 4}), *n = f32({4, 5});
  EXPECT_EQ(type(OpKind::Einsum, {m, n}, {{"equation", "ij,jk"}}), "tensor<3x5xf32>");
  EXPECT_EQ(type(OpKind::Einsum, {m}, {{"equation", "ba"}}), "tensor<4x3xf32>");
  Value *sq = f32({3, 3});
  EXPECT_EQ(type(OpKind::Einsum, {sq}, {{"equation", "ii->i"}}), "tensor<3xf32>");
  EXPECT_EQ(type(OpKind::Einsum, {sq}, {{"equation", "ii"}}), "tensor<f32>");
  Value *e1 = f32({7, 1, 3, 4}), *e2 = f32({5, 4, 6});
  EXPECT_EQ(type(OpKind::Einsum, {e1, e2}, {{"equation", "...ij, ...jk -> ...ik"}}),
            "tensor<7x5x3x6xf32>");
  EXPECT_EQ(type(OpKind::Einsum, {e1, e2}, {{"equation", "...ij,...jk"}}), "tensor<7x5x3x6xf32>");
  EXPECT_EQ(error(OpKind::Einsum, {m, m}, {{"equation", "ij,jk->ik"}}),
            "einsum label 'j' has size 3 in operand 1 but 4 elsewhere");
  EXPECT_EQ(error(OpKind::Einsum, {m}, {{"equation", "ijk->i"}}),
            "einsum term \"ijk\" does not match operand 0 of rank 2");
}

// Attributes come from model files: arithmetic on them is an error when it would overflow int64
// (undefined behaviour), never a wrapped size.
TEST_F(InferTest, HostileAttributesDoNotOverflow) {
  Value *x = f32({5}), *v = b.scalar(DType::F32, 0);
  EXPECT_EQ(error(OpKind::Reshape, {x}, {{"shape", Ints{kMax, 2, -1}}}),
            "attribute 'shape' [9223372036854775807, 2, -1] has dims whose product overflows "
            "int64");
  EXPECT_EQ(error(OpKind::Pad, {x, v}, {{"pads", Ints{kMin, kMax}}, {"mode", "constant"}}),
            "attribute 'pads' [-9223372036854775808, 9223372036854775807] crops axis 0 below zero "
            "size");
  EXPECT_EQ(error(OpKind::Pad, {x, v}, {{"pads", Ints{kMax, 1}}, {"mode", "constant"}}),
            "attribute 'pads' [9223372036854775807, 1] grows axis 0 past int64");
  Value *data = f32({2, 3}), *idx = in(DType::I64, {2, 1});
  EXPECT_EQ(error(OpKind::GatherND, {data, idx}, {{"batch_dims", kMax}}),
            "attribute 'batch_dims' 9223372036854775807 exceeds the rank of operand 1 (2)");

  Value *img = f32({1, 4, 5, 5}), *w = f32({2, 2, 3, 3});
  AttrMap conv = {{"strides", Ints{1, 1}},
                  {"pads", Ints{0, 0, 0, 0}},
                  {"dilations", Ints{1, 1}},
                  {"group", kMax}};
  EXPECT_EQ(error(OpKind::Conv, {img, w}, conv),
            "operand 1 (weight) expects 2 x group 9223372036854775807 input channels, past int64");
  conv["group"] = Attribute(2);
  conv["pads"] = Attribute(Ints{kMax, 0, 0, 0});
  EXPECT_NE(error(OpKind::Conv, {img, w}, conv).find("overflows int64 on spatial axis 0"),
            std::string::npos);
  conv["pads"] = Attribute(Ints{0, 0, 0, 0});
  conv["dilations"] = Attribute(Ints{kMax, 1});
  EXPECT_NE(error(OpKind::Conv, {img, w}, conv).find("overflows int64 on spatial axis 0"),
            std::string::npos);

  Value *tw = f32({4, 3, 3, 3});
  AttrMap convT = {{"strides", Ints{1, 1}},
                   {"pads", Ints{0, 0, 0, 0}},
                   {"dilations", Ints{1, 1}},
                   {"group", 1},
                   {"output_padding", Ints{kMax, 0}}};
  EXPECT_EQ(error(OpKind::ConvTranspose, {img, tw}, convT),
            "conv_transpose output on spatial axis 0 overflows int64");
  convT["output_padding"] = Attribute(Ints{0, 0});
  convT["group"] = Attribute(kMax / 2);
  EXPECT_EQ(error(OpKind::ConvTranspose, {f32({1, 0, 5, 5}), f32({0, 3, 3, 3})}, convT),
            "output channels 3 x group 4611686018427387903 overflow int64");

  const double inf = std::numeric_limits<double>::infinity();
  AttrMap resize = {
      {"sizes", Ints{1, 4, 10, 10}}, {"scales", std::vector<double>{1, 1, inf, 2}},
      {"mode", "nearest"},           {"coordinate_transformation_mode", "half_pixel_symmetric"},
      {"nearest_mode", "floor"},     {"cubic_coeff_a", -0.75},
      {"exclude_outside", 0},        {"extrapolation_value", 0.0}};
  EXPECT_EQ(error(OpKind::Resize, {img}, resize), "attribute 'scales' has an infinite scale");
}

TEST_F(InferTest, ArityAndAttributeErrors) {
  Value *x = f32({2});
  EXPECT_EQ(error(OpKind::Add, {x}), "expected 2 operands, got 1");
  EXPECT_EQ(error(OpKind::Conv, {x}), "expected 2 to 3 operands, got 1");
  EXPECT_EQ(error(OpKind::Concat, {}), "expected at least 1 operand, got 0");
  EXPECT_EQ(error(OpKind::Transpose, {x}), "missing required attribute 'perm' (ints)");
  EXPECT_EQ(error(OpKind::Neg, {x}, {{"alpha", 1.0}}), "unknown attribute 'alpha'");
  EXPECT_EQ(error(OpKind::Softmax, {x}, {{"axis", 1.0}}),
            "attribute 'axis' has kind float but int is expected");
  llvm::Error err = checkAttributes(OpKind::Reshape, {{"shape", Ints{2}}});
  EXPECT_FALSE(static_cast<bool>(err)) << "allowzero is optional";
  llvm::consumeError(std::move(err));
  err = checkAttributes(OpKind::Reshape, {});
  EXPECT_EQ(llvm::toString(std::move(err)), "missing required attribute 'shape' (dims)");
  EXPECT_THROW(b.create(OpKind::Transpose, {x}, {{"perm", Ints{1}}}), BuildError);
}

TEST_F(InferTest, EveryOpKindHasAnInferenceRule) {
  // Inference must never fall through to "no rule" for any kind: call each with arbitrary
  // (usually wrong) operands and make sure the answer is not a missing-rule error.
  Value *x = f32({2, 2});
  for (size_t k = 0; k < numOpKinds(); ++k) {
    OpKind kind = static_cast<OpKind>(k);
    const OpInfo &info = opInfo(kind);
    std::vector<Value *> ops(static_cast<size_t>(info.minOperands), x);
    AttrMap attrs;
    for (const AttrSpec &spec : info.attrs) {
      switch (spec.kind) {
      case AttrKind::Int: attrs[spec.name] = Attribute(0); break;
      case AttrKind::Float: attrs[spec.name] = Attribute(0.0); break;
      case AttrKind::String: attrs[spec.name] = Attribute(""); break;
      case AttrKind::Ints: attrs[spec.name] = Attribute(Ints{}); break;
      case AttrKind::Floats: attrs[spec.name] = Attribute(std::vector<double>{}); break;
      case AttrKind::Tensor: attrs[spec.name] = Attribute(Tensor(DType::F32, {1})); break;
      case AttrKind::DType: attrs[spec.name] = Attribute(DType::F32); break;
      case AttrKind::Dims: attrs[spec.name] = Attribute(std::vector<int64_t>{}); break;
      }
    }
    std::string e = error(kind, ops, attrs);
    EXPECT_EQ(e.find("no type inference rule"), std::string::npos) << info.name << ": " << e;
  }
}

} // namespace
