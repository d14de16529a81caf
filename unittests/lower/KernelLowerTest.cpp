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
