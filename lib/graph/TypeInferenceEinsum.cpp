// Type inference for einsum: parses the equation (explicit "->" output or numpy's implicit
// output, letters plus at most one "..." per term) and derives the result dims.
#include "TypeInferenceImpl.h"

#include "strata/graph/Einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace strata::infer {

namespace {

EinsumTerm parseTerm(const std::string &text, const std::string &equation) {
  std::string error;
  std::optional<EinsumTerm> t = parseEinsumTerm(text, error);
  if (!t)
    fail("einsum equation \"" + equation + "\": " + error);
  return std::move(*t);
}

} // namespace

std::vector<TensorType> inferEinsum(const InferContext &c) {
  const std::string &raw = c.view<ops::EinsumOp>().equation();
  std::string eq;
  for (char ch : raw)
    if (!std::isspace(static_cast<unsigned char>(ch)))
      eq += ch;
  size_t arrow = eq.find("->");
  bool explicitOutput = arrow != std::string::npos;
  std::vector<std::string> inputTexts = splitEinsumInputs(eq.substr(0, arrow));
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
    EinsumTerm t = parseTerm(inputTexts[i], raw);
    const TensorType &x = c.operand(i);
    int64_t ellipsisRank = x.rank() - t.numLetters();
    if (ellipsisRank < 0 || (!t.hasEllipsis && ellipsisRank != 0))
      fail("einsum term \"" + inputTexts[i] + "\" does not match operand " + std::to_string(i) +
           " of rank " + std::to_string(x.rank()));
    int64_t dim = 0;
    for (char ch : t.letters) {
      if (ch == '.') {
        anyEllipsis = true;
        std::vector<Dim> mine(x.dims.begin() + dim, x.dims.begin() + dim + ellipsisRank);
        std::string why;
        auto merged = shape::broadcastShapes(ellipsisDims, mine, &why);
        if (!merged)
          fail("einsum ellipsis dims of operand " + std::to_string(i) + " " + dimsToString(mine) +
               " do not broadcast with " + dimsToString(ellipsisDims) + ": " + why);
        ellipsisDims = std::move(*merged);
        dim += ellipsisRank;
        continue;
      }
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
    EinsumTerm t = parseTerm(eq.substr(arrow + 2), raw);
    for (size_t l = 0; l < t.letters.size(); ++l) {
      char ch = t.letters[l];
      if (ch == '.') {
        out.insert(out.end(), ellipsisDims.begin(), ellipsisDims.end());
        continue;
      }
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
