// Non-contiguous strides print; contiguous ones (here the default [%n, 1]) do not. Scalar
// parameters may be used in shapes before their declaration. gpu kinds and shared memory parse.
// RUN: strata-loop-opt %s | FileCheck %s
// RUN: strata-loop-opt %s | strata-loop-opt - | FileCheck %s

// CHECK: func @t(%a: f16[%m, %n] strides [1, %m] in, %b: f16[%m, %n] out, %m: i64, %n: i64) {
func @t(%a: f16[%m, %n] strides [1, %m] in, %b: f16[%m, %n] strides [%n, 1] out, %m: i64, %n: i64) {
  // CHECK-NEXT: for %bx in [0, %m) gpu_block {
  for %bx in [0, %m) gpu_block {
    // CHECK-NEXT: allocate %tile: f16[32] shared {
    allocate %tile: f16[32] shared {
      // CHECK-NEXT: for %tx in [0, min(%n, 32)) gpu_thread {
      for %tx in [0, min(%n, 32)) gpu_thread {
        // CHECK-NEXT: %tile[%tx] = %a[%bx, %tx] * 0.5f16
        %tile[%tx] = %a[%bx, %tx] * 0.5f16
        // CHECK-NEXT: %b[%bx, %tx] = %tile[%tx]
        %b[%bx, %tx] = %tile[%tx]
      }
    }
  }
}
