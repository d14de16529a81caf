// matmul(a, b[, bias]) as a direct loop nest: for every result element a one-element local
// accumulator of the operand dtype sums a[.., i, k] * b[.., k, j] for k ascending, then the bias
// is added (y = acc + bias, as the interpreter does). Batch dims broadcast; rank-1 operands are
// promoted (the added dim never appears in the result); b in panels (b_panel) is indexed as the
// [K, N] it holds. Floats differ from the interpreter's blocked GEMM only in summation order;
// integers (wrapping) are exact.
#include "LowerImpl.h"

namespace strata::lower {

Stmt lowerMatMul(LowerCtx &c) {
  DType t = c.inTypes[0];
  if (canLowerTiledMatMul(c))
    return lowerTiledMatMul(c);
  // b in panels [N/p, K, p] is read as the [K, N] it holds: b[k, j] = panels[j / p, k, j % p].
  const int64_t panel = ops::MatMulOp(c.op).b_panel();
  const Exprs &a = c.inDims[0], &out = c.outDims[0], &bIn = c.inDims[1];
  const Exprs b = panel ? Exprs{bIn.at(1), mulExtents(bIn.at(0), imm(panel))} : bIn;
  if (t == DType::Bool)
    notLowered(c.op, "bool operands");
  if (a.empty() || b.empty())
    throw LowerError("matmul: operands must have rank >= 1");
  bool aVec = a.size() == 1, bVec = b.size() == 1;
  const Expr k = a.back();
  size_t aBatch = aVec ? 0 : a.size() - 2, bBatch = bVec ? 0 : b.size() - 2;
  size_t nb = out.size() - (aVec ? 0 : 1) - (bVec ? 0 : 1);
  Exprs batch(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(nb));
  Exprs aBatchShape(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(aBatch));
  Exprs bBatchShape(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(bBatch));
  Expr zero = isFloat(t) ? loop::floatImm(0, t) : loop::intImm(0, t);
  return loopNest(c, out, LoopRole::Parallel, [&](const Exprs &idx) {
    Exprs bi(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(nb));
    Expr i = aVec ? Expr() : idx[nb];
    Expr j = bVec ? Expr() : idx.back();
    loop::Buffer acc = loop::makeBuffer(c.newName("acc"), t, {imm(1)}, {}, loop::MemoryScope::Local);
    loop::Var kv = c.newVar("k");
    Expr kx = loop::var(kv);
    Exprs ai = broadcastIndex(bi, batch, aBatchShape), bIdx = broadcastIndex(bi, batch, bBatchShape);
    if (!aVec)
      ai.push_back(i);
    ai.push_back(kx);
    bIdx.push_back(kx);
    if (!bVec)
      bIdx.push_back(j);
    if (panel)
      bIdx = {loop::binary(loop::ExprKind::FloorDiv, j, imm(panel)), kx,
              loop::binary(loop::ExprKind::FloorMod, j, imm(panel))};
    Expr sum = loop::load(acc, {imm(0)});
    Stmt step = loop::store(acc, {imm(0)}, sum + loop::load(c.ins[0], ai) * loop::load(c.ins[1], bIdx));
    Expr result = sum;
    if (c.ins.size() > 2)
      result = result + loop::load(c.ins[2], broadcastIndex(idx, out, c.inDims[2]));
    return loop::allocate(acc, loop::seq({loop::store(acc, {imm(0)}, zero),
                                          c.loopOver(kv, k, LoopRole::Reduction, step),
                                          loop::store(c.outs[0], idx, result)}));
  });
}

} // namespace strata::lower
