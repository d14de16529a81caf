// castTensor: elementwise dtype conversion with ONNX Cast semantics.
//   float -> int   truncates toward zero; NaN gives 0; out-of-range values saturate (defined
//                  behaviour instead of C++'s undefined float-to-int overflow)
//   int -> int     wraps (two's complement, as numpy's astype)
//   x -> bool      x != 0 (NaN is true);  bool -> x  0 or 1
//   f32 <-> f16/bf16 round to nearest even (DType.h helpers)
#include "ElementwiseSupport.h"
#include "strata/interp/Interpreter.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace strata {
namespace {

using interp::DTypeTag;
using interp::ElemTraits;

template <typename To, typename From> To convertValue(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_same_v<From, bool>) {
    return static_cast<To>(v ? 1 : 0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v))
      return 0;
    // Compare in long double: on x86 it holds every int64 exactly; elsewhere the bounds round
    // up to a power of two and `>=` still catches every value that would not fit.
    const long double x = v;
    if (x <= static_cast<long double>(std::numeric_limits<To>::min()))
      return std::numeric_limits<To>::min();
    if (x >= static_cast<long double>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v); // int->int wraps (C++20), anything->float rounds
  }
}

template <DType From, DType To> Tensor castLoop(const Tensor &t) {
  using TF = ElemTraits<From>;
  using TT = ElemTraits<To>;
  Tensor out(To, t.shape());
  const auto *src = t.data<typename TF::Storage>();
  auto *dst = out.data<typename TT::Storage>();
  const int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i)
    dst[i] = TT::store(convertValue<typename TT::Compute>(TF::load(src[i])));
  return out;
}

} // namespace

Tensor castTensor(const Tensor &t, DType to) {
  if (t.dtype() == to)
    return t;
  return interp::visitDType(t.dtype(), [&](auto from) -> Tensor {
    return interp::visitDType(to, [&](auto target) -> Tensor {
      return castLoop<decltype(from)::value, decltype(target)::value>(t);
    });
  });
}

} // namespace strata
