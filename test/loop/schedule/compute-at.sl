// compute_at moves an intermediate's producer into a consumer loop, computing per iteration only
// the region that loop reads: a 3-element window per output, a 6-element window per split tile
// (guarded where it sticks out of the buffer), a 4x4 tile of a matmul whose reduction stays in
// the producer, and a region of symbolic extent computed in place in the full buffer.
// --check-bounds proves every access in range.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/blur.sl --schedule='compute_at(bx, j)' --check-bounds | FileCheck %s --check-prefix=WIN
// RUN: strata-loop-opt %t/blur.sl --schedule='split(j, 4); compute_at(bx, j.o)' --check-bounds | FileCheck %s --check-prefix=TAIL
// RUN: strata-loop-opt %t/mm.sl --schedule='tile(y, x, 4, 4); compute_at(C, x.o)' --check-bounds | FileCheck %s --check-prefix=MM
// RUN: strata-loop-opt %t/rows.sl --schedule='compute_at(t, a)' --check-bounds | FileCheck %s --check-prefix=INPLACE

//--- blur.sl
func @blur(%x: f32[%n + 2] in, %y: f32[%n] out, %n: i64) {
  allocate %bx: f32[%n + 2] global {
    for %i in [0, %n + 2) serial {
      %bx[%i] = %x[%i] * 2.0
    }
    for %j in [0, %n) serial {
      %y[%j] = %bx[%j] + %bx[%j + 1] + %bx[%j + 2]
    }
  }
}

//--- mm.sl
func @mm(%A: f32[%m, 8] in, %B: f32[8, %n] in, %D: f32[%m, %n] out, %m: i64, %n: i64) {
  allocate %C: f32[%m, %n] local {
    for %i in [0, %m) serial {
      for %j in [0, %n) serial {
        %C[%i, %j] = 0.0
        for %k in [0, 8) serial {
          %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]
        }
      }
    }
    for %y in [0, %m) serial {
      for %x in [0, %n) serial {
        %D[%y, %x] = max(%C[%y, %x], 0.0)
      }
    }
  }
}

//--- rows.sl
func @rows(%x: f32[%n + 1, %m] in, %y: f32[%n, %m] out, %m: i64, %n: i64) {
  allocate %t: f32[%n + 1, %m] local {
    for %i in [0, %n + 1) serial {
      for %j in [0, %m) serial {
        %t[%i, %j] = %x[%i, %j] * 3.0
      }
    }
    for %a in [0, %n) serial {
      for %b in [0, %m) serial {
        %y[%a, %b] = %t[%a, %b] + %t[%a + 1, %b]
      }
    }
  }
}

//--- checks
// WIN:      func @blur(%x: f32[%n + 2] in, %y: f32[%n] out, %n: i64) {
// WIN-NEXT:   for %j in [0, %n) serial {
// WIN-NEXT:     allocate %bx: f32[3] global {
// WIN-NEXT:       for %i in [0, 3) serial {
// WIN-NEXT:         %bx[%i] = %x[%j + %i] * 2.0
// WIN-NEXT:       }
// WIN-NEXT:       %y[%j] = %bx[0] + %bx[1] + %bx[2]
// WIN-NEXT:     }
// WIN-NEXT:   }
// WIN-NEXT: }
// TAIL:      for %j.o in [0, floordiv(%n + 3, 4)) serial {
// TAIL-NEXT:   allocate %bx: f32[6] global {
// TAIL-NEXT:     for %i in [0, 6) serial {
// TAIL-NEXT:       if %j.o * 4 + %i < %n + 2 {
// TAIL-NEXT:         %bx[%i] = %x[%j.o * 4 + %i] * 2.0
// TAIL-NEXT:       }
// TAIL-NEXT:     }
// TAIL-NEXT:     for %j.i in [0, 4) serial {
// TAIL-NEXT:       if %j.o * 4 + %j.i < %n {
// TAIL-NEXT:         %y[%j.o * 4 + %j.i] = %bx[%j.i] + %bx[%j.i + 1] + %bx[%j.i + 2]
// TAIL-NEXT:       }
// TAIL-NEXT:     }
// TAIL-NEXT:   }
// TAIL-NEXT: }
// MM:      for %y.o in [0, floordiv(%m + 3, 4)) serial {
// MM-NEXT:   for %x.o in [0, floordiv(%n + 3, 4)) serial {
// MM-NEXT:     allocate %C: f32[4, 4] local {
// MM-NEXT:       for %i in [0, 4) serial {
// MM-NEXT:         for %j in [0, 4) serial {
// MM-NEXT:           if %y.o * 4 + %i < %m {
// MM-NEXT:             if %x.o * 4 + %j < %n {
// MM-NEXT:               %C[%i, %j] = 0.0
// MM-NEXT:               for %k in [0, 8) serial {
// MM-NEXT:                 %C[%i, %j] = %C[%i, %j] + %A[%y.o * 4 + %i, %k] * %B[%k, %x.o * 4 + %j]
// MM-NEXT:               }
// MM-NEXT:             }
// MM-NEXT:           }
// MM-NEXT:         }
// MM-NEXT:       }
// MM-NEXT:       for %y.i in [0, 4) serial {
// MM:                %D[%y.o * 4 + %y.i, %x.o * 4 + %x.i] = max(%C[%y.i, %x.i], 0.0)
// INPLACE:      allocate %t: f32[%n + 1, %m] local {
// INPLACE-NEXT:   for %a in [0, %n) serial {
// INPLACE-NEXT:     for %i in [0, 2) serial {
// INPLACE-NEXT:       for %j in [0, %m) serial {
// INPLACE-NEXT:         %t[%a + %i, %j] = %x[%a + %i, %j] * 3.0
// INPLACE-NEXT:       }
// INPLACE-NEXT:     }
// INPLACE-NEXT:     for %b in [0, %m) serial {
// INPLACE-NEXT:       %y[%a, %b] = %t[%a, %b] + %t[%a + 1, %b]
