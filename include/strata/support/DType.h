// Element types shared by every rung: the graph IR, the interpreter and the file readers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace strata {

// X(enumerator, text name, C++ storage type, byte size)
#define STRATA_DTYPES(X)                                                                           \
  X(F32, "f32", float, 4)                                                                          \
  X(F16, "f16", uint16_t, 2)                                                                       \
  X(BF16, "bf16", uint16_t, 2)                                                                     \
  X(F64, "f64", double, 8)                                                                         \
  X(I8, "i8", int8_t, 1)                                                                           \
  X(I16, "i16", int16_t, 2)                                                                        \
  X(I32, "i32", int32_t, 4)                                                                        \
  X(I64, "i64", int64_t, 8)                                                                        \
  X(U8, "u8", uint8_t, 1)                                                                          \
  X(U16, "u16", uint16_t, 2)                                                                       \
  X(U32, "u32", uint32_t, 4)                                                                       \
  X(U64, "u64", uint64_t, 8)                                                                       \
  X(Bool, "bool", bool, 1)

enum class DType : uint8_t {
#define X(e, n, t, s) e,
  STRATA_DTYPES(X)
#undef X
};

std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
size_t dtypeSize(DType t);
bool isFloat(DType t);    // f16, bf16, f32, f64
bool isInteger(DType t);  // signed or unsigned, not bool
bool isSigned(DType t);   // floats and signed integers

// Half-precision conversions (round to nearest even), used wherever f16/bf16 are computed in f32.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f);

} // namespace strata
