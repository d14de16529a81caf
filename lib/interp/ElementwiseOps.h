// Internal: scalar semantics of the elementwise ops, one functor per op, and the loops that map
// them over tensors. A functor's `supports<C>` says which compute types the op is defined on (ONNX
// rules, extended where a sane definition exists); `operator()` is only instantiated for those.
//
// Integer arithmetic wraps (it is done in the unsigned type of at least int width), integer
// division by zero yields 0, and nothing here invokes undefined behaviour on any input.
#pragma once
#include "ElementwiseSupport.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace strata::interp {

template <typename C> constexpr bool kIsFloat = std::is_floating_point_v<C>;
template <typename C> constexpr bool kIsBool = std::is_same_v<C, bool>;
template <typename C> constexpr bool kIsInt = std::is_integral_v<C> && !kIsBool<C>;
template <typename C> constexpr bool kIsNumeric = !kIsBool<C>;

// ---- Binary ---------------------------------------------------------------------------------

struct AddFn {
  static constexpr const char *name = "add";
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsFloat<C>)
      return a + b;
    else
      return wrapAdd(a, b);
  }
};

struct SubFn {
  static constexpr const char *name = "sub";
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsFloat<C>)
      return a - b;
    else
      return wrapSub(a, b);
  }
};

struct MulFn {
  static constexpr const char *name = "mul";
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsFloat<C>)
      return a * b;
    else
      return wrapMul(a, b);
  }
};

struct DivFn {
  static constexpr const char *name = "div";
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsFloat<C>) {
      return a / b;
    } else {
      if (b == 0)
        return 0; // defined result instead of a trap
      if constexpr (std::is_signed_v<C>)
        if (a == std::numeric_limits<C>::min() && b == -1)
          return a; // the only overflowing quotient wraps to itself
      return static_cast<C>(a / b); // C++ truncates toward zero
    }
  }
};

// fmod=0: the result takes the divisor's sign (Python %); fmod=1: the dividend's (C fmod).
struct ModFn {
  static constexpr const char *name = "mod";
  bool cStyle = false;
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsFloat<C>) {
      C r = std::fmod(a, b);
      if (!cStyle && r != 0 && ((r < 0) != (b < 0)))
        r += b;
      return r;
    } else {
      if (b == 0)
        return 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1)
          return 0; // avoids MIN % -1, which overflows
        C r = static_cast<C>(a % b);
        if (!cStyle && r != 0 && ((r < 0) != (b < 0)))
          r = static_cast<C>(r + b);
        return r;
      } else {
        return static_cast<C>(a % b);
      }
    }
  }
};

struct PowFn {
  static constexpr const char *name = "pow";
  template <typename C> static constexpr bool supports = kIsNumeric<C>;
  template <typename C> C operator()(C base, C exp) const {
    if constexpr (kIsFloat<C>) {
      return std::pow(base, exp);
    } else {
      if constexpr (std::is_signed_v<C>) {
        if (exp < 0) { // 1 / base^|exp| truncated toward zero
          if (base == 1)
            return 1;
          if (base == -1)
            return (exp % 2 == 0) ? 1 : -1;
          return 0;
        }
      }
      // Square-and-multiply with wrapping multiplication.
      C result = 1;
      using U = std::make_unsigned_t<C>;
      U e = static_cast<U>(exp);
      while (e != 0) {
        if (e & 1u)
          result = wrapMul(result, base);
        base = wrapMul(base, base);
        e = static_cast<U>(e >> 1);
      }
      return result;
    }
  }
};

// NaN in either operand propagates (ONNX Max/Min), unlike std::max.
struct MaxFn {
  static constexpr const char *name = "max";
  template <typename C> static constexpr bool supports = true;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsFloat<C>) {
      if (std::isnan(a))
        return a;
      if (std::isnan(b))
        return b;
    }
    return a < b ? b : a;
  }
};

struct MinFn {
  static constexpr const char *name = "min";
  template <typename C> static constexpr bool supports = true;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsFloat<C>) {
      if (std::isnan(a))
        return a;
      if (std::isnan(b))
        return b;
    }
    return b < a ? b : a;
  }
};

// Logical on bool, bitwise on integers.
struct AndFn {
  static constexpr const char *name = "and";
  template <typename C> static constexpr bool supports = !kIsFloat<C>;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsBool<C>)
      return a && b;
    else
      return static_cast<C>(a & b);
  }
};

struct OrFn {
  static constexpr const char *name = "or";
  template <typename C> static constexpr bool supports = !kIsFloat<C>;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsBool<C>)
      return a || b;
    else
      return static_cast<C>(a | b);
  }
};

struct XorFn {
  static constexpr const char *name = "xor";
  template <typename C> static constexpr bool supports = !kIsFloat<C>;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsBool<C>)
      return a != b;
    else
      return static_cast<C>(a ^ b);
  }
};

// Logical shifts on the bit pattern; a shift by >= the bit width yields 0.
struct BitShiftFn {
  static constexpr const char *name = "bitshift";
  bool left = true;
  template <typename C> static constexpr bool supports = kIsInt<C>;
  template <typename C> C operator()(C a, C b) const {
    using U = std::make_unsigned_t<C>;
    using W = WrapUnsigned<C>;
    U amount = static_cast<U>(b);
    if (amount >= sizeof(C) * 8)
      return 0;
    W bits = static_cast<U>(a);
    return static_cast<C>(static_cast<U>(left ? bits << amount : bits >> amount));
  }
};

// Comparisons produce bool; NaN compares unequal and unordered.
struct EqFn {
  static constexpr const char *name = "eq";
  template <typename C> static constexpr bool supports = true;
  template <typename C> bool operator()(C a, C b) const { return a == b; }
};
struct LtFn {
  static constexpr const char *name = "lt";
  template <typename C> static constexpr bool supports = true;
  template <typename C> bool operator()(C a, C b) const { return a < b; }
};
struct LeFn {
  static constexpr const char *name = "le";
  template <typename C> static constexpr bool supports = true;
  template <typename C> bool operator()(C a, C b) const { return a <= b; }
};

// ---- Loops ----------------------------------------------------------------------------------

// out[i] = fn(a[i'], b[i'']) over the numpy broadcast of a and b. The inner row is specialized
// for the common unit-stride and scalar-operand cases so they compile to flat vector loops.
template <DType In, DType Out, typename Fn>
Tensor mapBinary(const Tensor &a, const Tensor &b, const Fn &fn) {
  using TI = ElemTraits<In>;
  using TO = ElemTraits<Out>;
  using SI = typename TI::Storage;
  using SO = typename TO::Storage;
  Shape outShape;
  StridedPlan plan = planBroadcast({&a.shape(), &b.shape()}, outShape);
  Tensor out(Out, outShape);
  const SI *pa = a.data<SI>();
  const SI *pb = b.data<SI>();
  SO *po = out.data<SO>();
  forEachRow(plan, [&](int64_t o, const int64_t *off, int64_t n, const int64_t *stride) {
    const SI *xa = pa + off[0];
    const SI *xb = pb + off[1];
    SO *y = po + o;
    const int64_t sa = stride[0], sb = stride[1];
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i)
        y[i] = TO::store(fn(TI::load(xa[i]), TI::load(xb[i])));
    } else if (sa == 0 && sb == 1) {
      const auto va = TI::load(*xa);
      for (int64_t i = 0; i < n; ++i)
        y[i] = TO::store(fn(va, TI::load(xb[i])));
    } else if (sa == 1 && sb == 0) {
      const auto vb = TI::load(*xb);
      for (int64_t i = 0; i < n; ++i)
        y[i] = TO::store(fn(TI::load(xa[i]), vb));
    } else {
      for (int64_t i = 0; i < n; ++i)
        y[i] = TO::store(fn(TI::load(xa[i * sa]), TI::load(xb[i * sb])));
    }
  });
  return out;
}

// Applies a binary functor with dtype dispatch; the result dtype is the operands' dtype, or bool
// when `ToBool` (comparisons).
template <bool ToBool = false, typename Fn>
Tensor applyBinary(const Tensor &a, const Tensor &b, const Fn &fn) {
  if (a.dtype() != b.dtype())
    throw InterpError(std::string(Fn::name) + ": operand dtypes differ (" +
                      std::string(dtypeName(a.dtype())) + " vs " +
                      std::string(dtypeName(b.dtype())) + ")");
  return visitDType(a.dtype(), [&](auto tag) -> Tensor {
    constexpr DType D = decltype(tag)::value;
    using C = typename ElemTraits<D>::Compute;
    if constexpr (!Fn::template supports<C>) {
      throw InterpError(unsupportedDType(Fn::name, D));
    } else {
      constexpr DType Out = ToBool ? DType::Bool : D;
      return mapBinary<D, Out>(a, b, fn);
    }
  });
}

// out[i] = fn(x[i]) over a contiguous tensor.
template <DType In, DType Out, typename Fn> Tensor mapUnary(const Tensor &x, const Fn &fn) {
  using TI = ElemTraits<In>;
  using TO = ElemTraits<Out>;
  Tensor out(Out, x.shape());
  const auto *px = x.data<typename TI::Storage>();
  auto *po = out.data<typename TO::Storage>();
  const int64_t n = x.numElements();
  for (int64_t i = 0; i < n; ++i)
    po[i] = TO::store(fn(TI::load(px[i])));
  return out;
}

template <bool ToBool = false, typename Fn> Tensor applyUnary(const Tensor &x, const Fn &fn) {
  return visitDType(x.dtype(), [&](auto tag) -> Tensor {
    constexpr DType D = decltype(tag)::value;
    using C = typename ElemTraits<D>::Compute;
    if constexpr (!Fn::template supports<C>) {
      throw InterpError(unsupportedDType(Fn::name, D));
    } else {
      constexpr DType Out = ToBool ? DType::Bool : D;
      return mapUnary<D, Out>(x, fn);
    }
  });
}

// Registration of the unary ops (ElementwiseUnary.cpp).
void registerUnaryKernels(KernelFn *table);

} // namespace strata::interp
