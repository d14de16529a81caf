// tile(i, j, fi, fj) = split i, split j, reorder(i.o, j.o, i.i, j.i): the tail guards sink below
// the four loops and still prove every access in bounds.
// RUN: strata-loop-opt %s --schedule='tile(i, j, 4, 8)' --check-bounds | FileCheck %s
// RUN: strata-loop-opt %s --schedule='tile(i, j, 2, 3, io, jo, ii, ji)' --check-bounds | FileCheck %s --check-prefix=NAMED
func @matmul(%A: f32[%m, 8] in, %B: f32[8, %n] in, %C: f32[%m, %n] out, %m: i64, %n: i64) {
  for %i in [0, %m) serial {
    for %j in [0, %n) serial {
      %C[%i, %j] = 0.0
      for %k in [0, 8) serial {
        %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]
      }
    }
  }
}
// CHECK:        for %i.o in [0, floordiv(%m + 3, 4)) serial {
// CHECK-NEXT:     for %j.o in [0, floordiv(%n + 7, 8)) serial {
// CHECK-NEXT:       for %i.i in [0, 4) serial {
// CHECK-NEXT:         for %j.i in [0, 8) serial {
// CHECK-NEXT:           if %i.o * 4 + %i.i < %m {
// CHECK-NEXT:             if %j.o * 8 + %j.i < %n {
// CHECK-NEXT:               %C[%i.o * 4 + %i.i, %j.o * 8 + %j.i] = 0.0
// CHECK-NEXT:               for %k in [0, 8) serial {
// CHECK-NEXT:                 %C[%i.o * 4 + %i.i, %j.o * 8 + %j.i] = %C[%i.o * 4 + %i.i, %j.o * 8 + %j.i] + %A[%i.o * 4 + %i.i, %k] * %B[%k, %j.o * 8 + %j.i]
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// NAMED:        for %io in [0, floordiv(%m + 1, 2)) serial {
// NAMED-NEXT:     for %jo in [0, floordiv(%n + 2, 3)) serial {
// NAMED-NEXT:       for %ii in [0, 2) serial {
// NAMED-NEXT:         for %ji in [0, 3) serial {
// NAMED-NEXT:           if %io * 2 + %ii < %m {
