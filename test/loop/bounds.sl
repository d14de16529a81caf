// --check-bounds proves every access inside its buffer or names each one it cannot prove.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/ok.sl --check-bounds | FileCheck %s --check-prefix=OK
// RUN: not strata-loop-opt %t/bad.sl --check-bounds 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: strata-loop-opt %t/fused.sl --check-bounds | FileCheck %s --check-prefix=FUSED
// RUN: not strata-loop-opt %t/fusedbad.sl --check-bounds 2>&1 | FileCheck %s --check-prefix=FUSEDBAD
// Without the flag the out-of-bounds function is still well formed.
// RUN: strata-loop-opt %t/bad.sl > /dev/null

//--- ok.sl
// A loop over %n split by 4 with a guarded tail, a vector access and a reversed index.
func @ok(%x: f32[%n] in, %y: f32[%n] out, %v: f32[16] inout, %n: i64) {
  for %io in [0, floordiv(%n + 3, 4)) parallel {
    for %ii in [0, 4) serial {
      if %io * 4 + %ii < %n {
        %y[%io * 4 + %ii] = %x[%n - 1 - (%io * 4 + %ii)]
      }
    }
  }
  for %j in [0, 4) serial {
    %v[ramp(%j * 4, 1, 4)] = %v[ramp(15 - %j * 4, -1, 4)]
  }
}
// OK: func @ok(

//--- fused.sl
// A loop over %n * %h (two run-time extents fused): the quotient by %h is below %n and the
// remainder below %h.
func @fused(%x: f32[%n, %h] in, %y: f32[%h, %n] out, %n: i64, %h: i64) {
  for %q in [0, %n * %h) parallel {
    %y[floormod(%q, %h), floordiv(%q, %h)] = %x[floordiv(%q, %h), floormod(%q, %h)]
  }
}
// FUSED: func @fused(

//--- fusedbad.sl
// The quotient of the same loop by %n (not a factor it was built with) is not bounded by %n.
func @fusedbad(%x: f32[%n, %h] in, %n: i64, %h: i64, %y: f32[%n] out) {
  for %q in [0, %n * %h) parallel {
    %y[floordiv(%q, %h) + floormod(%q, %n)] = %x[floordiv(%q, %h), 0]
  }
}
// FUSEDBAD: verifier: @fusedbad: store %y[floordiv(%q, %h) + floormod(%q, %n)]: index floordiv(%q, %h) + floormod(%q, %n) of dimension 0 ranges over [0, %n + (%n - 1) - 1], not provably within [0, %n)

//--- bad.sl
func @bad(%x: f32[%n] in, %y: f32[%n] out, %n: i64) {
  for %io in [0, floordiv(%n + 3, 4)) serial {
    for %ii in [0, 4) serial {
      %y[%io * 4 + %ii] = %x[%io * 4 + %ii - 1]
    }
  }
}
// BAD:      verifier: @bad: load %x[%io * 4 + %ii - 1]: index %io * 4 + %ii - 1 of dimension 0 ranges over [-1, (floordiv(%n + 3, 4) - 1) * 4 + 2], not provably within [0, %n)
// BAD-NEXT: verifier: @bad: store %y[%io * 4 + %ii]: index %io * 4 + %ii of dimension 0 ranges over [0, (floordiv(%n + 3, 4) - 1) * 4 + 3], not provably within [0, %n)
