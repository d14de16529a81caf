// The default schedule of an elementwise kernel: the row (the stored buffer's unit-stride dim) is
// split by the vector width with a guarded tail and vectorized, the outer loop goes parallel
// when the nest does enough work (here, only without the minimum: 160 iterations are far below it).
// RUN: strata-loop-opt %s --default-schedule --min-parallel-work=0 --check-bounds | FileCheck %s
// RUN: strata-loop-opt %s --default-schedule | FileCheck %s --check-prefix=SMALL
func @add(%a: f32[4, 37] in, %b: f32[4, 37] in, %c: f32[4, 37] out) {
  for %i in [0, 4) serial {
    for %j in [0, 37) serial {
      %c[%i, %j] = %a[%i, %j] + %b[%i, %j]
    }
  }
}
// CHECK:      // default schedule: vectorize(j, 8); parallel(i)
// CHECK-NEXT: func @add
// CHECK-NEXT:   for %i in [0, 4) parallel {
// CHECK-NEXT:     for %j.o in [0, 5) serial {
// CHECK-NEXT:       for %j.i in [0, 8) vectorized {
// CHECK-NEXT:         if %j.o * 8 + %j.i < 37 {
// CHECK-NEXT:           %c[%i, %j.o * 8 + %j.i] = %a[%i, %j.o * 8 + %j.i] + %b[%i, %j.o * 8 + %j.i]
// SMALL:      // default schedule: vectorize(j, 8)
// SMALL-NEXT: func @add
// SMALL-NEXT:   for %i in [0, 4) serial {
