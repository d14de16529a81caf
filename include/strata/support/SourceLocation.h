// Line/column arithmetic shared by the text parsers (graph IR, loop IR).
#pragma once
#include <algorithm>
#include <cstddef>
#include <string_view>
#include <utility>

namespace strata {

// 1-based line and column of byte `offset` in `src` (clamped to its end).
inline std::pair<size_t, size_t> lineColumn(std::string_view src, size_t offset) {
  offset = std::min(offset, src.size());
  size_t line = 1, lineStart = 0;
  for (size_t i = 0; i < offset; ++i)
    if (src[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  return {line, offset - lineStart + 1};
}

} // namespace strata
