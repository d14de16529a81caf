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

Stmt LowerCtx::loopOver(const loop::Var &v, const Expr &extent, loop::LoopRole r, Stmt body) {
  role(v, r);
  return loop::forLoop(v, imm(0), extent, loop::ForKind::Serial, std::move(body));
}

Expr LowerCtx::dimExpr(const Dim &d) {
  if (d.isStatic())
    return imm(d.size);
  if (!symbolVars)
    notLowered(op, "symbolic dims");
  // One parameter per symbol and per formula dim: the plan computes formulas once per binding
  // (its derived symbols), so kernels index with plain variables.
  const std::string name = d.symbolName() ? symbolParamName(*d.symbolName())
                                          : formulaParamName(d.expr.str());
  auto [it, fresh] = symbolVars->try_emplace(name);
  if (fresh)
    it->second = loop::makeVar(name, DType::I64);
  return loop::var(it->second);
}

Exprs LowerCtx::dimsOf(const TensorType &t) {
  Exprs r;
  for (const Dim &d : t.dims)
    r.push_back(dimExpr(d));
  return r;
}

static Shape sizesOf(const TensorType &t) {
  Shape s;
  for (const Dim &d : t.dims)
    s.push_back(d.isStatic() ? d.size : -1);
  return s;
}

void LowerCtx::addIn(const loop::Buffer &b, const TensorType &t) {
  ins.push_back(b);
  inShapes.push_back(sizesOf(t));
  inDims.push_back(dimsOf(t));
  inTypes.push_back(t.dtype);
  symbolic |= !t.isStatic();
}

void LowerCtx::addOut(const loop::Buffer &b, const TensorType &t) {
  outs.push_back(b);
  outShapes.push_back(sizesOf(t));
  outDims.push_back(dimsOf(t));
  outTypes.push_back(t.dtype);
  symbolic |= !t.isStatic();
}

Stmt loopNest(LowerCtx &c, const Exprs &extents, loop::LoopRole role,
              const std::function<Stmt(const Exprs &)> &body) {
  std::vector<loop::Var> vs;
  for (size_t d = 0; d < extents.size(); ++d)
    vs.push_back(c.newVar());
  Stmt s = body(vars(vs));
  for (size_t d = extents.size(); d-- > 0;)
    s = c.loopOver(vs[d], extents[d], role, s);
  return s;
}

Stmt loopNest(LowerCtx &c, const Shape &shape, loop::LoopRole role,
              const std::function<Stmt(const Exprs &)> &body) {
  return loopNest(c, extentsOf(shape), role, body);
}

Exprs extentsOf(const Shape &shape) {
  Exprs r;
  for (int64_t d : shape)
    r.push_back(imm(d));
  return r;
}

Stmt foldLanes(LowerCtx &c, const loop::Buffer &acc, int64_t lanes,
               const std::function<Expr(const Expr &, const Expr &)> &combine,
               const loop::Buffer &result) {
  const DType t = acc->dtype;
  loop::Buffer fold = localArray(c, "fold", t, lanes);
  auto at = [](int64_t from, int64_t n) {
    return n > 1 ? loop::ramp(imm(from), imm(1), static_cast<int>(n)) : imm(from);
  };
  std::vector<Stmt> s{loop::store(fold, {at(0, lanes)}, loop::load(acc, {at(0, lanes)}))};
  for (int64_t h = lanes / 2; h >= 1; h /= 2)
    s.push_back(loop::store(fold, {at(0, h)},
                            combine(loop::load(fold, {at(0, h)}), loop::load(fold, {at(h, h)}))));
  s.push_back(loop::store(result, {imm(0)}, loop::load(fold, {imm(0)})));
  return loop::allocate(fold, loop::seq(s));
}

Expr product(const Exprs &extents) {
  Expr r = imm(1);
  for (const Expr &e : extents)
    r = mulExtents(r, e);
  return r;
}

Exprs broadcastIndex(const Exprs &outIdx, const Exprs &out, const Exprs &in) {
  Exprs r;
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    r.push_back(in[d].asInt() == 1 && out[lead + d].asInt() != 1 ? imm(0) : outIdx[lead + d]);
  return r;
}

Expr linearIndex(const Exprs &idx, const Exprs &extents) {
  Expr r = imm(0);
  for (size_t d = 0; d < extents.size(); ++d)
    r = r * extents[d] + idx[d];
  return r;
}

Exprs delinearize(const Expr &linear, const Exprs &extents) {
  Exprs r(extents.size());
  Expr stride = imm(1);
  for (size_t d = extents.size(); d-- > 0;) {
    Expr q = stride.asInt() == 1 ? linear : bin(loop::ExprKind::FloorDiv, linear, stride);
    r[d] = d == 0 ? q : bin(loop::ExprKind::FloorMod, q, extents[d]);
    stride = mulExtents(stride, extents[d]);
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
  return checkedDataIndex(c, raw, t, imm(dim), what, used);
}

Expr checkedDataIndex(const LowerCtx &c, const Expr &raw, DType t, const Expr &dim,
                      const std::string &what, bool used) {
  // Named as every diagnostic names an op, so the run's error reads like the interpreter's.
  std::string site = diagnose(c.op, what).str();
  if (dim.asInt() == 0 && used)
    throw LowerError(site + " indexes an axis of size 0");
  Expr i = t == DType::I64 ? raw : loop::cast(DType::I64, raw);
  // (A run-time axis of size 0 fails every index: check_index's range is empty.)
  return loop::checkIndex(i, dim, std::move(site));
}

Stmt requireCount(LowerCtx &c, const Expr &found, const Expr &count, const std::string &what) {
  // A check_index passes values in [-1, 1): count - found and found - count both pass only at 0.
  Acc sink = makeAcc(c, "checked", DType::I64);
  const std::string site = diagnose(c.op, what).str();
  return loop::allocate(sink.buf,
                        loop::seq({sink.set(loop::checkIndex(count - found, imm(1), site)),
                                   sink.set(loop::checkIndex(found - count, imm(1), site))}));
}

llvm::Expected<loop::LoopFunction> lowerKernel(const Op &kernelOp) {
  if (kernelOp.kind() != OpKind::Kernel)
    return makeError("lowerKernel: op '" + std::string(kernelOp.opName()) + "' is not a kernel");
  return lowerOp(kernelOp);
}

namespace {

// The function of `op` (static dims, or symbolic extents over trailing symbol parameters).
llvm::Expected<loop::LoopFunction> lowerFunction(const Op &op, const LowerOptions &opts) {
  try {
    LowerCtx c(op);
    c.opts = opts;
    std::map<std::string, loop::Var> symbolVars;
    c.symbolVars = &symbolVars;
    loop::LoopFunction fn;
    fn.name = std::string(op.opName());
    c.notes = &fn.notes;
    auto addBuffer = [&](const Value *v, const std::string &name, loop::ParamRole role) {
      const TensorType &t = v->type();
      // Every lowering multiplies dims (strides, row counts) in int64; a type whose dims' product
      // overflows (hostile attributes, an empty tensor's huge dims) cannot be lowered.
      if (t.isStatic() && !shape::strideExtent(t.staticShape()))
        throw LowerError(std::string(op.opName()) + ": the dims of " + t.str() +
                         " have a product past int64");
      requireSupportedDType(op, t.dtype);
      loop::Buffer b = loop::makeBuffer(name, t.dtype, c.dimsOf(t));
      fn.addBuffer(b, role);
      return b;
    };
    for (unsigned i = 0; i < op.numOperands(); ++i)
      c.addIn(addBuffer(op.operand(i), "in" + std::to_string(i), loop::ParamRole::In),
              op.operand(i)->type());
    for (unsigned i = 0; i < op.numResults(); ++i)
      c.addOut(addBuffer(op.result(i), "out" + std::to_string(i), loop::ParamRole::Out),
               op.result(i)->type());
    fn.body = lowerBody(c);
    for (const auto &[name, v] : symbolVars) // sorted by symbol name
      fn.addScalar(v);
    // Index arithmetic folded with the loops' bounds before scheduling splits them: reshapes'
    // delinearized linear indices cancel (floordiv/floormod of a sum with multiples of the
    // divisor), so a copy through a reshape indexes like a plain one.
    return loop::simplify(fn);
  } catch (const NotLowered &e) {
    return makeError(e.what());
  } catch (const LowerError &e) {
    return makeError(std::string("lowering: ") + e.what());
  } catch (const SymExprError &e) {
    return makeError(std::string("lowering: ") + e.what());
  }
}

} // namespace

llvm::Expected<loop::LoopFunction> lowerOp(const Op &op, const LowerOptions &opts) {
  if (hasSymbolicDims(op)) {
    auto lifted = lowerSymbolic(op, nullptr, opts);
    if (lifted)
      return lifted;
    llvm::consumeError(lifted.takeError());
  }
  return lowerFunction(op, opts);
}

llvm::Expected<loop::LoopFunction> lowerWithSymbolicExtents(const Op &op,
                                                            const LowerOptions &opts) {
  return lowerFunction(op, opts);
}

} // namespace strata::lower
