// A row reduction: the reduction loop carries a dependence through %y[%i] and is neither
// vectorized nor parallelized; the rows are independent and go parallel. A prefix sum (iteration
// i reads what i - 1 wrote) gets no step at all.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/rowsum.sl --default-schedule --check-bounds | FileCheck %s --check-prefix=ROW
// RUN: strata-loop-opt %t/scan.sl --default-schedule | FileCheck %s --check-prefix=SCAN

//--- rowsum.sl
func @rowsum(%x: f32[%n, 100] in, %y: f32[%n] out, %n: i64) {
  for %i in [0, %n) serial {
    %y[%i] = 0.0
    for %j in [0, 100) serial {
      %y[%i] = %y[%i] + %x[%i, %j]
    }
  }
}

//--- scan.sl
func @scan(%x: f32[%n] in, %y: f32[%n] inout, %n: i64) {
  for %i from 1 extent %n - 1 serial {
    %y[%i] = %y[%i - 1] + %x[%i]
  }
}

//--- checks
// ROW:      // default schedule: parallel(i)
// ROW:        for %i in [0, %n) parallel {
// ROW-NEXT:     %y[%i] = 0.0
// ROW-NEXT:     for %j in [0, 100) serial {
// SCAN:      // default schedule: {{$}}
// SCAN:        for %i from 1 extent %n - 1 serial {
