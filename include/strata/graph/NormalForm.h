// The attributes' normal form (docs/graph-ir.md, "Normal form"): what the verifier requires so
// that no rung re-applies defaults or re-normalizes. Axes are never negative and axis lists are
// sorted (OpTable.def's A_AXIS / A_AXES); slices list every dim; windows list every spatial dim.
// Builder brings the axis attributes of every op it creates into this form; the importer builds
// the per-op forms with the helpers below.
#pragma once
#include "strata/graph/Graph.h"

#include "llvm/Support/Error.h"

namespace strata {

// Resolves negative A_AXIS / A_AXES entries against operand 0's rank and sorts A_AXES lists.
// Out-of-range entries are left for the verifier to report.
void normalizeAttributes(OpKind kind, const std::vector<TensorType> &operands, AttrMap &attrs);

// Slice attributes in normal form (starts, ends, steps: one entry per dim, full range where a
// dim is not sliced) from ONNX's lists: `axes` empty means the leading axes, `steps` empty 1s.
llvm::Expected<AttrMap> sliceAttributes(int64_t rank, const std::vector<int64_t> &starts,
                                        const std::vector<int64_t> &ends,
                                        const std::vector<int64_t> &axes,
                                        const std::vector<int64_t> &steps);

} // namespace strata
