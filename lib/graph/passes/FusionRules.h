// Fusion planning for the `fuse` pass: which top-level ops of a graph go into which kernel.
//
// Ops start in groups of their own; a producer group is merged into a consumer group whenever the
// fusion rules allow it, until nothing changes. The rules (docs/passes.md, "fuse"):
//   - elementwise: chains of elementwise ops, broadcasts included;
//   - epilogue: one matmul/conv plus elementwise consumers of its result (same element count);
//   - reduction: reductions over the same rows plus elementwise producers and consumers whose
//     shapes are the row shape or the reduced shape;
//   - reshape/transpose/slice/expand ride along as index maps when all their users are in the
//     group (they never become a kernel's output);
//   - a merge never leaves a path producer -> outside op -> consumer (acyclicity);
//   - a kernel holds at most kMaxKernelOps ops (a longer chain becomes several kernels).
#pragma once
#include "strata/graph/Kernel.h"
#include "strata/graph/passes/Pass.h"

#include <string>
#include <vector>

namespace strata::fusion {

constexpr size_t kMaxKernelOps = 256;

// What part an op can play in a kernel: decided by its op groups (OpTable.def), and None for an
// op the code generator cannot compute inside a kernel (PassOptions::fusesIntoKernel).
enum class Role { None, Elementwise, Movement, Anchor, Reduction };
Role roleOf(const Op &op, const PassOptions &options);

// A planned kernel: its ops in graph order and the decision its kernel op records.
struct PlannedKernel {
  std::vector<Op *> ops;
  KernelKind kind = KernelKind::Elementwise;
  const Op *anchor = nullptr;       // epilogue kernels: the matmul/conv
  std::vector<const Op *> epilogue; // ops computing on the anchor's result
  std::vector<const Op *> prologue; // index maps feeding the anchor
};

// Why a producer did not fuse with one of its consumers (the rule that refused the merge).
struct FusionRemark {
  const Op *producer, *consumer;
  std::string reason;
};

// Groups worth a kernel: at least two compute (non-movement) ops. Ops in no group stay plain.
// `remarks`, when given, receives why each remaining edge between groups was not merged.
std::vector<PlannedKernel> planKernels(const Graph &g, const PassOptions &options,
                                       std::vector<FusionRemark> *remarks = nullptr);

} // namespace strata::fusion
