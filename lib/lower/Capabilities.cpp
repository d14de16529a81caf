// The lowering's capabilities (Capabilities.h), answered by the lowering itself: an elementwise op
// is tried on placeholder operands, so there is no second list of what lowers.
#include "strata/lower/Capabilities.h"

#include "LowerImpl.h"

namespace strata::lower {

bool lowersInKernel(const Op &op, std::string *why) {
  try {
    for (unsigned i = 0; i < op.numOperands(); ++i)
      requireSupportedDType(op, op.operand(i)->type().dtype);
    for (unsigned i = 0; i < op.numResults(); ++i)
      requireSupportedDType(op, op.result(i)->type().dtype);
    if (op.hasTrait(T_ELEMENTWISE)) {
      Exprs args;
      std::vector<DType> types;
      for (const Value *v : op.operands()) {
        DType t = v->type().dtype;
        args.push_back(loop::var(loop::makeVar("x", t)));
        types.push_back(t);
      }
      elementwiseExpr(op, args, types);
      return true;
    }
    if (!loweringOf(op.kind()).lower)
      notLowered(op);
    return true;
  } catch (const std::exception &e) {
    if (why)
      *why = e.what();
    return false;
  }
}

} // namespace strata::lower
