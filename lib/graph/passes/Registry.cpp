// The pass registry: one line per pass (name, what it does, constructor).
#include "strata/graph/passes/Passes.h"

namespace strata {

const std::vector<PassInfo> &passRegistry() {
  static const std::vector<PassInfo> registry = {
      {"canonicalize", "algebraic identities and data-movement cleanups", createCanonicalizePass},
      {"constant-fold", "evaluate ops on constants through the interpreter",
       createConstantFoldPass},
      {"cse", "merge identical ops (constants compared by content)", createCSEPass},
      {"dce", "remove ops whose results are unused", createDCEPass},
      {"hoist-loop-invariants", "move ops a loop's body computes alike every iteration before it",
       createHoistLoopInvariantsPass},
      {"resolve-broadcast-dims",
       "a broadcast of two symbolic dims typed by an operand's formula (checked at run time)",
       createResolveBroadcastDimsPass},
      {"fold-batchnorm", "fold per-channel scale and shift into a conv or matmul",
       createFoldBatchNormPass},
      {"fuse-bias", "merge a bias add into the conv or matmul before it", createFuseBiasPass},
      {"conv-transpose-to-conv",
       "stride-1 transposed convs to a conv with the flipped weight",
       createConvTransposeToConvPass},
      {"raise-layer-norm",
       "layer normalization written as reductions and elementwise ops -> layer_norm",
       createRaiseLayerNormPass},
      {"fuse-attention", "matmul -> scale -> bias -> softmax -> matmul as one attention op",
       createFuseAttentionPass},
      {"layout-nchwc", "convolutions to the blocked NCHWc layout", createLayoutNCHWcPass},
      {"winograd", "blocked 3x3 stride-1 convs to Winograd F(m x m, 3 x 3) where cheaper",
       createWinogradPass},
      {"conv1x1-to-matmul", "1x1 convolutions left in NCHW to a matmul over the positions",
       createConv1x1ToMatMulPass},
      {"conv-transpose-to-matmul",
       "transposed convs whose stride is their kernel to a matmul and a pixel shuffle",
       createConvTransposeToMatMulPass},
      {"pack-matmul-weights", "constant matmul right operands to contiguous column panels",
       createPackMatMulWeightsPass},
      {"fuse", "group ops into kernels (elementwise chains, epilogues, row reductions)",
       createFusePass},
  };
  return registry;
}

const PassInfo *lookupPass(std::string_view name) {
  for (const PassInfo &p : passRegistry())
    if (p.name == name)
      return &p;
  return nullptr;
}

} // namespace strata
