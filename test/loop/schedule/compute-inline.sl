// compute_inline replaces every load of an intermediate by the expression its producer stores,
// with the loop variables replaced by the load's indices (here transposed), and drops the
// producer and the allocation. Inlining a chain works from either end.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/st.sl --schedule='compute_inline(t)' --check-bounds | FileCheck %s --check-prefix=ST
// RUN: strata-loop-opt %t/chain.sl --schedule='compute_inline(u); compute_inline(v)' --check-bounds | FileCheck %s --check-prefix=CHAIN
// RUN: strata-loop-opt %t/chain.sl --schedule='compute_inline(v); compute_inline(u)' --check-bounds | FileCheck %s --check-prefix=CHAIN

//--- st.sl
func @st(%x: f32[%m + 1, %n + 1] in, %y: f32[%n, %m] out, %m: i64, %n: i64) {
  allocate %t: f32[%n + 1, %m + 1] local {
    for %i in [0, %m + 1) serial {
      for %j in [0, %n + 1) serial {
        %t[%j, %i] = %x[%i, %j] * 3.0
      }
    }
    for %a in [0, %n) serial {
      for %b in [0, %m) serial {
        %y[%a, %b] = %t[%a, %b] - %t[%a + 1, %b + 1]
      }
    }
  }
}

//--- chain.sl
func @chain(%x: f32[8] in, %y: f32[8] out) {
  allocate %u: f32[8] local {
    for %i in [0, 8) serial {
      %u[%i] = %x[%i] + 1.0
    }
    allocate %v: f32[8] local {
      for %j in [0, 8) serial {
        %v[%j] = %u[7 - %j] * %u[%j]
      }
      for %k in [0, 8) serial {
        %y[%k] = %v[%k] - %u[%k]
      }
    }
  }
}

//--- checks
// ST:      func @st(%x: f32[%m + 1, %n + 1] in, %y: f32[%n, %m] out, %m: i64, %n: i64) {
// ST-NEXT:   for %a in [0, %n) serial {
// ST-NEXT:     for %b in [0, %m) serial {
// ST-NEXT:       %y[%a, %b] = %x[%b, %a] * 3.0 - %x[%b + 1, %a + 1] * 3.0
// ST-NEXT:     }
// ST-NEXT:   }
// ST-NEXT: }
// CHAIN:      func @chain(%x: f32[8] in, %y: f32[8] out) {
// CHAIN-NEXT:   for %k in [0, 8) serial {
// CHAIN-NEXT:     %y[%k] = (%x[7 - %k] + 1.0) * (%x[%k] + 1.0) - (%x[%k] + 1.0)
// CHAIN-NEXT:   }
// CHAIN-NEXT: }
