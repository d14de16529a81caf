// What one kernel costs in work and traffic, for the roofline view of `strata explain` and
// `strata bench --profile`: arithmetic operations and the bytes of its operands and results.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/support/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata::driver {

struct KernelCost {
  // Floating-point operations: a multiply-add is 2 (matmul, conv), an elementwise op 1 per
  // element (a transcendental too), softmax 4 and layer_norm 7 per input element, a pool one per
  // window element, a reduction one per input element; data movement 0.
  double flops = 0;
  // The least traffic: every distinct operand and result read or written once (weights included).
  double bytes = 0;
};

// The sizes of `g`'s symbolic dims in a run on `inputs` (each symbolic input dim: the input's).
std::map<std::string, int64_t> symbolSizes(const Graph &g, const std::vector<Tensor> &inputs);

// The cost of top-level op `op` (a fused kernel: the sum over its region's ops; its traffic is
// the kernel's own operands and results). Symbolic dims take their size from `symbols`, else 1.
KernelCost kernelCost(const Op &op, const std::map<std::string, int64_t> &symbols = {});

} // namespace strata::driver
