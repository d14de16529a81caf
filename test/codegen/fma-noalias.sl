// RUN: strata-loop-opt %s --emit-llvm -O0 | FileCheck %s
// Buffer arguments are noalias (in-buffers readonly), scalars i64; fma becomes llvm.fmuladd and
// `vectorized` becomes the loop vectorizer's hint; the packed trampoline unpacks an argument array.
// CHECK: define void @axpy(ptr noalias readonly align 4 %a, ptr noalias readonly align 4 %b, ptr noalias readonly align 4 %c, ptr noalias align 4 %out, i64 %n, ptr %status)
// CHECK: call float @llvm.fmuladd.f32(float
// CHECK: br i1 {{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// CHECK: define void @axpy_packed(ptr
// CHECK: call void @axpy(ptr
// CHECK: ![[LOOP]] = distinct !{![[LOOP]], ![[HINT:[0-9]+]]}
// CHECK: ![[HINT]] = !{!"llvm.loop.vectorize.enable", i1 true}
func @axpy(%a: f32[%n] in, %b: f32[%n] in, %c: f32[%n] in, %out: f32[%n] out, %n: i64) {
  for %i in [0, %n) vectorized {
    %out[%i] = fma(%a[%i], %b[%i], %c[%i])
  }
}
