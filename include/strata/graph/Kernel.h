// The fused `kernel` op's contract (docs/graph-ir.md, "Fused kernels"): the decision the fuse pass
// records on it and that lowering reads instead of rediscovering it.
//
// A kernel's region is sealed once formed: passes that rewrite graphs leave kernel regions alone
// (graph/Walk.h), since `anchor`, `epilogue` and `prologue` name region ops by position.
#pragma once
#include "strata/graph/Ops.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace strata {

// Constants of at most this many elements are cloned into kernel regions (a relu's 0, a scale);
// larger ones stay kernel operands. Lowering computes region constants inline, so it relies on it.
constexpr int64_t kMaxKernelConstantElements = 16;

// The decision resolved to the region's ops. `anchor` is null for elementwise and reduction
// kernels; `epilogue` lists the ops that compute on the anchor's result (in region order),
// `prologue` the index maps that feed the anchor's operands.
struct KernelPlan {
  KernelKind kind = KernelKind::Elementwise;
  const Op *anchor = nullptr;
  std::vector<const Op *> epilogue, prologue;
};

// The plan of `kernel`, checked: an anchor is a T_ANCHOR op, epilogue ops come after it and are
// elementwise or index maps, prologue ops come before it and are index maps; indices are in
// range and strictly increasing. The verifier reports the error.
llvm::Expected<KernelPlan> kernelPlan(const Op &kernel);

// How many top-level ops of `g` are fused kernels.
size_t countKernelOps(const Graph &g);

// The attributes recording `plan` for a kernel whose region ops are `regionOps` (in order).
AttrMap kernelAttributes(const KernelPlan &plan, const std::vector<const Op *> &regionOps);

} // namespace strata
