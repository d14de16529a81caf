// conv_transpose (N-d, strides, pads, dilations, group, output_padding, bias) as a gather over
// the result: output position o receives input position i through tap k where
// o = i * stride - padBegin + k * dilation, i.e. i = (o + padBegin - k * dilation) / stride when
// that divides exactly and lands inside the input (an `if`, so nothing out of bounds is read).
// The interpreter scatter-adds a GEMM's columns instead, so floats agree to rounding (like conv);
// the sum runs in the operand dtype (input channel, then taps row-major) and the bias comes last.
#include "LowerImpl.h"

namespace strata::lower {
using loop::ExprKind;

Stmt lowerConvTranspose(LowerCtx &c) {
  const Shape &x = c.inShapes[0], &w = c.inShapes[1], &out = c.outShapes[0];
  DType t = c.inTypes[0];
  if (!isFloat(t))
    notLowered(c.op, std::string(dtypeName(t)) + " operands");
  if (x.size() < 3 || w.size() != x.size() || c.inTypes[1] != t)
    throw LowerError("conv_transpose: expected input and weight of one dtype and rank >= 3");
  size_t rank = x.size() - 2;
  const ops::ConvTransposeOp convT(c.op);
  const std::vector<int64_t> &strides = convT.strides(), &dil = convT.dilations(),
                             &pads = convT.pads();
  if (strides.size() != rank || dil.size() != rank || pads.size() != 2 * rank)
    throw LowerError("conv_transpose: strides, dilations and pads do not match " +
                     std::to_string(rank) + " spatial dims");
  int64_t group = std::max<int64_t>(convT.group(), 1);
  int64_t inPerGroup = x[1] / group, outPerGroup = w[1];
  // Channels and taps are static (the weight's); batch and spatial dims may be run-time extents.
  for (int64_t d : w)
    if (d < 0)
      notLowered(c.op, "a weight with symbolic dims");
  if (x[1] < 0 || out[1] < 0)
    notLowered(c.op, "symbolic channels");
  if (x[1] != w[0] || x[1] % group || out.size() != x.size() || out[1] != outPerGroup * group)
    throw LowerError("conv_transpose: weight does not match input and group");
  if (c.ins.size() > 2 && (c.inTypes[2] != t || c.inShapes[2] != Shape{out[1]}))
    throw LowerError("conv_transpose: bad bias");
  const Exprs inGrid(c.inDims[0].begin() + 2, c.inDims[0].end());
  Shape kernel(w.begin() + 2, w.end());
  return loopNest(c, c.outDims[0], LoopRole::Parallel, [&](const Exprs &o) {
    loop::Buffer acc = loop::makeBuffer(c.newName("acc"), t, {imm(1)}, {}, loop::MemoryScope::Local);
    Expr g = loop::binary(ExprKind::FloorDiv, o[1], imm(outPerGroup));
    Expr mInGroup = loop::binary(ExprKind::FloorMod, o[1], imm(outPerGroup));
    Shape redShape{inPerGroup};
    redShape.insert(redShape.end(), kernel.begin(), kernel.end());
    Stmt sum = loopNest(c, redShape, LoopRole::Reduction, [&](const Exprs &r) {
      Expr ch = g * imm(inPerGroup) + r[0];
      Exprs xi{o[0], ch}, wi{ch, mInGroup};
      Expr inside = loop::boolImm(true);
      for (size_t d = 0; d < rank; ++d) {
        Expr num = o[d + 2] + imm(pads[d]) - r[d + 1] * imm(dil[d]);
        Expr i = strides[d] == 1 ? num : bin(ExprKind::FloorDiv, num, imm(strides[d]));
        Expr ok = bin(ExprKind::And, bin(ExprKind::GE, num, imm(0)), bin(ExprKind::LT, i, inGrid[d]));
        if (strides[d] != 1)
          ok = bin(ExprKind::And, ok, bin(ExprKind::EQ, bin(ExprKind::FloorMod, num, imm(strides[d])), imm(0)));
        inside = d == 0 ? ok : bin(ExprKind::And, inside, ok);
        xi.push_back(i);
        wi.push_back(r[d + 1]);
      }
      Expr a = loop::load(acc, {imm(0)});
      return loop::ifThenElse(inside, loop::store(acc, {imm(0)}, a + loop::load(c.ins[0], xi) * loop::load(c.ins[1], wi)));
    });
    Expr result = loop::load(acc, {imm(0)});
    if (c.ins.size() > 2)
      result = result + loop::load(c.ins[2], {o[1]});
    return loop::allocate(acc, loop::seq({loop::store(acc, {imm(0)}, loop::floatImm(0, t)), sum,
                                          loop::store(c.outs[0], o, result)}));
  });
}

} // namespace strata::lower
