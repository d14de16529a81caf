// Matmul nests are tiled 4 x 16 (two 8-lane vectors). An accumulating nest (perfect) also moves
// %k outside the tile (each C[i, j] still sums k ascending, so results are bit-identical), stages
// the tile in a local accumulator across %k and vectorizes the tile's row; a nest with an init
// store (imperfect) caches the tile around the i.i loop instead. With run-time rows and columns
// the row and column tile loops are fused before going parallel (a run-time row count, often
// small, would leave cores idle).
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/acc.sl --default-schedule --check-bounds | FileCheck %s --check-prefix=ACC
// RUN: strata-loop-opt %t/init.sl --default-schedule --check-bounds | FileCheck %s --check-prefix=INIT

//--- acc.sl
func @matmul(%A: f32[%m, 29] in, %B: f32[29, %n] in, %C: f32[%m, %n] inout, %m: i64, %n: i64) {
  for %i in [0, %m) serial {
    for %j in [0, %n) serial {
      for %k in [0, 29) serial {
        %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]
      }
    }
  }
}

//--- init.sl
func @matmul(%A: f32[33, 29] in, %B: f32[29, 47] in, %C: f32[33, 47] out) {
  for %i in [0, 33) serial {
    for %j in [0, 47) serial {
      %C[%i, %j] = 0.0
      for %k in [0, 29) serial {
        %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]
      }
    }
  }
}

//--- checks
// ACC:      // default schedule: tile(i, j, 4, 16); reorder(k, i.i, j.i); cache_write(C, k); vectorize(C.local.in1, 8); vectorize(j.i, 8); vectorize(C.local.out1, 8); fuse(i.o, j.o, i.o.j.o); parallel(i.o.j.o)
// ACC:        for %i.o.j.o in [0, floordiv(%m + 3, 4) * floordiv(%n + 15, 16)) parallel {
// ACC-NEXT:     allocate %C.local: f32[4, 16] local {
// ACC:            for %k in [0, 29) serial {
// ACC-NEXT:         for %i.i in [0, 4) serial {
// ACC-NEXT:           for %j.i.o in [0, 2) serial {
// ACC-NEXT:             for %j.i.i in [0, 8) vectorized {
// ACC-NEXT:               if floordiv(%i.o.j.o, floordiv(%n + 15, 16)) * 4 + %i.i < %m {
// ACC-NEXT:                 if floormod(%i.o.j.o, floordiv(%n + 15, 16)) * 16 + (%j.i.o * 8 + %j.i.i) < %n {
// ACC-NEXT:                   %C.local[%i.i, %j.i.o * 8 + %j.i.i] = %C.local[%i.i, %j.i.o * 8 + %j.i.i] + %A[floordiv(%i.o.j.o, floordiv(%n + 15, 16)) * 4 + %i.i, %k] * %B[%k, floormod(%i.o.j.o, floordiv(%n + 15, 16)) * 16 + (%j.i.o * 8 + %j.i.i)]
// INIT:     // default schedule: tile(i, j, 4, 16); cache_write(C, i.i); vectorize(C.local.in1, 8); vectorize(C.local.out1, 8); parallel(i.o)
// INIT:       for %i.o in [0, 9) parallel {
// INIT-NEXT:    for %j.o in [0, 3) serial {
// INIT-NEXT:      allocate %C.local: f32[4, 16] local {
// INIT:             for %i.i in [0, 4) serial {
// INIT-NEXT:          for %j.i in [0, 16) serial {
// INIT-NEXT:            if %i.o * 4 + %i.i < 33 {
// INIT-NEXT:              if %j.o * 16 + %j.i < 47 {
// INIT-NEXT:                %C.local[%i.i, %j.i] = 0.0
// INIT-NEXT:                for %k in [0, 29) serial {
