// --simplify folds constants, cancels index arithmetic, uses loop bounds to drop min/max and
// floordiv/floormod of a split loop, and removes branches and loops that cannot run.
// RUN: strata-loop-opt %s --simplify | FileCheck %s

func @s(%a: f32[64] inout, %n: i64) {
  // CHECK:      for %io in [0, 16) serial {
  // CHECK-NEXT:   for %ii in [0, 4) vectorized {
  // CHECK-NEXT:     %a[%io * 4 + %ii] = %a[%io * 4 + %ii] * 2.0
  // CHECK-NEXT:   }
  // CHECK-NEXT: }
  for %io in [0, 8 * 2) serial {
    for %ii in [0, 4 + 0) vectorized {
      %a[floordiv(%io * 4 + %ii, 4) * 4 + floormod(%io * 4 + %ii, 4)] = %a[(%io * 4 + 1) + %ii - 1] * 2.0 * 1.0
    }
  }
  // CHECK-NEXT: for %i in [0, %n) serial {
  // CHECK-NEXT:   %a[min(%i, 63)] = 0.0
  // CHECK-NEXT: }
  for %i in [0, %n) serial {
    if %i < %n + 1 && true {
      %a[max(min(min(%i, 70), 63), 0)] = select(%i >= 0, 0.0 + 0.0, 1.0)
    } else {
      %a[0] = 1.0
    }
  }
  // A loop with no iterations disappears.
  for %e in [0, 3 - 3) serial {
    %a[%e] = 1.0
  }
  // CHECK-NEXT: %a[0] = 1.0
  if 2 <= 1 {
    %a[1] = 2.0
  } else {
    %a[0] = 1.0
  }
  // CHECK-NEXT: }
}
