// A run-time-extent loop is not fused with the static loop inside it where each fused iteration
// would do little work (8 elements here): the divisions the outer loop did once per iteration
// (a window partition's row index by run-time sizes) would run at every one.
// RUN: strata-loop-opt %s --default-schedule --check-bounds | FileCheck %s
func @rows(%m: i64, %x: f32[%m, 49, 8] in, %y: f32[%m, 49, 8] out) {
  for %r in [0, %m) serial {
    for %k in [0, 49) serial {
      for %c in [0, 8) serial {
        %y[%r, %k, %c] = %x[%r, %k, %c] + 1.0
      }
    }
  }
}
// CHECK:       // default schedule:
// CHECK-NOT:   fuse
// CHECK-SAME:  parallel(r)
// CHECK-NEXT:  func @rows
// CHECK-NEXT:    for %r in [0, %m) parallel {
