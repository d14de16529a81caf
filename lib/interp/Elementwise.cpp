// Kernels of the binary elementwise ops, select, cast and constant (ONNX semantics; see
// ElementwiseOps.h for the scalar rules). Unary ops live in ElementwiseUnary.cpp.
#include "ElementwiseOps.h"
#include "strata/interp/Interpreter.h"

#include <cstring>

namespace strata::interp {
namespace {

template <typename Fn, bool ToBool = false> Tensors binaryKernel(const Op &, const Tensors &xs) {
  return {applyBinary<ToBool>(xs[0], xs[1], Fn{})};
}

Tensors modKernel(const Op &op, const Tensors &xs) {
  ModFn fn;
  fn.cStyle = ops::ModOp(op).fmod();
  return {applyBinary(xs[0], xs[1], fn)};
}

// The exponent is converted to the base's dtype (ONNX Pow allows them to differ).
Tensors powKernel(const Op &, const Tensors &xs) {
  const Tensor &base = xs[0];
  Tensor exponent = xs[1].dtype() == base.dtype() ? xs[1] : castTensor(xs[1], base.dtype());
  return {applyBinary(base, exponent, PowFn{})};
}

Tensors bitShiftKernel(const Op &op, const Tensors &xs) {
  BitShiftFn fn;
  fn.left = ops::BitShiftOp(op).direction() == ShiftDirection::Left;
  return {applyBinary(xs[0], xs[1], fn)};
}

// select(cond, a, b): copies elements by size, so one instantiation per element width serves
// every dtype.
Tensors selectKernel(const Op &, const Tensors &xs) {
  const Tensor &cond = xs[0], &a = xs[1], &b = xs[2];
  if (cond.dtype() != DType::Bool)
    throw InterpError("select: condition must be bool, got " + std::string(dtypeName(cond.dtype())));
  if (a.dtype() != b.dtype())
    throw InterpError("select: operand dtypes differ (" + std::string(dtypeName(a.dtype())) +
                      " vs " + std::string(dtypeName(b.dtype())) + ")");
  Shape outShape;
  StridedPlan plan = planBroadcast({&cond.shape(), &a.shape(), &b.shape()}, outShape);
  Tensor out(a.dtype(), outShape);
  visitElemSize(dtypeSize(a.dtype()), [&](auto word) {
    using W = decltype(word);
    const bool *pc = cond.data<bool>();
    const W *pa = a.data<W>();
    const W *pb = b.data<W>();
    W *po = out.data<W>();
    forEachRow(plan, [&](int64_t o, const int64_t *off, int64_t n, const int64_t *s) {
      for (int64_t i = 0; i < n; ++i)
        po[o + i] = pc[off[0] + i * s[0]] ? pa[off[1] + i * s[1]] : pb[off[2] + i * s[2]];
    });
  });
  return {out};
}

Tensors castKernel(const Op &op, const Tensors &xs) {
  return {castTensor(xs[0], ops::CastOp(op).to())};
}

// Constants share the attribute's buffer: tensors are immutable by convention.
Tensors constantKernel(const Op &op, const Tensors &) {
  const Tensor &value = ops::ConstantOp(op).value();
  if (!value.valid())
    throw InterpError("constant data elided");
  return {value};
}

} // namespace

void registerElementwiseKernels(KernelFn *table) {
  auto set = [&](OpKind k, KernelFn fn) { table[static_cast<size_t>(k)] = fn; };
  registerUnaryKernels(table);
  set(OpKind::Add, binaryKernel<AddFn>);
  set(OpKind::Sub, binaryKernel<SubFn>);
  set(OpKind::Mul, binaryKernel<MulFn>);
  set(OpKind::Div, binaryKernel<DivFn>);
  set(OpKind::Mod, modKernel);
  set(OpKind::Pow, powKernel);
  set(OpKind::Max, binaryKernel<MaxFn>);
  set(OpKind::Min, binaryKernel<MinFn>);
  set(OpKind::And, binaryKernel<AndFn>);
  set(OpKind::Or, binaryKernel<OrFn>);
  set(OpKind::Xor, binaryKernel<XorFn>);
  set(OpKind::BitShift, bitShiftKernel);
  set(OpKind::Eq, binaryKernel<EqFn, true>);
  set(OpKind::Lt, binaryKernel<LtFn, true>);
  set(OpKind::Le, binaryKernel<LeFn, true>);
  set(OpKind::Select, selectKernel);
  set(OpKind::Cast, castKernel);
  set(OpKind::Constant, constantKernel);
}

} // namespace strata::interp
