// --simplify cancels a reshape's delinearized linear index: floordiv/floormod of a sum whose
// terms' coefficients the divisor divides (q * c + r -> q + floordiv(r, c)), and of a rest
// h * g + l with g dividing c and 0 <= l < g proven by the loops' bounds (a split dim).
// Negative constants keep floor semantics; a rest the bounds cannot place stays a floordiv.
// RUN: strata-loop-opt %s --simplify | FileCheck %s

func @reshape(%x: f32[2, 116, 28, 28] in, %y: f32[2, 2, 58, 28, 28] out, %z: f32[2, 58, 2, 784] out, %a: i64[100] inout, %n: i64) {
  // CHECK:      %y[%b, %g, %c, %h, %w] = %x[%b, %g * 58 + %c, %h, %w]
  for %b in [0, 2) serial {
    for %g in [0, 2) serial {
      for %c in [0, 58) serial {
        for %h in [0, 28) serial {
          for %w in [0, 28) serial {
            %y[%b, %g, %c, %h, %w] = %x[floordiv((((%b * 2 + %g) * 58 + %c) * 28 + %h) * 28 + %w, 90944), floormod(floordiv((((%b * 2 + %g) * 58 + %c) * 28 + %h) * 28 + %w, 784), 116), floormod(floordiv((((%b * 2 + %g) * 58 + %c) * 28 + %h) * 28 + %w, 28), 28), floormod((((%b * 2 + %g) * 58 + %c) * 28 + %h) * 28 + %w, 28)]
          }
        }
      }
    }
  }
  // CHECK:      %z[%b2, floordiv(%k, 2), floormod(%k, 2), %p] = %x[%b2, %k, floordiv(%p, 28), floormod(%p, 28)]
  for %b2 in [0, 2) serial {
    for %k in [0, 116) serial {
      for %p in [0, 784) serial {
        %z[%b2, floordiv(%k * 784 + %p, 1568), floormod(floordiv(%k * 784 + %p, 784), 2), %p] = %x[%b2, %k, floordiv(%p, 28), floormod(%p, 28)]
      }
    }

  // 14i - 1 = 4 * (3i - 1) + (2i + 3)
  // CHECK:      %a[%i] = %i * 3 + floordiv(%i * 2 + 3, 4) - 1
  // CHECK-NEXT: %a[%i] = floormod(%i * 2 + 3, 4)
  // CHECK-NEXT: %a[%i] = floordiv(%i + %n, 8)
  for %i in [0, 10) serial {
    %a[%i] = floordiv(%i * 12 + %i * 2 - 1, 4)
    %a[%i] = floormod(%i * 12 + %i * 2 - 1, 4)
    %a[%i] = floordiv(%i + %n, 8)
  }
}
}
