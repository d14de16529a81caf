// Fused elementwise kernels lower to one loop nest with the region inlined; checked against the
// interpreter's evaluation of the region.
#include "LowerTestUtil.h"

using namespace strata;
using namespace strata::lowertest;

namespace {

// kernel(x: 4x8, b: 8, n: i32 4x1) -> (relu(x + b), cast<f32>(n) * (x + b) < 1)
TEST(LowerKernel, ElementwiseRegionInlined) {
  Graph g;
  TensorType tx = TensorType::fromShape(DType::F32, {4, 8}), tb = TensorType::fromShape(DType::F32, {8}),
             tn = TensorType::fromShape(DType::I32, {4, 1});
  Value *x = g.addInput(tx), *b = g.addInput(tb), *n = g.addInput(tn);
  Op *k = g.createOp(OpKind::Kernel, {x, b, n}, {tx, TensorType::fromShape(DType::Bool, {4, 8})},
                     {{"kind", "elementwise"}});
  Graph &r = k->addRegion();
  Value *p = r.addInput(tx), *q = r.addInput(tb), *m = r.addInput(tn);
  Builder rb(r);
  Value *s = rb.value(OpKind::Add, {p, q});
  Value *relu = rb.value(OpKind::Max, {s, rb.scalar(DType::F32, 0)});
  Value *scaled = rb.value(OpKind::Mul, {rb.value(OpKind::Cast, {m}, {{"to", DType::F32}}), s});
  Value *lt = rb.value(OpKind::Lt, {scaled, rb.scalar(DType::F32, 1)});
  r.addOutput(relu, "relu");
  r.addOutput(lt, "lt");
  checkOpOn(*k, {randomTensor(DType::F32, {4, 8}, true), randomTensor(DType::F32, {8}, true),
                 randomTensor(DType::I32, {4, 1})});
}

// A reduce in the region is lowered by its family into the kernel's result buffer.
TEST(LowerKernel, ReductionRegion) {
  Graph g;
  TensorType tx = TensorType::fromShape(DType::F32, {4, 8});
  Value *x = g.addInput(tx);
  Op *k = g.createOp(OpKind::Kernel, {x}, {TensorType::fromShape(DType::F32, {4, 1})},
                     {{"kind", "reduction"}});
  Graph &r = k->addRegion();
  Builder rb(r);
  r.addOutput(rb.value(OpKind::Reduce, {r.addInput(tx)}, {{"kind", "sum"}, {"axes", std::vector<int64_t>{1}}, {"keepdims", 1}}), "y");
  checkOpOn(*k, {randomTensor(DType::F32, {4, 8}, true)});
}

// An op of the region without a lowering names itself.
TEST(LowerKernel, UnloweredRegionOpIsReported) {
  Graph g;
  TensorType tx = TensorType::fromShape(DType::I32, {4, 8});
  Value *x = g.addInput(tx);
  Op *k = g.createOp(OpKind::Kernel, {x}, {tx}, {{"kind", "elementwise"}});
  Graph &r = k->addRegion();
  Builder rb(r);
  Value *e = rb.value(OpKind::Neg, {r.addInput(tx)});
  r.addOutput(rb.value(OpKind::Pow, {e, e}), "y");
  auto fn = lower::lowerKernel(*k);
  ASSERT_FALSE(static_cast<bool>(fn));
  EXPECT_EQ(llvm::toString(fn.takeError()),
            "lowering of op 'pow' is not implemented yet (integer operands inside a fused kernel)");
}

} // namespace

// A formula dim's kernel parameter name encodes the formula injectively and decodes back (the
// program builder finds the plan's derived symbol for it by that name).
TEST(SymbolicExtents, FormulaParamNamesRoundTrip) {
  for (std::string f : {"fdiv(h+1,2)", "fdiv(h-1,2)+1", "3*h*w", "min(s,256)", "a_b-c", "h+-1"}) {
    std::string name = lower::formulaParamName(f);
    for (char c : name)
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_') << name;
    EXPECT_EQ(lower::formulaOfParamName(name), std::optional<std::string>(f)) << name;
  }
  EXPECT_NE(lower::formulaParamName("h+1"), lower::formulaParamName("hP1"));
  EXPECT_NE(lower::formulaParamName("a_P"), lower::formulaParamName("a+"));
  EXPECT_EQ(lower::formulaOfParamName("sym_h"), std::nullopt);
  EXPECT_EQ(lower::formulaOfParamName("dim_h_"), std::nullopt);
  EXPECT_EQ(lower::formulaOfParamName("dim_h_Z_"), std::nullopt);
  EXPECT_EQ(lower::formulaOfParamName("dim_h_999_"), std::nullopt);
  EXPECT_EQ(lower::formulaOfParamName("dim_h_32_"), std::optional<std::string>("h "));
}
