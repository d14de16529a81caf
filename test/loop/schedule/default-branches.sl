// A loop whose body stores one buffer at different index lists (the copy and fill branches of a
// pad, each with a loop of its own) is independent when every access has the same index
// injective in the loop at one dim: its rows go parallel (rows.sl). Where no dim separates the
// iterations (the fill writes a transposed element: transposed.sl), the loop stays serial.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/rows.sl --default-schedule --check-bounds | FileCheck %s --check-prefix=ROWS
// RUN: strata-loop-opt %t/transposed.sl --default-schedule --check-bounds | FileCheck %s --check-prefix=TRANSPOSED
// ROWS:      // default schedule:
// ROWS-SAME: parallel(r)
// ROWS:      for %r in [0, 64) parallel {
// TRANSPOSED:     // default schedule:
// TRANSPOSED-NOT: parallel(r)
// TRANSPOSED:     for %r in [0, 64) serial {

//--- rows.sl
func @rows(%x: f32[60, 32] in, %y: f32[64, 32] out) {
  for %r in [0, 64) serial {
    if %r < 60 {
      for %c in [0, 32) serial {
        %y[%r, %c] = %x[%r, %c]
      }
    } else {
      for %k in [0, 32) serial {
        %y[%r, %k] = 0.0
      }
    }
  }
}

//--- transposed.sl
func @transposed(%x: f32[64, 64] in, %y: f32[64, 64] out) {
  for %r in [0, 64) serial {
    if %r < 60 {
      for %c in [0, 64) serial {
        %y[%r, %c] = %x[%r, %c]
      }
    } else {
      for %k in [0, 64) serial {
        %y[%k, %r] = 0.0
      }
    }
  }
}
