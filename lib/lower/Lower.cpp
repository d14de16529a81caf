// The lowering driver: builds the function signature from the op's types, dispatches to the op
// family, and reports what is not lowered yet.
#include "strata/lower/Lower.h"
#include "strata/support/Error.h"

#include "LowerImpl.h"

#include "strata/loop/Simplify.h"

namespace strata::lower {

void notLowered(const Op &op, const std::string &why) {
  throw NotLowered("lowering of op '" + std::string(op.opName()) + "' is not implemented yet" +
                   (why.empty() ? "" : " (" + why + ")"));
}

loop::Var LowerCtx::newVar(const std::string &hint) {
  return loop::makeVar(hint + std::to_string(varCounter++));
}

std::string LowerCtx::newName(const std::string &hint) {
  return hint + std::to_string(varCounter++);
}

Exprs vars(const std::vector<loop::Var> &vs) {
  Exprs r;
  for (const auto &v : vs)
    r.push_back(loop::var(v));
  return r;
}

Stmt LowerCtx::loopOver(const loop::Var &v, int64_t extent, loop::LoopRole r, Stmt body) {
  role(v, r);
  return loop::forLoop(v, imm(0), imm(extent), loop::ForKind::Serial, std::move(body));
}

Stmt loopNest(LowerCtx &c, const Shape &shape, loop::LoopRole role,
              const std::function<Stmt(const Exprs &)> &body) {
  std::vector<loop::Var> vs;
  for (size_t d = 0; d < shape.size(); ++d)
    vs.push_back(c.newVar());
  Stmt s = body(vars(vs));
  for (size_t d = shape.size(); d-- > 0;)
    s = c.loopOver(vs[d], shape[d], role, s);
  return s;
}

Exprs broadcastIndex(const Exprs &outIdx, const Shape &out, const Shape &in) {
  Exprs r;
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    r.push_back(in[d] == 1 && out[lead + d] != 1 ? imm(0) : outIdx[lead + d]);
  return r;
}

Expr linearIndex(const Exprs &idx, const Shape &shape) {
  Expr r = imm(0);
  for (size_t d = 0; d < shape.size(); ++d)
    r = r * imm(shape[d]) + idx[d];
  return r;
}

Exprs delinearize(const Expr &linear, const Shape &shape) {
  Exprs r(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    Expr q = stride == 1 ? linear : loop::binary(loop::ExprKind::FloorDiv, linear, imm(stride));
    r[d] = d == 0 ? q : loop::binary(loop::ExprKind::FloorMod, q, imm(shape[d]));
    stride *= shape[d];
  }
  return r;
}

void requireSupportedDType(const Op &op, DType t) {
  if ((t == DType::F16 || t == DType::BF16) && !loweringOf(op.kind()).narrowFloats)
    notLowered(op, std::string(dtypeName(t)) + " operands");
}

size_t checkedAxis(const LowerCtx &c, int64_t axis, size_t rank) {
  if (axis < 0 || static_cast<size_t>(axis) >= rank)
    throw LowerError(std::string(c.op.opName()) + ": axis " + std::to_string(axis) +
                     " out of range for rank " + std::to_string(rank));
  return static_cast<size_t>(axis);
}

Expr checkedDataIndex(const LowerCtx &c, const Expr &raw, DType t, int64_t dim,
                      const std::string &what, bool used) {
  // Named as every diagnostic names an op, so the run's error reads like the interpreter's.
  std::string site = diagnose(c.op, what).str();
  if (dim == 0 && used)
    throw LowerError(site + " indexes an axis of size 0");
  Expr i = t == DType::I64 ? raw : loop::cast(DType::I64, raw);
  return loop::checkIndex(i, imm(dim), std::move(site));
}

llvm::Expected<loop::LoopFunction> lowerKernel(const Op &kernelOp) {
  if (kernelOp.kind() != OpKind::Kernel)
    return makeError("lowerKernel: op '" + std::string(kernelOp.opName()) + "' is not a kernel");
  return lowerOp(kernelOp);
}

llvm::Expected<loop::LoopFunction> lowerOp(const Op &op, const LowerOptions &opts) {
  if (hasSymbolicDims(op))
    return lowerSymbolic(op, nullptr, opts);
  try {
    LowerCtx c(op);
    c.opts = opts;
    loop::LoopFunction fn;
    fn.name = std::string(op.opName());
    c.notes = &fn.notes;
    auto addBuffer = [&](const Value *v, const std::string &name, loop::ParamRole role) {
      const TensorType &t = v->type();
      if (!t.isStatic())
        notLowered(op, "symbolic dims");
      // Every lowering multiplies dims (strides, row counts) in int64; a type whose dims' product
      // overflows (hostile attributes, an empty tensor's huge dims) cannot be lowered.
      if (!shape::strideExtent(t.staticShape()))
        throw LowerError(std::string(op.opName()) + ": the dims of " + t.str() +
                         " have a product past int64");
      requireSupportedDType(op, t.dtype);
      Exprs shape;
      for (int64_t d : t.staticShape())
        shape.push_back(imm(d));
      loop::Buffer b = loop::makeBuffer(name, t.dtype, shape);
      fn.addBuffer(b, role);
      return b;
    };
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      c.ins.push_back(addBuffer(op.operand(i), "in" + std::to_string(i), loop::ParamRole::In));
      c.inShapes.push_back(op.operand(i)->type().staticShape());
      c.inTypes.push_back(op.operand(i)->type().dtype);
    }
    for (unsigned i = 0; i < op.numResults(); ++i) {
      c.outs.push_back(addBuffer(op.result(i), "out" + std::to_string(i), loop::ParamRole::Out));
      c.outShapes.push_back(op.result(i)->type().staticShape());
      c.outTypes.push_back(op.result(i)->type().dtype);
    }
    fn.body = lowerBody(c);
    // Index arithmetic folded with the loops' bounds before scheduling splits them: reshapes'
    // delinearized linear indices cancel (floordiv/floormod of a sum with multiples of the
    // divisor), so a copy through a reshape indexes like a plain one.
    return loop::simplify(fn);
  } catch (const NotLowered &e) {
    return makeError(e.what());
  } catch (const LowerError &e) {
    return makeError(std::string("lowering: ") + e.what());
  }
}

} // namespace strata::lower
