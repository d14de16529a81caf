// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/max.sl --emit-llvm -O0 | FileCheck %s --check-prefix=MAX
// RUN: strata-loop-opt %t/nested.sl --emit-llvm -O0 | FileCheck %s --check-prefix=NESTED
// RUN: strata-loop-opt %t/guarded.sl --emit-llvm -O0 | FileCheck %s --check-prefix=GUARD
// A select whose arm may fault (a load not provably in bounds) evaluates that arm only where it
// is chosen (branches, sel.t / sel.f), unless the condition always evaluates the same load
// already: max(m, x) as select(m < x, x, m) is one vector select. A load inside a select nested
// in the condition is evaluated only under that select's own condition, so it does not count.
// MAX-NOT: sel.t
// MAX: fcmp olt <8 x float>
// MAX: select <8 x i1>
// MAX-NOT: sel.t
// GUARD: sel.t
// NESTED: label %sel.t, label %sel.f
// NESTED: label %sel.t{{[0-9]+}}, label %sel.f{{[0-9]+}}

//--- max.sl
func @max(%x: f32[4, 8] in, %y: f32[8] out) {
  allocate %m: f32[8] local {
    %m[ramp(0, 1, 8)] = broadcast(-inf, 8)
    for %i in [0, 4) serial {
      %m[ramp(0, 1, 8)] = select(%m[ramp(0, 1, 8)] < %x[%i, ramp(0, 1, 8)], %x[%i, ramp(0, 1, 8)], %m[ramp(0, 1, 8)])
    }
    %y[ramp(0, 1, 8)] = %m[ramp(0, 1, 8)]
  }
}
//--- nested.sl
func @nested(%x: f32[4] in, %out: f32[8] out) {
  for %i in [0, 8) serial {
    %out[%i] = select(select(%i >= 4, %x[%i - 4], 0.0) > 0.0, %x[%i - 4], 0.0)
  }
}
//--- guarded.sl
func @guarded(%x: f32[4] in, %out: f32[8] out) {
  for %i in [0, 8) serial {
    %out[%i] = select(%i < 4, %x[%i], 0.0)
  }
}
