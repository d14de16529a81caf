// Constructors of every graph pass; Registry.cpp lists them by name, one line each.
#pragma once
#include "strata/graph/passes/Pass.h"

namespace strata {

std::unique_ptr<Pass> createCanonicalizePass();   // Canonicalize*.cpp: algebraic + data movement
std::unique_ptr<Pass> createConstantFoldPass();   // ConstantFold.cpp: through the interpreter
std::unique_ptr<Pass> createCSEPass();            // CSE.cpp
std::unique_ptr<Pass> createDCEPass();            // DCE.cpp
std::unique_ptr<Pass> createHoistLoopInvariantsPass(); // HoistLoopInvariants.cpp
std::unique_ptr<Pass> createResolveBroadcastDimsPass(); // ResolveBroadcastDims.cpp
std::unique_ptr<Pass> createFoldBatchNormPass();  // FoldBatchNorm.cpp: scale/bias into conv/matmul
std::unique_ptr<Pass> createFuseBiasPass();       // FuseBias.cpp: matmul + bias add -> one op
std::unique_ptr<Pass> createRaiseLayerNormPass(); // RaiseLayerNorm.cpp: decomposed -> layer_norm
std::unique_ptr<Pass> createFuseAttentionPass(); // FuseAttention.cpp: the attention chain -> attention
std::unique_ptr<Pass> createLayoutNCHWcPass();    // LayoutNCHWc.cpp
std::unique_ptr<Pass> createWinogradPass();      // Winograd.cpp: 3x3 convs -> F(m x m, 3 x 3)
std::unique_ptr<Pass> createConv1x1ToMatMulPass(); // Conv1x1ToMatMul.cpp: plain 1x1 conv -> matmul
std::unique_ptr<Pass> createConvTransposeToMatMulPass(); // ConvTransposeToMatMul.cpp
std::unique_ptr<Pass> createConvTransposeToConvPass();   // ConvTransposeToConv.cpp
std::unique_ptr<Pass> createPackMatMulWeightsPass(); // PackMatMulWeights.cpp
std::unique_ptr<Pass> createFusePass();           // Fuse.cpp: fusion planning into kernels

} // namespace strata
