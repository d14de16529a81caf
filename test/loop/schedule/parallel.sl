// parallel(loop) marks a loop of any extent; a typical CPU schedule: tile, parallel outer,
// vectorize inner, unroll the reduction.
// RUN: strata-loop-opt %s --schedule='parallel(i)' --check-bounds | FileCheck %s
// RUN: strata-loop-opt %s --schedule='tile(i, j, 4, 8); parallel(i.o); vectorize(j.i); unroll(k)' --check-bounds | FileCheck %s --check-prefix=FULL
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
// CHECK:        for %i in [0, %m) parallel {
// CHECK-NEXT:     for %j in [0, %n) serial {
// FULL:        for %i.o in [0, floordiv(%m + 3, 4)) parallel {
// FULL-NEXT:     for %j.o in [0, floordiv(%n + 7, 8)) serial {
// FULL-NEXT:       for %i.i in [0, 4) serial {
// FULL-NEXT:         for %j.i in [0, 8) vectorized {
// FULL-NEXT:           if %i.o * 4 + %i.i < %m {
// FULL-NEXT:             if %j.o * 8 + %j.i < %n {
// FULL-NEXT:               %C[%i.o * 4 + %i.i, %j.o * 8 + %j.i] = 0.0
// FULL-NEXT:               for %k in [0, 8) unrolled {
// FULL-NEXT:                 %C[%i.o * 4 + %i.i, %j.o * 8 + %j.i] = %C[%i.o * 4 + %i.i, %j.o * 8 + %j.i] + %A[%i.o * 4 + %i.i, %k] * %B[%k, %j.o * 8 + %j.i]
// FULL-NEXT:               }
// FULL-NEXT:             }
// FULL-NEXT:           }
// FULL-NEXT:         }
// FULL-NEXT:       }
// FULL-NEXT:     }
// FULL-NEXT:   }
