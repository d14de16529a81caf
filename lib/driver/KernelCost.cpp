// Operation and byte counts of graph ops (KernelCost.h).
#include "strata/driver/KernelCost.h"

#include "strata/graph/Ops.h"

#include <algorithm>
#include <set>

namespace strata::driver {

namespace {

double dimSize(const Dim &d, const std::map<std::string, int64_t> &symbols) {
  if (d.isStatic())
    return static_cast<double>(d.size);
  std::optional<int64_t> v = d.expr.evaluate([&](const std::string &n) {
    auto it = symbols.find(n);
    return it == symbols.end() ? std::optional<int64_t>(1) : std::optional<int64_t>(it->second);
  });
  return v && *v > 0 ? static_cast<double>(*v) : 1.0;
}

double numel(const TensorType &t, const std::map<std::string, int64_t> &symbols) {
  double n = 1;
  for (const Dim &d : t.dims)
    n *= dimSize(d, symbols);
  return n;
}

double opFlops(const Op &op, const std::map<std::string, int64_t> &symbols) {
  if (op.numResults() == 0)
    return 0;
  const TensorType &out = op.result(0)->type();
  const double outElems = numel(out, symbols);
  auto inElems = [&](unsigned i) { return numel(op.operand(i)->type(), symbols); };
  switch (op.kind()) {
  case OpKind::Kernel: {
    double sum = 0;
    for (unsigned r = 0; r < op.numRegions(); ++r)
      for (const Op &inner : op.region(r).ops())
        sum += opFlops(inner, symbols);
    return sum;
  }
  case OpKind::MatMul: {
    const TensorType &a = op.operand(0)->type();
    double k = a.dims.empty() ? 1 : dimSize(a.dims.back(), symbols);
    return 2 * outElems * k + (op.numOperands() > 2 ? outElems : 0);
  }
  case OpKind::Conv: {
    // Per output element: the weight's elements per output channel (C_in/group x kernel), in
    // either layout; the blocked result [N, O/c, S..., c] has O = dims[1] * c channels.
    double outChannels = out.rank() >= 2 ? dimSize(out.dims[1], symbols) : 1;
    if (ops::ConvOp(op).layout() != 0 && out.rank() >= 3)
      outChannels *= dimSize(out.dims.back(), symbols);
    double perOutput = numel(op.operand(1)->type(), symbols) / std::max(1.0, outChannels);
    return 2 * outElems * perOutput + (op.numOperands() > 2 ? outElems : 0);
  }
  case OpKind::WinogradInput: // B^T d B: t terms per element, in two passes
  case OpKind::WinogradOutput: { // A^T p A: m t + m^2 sums of t terms per tile and channel
    const int64_t m = op.attr("tile").getInt(), t = m + 2;
    if (op.kind() == OpKind::WinogradInput)
      return 2.0 * static_cast<double>(t) * outElems;
    return 2.0 * inElems(0) / static_cast<double>(t) * static_cast<double>(m * (t + m));
  }
  case OpKind::ConvTranspose: {
    const TensorType &x = op.operand(0)->type();
    double inChannels = x.rank() >= 2 ? dimSize(x.dims[1], symbols) : 1;
    return 2 * inElems(0) * numel(op.operand(1)->type(), symbols) / std::max(1.0, inChannels);
  }
  case OpKind::Pool: {
    double window = 1;
    if (op.hasAttr("kernel"))
      for (int64_t k : op.attr("kernel").getInts())
        window *= static_cast<double>(k);
    return outElems * window;
  }
  case OpKind::Reduce:
  case OpKind::ArgReduce:
  case OpKind::CumSum:
    return inElems(0);
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return 4 * inElems(0);
  case OpKind::LayerNorm:
    return 7 * inElems(0);
  case OpKind::Attention: {
    // The two products (2 M N D and 2 M N Dv per batch) and the softmax of the M N scores.
    const TensorType &q = op.operand(0)->type(), &k = op.operand(1)->type();
    if (q.rank() < 2 || k.rank() < 2 || out.rank() < 2)
      return 0;
    double rows = 1;
    for (size_t d = 0; d + 1 < out.dims.size(); ++d)
      rows *= dimSize(out.dims[d], symbols);
    const double keys = dimSize(k.dims[k.rank() - 2], symbols);
    const double d = dimSize(q.dims.back(), symbols), dv = dimSize(out.dims.back(), symbols);
    return rows * keys * (2 * d + 2 * dv + 4);
  }
  case OpKind::Einsum:
  case OpKind::TopK:
  case OpKind::Resize:
    return outElems;
  default:
    return op.hasTrait(T_ELEMENTWISE) ? outElems : 0;
  }
}

} // namespace

std::map<std::string, int64_t> symbolSizes(const Graph &g, const std::vector<Tensor> &inputs) {
  std::map<std::string, int64_t> sizes;
  for (unsigned i = 0; i < g.numInputs() && i < inputs.size(); ++i) {
    const TensorType &t = g.input(i)->type();
    for (size_t d = 0; d < t.dims.size() && d < inputs[i].shape().size(); ++d)
      if (const std::string *name = t.dims[d].symbolName())
        sizes.emplace(*name, inputs[i].shape()[d]);
  }
  return sizes;
}

KernelCost kernelCost(const Op &op, const std::map<std::string, int64_t> &symbols) {
  KernelCost c;
  c.flops = opFlops(op, symbols);
  std::set<const Value *> seen;
  auto add = [&](const Value *v) {
    if (seen.insert(v).second)
      c.bytes += numel(v->type(), symbols) * static_cast<double>(dtypeSize(v->type().dtype));
  };
  for (const Value *v : op.operands())
    add(v);
  for (unsigned r = 0; r < op.numResults(); ++r)
    add(op.result(r));
  return c;
}

} // namespace strata::driver
