// RUN: strata-loop-opt %s --emit-llvm -O2 --target=x86-64-v3 | FileCheck %s
// At -O2 for AVX2 the loop vectorizer turns the hinted loop into 8-wide vector code.
// CHECK-LABEL: define void @axpy(
// CHECK: vector.body:
// CHECK: load <8 x float>
// CHECK: call <8 x float> @llvm.fmuladd.v8f32(
// CHECK: store <8 x float>
// CHECK: attributes #{{[0-9]+}} = {{.*}}"target-cpu"="x86-64-v3"
func @axpy(%a: f32[%n] in, %b: f32[%n] in, %c: f32[%n] in, %out: f32[%n] out, %n: i64) {
  for %i in [0, %n) vectorized {
    %out[%i] = fma(%a[%i], %b[%i], %c[%i])
  }
}
