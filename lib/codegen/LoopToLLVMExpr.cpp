// Loop IR expressions -> LLVM IR values, with the interpreter's scalar semantics (lib/loop/Arith.cpp)
// reproduced instruction by instruction. See LoopEmitter.h for the value representation.
#include "LoopEmitter.h"

#include "strata/codegen/VectorMath.h"

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

namespace strata::codegen {

using loop::Expr;
using loop::ExprKind;
using loop::Intrinsic;

llvm::Type *LoopEmitter::storageType(DType t) {
  switch (t) {
  case DType::F32: return b_.getFloatTy();
  case DType::F64: return b_.getDoubleTy();
  case DType::F16: return b_.getHalfTy();
  case DType::BF16: return b_.getInt16Ty(); // converted with integer ops: no libcalls needed
  case DType::Bool: return b_.getInt8Ty();
  default: return b_.getIntNTy(static_cast<unsigned>(dtypeSize(t)) * 8);
  }
}

llvm::Type *LoopEmitter::regType(DType t) {
  if (t == DType::F16 || t == DType::BF16)
    return b_.getFloatTy();
  if (t == DType::Bool)
    return b_.getInt1Ty();
  return storageType(t);
}

llvm::Type *LoopEmitter::regType(loop::Type t) {
  llvm::Type *s = regType(t.dtype);
  return t.lanes > 1 ? llvm::FixedVectorType::get(s, t.lanes) : s;
}

// An integer constant of `ty`'s element type, splatted when `ty` is a vector.
static llvm::Value *constOf(llvm::Type *ty, uint64_t v) { return llvm::ConstantInt::get(ty, v); }

llvm::Value *LoopEmitter::roundTo(llvm::Value *v, DType t) {
  llvm::Type *fty = v->getType();
  if (t == DType::F16) {
    llvm::Type *h = b_.getHalfTy();
    if (auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(fty))
      h = llvm::FixedVectorType::get(h, vt->getNumElements());
    return b_.CreateFPExt(b_.CreateFPTrunc(v, h), fty);
  }
  if (t != DType::BF16)
    return v;
  // floatToBf16 (lib/support/DType.cpp): round to nearest even, NaNs stay quiet.
  llvm::Type *ity = fty->getWithNewType(b_.getInt32Ty());
  llvm::Value *x = b_.CreateBitCast(v, ity);
  llvm::Value *isNan =
      b_.CreateICmpUGT(b_.CreateAnd(x, constOf(ity, 0x7fffffff)), constOf(ity, 0x7f800000));
  llvm::Value *lsb = b_.CreateAnd(b_.CreateLShr(x, constOf(ity, 16)), constOf(ity, 1));
  llvm::Value *rounded = b_.CreateAdd(x, b_.CreateAdd(lsb, constOf(ity, 0x7fff)));
  llvm::Value *r = b_.CreateSelect(isNan, b_.CreateOr(x, constOf(ity, 0x400000)), rounded);
  return b_.CreateBitCast(b_.CreateAnd(r, constOf(ity, 0xffff0000u)), fty);
}

llvm::Value *LoopEmitter::toReg(llvm::Value *v, DType t) {
  llvm::Type *ty = v->getType();
  switch (t) {
  case DType::Bool: return b_.CreateICmpNE(v, llvm::Constant::getNullValue(ty));
  case DType::F16: return b_.CreateFPExt(v, ty->getWithNewType(b_.getFloatTy()));
  case DType::BF16: {
    llvm::Value *w = b_.CreateZExt(v, ty->getWithNewType(b_.getInt32Ty()));
    w = b_.CreateShl(w, constOf(w->getType(), 16));
    return b_.CreateBitCast(w, ty->getWithNewType(b_.getFloatTy()));
  }
  default: return v;
  }
}

llvm::Value *LoopEmitter::toStorage(llvm::Value *v, DType t) {
  llvm::Type *ty = v->getType();
  switch (t) {
  case DType::Bool: return b_.CreateZExt(v, ty->getWithNewType(b_.getInt8Ty()));
  case DType::F16: return b_.CreateFPTrunc(v, ty->getWithNewType(b_.getHalfTy())); // exact
  case DType::BF16: {
    llvm::Value *w = b_.CreateBitCast(v, ty->getWithNewType(b_.getInt32Ty()));
    w = b_.CreateLShr(w, constOf(w->getType(), 16)); // already rounded: drop the zero bits
    return b_.CreateTrunc(w, ty->getWithNewType(b_.getInt16Ty()));
  }
  default: return v;
  }
}

llvm::Value *LoopEmitter::toI64(llvm::Value *v, DType t) {
  llvm::Type *ty = v->getType()->getWithNewType(b_.getInt64Ty());
  return isSigned(t) ? b_.CreateSExtOrTrunc(v, ty) : b_.CreateZExtOrTrunc(v, ty);
}

// Evaluating `e` could fault (it loads, or divides integers) or report (it checks an index).
// A load whose every index is a constant (or a ramp of constants) inside the buffer's constant
// shape reads its own memory whichever way a select goes: a per-iteration local of a fused chain
// (lowering's bound values) is the common case, and guarding it would put a branch diamond per
// select into straight-line code.
static bool constantIndexInBounds(const Expr &load) {
  const loop::BufferNode &b = *load->buffer;
  if (load->operands.size() != b.rank())
    return false;
  for (size_t d = 0; d < b.rank(); ++d) {
    std::optional<int64_t> extent = b.shape[d].asInt();
    const Expr &i = load->operands[d];
    int64_t lo, hi;
    if (auto v = i.asInt()) {
      lo = hi = *v;
    } else if (i.kind() == ExprKind::Ramp && i->operands[0].asInt() && i->operands[1].asInt()) {
      int64_t base = *i->operands[0].asInt(), stride = *i->operands[1].asInt();
      int64_t last = base + stride * (i.type().lanes - 1);
      lo = std::min(base, last);
      hi = std::max(base, last);
    } else {
      return false;
    }
    if (!extent || lo < 0 || hi >= *extent)
      return false;
  }
  return true;
}

// Whether `x` itself (not its operands) could fault: a load not provably in bounds, an index
// check, an integer division.
static bool trapsItself(const Expr &x) {
  if (x.kind() == ExprKind::Load)
    return !constantIndexInBounds(x);
  if (x.kind() == ExprKind::CheckIndex)
    return true;
  bool division = x.kind() == ExprKind::Div || x.kind() == ExprKind::Mod ||
                  x.kind() == ExprKind::FloorDiv || x.kind() == ExprKind::FloorMod;
  return division && !isFloat(x.type().dtype);
}

// Calls `f` on the parts of `e` that evaluating it always evaluates: not the arms of a select
// inside it, which may be evaluated only under their condition (guardedSelect) and, where they
// are evaluated, are that select's own concern.
// Each shared node once: expressions are DAGs.
static void forEachEvaluated(const Expr &e, const std::function<void(const Expr &)> &f,
                             std::unordered_set<const loop::ExprNode *> &seen) {
  if (!seen.insert(e.get()).second)
    return;
  f(e);
  if (e.kind() == ExprKind::Select) {
    forEachEvaluated(e->operands[0], f, seen);
    return;
  }
  for (const Expr &o : e->operands)
    forEachEvaluated(o, f, seen);
}
static void forEachEvaluated(const Expr &e, const std::function<void(const Expr &)> &f) {
  std::unordered_set<const loop::ExprNode *> seen;
  forEachEvaluated(e, f, seen);
}

// Whether evaluating `e` could fault beyond what evaluating `evaluated` (always evaluated
// first: a select's condition) already risked: some faulting part of `e` is not also a part
// `evaluated` always evaluates. max(a, b) as select(a < b, b, a) reads nothing its condition
// has not read.
static bool mayTrapBeyond(const Expr &e, const Expr &evaluated) {
  std::vector<Expr> risked;
  forEachEvaluated(evaluated, [&](const Expr &x) {
    if (trapsItself(x))
      risked.push_back(x);
  });
  bool beyond = false;
  forEachEvaluated(e, [&](const Expr &x) {
    beyond = beyond || (trapsItself(x) && std::none_of(risked.begin(), risked.end(),
                                                        [&](const Expr &r) {
                                                          return r.same(x) || loop::equal(r, x);
                                                        }));
  });
  return beyond;
}

// The type of e's value: the element type when one lane is asked for.
static loop::Type valueType(const Expr &e, int lane) {
  return lane >= 0 ? e.type().element() : e.type();
}

llvm::Value *LoopEmitter::visitIntImm(const Expr &e, int) {
  auto *ity = llvm::cast<llvm::IntegerType>(regType(e.type().dtype));
  return isSigned(e.type().dtype) ? llvm::ConstantInt::getSigned(ity, e->intValue)
                                  : llvm::ConstantInt::get(ity, static_cast<uint64_t>(e->intValue));
}

llvm::Value *LoopEmitter::visitFloatImm(const Expr &e, int) {
  return llvm::ConstantFP::get(regType(e.type().dtype), e->floatValue);
}

llvm::Value *LoopEmitter::visitVar(const Expr &e, int lane) {
  auto it = vars.find(e->var.get());
  if (it == vars.end()) {
    error = "variable %" + e->var->name + " is not bound";
    return llvm::UndefValue::get(regType(valueType(e, lane)));
  }
  return it->second;
}

llvm::Value *LoopEmitter::visitRamp(const Expr &e, int lane) {
  const auto &ops = e->operands;
  int lanes = e.type().lanes;
  llvm::Value *base = expr(ops[0]), *stride = expr(ops[1]);
  if (lane >= 0)
    return b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantInt::get(base->getType(), lane)));
  std::vector<llvm::Constant *> idx;
  for (int l = 0; l < lanes; ++l)
    idx.push_back(llvm::ConstantInt::get(base->getType(), l));
  llvm::Value *steps =
      b_.CreateMul(b_.CreateVectorSplat(lanes, stride), llvm::ConstantVector::get(idx));
  return b_.CreateAdd(b_.CreateVectorSplat(lanes, base), steps);
}

llvm::Value *LoopEmitter::visitBroadcast(const Expr &e, int lane) {
  llvm::Value *v = expr(e->operands[0]);
  return lane >= 0 ? v : b_.CreateVectorSplat(e.type().lanes, v);
}

llvm::Value *LoopEmitter::visitNot(const Expr &e, int lane) {
  return b_.CreateNot(expr(e->operands[0], lane));
}

llvm::Value *LoopEmitter::visitSelect(const Expr &e, int lane) {
  const auto &ops = e->operands;
  if (mayTrapBeyond(ops[1], ops[0]) || mayTrapBeyond(ops[2], ops[0]))
    return guardedSelect(e, lane);
  llvm::Value *c = expr(ops[0], lane), *t = expr(ops[1], lane), *f = expr(ops[2], lane);
  return b_.CreateSelect(c, t, f);
}

llvm::Value *LoopEmitter::visitCast(const Expr &e, int lane) {
  const Expr &x = e->operands[0];
  return castValue(expr(x, lane), x.type().dtype, e.type().dtype);
}

llvm::Value *LoopEmitter::visitCall(const Expr &e, int lane) {
  std::vector<llvm::Value *> args;
  for (const Expr &o : e->operands)
    args.push_back(expr(o, lane));
  return call(e, std::move(args));
}

// An index into an axis of `size`: [-size, size) wraps once, anything else gives 0. The compare
// is on the hot path; a failure branches to a cold call of strata_index_error (KernelStatus.h)
// with the site's text, a failing lane's value and the range, and the kernel goes on with 0, so
// no access leaves its buffer.
llvm::Value *LoopEmitter::visitCheckIndex(const Expr &e, int lane) {
  const auto &ops = e->operands;
  DType t = ops[0].type().dtype;
  llvm::Value *v = expr(ops[0], lane), *size = expr(ops[1]);
  bool vec = v->getType()->isVectorTy();
  int lanes =
      vec ? static_cast<int>(llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements()) : 1;
  llvm::Value *lo = b_.CreateNeg(size), *hi = size;
  llvm::Value *vlo = vec ? b_.CreateVectorSplat(lanes, lo) : lo;
  llvm::Value *vhi = vec ? b_.CreateVectorSplat(lanes, hi) : hi;
  llvm::Value *zero = llvm::Constant::getNullValue(v->getType());
  llvm::Value *ok = b_.CreateAnd(b_.CreateICmpSGE(v, vlo), b_.CreateICmpSLT(v, vhi));
  llvm::Value *wrapped = b_.CreateAdd(v, b_.CreateSelect(b_.CreateICmpSLT(v, zero), vhi, zero));
  llvm::Value *result = b_.CreateSelect(ok, wrapped, zero);
  if (!status) {
    error = "check_index outside a kernel function";
    return result;
  }
  llvm::Value *allOk = vec ? b_.CreateAndReduce(ok) : ok;
  auto *failBB = llvm::BasicBlock::Create(ctx_, "check.fail", fn_);
  auto *contBB = llvm::BasicBlock::Create(ctx_, "check.ok", fn_);
  b_.CreateCondBr(allOk, contBB, failBB, llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());
  b_.SetInsertPoint(failBB);
  llvm::Value *bad = v;
  if (vec) { // the largest failing lane's value (passing lanes contribute the type's minimum)
    llvm::Value *least = llvm::ConstantInt::get(
        v->getType(), llvm::APInt::getSignedMinValue(v->getType()->getScalarSizeInBits()));
    bad = b_.CreateIntMaxReduce(b_.CreateSelect(ok, least, v), true);
  }
  llvm::Type *i64 = b_.getInt64Ty(), *ptr = b_.getPtrTy();
  llvm::FunctionCallee report = m_.getOrInsertFunction(
      "strata_index_error",
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, i64, i64, i64}, false));
  llvm::Value *site = b_.CreateGlobalString(e->site, "check.site", 0, &m_);
  b_.CreateCall(report, {status, site, toI64(bad, t), toI64(lo, t), toI64(hi, t)});
  b_.CreateBr(contBB);
  b_.SetInsertPoint(contBB);
  return result;
}

llvm::Value *LoopEmitter::visitBinary(const Expr &e, int lane) {
  llvm::Value *a = expr(e->operands[0], lane), *b = expr(e->operands[1], lane);
  return binary(e, a, b);
}

// A select whose unchosen arm could fault (an out-of-bounds load, a division by zero) must not
// evaluate that arm, as in the interpreter: branch per lane and merge with a phi.
llvm::Value *LoopEmitter::guardedSelect(const Expr &e, int lane) {
  const auto &ops = e->operands;
  if (lane < 0 && e.type().lanes > 1) {
    llvm::Value *v = llvm::PoisonValue::get(regType(e.type()));
    for (int l = 0; l < e.type().lanes; ++l)
      v = b_.CreateInsertElement(v, guardedSelect(e, l), static_cast<uint64_t>(l));
    return v;
  }
  llvm::Value *c = expr(ops[0], ops[0].type().lanes > 1 ? std::max(lane, 0) : -1);
  auto *thenBB = llvm::BasicBlock::Create(ctx_, "sel.t", fn_);
  auto *elseBB = llvm::BasicBlock::Create(ctx_, "sel.f", fn_);
  auto *mergeBB = llvm::BasicBlock::Create(ctx_, "sel.end", fn_);
  b_.CreateCondBr(c, thenBB, elseBB);
  b_.SetInsertPoint(thenBB);
  llvm::Value *t = expr(ops[1], lane);
  llvm::BasicBlock *tEnd = b_.GetInsertBlock();
  b_.CreateBr(mergeBB);
  b_.SetInsertPoint(elseBB);
  llvm::Value *f = expr(ops[2], lane);
  llvm::BasicBlock *fEnd = b_.GetInsertBlock();
  b_.CreateBr(mergeBB);
  b_.SetInsertPoint(mergeBB);
  llvm::PHINode *phi = b_.CreatePHI(t->getType(), 2);
  phi->addIncoming(t, tEnd);
  phi->addIncoming(f, fEnd);
  return phi;
}

llvm::Value *LoopEmitter::intDivision(ExprKind k, llvm::Value *a, llvm::Value *b, DType t) {
  if (!isSigned(t)) {
    bool div = k == ExprKind::Div || k == ExprKind::FloorDiv;
    return div ? b_.CreateUDiv(a, b) : b_.CreateURem(a, b);
  }
  // The interpreter divides sign-extended 64-bit values and wraps: INT32_MIN / -1 wraps rather
  // than trapping, so narrow types divide in i64.
  llvm::Type *ty = a->getType();
  bool widen = ty->getScalarSizeInBits() < 64;
  if (widen) {
    a = toI64(a, t);
    b = toI64(b, t);
  }
  llvm::Value *q = b_.CreateSDiv(a, b), *r = b_.CreateSRem(a, b), *res = nullptr;
  if (k == ExprKind::Div) {
    res = q;
  } else if (k == ExprKind::Mod) {
    res = r;
  } else {
    llvm::Value *zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value *adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                       b_.CreateXor(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(b, zero)));
    res = k == ExprKind::FloorDiv ? b_.CreateSub(q, b_.CreateZExt(adjust, q->getType()))
                                  : b_.CreateAdd(r, b_.CreateSelect(adjust, b, zero));
  }
  return widen ? b_.CreateTrunc(res, ty) : res;
}

llvm::Value *LoopEmitter::binary(const Expr &e, llvm::Value *a, llvm::Value *b) {
  ExprKind k = e.kind();
  DType t = e->operands[0].type().dtype;
  llvm::Intrinsic::ID minmax = llvm::Intrinsic::not_intrinsic;
  if (isFloat(t)) {
    llvm::Value *r = nullptr;
    switch (k) {
    case ExprKind::Add: r = b_.CreateFAdd(a, b); break;
    case ExprKind::Sub: r = b_.CreateFSub(a, b); break;
    case ExprKind::Mul: r = b_.CreateFMul(a, b); break;
    case ExprKind::Div: r = b_.CreateFDiv(a, b); break;
    case ExprKind::Mod: r = b_.CreateFRem(a, b); break; // C fmod
    // std::fmin/fmax: a NaN operand yields the other one, which is llvm.minnum/maxnum.
    case ExprKind::Min: minmax = llvm::Intrinsic::minnum; break;
    case ExprKind::Max: minmax = llvm::Intrinsic::maxnum; break;
    case ExprKind::EQ: return b_.CreateFCmpOEQ(a, b);
    case ExprKind::NE: return b_.CreateFCmpUNE(a, b); // C's != is true for NaN
    case ExprKind::LT: return b_.CreateFCmpOLT(a, b);
    case ExprKind::LE: return b_.CreateFCmpOLE(a, b);
    case ExprKind::GT: return b_.CreateFCmpOGT(a, b);
    case ExprKind::GE: return b_.CreateFCmpOGE(a, b);
    default: error = "unsupported float operation " + std::string(loop::exprKindName(k)); return a;
    }
    if (!r)
      return b_.CreateBinaryIntrinsic(minmax, a, b);
    return roundTo(r, t);
  }
  bool sgn = isSigned(t);
  switch (k) {
  case ExprKind::Add: return b_.CreateAdd(a, b);
  case ExprKind::Sub: return b_.CreateSub(a, b);
  case ExprKind::Mul: return b_.CreateMul(a, b);
  case ExprKind::Div:
  case ExprKind::Mod:
  case ExprKind::FloorDiv:
  case ExprKind::FloorMod: return intDivision(k, a, b, t);
  case ExprKind::Min:
    return b_.CreateBinaryIntrinsic(sgn ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, b);
  case ExprKind::Max:
    return b_.CreateBinaryIntrinsic(sgn ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, b);
  case ExprKind::EQ: return b_.CreateICmpEQ(a, b);
  case ExprKind::NE: return b_.CreateICmpNE(a, b);
  case ExprKind::LT: return sgn ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
  case ExprKind::LE: return sgn ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
  case ExprKind::GT: return sgn ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
  case ExprKind::GE: return sgn ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
  case ExprKind::And: return b_.CreateAnd(a, b);
  case ExprKind::Or: return b_.CreateOr(a, b);
  case ExprKind::BitAnd: return b_.CreateAnd(a, b);
  case ExprKind::BitOr: return b_.CreateOr(a, b);
  case ExprKind::BitXor: return b_.CreateXor(a, b);
  case ExprKind::Shl:
  case ExprKind::Shr: {
    // LLVM's shift by >= the width is poison; the loop IR defines it as 0 (the select never
    // picks the poison arm).
    llvm::Value *s = k == ExprKind::Shl ? b_.CreateShl(a, b) : b_.CreateLShr(a, b);
    llvm::Value *width = constOf(a->getType(), a->getType()->getScalarSizeInBits());
    return b_.CreateSelect(b_.CreateICmpUGE(b, width), llvm::Constant::getNullValue(a->getType()), s);
  }
  default: error = "unsupported integer operation " + std::string(loop::exprKindName(k)); return a;
  }
}

// arith::castScalar, instruction by instruction.
llvm::Value *LoopEmitter::castValue(llvm::Value *v, DType from, DType to) {
  if (from == to)
    return v;
  llvm::Type *ty = v->getType();
  llvm::Type *dst = ty->getWithNewType(regType(to));
  llvm::Type *f32 = ty->getWithNewType(b_.getFloatTy()), *f64 = ty->getWithNewType(b_.getDoubleTy());
  if (isFloat(to)) {
    if (!isFloat(from)) // the interpreter converts to double first, then rounds to `to`
      v = isSigned(from) ? b_.CreateSIToFP(v, f64) : b_.CreateUIToFP(v, f64);
    if (to == DType::F64)
      return v->getType() == f64 ? v : b_.CreateFPExt(v, f64);
    if (v->getType() == f64)
      v = b_.CreateFPTrunc(v, f32);
    return roundTo(v, to);
  }
  if (!isFloat(from)) {
    if (to == DType::Bool)
      return b_.CreateICmpNE(v, llvm::Constant::getNullValue(ty));
    unsigned sb = ty->getScalarSizeInBits(), db = dst->getScalarSizeInBits();
    if (db < sb)
      return b_.CreateTrunc(v, dst);
    if (db > sb)
      return isSigned(from) ? b_.CreateSExt(v, dst) : b_.CreateZExt(v, dst);
    return v;
  }
  if (to == DType::Bool)
    return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(ty));
  // Truncate toward zero, saturate, NaN -> 0: exactly the saturating conversions.
  auto id = isSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
  return b_.CreateIntrinsic(id, {dst, ty}, {v});
}

// Calls a one-argument libm function (f64 atan, erf, tanh), lane by lane for vectors.
llvm::Value *LoopEmitter::libmCall(llvm::StringRef name, llvm::Value *x) {
  llvm::Type *d = b_.getDoubleTy();
  llvm::FunctionCallee f = m_.getOrInsertFunction(name, llvm::FunctionType::get(d, {d}, false));
  auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vt)
    return b_.CreateCall(f, {x});
  llvm::Value *r = llvm::PoisonValue::get(vt);
  for (unsigned l = 0; l < vt->getNumElements(); ++l)
    r = b_.CreateInsertElement(r, b_.CreateCall(f, {b_.CreateExtractElement(x, l)}), l);
  return r;
}

llvm::Value *LoopEmitter::call(const Expr &e, std::vector<llvm::Value *> a) {
  DType t = e.type().dtype;
  llvm::Value *x = a[0];
  llvm::Type *ty = x->getType();
  Intrinsic in = e->intrinsic;
  if (!isFloat(t)) { // abs of an integer: wraps (abs(INT_MIN) = INT_MIN)
    if (!isSigned(t) && t != DType::U64) // held zero-extended: never negative
      return x;
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
  }
  auto unaryIntrinsic = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, x); };
  llvm::Value *r = nullptr;
  switch (in) {
  case Intrinsic::Abs: return unaryIntrinsic(llvm::Intrinsic::fabs);
  case Intrinsic::Ceil: return unaryIntrinsic(llvm::Intrinsic::ceil);
  case Intrinsic::Floor: return unaryIntrinsic(llvm::Intrinsic::floor);
  case Intrinsic::Round: return unaryIntrinsic(llvm::Intrinsic::roundeven); // ties to even
  case Intrinsic::Sqrt: r = unaryIntrinsic(llvm::Intrinsic::sqrt); break;
  case Intrinsic::Fma:
    // f64: llvm.fma is std::fma exactly. Narrower: llvm.fmuladd (fused where the CPU has FMA);
    // the interpreter's f64 fma then rounding differs from either by at most an ulp.
    r = b_.CreateIntrinsic(t == DType::F64 ? llvm::Intrinsic::fma : llvm::Intrinsic::fmuladd, {ty},
                           {a[0], a[1], a[2]});
    break;
  default: break;
  }
  if (r)
    return roundTo(r, t);
  if (t == DType::F64) { // libm, like the interpreter (resolved from the process by the JIT)
    switch (in) {
    case Intrinsic::Exp: return unaryIntrinsic(llvm::Intrinsic::exp);
    case Intrinsic::Log: return unaryIntrinsic(llvm::Intrinsic::log);
    case Intrinsic::Sin: return unaryIntrinsic(llvm::Intrinsic::sin);
    case Intrinsic::Cos: return unaryIntrinsic(llvm::Intrinsic::cos);
    case Intrinsic::Pow: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a[0], a[1]);
    case Intrinsic::Atan: return libmCall("atan", x);
    case Intrinsic::Erf: return libmCall("erf", x);
    case Intrinsic::Tanh: return libmCall("tanh", x);
    case Intrinsic::Sigmoid: {
      llvm::Value *one = llvm::ConstantFP::get(ty, 1.0);
      llvm::Value *ex = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b_.CreateFNeg(x));
      return b_.CreateFDiv(one, b_.CreateFAdd(one, ex));
    }
    default: break;
    }
  }
  switch (in) { // f32 (and f16/bf16 held as f32): the polynomial emitters
  case Intrinsic::Exp: r = emitExp(b_, x); break;
  case Intrinsic::Log: r = emitLog(b_, x); break;
  case Intrinsic::Tanh: r = emitTanh(b_, x); break;
  case Intrinsic::Erf: r = emitErf(b_, x); break;
  case Intrinsic::Sigmoid: r = emitSigmoid(b_, x); break;
  case Intrinsic::Sin: r = emitSin(b_, x); break;
  case Intrinsic::Cos: r = emitCos(b_, x); break;
  case Intrinsic::Atan: r = emitAtan(b_, x); break;
  case Intrinsic::Pow: r = emitPow(b_, a[0], a[1]); break;
  default: error = "unsupported intrinsic " + std::string(loop::intrinsicName(in)); return x;
  }
  return roundTo(r, t);
}

} // namespace strata::codegen
