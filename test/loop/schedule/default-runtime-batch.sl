// A nest whose outermost independent loop has a run-time extent (a batch, most often 1) and a
// static loop inside it: the two are fused and the fused loop goes parallel, so a batch of 1
// still uses every core (default-runtime-rows.sl: not where each fused iteration would do
// little work).
// RUN: strata-loop-opt %s --default-schedule --check-bounds | FileCheck %s
func @pool(%n: i64, %x: f32[%n, 4, 64, 64] in, %y: f32[%n, 4, 64, 64] out) {
  for %b in [0, %n) serial {
    for %c in [0, 4) serial {
      for %h in [0, 64) serial {
        for %w in [0, 64) serial {
          %y[%b, %c, %h, %w] = %x[%b, %c, %h, %w] * 2.0
        }
      }
    }
  }
}
// CHECK:       // default schedule:
// CHECK-SAME:  fuse(b, c, b.c); parallel(b.c)
// CHECK-NEXT:  func @pool
// CHECK-NEXT:    for %b.c in [0, %n * 4) parallel {
