// fuse(outer, inner, fused): one loop over the product of the extents, keeping the outer kind;
// the old variables become floordiv/floormod of the fused one (plus their mins).
// RUN: strata-loop-opt %s --schedule='fuse(i, j, ij)' --check-bounds | FileCheck %s
// RUN: strata-loop-opt %s --schedule='fuse(i, j); split(i.j, 8)' --check-bounds | FileCheck %s --check-prefix=SPLIT
// RUN: not strata-loop-opt %s --schedule='fuse(j, i)' 2>&1 | FileCheck %s --check-prefix=ERR
func @scale(%x: f32[3, 8] in, %y: f32[3, 8] out) {
  for %i in [0, 3) parallel {
    for %j from 1 extent 7 serial {
      %y[%i, %j] = %x[%i, %j - 1] * 2.0
    }
  }
}
// CHECK:        for %ij in [0, 21) parallel {
// CHECK-NEXT:     %y[floordiv(%ij, 7), 1 + floormod(%ij, 7)] = %x[floordiv(%ij, 7), 1 + floormod(%ij, 7) - 1] * 2.0
// CHECK-NEXT:   }
// SPLIT:        for %i.j.o in [0, 3) serial {
// SPLIT-NEXT:     for %i.j.i in [0, 8) serial {
// SPLIT-NEXT:       if %i.j.o * 8 + %i.j.i < 21 {
// SPLIT-NEXT:         %y[floordiv(%i.j.o * 8 + %i.j.i, 7), 1 + floormod(%i.j.o * 8 + %i.j.i, 7)] = %x[floordiv(%i.j.o * 8 + %i.j.i, 7), 1 + floormod(%i.j.o * 8 + %i.j.i, 7) - 1] * 2.0
// ERR: schedule: fuse(j, i): %i is not the whole body of %j
