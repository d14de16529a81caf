// Helpers shared by fold-batchnorm and fuse-bias (see BiasFolding.h).
#include "BiasFolding.h"

#include "strata/graph/Builder.h"
#include "strata/graph/passes/Rewrite.h"
#include "strata/interp/Interpreter.h"

#include <cstring>

namespace strata::biasfold {

namespace {

bool isGraphOutput(const Graph &g, const Value *v) {
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    if (g.output(i) == v)
      return true;
  return false;
}

} // namespace

std::optional<Match> matchProducer(const Graph &g, const Op &user) {
  if (user.kind() != OpKind::Add && user.kind() != OpKind::Sub && user.kind() != OpKind::Mul)
    return std::nullopt;
  // sub(c, producer) would negate the weights; only sub(producer, c) is matched.
  unsigned candidates = user.kind() == OpKind::Sub ? 1 : 2;
  for (unsigned i = 0; i < candidates; ++i) {
    Value *produced = user.operand(i);
    Op *producer = produced->definingOp();
    if (!producer || (producer->kind() != OpKind::Conv && producer->kind() != OpKind::MatMul))
      continue;
    if (produced->uses().size() != 1 || isGraphOutput(g, produced))
      continue;
    const Tensor *c = constantValue(user.operand(1 - i));
    if (!c || !c->valid() || user.result(0)->type() != produced->type())
      continue;
    return Match{producer, *c};
  }
  return std::nullopt;
}

std::optional<int64_t> channelAxis(const Op &producer) {
  if (producer.kind() == OpKind::Conv)
    return 1;
  if (producer.kind() == OpKind::MatMul && producer.operand(1)->type().rank() >= 2)
    return producer.result(0)->type().rank() - 1;
  return std::nullopt;
}

std::optional<Tensor> channelVector(const Tensor &c, const TensorType &result, int64_t axis) {
  if (axis < 0 || axis >= result.rank() || !result.dims[axis].isStatic() ||
      c.rank() > result.rank() || c.dtype() != result.dtype)
    return std::nullopt;
  int64_t channels = result.dims[axis].size;
  int64_t lead = result.rank() - c.rank();
  for (int64_t d = 0; d < c.rank(); ++d) {
    int64_t size = c.shape()[d];
    if (size != 1 && !(lead + d == axis && size == channels))
      return std::nullopt;
  }
  if (c.numElements() == channels)
    return c.reshaped({channels});
  // A single value repeats over every channel (copied bytewise: exact for any dtype).
  Tensor out(c.dtype(), {channels});
  size_t bytes = dtypeSize(c.dtype());
  for (int64_t i = 0; i < channels; ++i)
    std::memcpy(static_cast<uint8_t *>(out.rawData()) + i * bytes, c.rawData(), bytes);
  return out;
}

std::optional<Tensor> evaluate(OpKind kind, const std::vector<Tensor> &operands) {
  Graph scratch("fold");
  std::vector<Value *> inputs;
  for (const Tensor &t : operands)
    inputs.push_back(scratch.addInput(TensorType::fromShape(t.dtype(), t.shape())));
  try {
    Op *op = Builder(scratch).create(kind, inputs);
    llvm::Expected<std::vector<Tensor>> results = evaluateOp(*op, operands);
    if (!results) {
      llvm::consumeError(results.takeError());
      return std::nullopt;
    }
    return (*results)[0];
  } catch (const BuildError &) {
    return std::nullopt;
  }
}

const Tensor *constantOperand(const Op &producer, unsigned i) {
  if (i >= producer.numOperands())
    return nullptr;
  const Tensor *t = constantValue(producer.operand(i));
  return t && t->valid() ? t : nullptr;
}

// A matmul bias in a form the register-tiled kernel adds in its accumulators: one value per
// column ([N]; [1, ..., 1, N] reshaped to it) or, for a 2-D product, per row ([M, 1]); nullopt
// for any other shape, whose add then stays and fuses as the kernel's epilogue (swin's
// [1, 3, 49, 49] attention bias folded into the product sent its QK^T to the generic nest at 3%
// of the FMA roof).
std::optional<Tensor> matmulBias(const Tensor &bias, const TensorType &product) {
  Shape shape = bias.shape();
  while (shape.size() > 1 && shape.front() == 1)
    shape.erase(shape.begin());
  if (shape.size() == 1 && product.rank() >= 1 && product.dims.back() == Dim(shape[0]))
    return bias.reshaped(shape);
  if (product.rank() == 2 && bias.rank() == 2 && bias.shape()[1] == 1 &&
      product.dims[0] == Dim(bias.shape()[0]))
    return bias;
  return std::nullopt;
}

bool rebuildProducer(Graph &g, Op &user, Op &producer, const std::optional<Tensor> &weight,
                     const std::optional<Tensor> &givenBias) {
  std::optional<Tensor> bias = givenBias;
  if (bias && producer.kind() == OpKind::MatMul) {
    bias = matmulBias(*bias, producer.result(0)->type());
    if (!bias)
      return false;
  }
  Builder b(g);
  b.setInsertBefore(&producer);
  b.setLocation(producer.location());
  std::vector<Op *> created; // erased again if the rebuild fails
  auto constantOp = [&](const Tensor &t) {
    Value *v = b.constant(t);
    created.push_back(v->definingOp());
    return v;
  };
  std::vector<Value *> operands = {producer.operand(0),
                                   weight ? constantOp(*weight) : producer.operand(1)};
  if (bias)
    operands.push_back(constantOp(*bias));
  Op *replacement = nullptr;
  try {
    replacement = b.create(producer.kind(), operands, producer.attrs());
  } catch (const BuildError &) {
  }
  if (!replacement || replacement->result(0)->type() != user.result(0)->type()) {
    if (replacement)
      g.eraseOp(replacement);
    for (Op *op : created)
      g.eraseOp(op);
    return false;
  }
  replacement->result(0)->setName(user.result(0)->name());
  user.result(0)->replaceAllUsesWith(replacement->result(0));
  g.eraseOp(&user);
  g.eraseOp(&producer);
  return true;
}

} // namespace strata::biasfold
