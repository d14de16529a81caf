// compute_at / compute_inline errors: each names the reason and nothing is printed.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: not strata-loop-opt %t/mm.sl --schedule='compute_inline(x)' 2>&1 | FileCheck %s --check-prefix=PARAM
// RUN: not strata-loop-opt %t/mm.sl --schedule='compute_inline(C)' 2>&1 | FileCheck %s --check-prefix=REDUCTION
// RUN: not strata-loop-opt %t/two.sl --schedule='split(h, 2); compute_inline(s)' 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not strata-loop-opt %t/mm.sl --schedule='compute_at(C, k)' 2>&1 | FileCheck %s --check-prefix=INSIDE
// RUN: not strata-loop-opt %t/mm.sl --schedule='compute_at(C)' 2>&1 | FileCheck %s --check-prefix=USAGE
// RUN: not strata-loop-opt %t/two.sl --schedule='compute_inline(t)' 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not strata-loop-opt %t/two.sl --schedule='compute_at(t, j)' 2>&1 | FileCheck %s --check-prefix=TWO-AT
// RUN: not strata-loop-opt %t/two.sl --schedule='compute_at(s, j)' 2>&1 | FileCheck %s --check-prefix=OUTSIDE

//--- mm.sl
func @mm(%x: f32[4, 4] in, %D: f32[4, 4] out) {
  allocate %C: f32[4, 4] local {
    for %i in [0, 4) serial {
      for %j in [0, 4) serial {
        %C[%i, %j] = 0.0
        for %k in [0, 4) serial {
          %C[%i, %j] = %C[%i, %j] + %x[%i, %k] * %x[%k, %j]
        }
      }
    }
    for %y in [0, 4) serial {
      for %z in [0, 4) serial {
        %D[%y, %z] = %C[%y, %z]
      }
    }
  }
}

//--- two.sl
func @two(%x: f32[4] in, %y: f32[4] out) {
  allocate %s: f32[4] local {
    for %h in [0, 4) serial {
      %s[%h] = %x[%h]
    }
    allocate %t: f32[4] local {
      for %i in [0, 4) serial {
        %t[%i] = %s[%i]
      }
      for %i2 in [0, 4) serial {
        %t[%i2] = %t[%i2] + %x[%i2]
      }
      for %j in [0, 4) serial {
        %y[%j] = %t[%j]
      }
    }
  }
}

//--- checks
// PARAM: schedule: compute_inline(x): %x is a parameter; only an allocated buffer has a producer
// REDUCTION: schedule: compute_inline(C): %C is read by its own producer (a reduction)
// INDEX: schedule: compute_inline(s): the store to %s at [%h.o * 2 + %h.i] is not indexed by plain variables of its producer's perfect loop nest
// INSIDE: schedule: compute_at(C, k): %k is inside the producer of %C
// USAGE: schedule: 'compute_at(C)': expected compute_at(buffer, loop)
// TWO: schedule: compute_inline(t): %t is stored by 2 separate statements; one loop nest must compute it
// TWO-AT: schedule: compute_at(t, j): %t is stored by 2 separate statements; one loop nest must compute it
// OUTSIDE: schedule: compute_at(s, j): %s is also read outside the body of %j
