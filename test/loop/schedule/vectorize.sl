// vectorize(loop) marks a constant-extent loop; vectorize(loop, width) splits first and marks the
// inner loop, whose tail stays guarded (code generation masks or scalarizes it).
// RUN: strata-loop-opt %s --schedule='vectorize(i)' --check-bounds | FileCheck %s
// RUN: strata-loop-opt %s --schedule='vectorize(i, 4)' --check-bounds | FileCheck %s --check-prefix=WIDTH
// RUN: strata-loop-opt %s --schedule='split(i, 5, io, ii); vectorize(ii)' --check-bounds | FileCheck %s --check-prefix=SPLIT
func @add(%a: f32[10] in, %b: f32[10] in, %c: f32[10] out) {
  for %i in [0, 10) serial {
    %c[%i] = %a[%i] + %b[%i]
  }
}
// CHECK:        for %i in [0, 10) vectorized {
// CHECK-NEXT:     %c[%i] = %a[%i] + %b[%i]
// CHECK-NEXT:   }
// WIDTH:        for %i.o in [0, 3) serial {
// WIDTH-NEXT:     for %i.i in [0, 4) vectorized {
// WIDTH-NEXT:       if %i.o * 4 + %i.i < 10 {
// WIDTH-NEXT:         %c[%i.o * 4 + %i.i] = %a[%i.o * 4 + %i.i] + %b[%i.o * 4 + %i.i]
// WIDTH-NEXT:       }
// WIDTH-NEXT:     }
// WIDTH-NEXT:   }
// SPLIT:        for %io in [0, 2) serial {
// SPLIT-NEXT:     for %ii in [0, 5) vectorized {
// SPLIT-NEXT:       %c[%io * 5 + %ii] = %a[%io * 5 + %ii] + %b[%io * 5 + %ii]
// SPLIT-NEXT:     }
// SPLIT-NEXT:   }
