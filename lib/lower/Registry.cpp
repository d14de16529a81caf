// The lowering registry: which lowering produces each op. The op groups of the op definitions
// (OpTable.def) come first, then one line per op; an op without a line has no lowering yet.
#include "LowerImpl.h"

#include "strata/loop/Visitor.h"

#include <array>

namespace strata::lower {

namespace {

Lowering loweringFor(OpKind k) {
  // Elementwise ops widen f16/bf16 to f32 and round into the result; index maps only copy.
  if (hasTrait(k, T_ELEMENTWISE))
    return {lowerElementwise, true, true};
  if (hasTrait(k, T_INDEX_MAP))
    return {lowerIndexMap, true, true};
  switch (k) {
  case OpKind::Concat:
    return {lowerConcat, false, true};
  case OpKind::GatherChannels:
    return {lowerGatherChannels, false, true};
  case OpKind::Shape:
    return {lowerShape, true, true}; // reads no element: any dtype
  case OpKind::Iota:
  case OpKind::Arange: // its extent: the symbol the plan bound from the count before it runs
    return {lowerIota, true, true};
  case OpKind::NonZero:
    return {lowerNonZero, false, true};
  case OpKind::UniqueCount:
    return {lowerUniqueCount};
  case OpKind::Unique:
    return {lowerUnique, false, true}; // its results' item count is a run-time extent
  case OpKind::NmsCount:
    return {lowerNmsCount, false, true};
  case OpKind::Nms:
    return {lowerNms, false, true}; // its result's count is a run-time extent
  case OpKind::RoiAlign:
    return {lowerRoiAlign, false, true}; // regions and x's dims may be run-time extents
  case OpKind::Pad:
    return {lowerPad, false, true};
  case OpKind::Gather:
    return {lowerGather, false, true};
  case OpKind::GatherElements:
    return {lowerGatherElements, false, true};
  case OpKind::GatherND:
    return {lowerGatherNd, false, true};
  case OpKind::ScatterElements:
    return {lowerScatterElements, false, true};
  case OpKind::ScatterND:
    return {lowerScatterNd, false, true};
  case OpKind::MatMul:
    return {lowerMatMul, false, true};
  case OpKind::Conv:
    return {lowerConv, false, true};
  case OpKind::ConvTranspose:
    return {lowerConvTranspose, false, true};
  case OpKind::Pool:
    return {lowerPool, false, true};
  case OpKind::Reduce:
    return {lowerReduce, false, true};
  case OpKind::ArgReduce:
    return {lowerArgReduce, false, true};
  case OpKind::Softmax:
    return {lowerSoftmax, false, true};
  case OpKind::LogSoftmax:
    return {lowerLogSoftmax, false, true};
  case OpKind::LayerNorm:
    return {lowerLayerNorm, false, true};
  case OpKind::Attention:
    return {lowerAttention, false, true};
  case OpKind::CumSum:
    return {lowerCumSum, false, true};
  case OpKind::TopK:
    return {lowerTopK, true, true}; // compares elements: exact in any width
  case OpKind::Resize:
    return {lowerResize, false, true};
  case OpKind::Einsum:
    return {lowerEinsum, false, true};
  case OpKind::WinogradInput:
    return {lowerWinogradInput, false, true};
  case OpKind::WinogradOutput:
    return {lowerWinogradOutput, false, true};
  case OpKind::Kernel:
    return {lowerKernelBody, false, true};
  default:
    return {};
  }
}

} // namespace

const Lowering &loweringOf(OpKind k) {
  static const auto table = [] {
    std::array<Lowering, static_cast<size_t>(OpKind::NumKinds)> t{};
    for (size_t i = 0; i < t.size(); ++i)
      t[i] = loweringFor(static_cast<OpKind>(i));
    return t;
  }();
  return table[static_cast<size_t>(k)];
}

namespace {
// The outermost loops of a statement: the roots of its nests.
class NestRoots : public loop::IRVisitor {
public:
  std::vector<loop::Var> roots;

protected:
  void visitFor(const Stmt &s) override { roots.push_back(s->var); } // not the loops inside
};
} // namespace

Stmt lowerBody(LowerCtx &c) {
  const Lowering &l = loweringOf(c.op.kind());
  if (!l.lower)
    notLowered(c.op);
  if (c.symbolic && !l.symbolicExtents)
    notLowered(c.op, "symbolic dims");
  Stmt s = l.lower(c);
  // Every nest records the op it computes (a micro-kernel has recorded more already).
  if (c.notes) {
    NestRoots roots;
    roots.visit(s);
    for (const loop::Var &root : roots.roots)
      c.notes->nests.try_emplace(root->name, loop::NestInfo{std::string(c.op.opName())});
  }
  return s;
}

} // namespace strata::lower
