// A nest lowering annotated as register-tiled keeps its structure: the default schedule only
// marks its outermost parallel axis parallel, and only when the recorded work reaches the minimum
// (the flattened row index %q * 4 is beyond the independence check; the role says it).
// RUN: strata-loop-opt %s --default-schedule | FileCheck %s
// RUN: strata-loop-opt %s --default-schedule --min-parallel-work=100000 | FileCheck %s --check-prefix=SMALL
func @mk(%x: f32[64, 4] in, %y: f32[64] out) {
  for %q in [0, 16) serial [parallel, nest matmul, work 65536, register_tiled] {
    allocate %acc: f32[4] local {
      %acc[0] = 0.0
      %acc[1] = 0.0
      %acc[2] = 0.0
      %acc[3] = 0.0
      for %k in [0, 4) serial [reduction] {
        %acc[0] = %acc[0] + %x[%q * 4, %k]
        %acc[1] = %acc[1] + %x[%q * 4 + 1, %k]
        %acc[2] = %acc[2] + %x[%q * 4 + 2, %k]
        %acc[3] = %acc[3] + %x[%q * 4 + 3, %k]
      }
      %y[%q * 4] = %acc[0]
      %y[%q * 4 + 1] = %acc[1]
      %y[%q * 4 + 2] = %acc[2]
      %y[%q * 4 + 3] = %acc[3]
    }
  }
}
// CHECK:      // default schedule: parallel(q)
// CHECK-NEXT: func @mk
// CHECK-NEXT:   for %q in [0, 16) parallel [parallel, nest matmul, work 65536, register_tiled] {
// CHECK:          for %k in [0, 4) serial [reduction] {
// SMALL:      // default schedule:
// SMALL-NEXT: func @mk
// SMALL-NEXT:   for %q in [0, 16) serial [parallel, nest matmul, work 65536, register_tiled] {
