// RUN: strata-loop-opt %s --emit-llvm -O0 | FileCheck %s
// Explicit vector expressions: a unit-stride ramp on the innermost dimension is one vector load or
// store; a ramp over the outer dimension (stride 8 elements) is a gather; broadcast is a splat.
// Unrolled loops carry the full-unroll hint. Local buffers are stack allocations, zeroed.
// CHECK-LABEL: define void @vec(
// CHECK: %acc = alloca [4 x float], align 64
// CHECK: call void @llvm.memset
// CHECK: load <4 x float>, ptr
// CHECK: call <4 x float> @llvm.masked.gather.v4f32.v4p0(<4 x ptr>
// CHECK: fmul <4 x float> %{{[0-9]+}}, <float 2.000000e+00,
// CHECK: store <4 x float>
// CHECK: !{!"llvm.loop.unroll.full"}
func @vec(%x: f32[4, 8] in, %y: f32[4, 8] out) {
  allocate %acc: f32[4] local {
    for %j in [0, 2) unrolled {
      %acc[ramp(0, 1, 4)] = %x[0, ramp(%j * 4, 1, 4)] + %x[ramp(0, 1, 4), %j] * broadcast(2.0, 4)
    }
    %y[0, ramp(0, 1, 4)] = %acc[ramp(0, 1, 4)]
  }
}
