// Fused elementwise kernels: one loop nest over the kernel's result shape computing the whole
// region, every intermediate value inlined as an expression (no temporaries). In a region of
// elementwise ops the index of any value is the result index numpy-broadcast to its shape,
// whatever the path, so each value's expression is built once and shared.
#include "LowerImpl.h"

#include <map>

namespace strata::lower {
namespace {

struct KernelLowering {
  LowerCtx &c;
  const Graph &region;
  const Shape &outShape;
  Exprs idx;
  std::map<const Value *, Expr> cache;

  Expr constantExpr(const Op &op) {
    const Tensor &t = op.attr("value").getTensor();
    if (!t.valid() || t.numElements() != 1)
      notLowered(c.op, "non-scalar constant in region");
    DType dt = t.dtype();
    if (isFloat(dt))
      return loop::floatImm(t.getDouble(0), dt);
    return loop::intImm(t.getInt(0), dt);
  }

  Expr valueExpr(const Value *v) {
    if (auto it = cache.find(v); it != cache.end())
      return it->second;
    const TensorType &type = v->type();
    if (!type.isStatic())
      notLowered(c.op, "symbolic dims");
    requireSupportedDType(c.op, type.dtype);
    Shape shape = type.staticShape();
    Expr e;
    if (v->isGraphInput()) {
      for (unsigned i = 0; i < region.numInputs(); ++i)
        if (region.input(i) == v)
          e = loop::load(c.ins[i], broadcastIndex(idx, outShape, c.inShapes[i]));
    } else {
      const Op &op = *v->definingOp();
      if (op.kind() == OpKind::Constant) {
        e = constantExpr(op);
      } else if (isElementwiseFamily(op.kind())) {
        Exprs args;
        std::vector<DType> types;
        for (const Value *operand : op.operands()) {
          args.push_back(valueExpr(operand));
          types.push_back(operand->type().dtype);
        }
        e = elementwiseExpr(op, args, types);
      } else {
        notLowered(c.op, "'" + std::string(op.opName()) + "' in the region");
      }
    }
    if (!e)
      throw LowerError("kernel: value is not defined in the region");
    cache[v] = e;
    return e;
  }
};

} // namespace

Stmt lowerKernelBody(LowerCtx &c) {
  if (c.op.numRegions() != 1)
    throw LowerError("kernel: expected one region");
  const Graph &region = c.op.region(0);
  if (region.numInputs() != c.ins.size() || region.numOutputs() != c.outs.size())
    throw LowerError("kernel: region signature does not match the operands and results");
  const Shape &out = c.outShapes[0];
  for (const Shape &s : c.outShapes)
    if (s != out)
      notLowered(c.op, "results of different shapes");
  return loopNest(c, out, [&](const Exprs &idx) {
    KernelLowering k{c, region, out, idx, {}};
    std::vector<Stmt> stores;
    for (unsigned i = 0; i < region.numOutputs(); ++i)
      stores.push_back(loop::store(c.outs[i], idx, k.valueExpr(region.output(i))));
    return loop::seq(stores);
  });
}

} // namespace strata::lower
