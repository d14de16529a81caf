// Schedule errors: malformed text, unknown loops and results that do not verify; nothing is printed.
// RUN: not strata-loop-opt %s --schedule='split(i 4)' 2>&1 | FileCheck %s --check-prefix=PARSE
// RUN: not strata-loop-opt %s --schedule='swizzle(i)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not strata-loop-opt %s --schedule='split(i, 4); split(i, 2)' 2>&1 | FileCheck %s --check-prefix=NOLOOP
// RUN: not strata-loop-opt %s --schedule='split(i, 0)' 2>&1 | FileCheck %s --check-prefix=FACTOR
// RUN: not strata-loop-opt %s --schedule='split(i, 4, io, j)' 2>&1 | FileCheck %s --check-prefix=SHADOW
func @f(%x: f32[4, 4] inout) {
  for %i in [0, 4) serial {
    for %j in [0, 4) serial {
      %x[%i, %j] = 1.0
    }
  }
}
// PARSE: schedule: 'split(i 4)': bad argument 'i 4'
// UNKNOWN: schedule: 'swizzle(i)': unknown primitive 'swizzle'
// NOLOOP: schedule: split(i, 2): no loop named %i
// FACTOR: schedule: split(i, 0): argument 2 must be a positive integer, not '0'
// SHADOW: schedule: split(i, 4, io, j): result does not verify:
// SHADOW-NEXT: verifier: @f: {{.*}}%j
