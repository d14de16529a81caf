// A conv nest: the output loops (%oc, %oh, %ow) are independent, the (%ic, %kh, %kw) reduction
// is not. The output plane is tiled 4 x 16 (%ow is 16 wide, so its split is exact), the reduction
// moves outside the tile into a local accumulator, the tile row is vectorized, %oc goes parallel.
// RUN: strata-loop-opt %s --default-schedule --check-bounds | FileCheck %s
func @conv(%x: f32[3, 18, 18] in, %w: f32[8, 3, 3, 3] in, %y: f32[8, 16, 16] inout) {
  for %oc in [0, 8) serial {
    for %oh in [0, 16) serial {
      for %ow in [0, 16) serial {
        for %ic in [0, 3) serial {
          for %kh in [0, 3) serial {
            for %kw in [0, 3) serial {
              %y[%oc, %oh, %ow] = %y[%oc, %oh, %ow] + %w[%oc, %ic, %kh, %kw] * %x[%ic, %oh + %kh, %ow + %kw]
            }
          }
        }
      }
    }
  }
}
// CHECK:      // default schedule: tile(oh, ow, 4, 16); reorder(ic, kh, kw, oh.i, ow.i); cache_write(y, ic); vectorize(y.local.in2, 8); vectorize(ow.i, 8); vectorize(y.local.out2, 8); parallel(oc)
// CHECK:        for %oc in [0, 8) parallel {
// CHECK-NEXT:     for %oh.o in [0, 4) serial {
// CHECK-NEXT:       for %ow.o in [0, 1) serial {
// CHECK-NEXT:         allocate %y.local: f32[1, 4, 16] local {
// CHECK:                for %ic in [0, 3) serial {
// CHECK-NEXT:             for %kh in [0, 3) serial {
// CHECK-NEXT:               for %kw in [0, 3) serial {
// CHECK-NEXT:                 for %oh.i in [0, 4) serial {
// CHECK-NEXT:                   for %ow.i.o in [0, 2) serial {
// CHECK-NEXT:                     for %ow.i.i in [0, 8) vectorized {
// CHECK-NEXT:                       %y.local[0, %oh.i, %ow.i.o * 8 + %ow.i.i] = %y.local[0, %oh.i, %ow.i.o * 8 + %ow.i.i] + %w[%oc, %ic, %kh, %kw] * %x[%ic, %oh.o * 4 + %oh.i + %kh, %ow.o * 16 + (%ow.i.o * 8 + %ow.i.i) + %kw]
