// Graph walks over nested regions (Walk.h).
#include "strata/graph/Walk.h"

namespace strata {

namespace {

bool enters(const Op &op, KernelRegions kernels) {
  return op.kind() != OpKind::Kernel || kernels == KernelRegions::Visit;
}

} // namespace

void forEachGraph(Graph &g, const std::function<void(Graph &)> &fn, KernelRegions kernels) {
  for (Op *op : g.opList())
    if (enters(*op, kernels))
      for (unsigned r = 0; r < op->numRegions(); ++r)
        forEachGraph(op->region(r), fn, kernels);
  fn(g);
}

void forEachOp(const Graph &g, const std::function<void(const Op &)> &fn, KernelRegions kernels) {
  for (const Op &op : g.ops()) {
    fn(op);
    if (enters(op, kernels))
      for (unsigned r = 0; r < op.numRegions(); ++r)
        forEachOp(op.region(r), fn, kernels);
  }
}

} // namespace strata
