// Kernels of the unary elementwise ops. Transcendentals are defined on floats only (f16/bf16
// computed in f32); rounding ops are the identity on integers.
#include "ElementwiseOps.h"

#include <algorithm>

namespace strata::interp {
namespace {

struct NegFn {
  static constexpr const char *name = "neg";
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> C operator()(C x) const {
    if constexpr (kIsFloat<C>)
      return -x;
    else
      return wrapSub(C{0}, x);
  }
};

struct AbsFn {
  static constexpr const char *name = "abs";
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> C operator()(C x) const {
    if constexpr (kIsFloat<C>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<C>)
      return x < 0 ? wrapSub(C{0}, x) : x; // abs(MIN) wraps to MIN
    else
      return x;
  }
};

struct SignFn {
  static constexpr const char *name = "sign";
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> C operator()(C x) const {
    if constexpr (kIsFloat<C>)
      if (std::isnan(x))
        return x;
    if constexpr (std::is_signed_v<C>)
      return static_cast<C>((x > 0) - (x < 0));
    else
      return static_cast<C>(x > 0);
  }
};

// A float-only math function given as a callable on float and double.
#define STRATA_FLOAT_UNARY(Name, opName, expr)                                                     \
  struct Name {                                                                                    \
    static constexpr const char *name = opName;                                                    \
    template <typename C> static constexpr bool supports = kIsFloat<C>;                            \
    template <typename C> C operator()(C x) const { return expr; }                                 \
  };
STRATA_FLOAT_UNARY(ExpFn, "exp", std::exp(x))
STRATA_FLOAT_UNARY(LogFn, "log", std::log(x))
STRATA_FLOAT_UNARY(SqrtFn, "sqrt", std::sqrt(x))
STRATA_FLOAT_UNARY(SinFn, "sin", std::sin(x))
STRATA_FLOAT_UNARY(CosFn, "cos", std::cos(x))
STRATA_FLOAT_UNARY(AtanFn, "atan", std::atan(x))
STRATA_FLOAT_UNARY(TanhFn, "tanh", std::tanh(x))
STRATA_FLOAT_UNARY(ErfFn, "erf", std::erf(x))
STRATA_FLOAT_UNARY(SigmoidFn, "sigmoid", C(1) / (C(1) + std::exp(-x)))
STRATA_FLOAT_UNARY(HardSwishFn, "hard_swish",
                   x *std::max(C(0), std::min(C(1), x *C(1.0 / 6.0) + C(0.5))))
#undef STRATA_FLOAT_UNARY

// Rounding: identity on integers (already integral).
#define STRATA_ROUNDING_UNARY(Name, opName, expr)                                                  \
  struct Name {                                                                                    \
    static constexpr const char *name = opName;                                                    \
    template <typename C> static constexpr bool supports = kIsNumeric<C>;                          \
    template <typename C> C operator()(C x) const {                                                \
      if constexpr (kIsFloat<C>)                                                                   \
        return expr;                                                                               \
      else                                                                                         \
        return x;                                                                                  \
    }                                                                                              \
  };
STRATA_ROUNDING_UNARY(FloorFn, "floor", std::floor(x))
STRATA_ROUNDING_UNARY(CeilFn, "ceil", std::ceil(x))
// nearbyint in the default rounding mode rounds halves to even, as ONNX Round requires.
STRATA_ROUNDING_UNARY(RoundFn, "round", std::nearbyint(x))
#undef STRATA_ROUNDING_UNARY

// Logical on bool, bitwise on integers.
struct NotFn {
  static constexpr const char *name = "not";
  template <typename C> static constexpr bool supports = !kIsFloat<C>;
  template <typename C> C operator()(C x) const {
    if constexpr (kIsBool<C>)
      return !x;
    else
      return static_cast<C>(~x);
  }
};

struct IsNaNFn {
  static constexpr const char *name = "isnan";
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> bool operator()(C x) const {
    if constexpr (kIsFloat<C>)
      return std::isnan(x);
    else
      return false;
  }
};

struct IsInfFn {
  static constexpr const char *name = "isinf";
  bool detectNegative = true;
  bool detectPositive = true;
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> bool operator()(C x) const {
    if constexpr (kIsFloat<C>)
      return std::isinf(x) && (x > 0 ? detectPositive : detectNegative);
    else
      return false;
  }
};

template <typename Fn, bool ToBool = false> Tensors unaryKernel(const Op &, const Tensors &xs) {
  return {applyUnary<ToBool>(xs[0], Fn{})};
}

Tensors isInfKernel(const Op &op, const Tensors &xs) {
  IsInfFn fn;
  const ops::IsInfOp isInf(op);
  fn.detectNegative = isInf.detect_negative();
  fn.detectPositive = isInf.detect_positive();
  return {applyUnary<true>(xs[0], fn)};
}

} // namespace

void registerUnaryKernels(KernelFn *table) {
  auto set = [&](OpKind k, KernelFn fn) { table[static_cast<size_t>(k)] = fn; };
  set(OpKind::Neg, unaryKernel<NegFn>);
  set(OpKind::Abs, unaryKernel<AbsFn>);
  set(OpKind::Sign, unaryKernel<SignFn>);
  set(OpKind::Exp, unaryKernel<ExpFn>);
  set(OpKind::Log, unaryKernel<LogFn>);
  set(OpKind::Sqrt, unaryKernel<SqrtFn>);
  set(OpKind::Sin, unaryKernel<SinFn>);
  set(OpKind::Cos, unaryKernel<CosFn>);
  set(OpKind::Atan, unaryKernel<AtanFn>);
  set(OpKind::Tanh, unaryKernel<TanhFn>);
  set(OpKind::Erf, unaryKernel<ErfFn>);
  set(OpKind::Sigmoid, unaryKernel<SigmoidFn>);
  set(OpKind::HardSwish, unaryKernel<HardSwishFn>);
  set(OpKind::Floor, unaryKernel<FloorFn>);
  set(OpKind::Ceil, unaryKernel<CeilFn>);
  set(OpKind::Round, unaryKernel<RoundFn>);
  set(OpKind::Not, unaryKernel<NotFn>);
  set(OpKind::IsNaN, unaryKernel<IsNaNFn, true>);
  set(OpKind::IsInf, isInfKernel);
}

} // namespace strata::interp
