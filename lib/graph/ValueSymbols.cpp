// Which ops have a data-dependent result dim (ValueSymbols.h).
#include "strata/graph/ValueSymbols.h"

#include "strata/graph/Ops.h"

namespace strata {

std::optional<ValueBoundDim> valueBoundDim(const Op &op) {
  if (op.kind() == OpKind::NonZero && op.numOperands() == 2) {
    SymExpr n(1);
    for (const Dim &d : op.operand(0)->type().dims)
      n = n * d.asExpr();
    return ValueBoundDim{0, 1, 1, n};
  }
  if (op.kind() == OpKind::Unique && op.numOperands() == 2) {
    const ops::UniqueOp attrs(op);
    const auto &x = op.operand(0)->type().dims;
    SymExpr items(1);
    if (attrs.has_axis() && attrs.axis() >= 0 && attrs.axis() < static_cast<int64_t>(x.size()))
      items = x[static_cast<size_t>(attrs.axis())].asExpr();
    else
      for (const Dim &d : x)
        items = items * d.asExpr();
    return ValueBoundDim{0, attrs.has_axis() ? static_cast<size_t>(attrs.axis()) : 0, 1, items};
  }
  if (op.kind() == OpKind::Nms && op.numOperands() == 3) {
    const auto &boxes = op.operand(0)->type().dims, &scores = op.operand(1)->type().dims;
    if (boxes.size() != 3 || scores.size() != 3)
      return std::nullopt;
    SymExpr perClass = SymExpr::min(SymExpr(ops::NmsOp(op).max_output()), boxes[1].asExpr());
    return ValueBoundDim{0, 0, 2, scores[0].asExpr() * scores[1].asExpr() * perClass};
  }
  return std::nullopt;
}

} // namespace strata
