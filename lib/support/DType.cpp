#include "strata/support/DType.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace strata {

std::string_view dtypeName(DType t) {
  switch (t) {
#define X(e, n, ty, s)                                                                             \
  case DType::e:                                                                                   \
    return n;
    STRATA_DTYPES(X)
#undef X
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
#define X(e, n, ty, s)                                                                             \
  if (name == n)                                                                                   \
    return DType::e;
  STRATA_DTYPES(X)
#undef X
  return std::nullopt;
}

size_t dtypeSize(DType t) {
  switch (t) {
#define X(e, n, ty, s)                                                                             \
  case DType::e:                                                                                   \
    return s;
    STRATA_DTYPES(X)
#undef X
  }
  return 0;
}

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}
bool isInteger(DType t) { return !isFloat(t) && t != DType::Bool; }
bool isSigned(DType t) {
  return isFloat(t) || t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: renormalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | ((127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t floatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absx < 0x38800000u) { // result is subnormal or zero
    float a = std::bit_cast<float>(absx);
    // Scale so the half subnormal lsb becomes 1.0, then round to nearest even.
    float scaled = a * 16777216.0f; // 2^24
    uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t exp = ((absx >> 23) - 127 + 15);
  uint32_t mant = absx & 0x7fffffu;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

float bf16ToFloat(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t floatToBf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u); // keep NaN quiet
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

} // namespace strata
