// Leading dims indexed by the delinearization of one row index over a contiguous buffer (a
// matmul's flattened rows reading a channels-last [n, h, w, c] tensor) address it as
// row * stride: no division by run-time extents per access. Dims that do not delinearize the
// row over the buffer's own extents (other.sl: h and w swapped) keep their divisions.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/rows.sl --emit-llvm -O0 | FileCheck %s --check-prefix=ROWS
// RUN: strata-loop-opt %t/other.sl --emit-llvm -O0 | FileCheck %s --check-prefix=OTHER
// ROWS-LABEL: define void @rows(
// ROWS-NOT: {{sdiv|srem}}
// ROWS: ret void
// OTHER-LABEL: define void @other(
// OTHER: {{sdiv|srem}}
// OTHER: ret void

//--- rows.sl
func @rows(%x: f32[%n, %h, %w, 8] in, %y: f32[%m, 8] out, %m: i64, %n: i64, %h: i64, %w: i64) {
  for %r in [0, %m) serial {
    for %k in [0, 8) serial {
      %y[%r, %k] = %x[floordiv(%r, %w * %h), floormod(floordiv(%r, %w), %h), floormod(%r, %w), %k]
    }
  }
}

//--- other.sl
func @other(%x: f32[%n, %h, %w, 8] in, %y: f32[%m, 8] out, %m: i64, %n: i64, %h: i64, %w: i64) {
  for %r in [0, %m) serial {
    for %k in [0, 8) serial {
      %y[%r, %k] = %x[floordiv(%r, %w * %h), floormod(floordiv(%r, %h), %w), floormod(%r, %h), %k]
    }
  }
}
