// check_index(value, size, "site"): an index read from data, checked against [-size, size) and
// wrapped once if negative. It prints and parses with its quoted site (\" \\ \xHH escapes), the
// bounds checker knows its result lies in [0, size), the simplifier folds checks that provably
// pass, the verifier rejects ill-typed ones, and code generation compares on the hot path and
// reports through the run's status (the kernel's last parameter) on a cold one.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/gather.sl | FileCheck %s --check-prefix=PRINT
// RUN: strata-loop-opt %t/gather.sl | strata-loop-opt - | FileCheck %s --check-prefix=PRINT
// PRINT: %out[%i, %j] = %data[check_index(%idx[%i], 3, "gather (node \"g\\1\"):\x0aaxis 0"), %j]
// RUN: strata-loop-opt %t/gather.sl --check-bounds | FileCheck %s --check-prefix=BOUNDS
// BOUNDS: func @gather(
// RUN: strata-loop-opt %t/fold.sl --simplify | FileCheck %s --check-prefix=FOLD
// FOLD:      %out[%i] = %data[%i]
// FOLD-NEXT: %out[%i] = %data[1]
// FOLD-NEXT: %out[%i] = %data[check_index(5, 3, "too big")]
// FOLD-NEXT: %out[%i] = %data[check_index(%i - 1, 3, "may fail")]
// RUN: not strata-loop-opt %t/float.sl 2>&1 | FileCheck %s --check-prefix=FLOAT
// FLOAT: verifier: @f: check_index(1.0, 4, "x"): check_index needs a signed integer value, not f32
// FLOAT-NOT: check_index
// RUN: not strata-loop-opt %t/unterminated.sl 2>&1 | FileCheck %s --check-prefix=UNTERMINATED
// UNTERMINATED: unterminated.sl:2:29: error: unterminated string
// RUN: not strata-loop-opt %t/nosite.sl 2>&1 | FileCheck %s --check-prefix=NOSITE
// NOSITE: error: expected the site of check_index as a string, found number 4
// RUN: strata-loop-opt %t/gather.sl --emit-llvm -O0 | FileCheck %s --check-prefix=LLVM
// LLVM: @check.site = private unnamed_addr constant [{{[0-9]+}} x i8] c"gather (node \22g\\1\22):\0Aaxis 0\00"
// LLVM: define void @gather(ptr {{.*}}%data, ptr {{.*}}%idx, ptr {{.*}}%out, ptr %status)
// LLVM: br i1 %{{.*}}, label %check.ok, label %check.fail, !prof
// LLVM: check.fail:
// LLVM: call void @strata_index_error(ptr %status, ptr @check.site, i64 %{{.*}}, i64 -3, i64 3)
// LLVM: define void @gather_packed(ptr %0)
// LLVM: getelementptr ptr, ptr %0, i64 3

//--- gather.sl
func @gather(%data: f32[3, 4] in, %idx: i64[2] in, %out: f32[2, 4] out) {
  for %i in [0, 2) serial {
    for %j in [0, 4) serial {
      %out[%i, %j] = %data[check_index(%idx[%i], 3, "gather (node \"g\\1\"):\x0aaxis 0"), %j]
    }
  }
}
//--- fold.sl
func @fold(%data: f32[3] in, %out: f32[3] out) {
  for %i in [0, 3) serial {
    %out[%i] = %data[check_index(%i, 3, "in range")]
    %out[%i] = %data[check_index(-2, 3, "negative")]
    %out[%i] = %data[check_index(5, 3, "too big")]
    %out[%i] = %data[check_index(%i - 1, 3, "may fail")]
  }
}
//--- float.sl
func @f(%a: f32[4] out) {
  %a[0] = cast<f32>(check_index(1.0, 4, "x"))
}
//--- unterminated.sl
func @f(%a: i64[4] out) {
  %a[0] = check_index(1, 4, "no end
}
//--- nosite.sl
func @f(%a: i64[4] out) {
  %a[0] = check_index(1, 4, 4)
}
