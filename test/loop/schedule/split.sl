// split: a tail that is not provably whole is guarded, so --check-bounds proves every access
// in range; a provable multiple of the factor gets no guard; a non-zero min is added back.
// RUN: strata-loop-opt %s --schedule='split(i, 4, io, ii)' --check-bounds | FileCheck %s --check-prefix=TAIL
// RUN: strata-loop-opt %s --schedule='split(j, 4)' --check-bounds | FileCheck %s --check-prefix=EXACT
// RUN: strata-loop-opt %s --schedule='split(k, 3)' --check-bounds | FileCheck %s --check-prefix=MIN
// RUN: strata-loop-opt %s --schedule='split(k, 4)' --check-bounds | FileCheck %s --check-prefix=CONST
func @f(%x: f32[%n] in, %y: f32[%n] out, %z: f32[%n * 8] inout, %w: f32[10] inout, %n: i64) {
  for %i in [0, %n) serial {
    %y[%i] = %x[%n - 1 - %i]
  }
  for %j in [0, %n * 8) serial {
    %z[%j] = %z[%j] * 2.0
  }
  for %k from 1 extent 9 serial {
    %w[%k] = %w[%k - 1]
  }
}
// TAIL:        for %io in [0, floordiv(%n + 3, 4)) serial {
// TAIL-NEXT:     for %ii in [0, 4) serial {
// TAIL-NEXT:       if %io * 4 + %ii < %n {
// TAIL-NEXT:         %y[%io * 4 + %ii] = %x[%n - 1 - (%io * 4 + %ii)]
// TAIL-NEXT:       }
// TAIL-NEXT:     }
// TAIL-NEXT:   }
// EXACT:        for %j.o in [0, %n * 2) serial {
// EXACT-NEXT:     for %j.i in [0, 4) serial {
// EXACT-NEXT:       %z[%j.o * 4 + %j.i] = %z[%j.o * 4 + %j.i] * 2.0
// EXACT-NEXT:     }
// EXACT-NEXT:   }
// MIN:        for %k.o in [0, 3) serial {
// MIN-NEXT:     for %k.i in [0, 3) serial {
// MIN-NEXT:       %w[1 + (%k.o * 3 + %k.i)] = %w[1 + (%k.o * 3 + %k.i) - 1]
// MIN-NEXT:     }
// MIN-NEXT:   }
// CONST:        for %k.o in [0, 3) serial {
// CONST-NEXT:     for %k.i in [0, 4) serial {
// CONST-NEXT:       if %k.o * 4 + %k.i < 9 {
// CONST-NEXT:         %w[1 + (%k.o * 4 + %k.i)] = %w[1 + (%k.o * 4 + %k.i) - 1]
// CONST-NEXT:       }
// CONST-NEXT:     }
// CONST-NEXT:   }
