// The attribute enums of the op definitions (OpTable.def: ENUM_BEGIN ... ENUM_END), with their
// texts. An enum attribute is stored as its text (the IR prints it so) and read through the
// typed accessors of Ops.h; the verifier accepts only the texts listed here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

#define ENUM_BEGIN(T) enum class T : uint8_t {
#define ENUM_VALUE(T, e, text) e,
#define ENUM_END(T)                                                                                \
  }                                                                                                \
  ;
#include "strata/graph/OpTable.def"

// EnumTraits<T>::names[i] is the text of the enumerator with value i.
template <typename T> struct EnumTraits;

#define ENUM_BEGIN(T)                                                                              \
  template <> struct EnumTraits<T> {                                                               \
    static constexpr std::string_view typeName = #T;                                               \
    static constexpr std::string_view names[] = {
#define ENUM_VALUE(T, e, text) text,
#define ENUM_END(T)                                                                                \
  }                                                                                                \
  ;                                                                                                \
  }                                                                                                \
  ;
#include "strata/graph/OpTable.def"

template <typename T> std::string_view enumName(T v) {
  return EnumTraits<T>::names[static_cast<size_t>(v)];
}

template <typename T> std::optional<T> parseEnum(std::string_view text) {
  const auto &names = EnumTraits<T>::names;
  for (size_t i = 0; i < std::size(names); ++i)
    if (names[i] == text)
      return static_cast<T>(i);
  return std::nullopt;
}

// "a, b, c": the accepted texts, for error messages.
template <typename T> std::string enumTexts() {
  std::string s;
  for (std::string_view n : EnumTraits<T>::names)
    s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

} // namespace strata
