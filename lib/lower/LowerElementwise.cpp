// Elementwise ops (unary, binary, select, cast): one loop nest over the result shape whose body
// stores the op's scalar expression of the broadcast operand loads. The scalar rules mirror
// lib/interp/ElementwiseOps.h exactly where the loop IR's own semantics differ (integer division
// by zero gives 0, max/min propagate NaN, sign of NaN is NaN, ...). f16/bf16 operands compute in
// f32 and round once into the result, as the interpreter's ElemTraits do.
#include "LowerImpl.h"

#include <cmath>

namespace strata::lower {
namespace {

using loop::ExprKind;
using loop::Intrinsic;

Expr typedImm(double v, DType t) { return isFloat(t) ? loop::floatImm(v, t) : loop::intImm(static_cast<int64_t>(v), t); }
bool isNarrowFloat(DType t) { return t == DType::F16 || t == DType::BF16; }
DType computeType(DType t) { return isNarrowFloat(t) ? DType::F32 : t; }
// All bits set in t (integers): ~x is x ^ allOnes.
Expr allOnes(DType t) {
  unsigned bits = static_cast<unsigned>(dtypeSize(t)) * 8;
  return loop::intImm(isSigned(t) || bits == 64 ? -1 : static_cast<int64_t>((uint64_t(1) << bits) - 1), t);
}

// Transcendentals and rounding map to loop intrinsics (rounding is the identity on integers).
std::optional<Intrinsic> mathIntrinsic(OpKind k) {
  switch (k) {
  case OpKind::Exp: return Intrinsic::Exp;
  case OpKind::Log: return Intrinsic::Log;
  case OpKind::Sqrt: return Intrinsic::Sqrt;
  case OpKind::Sin: return Intrinsic::Sin;
  case OpKind::Cos: return Intrinsic::Cos;
  case OpKind::Atan: return Intrinsic::Atan;
  case OpKind::Tanh: return Intrinsic::Tanh;
  case OpKind::Erf: return Intrinsic::Erf;
  case OpKind::Sigmoid: return Intrinsic::Sigmoid;
  case OpKind::Floor: return Intrinsic::Floor;
  case OpKind::Ceil: return Intrinsic::Ceil;
  case OpKind::Round: return Intrinsic::Round;
  default: return std::nullopt;
  }
}

Expr unaryExpr(const Op &op, const Expr &x, DType t) {
  OpKind k = op.kind();
  bool fl = isFloat(t);
  if (auto in = mathIntrinsic(k)) {
    bool rounding = k == OpKind::Floor || k == OpKind::Ceil || k == OpKind::Round;
    if (!fl && rounding)
      return x;
    if (!fl)
      notLowered(op, "integer operand");
    return loop::call(*in, {x});
  }
  switch (k) {
  case OpKind::Neg:
    if (t == DType::Bool)
      notLowered(op, "bool operand");
    return bin(ExprKind::Sub, typedImm(fl ? -0.0 : 0, t), x); // -0.0 - x == -x, also for 0 and NaN
  case OpKind::Abs:
    if (t == DType::Bool)
      notLowered(op, "bool operand");
    if (fl)
      return loop::call(Intrinsic::Abs, {x});
    if (!isSigned(t))
      return x;
    return loop::select(bin(ExprKind::LT, x, typedImm(0, t)), bin(ExprKind::Sub, typedImm(0, t), x), x);
  case OpKind::Sign: {
    if (t == DType::Bool)
      notLowered(op, "bool operand");
    Expr zero = typedImm(0, t), one = typedImm(1, t);
    Expr pos = bin(ExprKind::GT, x, zero);
    if (!isSigned(t))
      return loop::select(pos, one, zero);
    Expr s = loop::select(pos, one, loop::select(bin(ExprKind::LT, x, zero), typedImm(-1, t), zero));
    return fl ? loop::select(isNaN(x), x, s) : s;
  }
  case OpKind::Not:
    if (t == DType::Bool)
      return loop::logicalNot(x);
    if (isInteger(t))
      return bin(ExprKind::BitXor, x, allOnes(t));
    notLowered(op, std::string(dtypeName(t)) + " operand");
  case OpKind::HardSwish: { // the interpreter's HardSwishFn, term for term
    if (!fl)
      notLowered(op, "integer operand");
    Expr gate = bin(ExprKind::Add, bin(ExprKind::Mul, x, typedImm(1.0 / 6.0, t)), typedImm(0.5, t));
    Expr one = typedImm(1, t), zero = typedImm(0, t);
    gate = loop::select(bin(ExprKind::LT, gate, one), gate, one);   // std::min(1, gate)
    gate = loop::select(bin(ExprKind::LT, zero, gate), gate, zero); // std::max(0, gate)
    return bin(ExprKind::Mul, x, gate);
  }
  case OpKind::IsNaN:
    return fl ? isNaN(x) : loop::boolImm(false);
  case OpKind::IsInf: {
    if (!fl)
      return loop::boolImm(false);
    const ops::IsInfOp isInf(op);
    bool neg = isInf.detect_negative(), pos = isInf.detect_positive();
    Expr r = loop::boolImm(false);
    if (pos)
      r = bin(ExprKind::EQ, x, typedImm(INFINITY, t));
    if (neg)
      r = pos ? bin(ExprKind::Or, r, bin(ExprKind::EQ, x, typedImm(-INFINITY, t)))
              : bin(ExprKind::EQ, x, typedImm(-INFINITY, t));
    return r;
  }
  default:
    notLowered(op);
  }
}

// Integer division and remainder with the interpreter's defined results for the cases C leaves
// undefined: x / 0 == 0, x % 0 == 0, MIN / -1 == MIN, x % -1 == 0. The divisor is made safe
// before dividing so that no evaluation order can trap.
Expr intDivMod(const Op &op, const Expr &a, const Expr &b, DType t, bool mod) {
  Expr zero = typedImm(0, t), one = typedImm(1, t);
  Expr bz = bin(ExprKind::EQ, b, zero);
  Expr special = bz;
  Expr specialValue = zero;
  if (isSigned(t)) {
    Expr bm1 = bin(ExprKind::EQ, b, typedImm(-1, t));
    special = bin(ExprKind::Or, bz, bm1);
    specialValue = mod ? zero : loop::select(bz, zero, bin(ExprKind::Sub, zero, a));
  }
  Expr safe = loop::select(special, one, b);
  Expr r = bin(mod ? ExprKind::Mod : ExprKind::Div, a, safe);
  if (mod && isSigned(t) && !ops::ModOp(op).fmod()) {
    // Python-style: the remainder takes the divisor's sign.
    Expr fix = bin(ExprKind::And, bin(ExprKind::NE, r, zero),
                   bin(ExprKind::NE, bin(ExprKind::LT, r, zero), bin(ExprKind::LT, b, zero)));
    r = loop::select(fix, bin(ExprKind::Add, r, b), r);
  }
  return loop::select(special, specialValue, r);
}

Expr binaryExpr(const Op &op, const Expr &a, const Expr &b, DType t) {
  bool fl = isFloat(t), isBool = t == DType::Bool;
  switch (op.kind()) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
    if (isBool)
      notLowered(op, "bool operands");
    return bin(op.kind() == OpKind::Add ? ExprKind::Add
               : op.kind() == OpKind::Sub ? ExprKind::Sub
                                          : ExprKind::Mul,
               a, b);
  case OpKind::Div:
    if (isBool)
      notLowered(op, "bool operands");
    return fl ? bin(ExprKind::Div, a, b) : intDivMod(op, a, b, t, false);
  case OpKind::Mod: {
    if (isBool)
      notLowered(op, "bool operands");
    if (!fl)
      return intDivMod(op, a, b, t, true);
    Expr r = bin(ExprKind::Mod, a, b); // C fmod
    if (ops::ModOp(op).fmod())
      return r;
    // Python-style: the remainder takes the divisor's sign.
    Expr zero = typedImm(0, t);
    Expr fix = bin(ExprKind::And, bin(ExprKind::NE, r, zero),
                   bin(ExprKind::NE, bin(ExprKind::LT, r, zero), bin(ExprKind::LT, b, zero)));
    return loop::select(fix, bin(ExprKind::Add, r, b), r);
  }
  case OpKind::Pow:
    if (!fl) // a loop of squarings: lowerElementwise lowers it as a statement (lowerIntPow)
      notLowered(op, "integer operands inside a fused kernel");
    return loop::call(Intrinsic::Pow, {a, b});
  case OpKind::Max:
  case OpKind::Min: {
    bool isMax = op.kind() == OpKind::Max;
    if (isBool)
      return bin(isMax ? ExprKind::Or : ExprKind::And, a, b);
    if (!fl)
      return bin(isMax ? ExprKind::Max : ExprKind::Min, a, b);
    // NaN propagates (first operand's NaN first); otherwise a < b ? b : a (max), b < a ? b : a.
    Expr pick = isMax ? loop::select(bin(ExprKind::LT, a, b), b, a)
                      : loop::select(bin(ExprKind::LT, b, a), b, a);
    return loop::select(isNaN(a), a, loop::select(isNaN(b), b, pick));
  }
  case OpKind::And:
  case OpKind::Or:
  case OpKind::Xor:
    if (fl)
      notLowered(op, std::string(dtypeName(t)) + " operands");
    if (!isBool) // bitwise on integers
      return bin(op.kind() == OpKind::And ? ExprKind::BitAnd
                 : op.kind() == OpKind::Or ? ExprKind::BitOr
                                           : ExprKind::BitXor,
                 a, b);
    return bin(op.kind() == OpKind::And ? ExprKind::And
               : op.kind() == OpKind::Or ? ExprKind::Or
                                         : ExprKind::NE,
               a, b);
  case OpKind::BitShift: {
    if (!isInteger(t))
      notLowered(op, std::string(dtypeName(t)) + " operands");
    bool left = ops::BitShiftOp(op).direction() == ShiftDirection::Left;
    return bin(left ? ExprKind::Shl : ExprKind::Shr, a, b);
  }
  case OpKind::Eq:
  case OpKind::Lt:
  case OpKind::Le: {
    ExprKind k = op.kind() == OpKind::Eq ? ExprKind::EQ
                 : op.kind() == OpKind::Lt ? ExprKind::LT
                                           : ExprKind::LE;
    if (isBool) // comparisons are not defined on bool in the loop IR
      return bin(k, loop::cast(DType::I8, a), loop::cast(DType::I8, b));
    return bin(k, a, b);
  }
  default:
    notLowered(op);
  }
}

} // namespace

namespace {
// The expression over operands of compute dtypes (no f16/bf16).
Expr computeExpr(const Op &op, const Exprs &args, const std::vector<DType> &argTypes) {
  switch (op.kind()) {
  case OpKind::Select:
    return loop::select(args[0], args[1], args[2]);
  case OpKind::Cast: {
    DType to = computeType(ops::CastOp(op).to());
    return to == argTypes[0] ? args[0] : loop::cast(to, args[0]);
  }
  default:
    break;
  }
  if (args.size() == 1)
    return unaryExpr(op, args[0], argTypes[0]);
  return binaryExpr(op, args[0], args[1], argTypes[0]);
}
} // namespace

Expr elementwiseExpr(const Op &op, const Exprs &args, const std::vector<DType> &argTypes) {
  Exprs wide = args;
  std::vector<DType> wideTypes = argTypes;
  if (op.kind() == OpKind::Pow && argTypes[1] != argTypes[0]) { // exponent to the base's dtype
    wide[1] = loop::cast(argTypes[0], args[1]);
    wideTypes[1] = argTypes[0];
  }
  for (size_t i = 0; i < args.size(); ++i)
    if (isNarrowFloat(wideTypes[i])) {
      wide[i] = loop::cast(DType::F32, wide[i]);
      wideTypes[i] = DType::F32;
    }
  Expr r = computeExpr(op, wide, wideTypes);
  // A narrow result rounds here, once (a cast from f64 rounds to f32 first, as the interpreter).
  DType result = op.result(0)->type().dtype;
  return r.type().dtype == result ? r : loop::cast(result, r);
}

Stmt lowerElementwise(LowerCtx &c) {
  if (c.op.kind() == OpKind::Pow && isInteger(c.inTypes[0]))
    return lowerIntPow(c);
  const Exprs &out = c.outDims[0];
  return loopNest(c, out, LoopRole::Parallel, [&](const Exprs &idx) {
    Exprs args;
    for (size_t i = 0; i < c.ins.size(); ++i)
      args.push_back(loop::load(c.ins[i], broadcastIndex(idx, out, c.inDims[i])));
    return loop::store(c.outs[0], idx, elementwiseExpr(c.op, args, c.inTypes));
  });
}

} // namespace strata::lower
