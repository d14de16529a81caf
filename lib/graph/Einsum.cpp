// Einsum term parsing and label expansion (see the header).
#include "strata/graph/Einsum.h"

namespace strata {

std::vector<std::string> splitEinsumInputs(std::string_view lhs) {
  std::vector<std::string> terms;
  size_t start = 0;
  for (size_t i = 0; i <= lhs.size(); ++i)
    if (i == lhs.size() || lhs[i] == ',') {
      terms.emplace_back(lhs.substr(start, i - start));
      start = i + 1;
    }
  return terms;
}

std::optional<EinsumTerm> parseEinsumTerm(std::string_view text, std::string &error) {
  EinsumTerm t;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (t.hasEllipsis || text.compare(i, 3, "...") != 0) {
        error = "malformed ellipsis in term '" + std::string(text) + "'";
        return std::nullopt;
      }
      t.hasEllipsis = true;
      t.letters.push_back('.');
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.letters.push_back(c);
    } else {
      error = std::string("invalid character '") + c + "' in term '" + std::string(text) + "'";
      return std::nullopt;
    }
  }
  return t;
}

std::vector<int> expandEinsumTerm(const EinsumTerm &t, int64_t ellipsisDims,
                                  int64_t globalEllipsis) {
  std::vector<int> labels;
  for (char c : t.letters) {
    if (c != '.') {
      labels.push_back(c);
      continue;
    }
    for (int64_t k = 0; k < ellipsisDims; ++k)
      labels.push_back(kEinsumEllipsisLabel + static_cast<int>(globalEllipsis - ellipsisDims + k));
  }
  return labels;
}

} // namespace strata
