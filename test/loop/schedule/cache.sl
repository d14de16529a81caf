// cache_write / cache_read stage the region a loop touches in a local buffer: a matmul
// accumulator, a tile of C with guarded copies at the tails, and a stencil window whose three
// overlapping reads share one 6-element region. --check-bounds proves the copies in range.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/mm.sl --schedule='cache_write(C, k, acc)' --check-bounds | FileCheck %s --check-prefix=ACC
// RUN: strata-loop-opt %t/mm.sl --schedule='tile(i, j, 4, 8); cache_write(C, i.i)' --check-bounds | FileCheck %s --check-prefix=TILE
// RUN: strata-loop-opt %t/blur.sl --schedule='split(i, 4); cache_read(x, i.i, win)' --check-bounds | FileCheck %s --check-prefix=WIN
// RUN: not strata-loop-opt %t/mm.sl --schedule='cache_read(C, k)' 2>&1 | FileCheck %s --check-prefix=ERR

//--- mm.sl
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

//--- blur.sl
func @blur(%x: f32[%n + 2] in, %y: f32[%n] out, %n: i64) {
  for %i in [0, %n) serial {
    %y[%i] = %x[%i] + %x[%i + 1] + %x[%i + 2]
  }
}

//--- checks
// ACC:            allocate %acc: f32[1, 1] local {
// ACC-NEXT:         %acc[0, 0] = %C[%i, %j]
// ACC-NEXT:         for %k in [0, 8) serial {
// ACC-NEXT:           %acc[0, 0] = %acc[0, 0] + %A[%i, %k] * %B[%k, %j]
// ACC-NEXT:         }
// ACC-NEXT:         %C[%i, %j] = %acc[0, 0]
// ACC-NEXT:       }
// TILE:            allocate %C.local: f32[4, 8] local {
// TILE-NEXT:         for %C.local.in0 in [0, 4) serial {
// TILE-NEXT:           for %C.local.in1 in [0, 8) serial {
// TILE-NEXT:             if %i.o * 4 + %C.local.in0 < %m && %j.o * 8 + %C.local.in1 < %n {
// TILE-NEXT:               %C.local[%C.local.in0, %C.local.in1] = %C[%i.o * 4 + %C.local.in0, %j.o * 8 + %C.local.in1]
// TILE-NEXT:             }
// TILE-NEXT:           }
// TILE-NEXT:         }
// TILE-NEXT:         for %i.i in [0, 4) serial {
// WIN:          allocate %win: f32[6] local {
// WIN-NEXT:       for %win.in0 in [0, 6) serial {
// WIN-NEXT:         if %i.o * 4 + %win.in0 < %n + 2 {
// WIN-NEXT:           %win[%win.in0] = %x[%i.o * 4 + %win.in0]
// WIN-NEXT:         }
// WIN-NEXT:       }
// WIN-NEXT:       for %i.i in [0, 4) serial {
// WIN-NEXT:         if %i.o * 4 + %i.i < %n {
// WIN-NEXT:           %y[%i.o * 4 + %i.i] = %win[%i.i] + %win[%i.i + 1] + %win[%i.i + 2]
// WIN-NEXT:         }
// WIN-NEXT:       }
// WIN-NEXT:     }
// ERR: schedule: cache_read(C, k): %k stores to %C; use cache_write
