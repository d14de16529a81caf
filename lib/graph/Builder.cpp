#include "strata/graph/Builder.h"

#include "strata/graph/NormalForm.h"

namespace strata {

Op *Builder::create(OpKind kind, const std::vector<Value *> &operands, AttrMap attrs) {
  std::vector<TensorType> types;
  types.reserve(operands.size());
  for (Value *v : operands)
    types.push_back(v->type());
  normalizeAttributes(kind, types, attrs);
  auto results = inferResultTypes(kind, types, attrs);
  if (!results)
    throw BuildError(std::string(opInfo(kind).name) + ": " + llvm::toString(results.takeError()));
  Op *op = g_->createOp(kind, operands, *results, std::move(attrs), before_);
  op->setLocation(loc_);
  return op;
}

Value *Builder::constant(Tensor t) {
  TensorType type = TensorType::fromShape(t.dtype(), t.shape());
  Op *op = g_->createOp(OpKind::Constant, {}, {type}, {{"value", Attribute(std::move(t))}}, before_);
  op->setLocation(loc_);
  return op->result(0);
}

} // namespace strata
