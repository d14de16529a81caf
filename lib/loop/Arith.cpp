// Scalar semantics of loop IR operations (see Arith.h).
#include "Arith.h"

#include <cmath>
#include <limits>

namespace strata::loop::arith {

int64_t wrap(uint64_t v, DType t) {
  if (t == DType::Bool)
    return v != 0;
  unsigned bits = static_cast<unsigned>(dtypeSize(t)) * 8;
  if (bits >= 64)
    return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t(1) << bits) - 1;
  v &= mask;
  if (isSigned(t) && ((v >> (bits - 1)) & 1))
    v |= ~mask;
  return static_cast<int64_t>(v);
}

double round(double v, DType t) {
  switch (t) {
  case DType::F32: return static_cast<float>(v);
  case DType::F16: return halfToFloat(floatToHalf(static_cast<float>(v)));
  case DType::BF16: return bf16ToFloat(floatToBf16(static_cast<float>(v)));
  default: return v;
  }
}

namespace {
template <typename T> std::optional<int64_t> compare(ExprKind k, T a, T b) {
  switch (k) {
  case ExprKind::EQ: return a == b;
  case ExprKind::NE: return a != b;
  case ExprKind::LT: return a < b;
  case ExprKind::LE: return a <= b;
  case ExprKind::GT: return a > b;
  case ExprKind::GE: return a >= b;
  default: return std::nullopt;
  }
}
} // namespace

std::optional<int64_t> intBinary(ExprKind k, int64_t a, int64_t b, DType t) {
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  bool sgn = isSigned(t);
  if (auto c = sgn ? compare(k, a, b) : compare(k, ua, ub))
    return c;
  switch (k) {
  case ExprKind::Add: return wrap(ua + ub, t);
  case ExprKind::Sub: return wrap(ua - ub, t);
  case ExprKind::Mul: return wrap(ua * ub, t);
  case ExprKind::Min: return (sgn ? a < b : ua < ub) ? a : b;
  case ExprKind::Max: return (sgn ? a > b : ua > ub) ? a : b;
  case ExprKind::And: return (a && b) ? 1 : 0;
  case ExprKind::Or: return (a || b) ? 1 : 0;
  case ExprKind::BitAnd: return wrap(ua & ub, t);
  case ExprKind::BitOr: return wrap(ua | ub, t);
  case ExprKind::BitXor: return wrap(ua ^ ub, t);
  case ExprKind::Shl:
  case ExprKind::Shr: {
    // Logical shifts of the t-wide pattern; the amount is t-wide unsigned.
    unsigned bits = static_cast<unsigned>(dtypeSize(t)) * 8;
    uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    uint64_t amount = ub & mask;
    if (amount >= bits)
      return 0;
    return wrap(k == ExprKind::Shl ? ua << amount : (ua & mask) >> amount, t);
  }
  default: break;
  }
  if (b == 0 || (sgn && a == std::numeric_limits<int64_t>::min() && b == -1))
    return std::nullopt;
  if (!sgn) {
    bool div = k == ExprKind::Div || k == ExprKind::FloorDiv;
    return wrap(div ? ua / ub : ua % ub, t);
  }
  int64_t q = a / b, r = a % b;
  bool adjust = r != 0 && ((r < 0) != (b < 0)); // floor differs from truncation
  switch (k) {
  case ExprKind::Div: return wrap(static_cast<uint64_t>(q), t);
  case ExprKind::Mod: return wrap(static_cast<uint64_t>(r), t);
  case ExprKind::FloorDiv: return wrap(static_cast<uint64_t>(adjust ? q - 1 : q), t);
  case ExprKind::FloorMod: return wrap(static_cast<uint64_t>(adjust ? r + b : r), t);
  default: return std::nullopt;
  }
}

double floatBinary(ExprKind k, double a, double b, DType t) {
  if (auto c = compare(k, a, b))
    return static_cast<double>(*c);
  switch (k) {
  case ExprKind::Add: return round(a + b, t);
  case ExprKind::Sub: return round(a - b, t);
  case ExprKind::Mul: return round(a * b, t);
  case ExprKind::Div: return round(a / b, t);
  case ExprKind::Mod: return round(std::fmod(a, b), t); // exact: the rounding is a no-op
  case ExprKind::Min: return std::fmin(a, b);
  case ExprKind::Max: return std::fmax(a, b);
  default: return std::numeric_limits<double>::quiet_NaN();
  }
}

Scalar castScalar(Scalar v, DType from, DType to) {
  Scalar r;
  if (isFloat(to)) {
    if (isFloat(from))
      r.f = round(v.f, to);
    else
      r.f = round(isSigned(from) || from == DType::Bool ? static_cast<double>(v.i)
                                                         : static_cast<double>(static_cast<uint64_t>(v.i)),
                  to);
    return r;
  }
  if (!isFloat(from)) {
    r.i = to == DType::Bool ? v.i != 0 : wrap(static_cast<uint64_t>(v.i), to);
    return r;
  }
  if (to == DType::Bool) {
    r.i = v.f != 0;
    return r;
  }
  double x = std::trunc(v.f);
  if (std::isnan(x)) {
    r.i = 0;
    return r;
  }
  unsigned bits = static_cast<unsigned>(dtypeSize(to)) * 8;
  if (isSigned(to)) {
    double lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1);
    r.i = x <= lo ? static_cast<int64_t>(lo) : x >= hi ? wrap(~uint64_t(0) >> (65 - bits), to)
                                                        : static_cast<int64_t>(x);
  } else {
    double hi = std::ldexp(1.0, bits);
    r.i = x <= 0 ? 0 : x >= hi ? wrap(~uint64_t(0), to) : wrap(static_cast<uint64_t>(x), to);
  }
  return r;
}

double intrinsic(Intrinsic in, const double *a, DType t) {
  double r = 0;
  switch (in) {
  case Intrinsic::Abs: r = std::fabs(a[0]); break;
  case Intrinsic::Atan: r = std::atan(a[0]); break;
  case Intrinsic::Ceil: r = std::ceil(a[0]); break;
  case Intrinsic::Cos: r = std::cos(a[0]); break;
  case Intrinsic::Erf: r = std::erf(a[0]); break;
  case Intrinsic::Exp: r = std::exp(a[0]); break;
  case Intrinsic::Floor: r = std::floor(a[0]); break;
  case Intrinsic::Fma: r = std::fma(a[0], a[1], a[2]); break;
  case Intrinsic::Log: r = std::log(a[0]); break;
  case Intrinsic::Pow: r = std::pow(a[0], a[1]); break;
  case Intrinsic::Round: r = std::nearbyint(a[0]); break; // ties to even, like ONNX Round
  case Intrinsic::Sigmoid: r = 1.0 / (1.0 + std::exp(-a[0])); break;
  case Intrinsic::Sin: r = std::sin(a[0]); break;
  case Intrinsic::Sqrt: r = std::sqrt(a[0]); break;
  case Intrinsic::Tanh: r = std::tanh(a[0]); break;
  }
  return round(r, t);
}

} // namespace strata::loop::arith
