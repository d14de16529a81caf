// reorder permutes a perfect nest: the named loops trade places, others keep theirs; guards
// between the loops sink below the last named loop.
// RUN: strata-loop-opt %s --schedule='reorder(j, i)' --check-bounds | FileCheck %s
// RUN: strata-loop-opt %s --schedule='split(i, 2); reorder(j, i.o)' --check-bounds | FileCheck %s --check-prefix=SPLIT
// RUN: not strata-loop-opt %s --schedule='reorder(k, j)' 2>&1 | FileCheck %s --check-prefix=ERR
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
// CHECK:        for %j in [0, %n) serial {
// CHECK-NEXT:     for %i in [0, %m) serial {
// CHECK-NEXT:       %C[%i, %j] = 0.0
// SPLIT:        for %j in [0, %n) serial {
// SPLIT-NEXT:     for %i.i in [0, 2) serial {
// SPLIT-NEXT:       for %i.o in [0, floordiv(%m + 1, 2)) serial {
// SPLIT-NEXT:         if %i.o * 2 + %i.i < %m {
// SPLIT-NEXT:           %C[%i.o * 2 + %i.i, %j] = 0.0
// ERR: schedule: reorder(k, j): the loops are not perfectly nested
