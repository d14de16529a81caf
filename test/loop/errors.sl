// Parse and verifier errors are reported on stderr with file:line:col; the tool exits with 1.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: not strata-loop-opt %t/undeclared.sl 2>&1 | FileCheck %s --check-prefix=UNDECLARED
// UNDECLARED: {{^.*}}undeclared.sl:2:11: error: use of undeclared %k
// RUN: not strata-loop-opt %t/rank.sl 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not strata-loop-opt %t/type.sl 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not strata-loop-opt %t/shape.sl 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: {{^.*}}shape.sl:1:17: error: use of undeclared scalar parameter %m
// RUN: not strata-loop-opt %t/garbage.sl 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: {{^.*}}garbage.sl:1:1: error: expected 'func' at the start of a function, found '{'
// RUN: not strata-loop-opt %t/missing.sl 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: missing.sl: error: cannot read file

//--- undeclared.sl
func @f(%a: f32[4] out) {
  %a[0] = %k[0]
}
//--- rank.sl
func @f(%a: f32[4, 4] out) {
  %a[0] = 1.0
}
// RANK: verifier: @f: store to %a: 1 indices for buffer %a of rank 2
//--- type.sl
func @f(%a: f32[4] out, %i: i32) {
  %a[0] = cast<f32>(%i) + 1.0f64
}
// TYPE: verifier: @f: cast<f32>(%i) + 1.0f64: operand types differ: f32 vs f64
//--- shape.sl
func @f(%a: f32[%m] in) {
}
//--- garbage.sl
{{{{ ]]] %%% @@@
