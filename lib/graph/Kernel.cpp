// Reading and writing the fusion decision of kernel ops (Kernel.h).
#include "strata/graph/Kernel.h"

#include "strata/support/Error.h"

#include <algorithm>

namespace strata {

llvm::Expected<KernelPlan> kernelPlan(const Op &kernel) {
  if (kernel.kind() != OpKind::Kernel || kernel.numRegions() != 1)
    return makeError("not a kernel with one region");
  const ops::KernelOp attrs(kernel);
  std::vector<const Op *> regionOps;
  for (const Op &op : kernel.region(0).ops())
    regionOps.push_back(&op);
  const int64_t n = static_cast<int64_t>(regionOps.size());
  KernelPlan plan;
  plan.kind = attrs.kind();
  const int64_t anchor = attrs.anchor();
  if (anchor >= 0) {
    if (anchor >= n)
      return makeError("anchor " + std::to_string(anchor) + " is not a region op (the region has " +
                       std::to_string(n) + ")");
    plan.anchor = regionOps[anchor];
    if (!plan.anchor->hasTrait(T_ANCHOR))
      return makeError("anchor " + std::to_string(anchor) + " is '" +
                       std::string(plan.anchor->opName()) + "', not a matmul/conv-like op");
  } else if (anchor != -1 || !attrs.epilogue().empty() || !attrs.prologue().empty()) {
    return makeError("epilogue and prologue need an anchor");
  }
  if (plan.kind == KernelKind::Epilogue && !plan.anchor)
    return makeError("an epilogue kernel needs an anchor");
  auto resolve = [&](const char *what, const std::vector<int64_t> &indices, bool after,
                     std::vector<const Op *> &out) -> llvm::Error {
    for (size_t i = 0; i < indices.size(); ++i) {
      int64_t k = indices[i];
      if (k < 0 || k >= n || (i > 0 && k <= indices[i - 1]) || (after ? k <= anchor : k >= anchor))
        return makeError(std::string(what) + " index " + std::to_string(k) +
                         " is out of order or range (anchor " + std::to_string(anchor) + ", " +
                         std::to_string(n) + " region ops)");
      const Op *op = regionOps[k];
      bool ok = op->hasTrait(T_INDEX_MAP) || (after && op->hasTrait(T_ELEMENTWISE));
      if (!ok)
        return makeError(std::string(what) + " op " + std::to_string(k) + " '" +
                         std::string(op->opName()) + "' is not " +
                         (after ? "elementwise or an index map" : "an index map"));
      out.push_back(op);
    }
    return llvm::Error::success();
  };
  if (llvm::Error err = resolve("epilogue", attrs.epilogue(), true, plan.epilogue))
    return err;
  if (llvm::Error err = resolve("prologue", attrs.prologue(), false, plan.prologue))
    return err;
  return plan;
}

AttrMap kernelAttributes(const KernelPlan &plan, const std::vector<const Op *> &regionOps) {
  auto indexOf = [&](const Op *op) {
    return static_cast<int64_t>(std::find(regionOps.begin(), regionOps.end(), op) -
                                regionOps.begin());
  };
  AttrMap attrs{{"kind", ops::enumAttr(plan.kind)}};
  if (!plan.anchor)
    return attrs;
  attrs["anchor"] = indexOf(plan.anchor);
  std::vector<int64_t> epilogue, prologue;
  for (const Op *op : plan.epilogue)
    epilogue.push_back(indexOf(op));
  for (const Op *op : plan.prologue)
    prologue.push_back(indexOf(op));
  std::sort(epilogue.begin(), epilogue.end());
  std::sort(prologue.begin(), prologue.end());
  if (!epilogue.empty())
    attrs["epilogue"] = Attribute(std::move(epilogue));
  if (!prologue.empty())
    attrs["prologue"] = Attribute(std::move(prologue));
  return attrs;
}

size_t countKernelOps(const Graph &g) {
  size_t n = 0;
  for (const Op &op : g.ops())
    n += op.kind() == OpKind::Kernel;
  return n;
}

} // namespace strata
