// unroll(loop) marks a constant-extent loop; unroll(loop, factor) splits first and marks the inner.
// RUN: strata-loop-opt %s --schedule='unroll(k)' --check-bounds | FileCheck %s
// RUN: strata-loop-opt %s --schedule='unroll(j, 2)' --check-bounds | FileCheck %s --check-prefix=FACTOR
// RUN: not strata-loop-opt %s --schedule='unroll(j)' 2>&1 | FileCheck %s --check-prefix=ERR
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
// CHECK:            for %k in [0, 8) unrolled {
// FACTOR:          for %j.o in [0, floordiv(%n + 1, 2)) serial {
// FACTOR-NEXT:       for %j.i in [0, 2) unrolled {
// FACTOR-NEXT:         if %j.o * 2 + %j.i < %n {
// FACTOR-NEXT:           %C[%i, %j.o * 2 + %j.i] = 0.0
// ERR: schedule: unroll(j): %j has an extent that is not a constant
