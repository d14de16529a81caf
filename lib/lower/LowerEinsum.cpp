// einsum as one loop nest over the output labels with the contracted labels as an inner
// reduction nest (lib/interp/Einsum.cpp semantics): labels are letters, an ellipsis stands for
// right-aligned broadcast dims, a repeated label walks a diagonal, a size-1 axis broadcasts.
// Floats accumulate products in f64, integers wrap in their own dtype; the contracted loops run in
// label order, the interpreter's summation order.
#include "LowerImpl.h"

#include "strata/graph/Einsum.h"

#include <algorithm>
#include <map>

namespace strata::lower {
namespace {

EinsumTerm parseTerm(const std::string &text) {
  std::string error;
  std::optional<EinsumTerm> t = parseEinsumTerm(text, error);
  if (!t)
    throw LowerError("einsum: " + error);
  return std::move(*t);
}

} // namespace

Stmt lowerEinsum(LowerCtx &c) {
  std::string equation;
  for (char ch : ops::EinsumOp(c.op).equation())
    if (ch != ' ')
      equation += ch;
  size_t arrow = equation.find("->");
  std::vector<EinsumTerm> terms;
  for (const std::string &text : splitEinsumInputs(equation.substr(0, arrow)))
    terms.push_back(parseTerm(text));
  size_t numOperands = c.ins.size();
  if (terms.size() != numOperands)
    throw LowerError("einsum: equation '" + equation + "' does not match the operand count");
  DType t = c.inTypes[0];
  if (t == DType::Bool)
    notLowered(c.op, "bool operands");
  for (DType d : c.inTypes)
    if (d != t)
      throw LowerError("einsum: operand dtypes differ");

  std::vector<int64_t> ellipsisDims(numOperands, 0);
  int64_t globalEllipsis = 0;
  for (size_t i = 0; i < numOperands; ++i) {
    int64_t letters = terms[i].numLetters();
    int64_t rank = static_cast<int64_t>(c.inShapes[i].size());
    if (terms[i].hasEllipsis ? rank < letters : rank != letters)
      throw LowerError("einsum: operand " + std::to_string(i) + " does not match its subscripts");
    ellipsisDims[i] = terms[i].hasEllipsis ? rank - letters : 0;
    globalEllipsis = std::max(globalEllipsis, ellipsisDims[i]);
  }
  std::vector<std::vector<int>> labels(numOperands);
  std::map<int, int64_t> extent; // sorted by label: the contracted loops' order
  std::map<int, int> occurrences;
  for (size_t i = 0; i < numOperands; ++i) {
    labels[i] = expandEinsumTerm(terms[i], ellipsisDims[i], globalEllipsis);
    for (size_t a = 0; a < labels[i].size(); ++a) {
      auto [it, fresh] = extent.emplace(labels[i][a], c.inShapes[i][a]);
      if (!fresh && it->second == 1)
        it->second = c.inShapes[i][a];
      if (labels[i][a] < kEinsumEllipsisLabel)
        ++occurrences[labels[i][a]];
    }
  }
  std::vector<int> outLabels;
  if (arrow != std::string::npos) {
    outLabels =
        expandEinsumTerm(parseTerm(equation.substr(arrow + 2)), globalEllipsis, globalEllipsis);
  } else {
    for (int64_t k = 0; k < globalEllipsis; ++k)
      outLabels.push_back(kEinsumEllipsisLabel + static_cast<int>(k));
    for (auto [label, count] : occurrences)
      if (count == 1)
        outLabels.push_back(label);
  }
  std::vector<int> sumLabels;
  for (auto &entry : extent)
    if (std::find(outLabels.begin(), outLabels.end(), entry.first) == outLabels.end())
      sumLabels.push_back(entry.first);
  if (outLabels.size() != c.outShapes[0].size())
    throw LowerError("einsum: result rank does not match the equation");

  Shape sumShape;
  for (int l : sumLabels)
    sumShape.push_back(extent[l]);
  DType acc = isFloat(t) ? DType::F64 : t;
  return loopNest(c, c.outShapes[0], LoopRole::Parallel, [&](const Exprs &outIdx) {
    loop::Buffer sum = localArray(c, "sum", acc);
    Expr s = loop::load(sum, {imm(0)});
    Stmt reduce = loopNest(c, sumShape, LoopRole::Reduction, [&](const Exprs &sumIdx) {
      auto indexOf = [&](int label) {
        auto o = std::find(outLabels.begin(), outLabels.end(), label);
        if (o != outLabels.end())
          return outIdx[static_cast<size_t>(o - outLabels.begin())];
        return sumIdx[static_cast<size_t>(std::find(sumLabels.begin(), sumLabels.end(), label) -
                                          sumLabels.begin())];
      };
      Expr product;
      for (size_t i = 0; i < numOperands; ++i) {
        Exprs idx;
        for (size_t a = 0; a < labels[i].size(); ++a)
          idx.push_back(c.inShapes[i][a] == 1 ? imm(0) : indexOf(labels[i][a]));
        Expr v = loop::load(c.ins[i], idx);
        if (acc != t)
          v = loop::cast(acc, v);
        product = product ? product * v : v;
      }
      return loop::store(sum, {imm(0)}, s + product);
    });
    Expr zero = isFloat(acc) ? loop::floatImm(0, acc) : loop::intImm(0, acc);
    Expr result = acc == t ? s : loop::cast(t, s);
    return loop::allocate(sum, loop::seq({loop::store(sum, {imm(0)}, zero), reduce,
                                          loop::store(c.outs[0], outIdx, result)}));
  });
}

} // namespace strata::lower
