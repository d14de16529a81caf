// Einsum term parsing and label expansion (see the header).
#include "strata/graph/Einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

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

std::optional<EinsumLabels> labelEinsum(std::string_view text,
                                        const std::vector<int64_t> &ranks, std::string &error) {
  std::string equation;
  for (char ch : text)
    if (!std::isspace(static_cast<unsigned char>(ch)))
      equation += ch;
  const size_t arrow = equation.find("->");
  std::vector<EinsumTerm> terms;
  for (const std::string &text : splitEinsumInputs(equation.substr(0, arrow))) {
    std::optional<EinsumTerm> t = parseEinsumTerm(text, error);
    if (!t)
      return std::nullopt;
    terms.push_back(std::move(*t));
  }
  if (terms.size() != ranks.size()) {
    error = "equation '" + equation + "' does not match the operand count";
    return std::nullopt;
  }
  std::vector<int64_t> ellipsisDims(terms.size(), 0);
  int64_t globalEllipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t letters = terms[i].numLetters();
    if (terms[i].hasEllipsis ? ranks[i] < letters : ranks[i] != letters) {
      error = "operand " + std::to_string(i) + " does not match its subscripts";
      return std::nullopt;
    }
    ellipsisDims[i] = terms[i].hasEllipsis ? ranks[i] - letters : 0;
    globalEllipsis = std::max(globalEllipsis, ellipsisDims[i]);
  }
  EinsumLabels out;
  std::map<int, int> occurrences;
  for (size_t i = 0; i < terms.size(); ++i) {
    out.operands.push_back(expandEinsumTerm(terms[i], ellipsisDims[i], globalEllipsis));
    for (int label : out.operands.back())
      if (label < kEinsumEllipsisLabel)
        ++occurrences[label];
  }
  if (arrow != std::string::npos) {
    std::optional<EinsumTerm> t = parseEinsumTerm(std::string_view(equation).substr(arrow + 2), error);
    if (!t)
      return std::nullopt;
    out.result = expandEinsumTerm(*t, globalEllipsis, globalEllipsis);
  } else {
    for (int64_t k = 0; k < globalEllipsis; ++k)
      out.result.push_back(kEinsumEllipsisLabel + static_cast<int>(k));
    for (auto [label, count] : occurrences)
      if (count == 1)
        out.result.push_back(label);
  }
  return out;
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
