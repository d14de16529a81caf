// Printing parsed loop IR and parsing it again gives the same text; every node kind, loop kind,
// memory scope and literal form appears once. Defaults are not printed (contiguous strides,
// i64/f32 literal types); the first print is canonical.
// RUN: strata-loop-opt %s > %t1 && strata-loop-opt %t1 > %t2 && diff %t1 %t2
// RUN: strata-loop-opt %s | FileCheck %s
func @add_relu(%a: f32[4, %n] in, %b: f32[4, %n] strides [%n, 1] in, %out: f32[4, %n] out, %n: i64) {
  for %i in [0, 4) serial {
    for %j in [0, %n) vectorized {
      %out[%i, %j] = max(%a[%i, %j] + %b[%i, %j], 0.0)
    }
  }
  allocate %t: f64[8, 2] local {
    for %k from 1 extent 7 unrolled {
      // A loop not starting at 0 prints as from/extent.
      %t[%k, 0] = cast<f64>(%a[0, %k - 1]) * -2.5f64
      if %k < 3 && !(%k == 2) {
        %t[%k, 1] = select(%k > 4, 1.0e300f64, inff64)
      } else if %k % 2 == 0 {
        %t[%k - 1, floordiv(%k, 2)] = exp(-0.0f64)
      } else {
      }
    }
    %out[0, ramp(0, 1, 4)] = broadcast(fma(1.5, 2.0, nan), 4) - %a[0, ramp(%n - 4, 1, 4)]
  }
  for %x in [0, 3i32) parallel {
    %out[cast<i64>(%x * 2i32 - -7i32), (1 - (2 - 3)) * 4] = 1e-7
  }
}

// CHECK:      func @add_relu(%a: f32[4, %n] in, %b: f32[4, %n] in, %out: f32[4, %n] out, %n: i64) {
// CHECK-NEXT:   for %i in [0, 4) serial {
// CHECK-NEXT:     for %j in [0, %n) vectorized {
// CHECK-NEXT:       %out[%i, %j] = max(%a[%i, %j] + %b[%i, %j], 0.0)
// CHECK:        allocate %t: f64[8, 2] local {
// CHECK-NEXT:     for %k from 1 extent 7 unrolled {
// CHECK-NEXT:       %t[%k, 0] = cast<f64>(%a[0, %k - 1]) * -2.5f64
// CHECK-NEXT:       if %k < 3 && !(%k == 2) {
// CHECK-NEXT:         %t[%k, 1] = select(%k > 4, 1e+300f64, inff64)
// CHECK-NEXT:       } else if %k % 2 == 0 {
// CHECK-NEXT:         %t[%k - 1, floordiv(%k, 2)] = exp(-0.0f64)
// CHECK-NEXT:       } else {
// CHECK-NEXT:       }
// CHECK:          %out[0, ramp(0, 1, 4)] = broadcast(fma(1.5, 2.0, nan), 4) - %a[0, ramp(%n - 4, 1, 4)]
// CHECK:        for %x in [0, 3i32) parallel {
// CHECK-NEXT:     %out[cast<i64>(%x * 2i32 - -7i32), (1 - (2 - 3)) * 4] = 1e-07
