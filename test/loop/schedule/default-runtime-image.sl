// A run-time batch with run-time rows inside it (an image of any size, channels last): the two
// are fused and the fused loop goes parallel, so a batch of 1 still uses every core; each fused
// iteration is a whole row (a run-time extent counts as enough work). The bounds prover follows
// the fused loop's division and remainder by the run-time rows.
// RUN: strata-loop-opt %s --default-schedule --check-bounds | FileCheck %s
func @transpose(%n: i64, %h: i64, %w: i64, %x: f32[%n, 32, %h, %w] in, %y: f32[%n, %h, %w, 32] out) {
  for %b in [0, %n) serial {
    for %r in [0, %h) serial {
      for %c in [0, %w) serial {
        for %k in [0, 32) serial {
          %y[%b, %r, %c, %k] = %x[%b, %k, %r, %c]
        }
      }
    }
  }
}
// CHECK:       // default schedule:
// CHECK-SAME:  fuse(b, r, b.r); parallel(b.r)
// CHECK-NEXT:  func @transpose
// CHECK-NEXT:    for %b.r in [0, %n * %h) parallel {
// CHECK-NEXT:      for %c in [0, %w) serial {
