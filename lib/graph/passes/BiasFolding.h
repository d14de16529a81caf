// Shared by fold-batchnorm and fuse-bias: matching a conv or matmul whose only use is an
// elementwise op with a constant, and rebuilding it with new weights or bias.
#pragma once
#include "strata/graph/Graph.h"

#include <optional>

namespace strata::biasfold {

// `user` = add/sub/mul(producer, constant) (or constant first for add/mul), where producer is a
// conv or matmul whose result is used by `user` alone and is no graph output, and `user` does
// not change the producer's result type.
struct Match {
  Op *producer;
  Tensor constant; // the other operand's value (never elided)
};
std::optional<Match> matchProducer(const Graph &g, const Op &user);

// The axis of the producer's result that its weights and bias index: the output channel of a
// conv (1), the last dim of a matmul whose rhs has rank >= 2; nullopt for other producers.
std::optional<int64_t> channelAxis(const Op &producer);

// `c` as a rank-1 tensor over `axis` of `result` when it broadcasts against `result` varying
// only along that axis (a scalar repeats); nullopt otherwise.
std::optional<Tensor> channelVector(const Tensor &c, const TensorType &result, int64_t axis);

// Evaluates `kind` on tensors through the interpreter (the one definition of every op).
std::optional<Tensor> evaluate(OpKind kind, const std::vector<Tensor> &operands);

// Replaces `user` with a copy of its producer that has operands (x, weight[, bias]) and the
// producer's attributes; the weight is the producer's own unless `weight` is given, and given
// tensors become constants before the producer. Erases `user` and the producer. Returns false
// (and changes nothing) if the copy's type would differ from `user`'s result type, or if a
// matmul bias is not one value per column ([N], [1, ..., N] becoming [N]) or, for a 2-D product,
// per row ([M, 1]): the forms the register-tiled kernel adds.
bool rebuildProducer(Graph &g, Op &user, Op &producer, const std::optional<Tensor> &weight,
                     const std::optional<Tensor> &bias);

// Weight or bias of a producer as a constant (nullptr when absent or not constant).
const Tensor *constantOperand(const Op &producer, unsigned i);

} // namespace strata::biasfold
