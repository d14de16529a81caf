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

// Extents may be run-time ones: a label's extent is its first operand dim that is not a static 1
// (the plan checks the others equal it, unless they are 1).
Stmt lowerEinsum(LowerCtx &c) {
  const size_t numOperands = c.ins.size();
  std::vector<int64_t> ranks;
  for (const Exprs &dims : c.inDims)
    ranks.push_back(static_cast<int64_t>(dims.size()));
  std::string error;
  std::optional<EinsumLabels> labelled = labelEinsum(ops::EinsumOp(c.op).equation(), ranks, error);
  if (!labelled)
    throw LowerError("einsum: " + error);
  DType t = c.inTypes[0];
  if (t == DType::Bool)
    notLowered(c.op, "bool operands");
  for (DType d : c.inTypes)
    if (d != t)
      throw LowerError("einsum: operand dtypes differ");
  const std::vector<std::vector<int>> &labels = labelled->operands;
  const std::vector<int> &outLabels = labelled->result;
  std::map<int, Expr> extent; // sorted by label: the contracted loops' order
  for (size_t i = 0; i < numOperands; ++i)
    for (size_t a = 0; a < labels[i].size(); ++a) {
      const bool one = c.inShapes[i][a] == 1;
      auto [it, fresh] = extent.emplace(labels[i][a], c.inDims[i][a]);
      if (!fresh && !one && it->second.asInt() == 1)
        it->second = c.inDims[i][a];
    }
  std::vector<int> sumLabels;
  for (auto &entry : extent)
    if (std::find(outLabels.begin(), outLabels.end(), entry.first) == outLabels.end())
      sumLabels.push_back(entry.first);
  if (outLabels.size() != c.outDims[0].size())
    throw LowerError("einsum: result rank does not match the equation");

  Exprs sumShape;
  for (int l : sumLabels)
    sumShape.push_back(extent[l]);
  DType acc = isFloat(t) ? DType::F64 : t;
  return loopNest(c, c.outDims[0], LoopRole::Parallel, [&](const Exprs &outIdx) {
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
