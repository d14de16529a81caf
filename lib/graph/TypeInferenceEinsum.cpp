// Type inference for einsum: parses the equation (explicit "->" output or numpy's implicit
// output, letters plus at most one "..." per term) and derives the result dims.
#include "TypeInferenceImpl.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace strata::infer {

namespace {

struct Term {
  std::string letters;       // in order, without the ellipsis
  int64_t ellipsisAt = -1;   // index in `letters` where "..." sits, or -1
};

Term parseTerm(const std::string &text, const std::string &equation) {
  Term t;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "...") == 0) {
      if (t.ellipsisAt >= 0)
        fail("einsum equation \"" + equation + "\" has two ellipses in term \"" + text + "\"");
      t.ellipsisAt = static_cast<int64_t>(t.letters.size());
      i += 3;
    } else if (std::isalpha(static_cast<unsigned char>(text[i]))) {
      t.letters += text[i++];
    } else {
      fail("einsum equation \"" + equation + "\" has invalid character '" + text.substr(i, 1) +
           "'");
    }
  }
  return t;
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

} // namespace

std::vector<TensorType> inferEinsum(const InferContext &c) {
  const std::string &raw = c.stringAttr("equation");
  std::string eq;
  for (char ch : raw)
    if (!std::isspace(static_cast<unsigned char>(ch)))
      eq += ch;
  size_t arrow = eq.find("->");
  bool explicitOutput = arrow != std::string::npos;
  std::vector<std::string> inputTexts = split(eq.substr(0, arrow), ',');
  if (inputTexts.size() != c.numOperands())
    fail("einsum equation \"" + raw + "\" has " + std::to_string(inputTexts.size()) +
         " input terms but the op has " + std::to_string(c.numOperands()) + " operands");

  std::map<char, Dim> letterDims;
  std::map<char, int> letterCount;
  std::vector<Dim> ellipsisDims;
  bool anyEllipsis = false;
  for (unsigned i = 0; i < c.numOperands(); ++i) {
    if (i > 0)
      requireSameDType(c, i, 0);
    Term t = parseTerm(inputTexts[i], raw);
    const TensorType &x = c.operand(i);
    int64_t letters = static_cast<int64_t>(t.letters.size());
    int64_t ellipsisRank = x.rank() - letters;
    if (ellipsisRank < 0 || (t.ellipsisAt < 0 && ellipsisRank != 0))
      fail("einsum term \"" + inputTexts[i] + "\" does not match operand " + std::to_string(i) +
           " of rank " + std::to_string(x.rank()));
    int64_t dim = 0;
    for (int64_t l = 0; l <= letters; ++l) {
      if (l == t.ellipsisAt) {
        anyEllipsis = true;
        std::vector<Dim> mine(x.dims.begin() + dim, x.dims.begin() + dim + ellipsisRank);
        std::string why;
        auto merged = broadcastDims(ellipsisDims, mine, &why);
        if (!merged)
          fail("einsum ellipsis dims of operand " + std::to_string(i) + " " + dimsToString(mine) +
               " do not broadcast with " + dimsToString(ellipsisDims) + ": " + why);
        ellipsisDims = std::move(*merged);
        dim += ellipsisRank;
      }
      if (l == letters)
        break;
      char ch = t.letters[l];
      const Dim &d = x.dims[dim++];
      ++letterCount[ch];
      auto [it, inserted] = letterDims.emplace(ch, d);
      if (inserted || it->second == d)
        continue;
      // Size-1 dims broadcast; a symbol against a size is checked at run time.
      if (it->second.isStatic() && it->second.size == 1)
        it->second = d;
      else if ((d.isStatic() && d.size == 1) || (!d.isStatic() && it->second.isStatic()))
        ; // keep the existing dim
      else if (d.isStatic() && !it->second.isStatic())
        it->second = d;
      else
        fail("einsum label '" + std::string(1, ch) + "' has size " + d.str() + " in operand " +
             std::to_string(i) + " but " + it->second.str() + " elsewhere");
    }
  }

  std::vector<Dim> out;
  if (explicitOutput) {
    Term t = parseTerm(eq.substr(arrow + 2), raw);
    for (size_t l = 0; l <= t.letters.size(); ++l) {
      if (static_cast<int64_t>(l) == t.ellipsisAt)
        out.insert(out.end(), ellipsisDims.begin(), ellipsisDims.end());
      if (l == t.letters.size())
        break;
      char ch = t.letters[l];
      if (!letterDims.count(ch))
        fail("einsum output label '" + std::string(1, ch) + "' does not appear in any input");
      if (t.letters.find(ch) != l)
        fail("einsum output label '" + std::string(1, ch) + "' is repeated");
      out.push_back(letterDims[ch]);
    }
  } else {
    // numpy's implicit output: broadcast dims first, then labels used once, in ASCII order.
    if (anyEllipsis)
      out = ellipsisDims;
    for (auto &[ch, count] : letterCount)
      if (count == 1)
        out.push_back(letterDims[ch]);
  }
  return {c.operand(0).withDims(std::move(out))};
}

} // namespace strata::infer
