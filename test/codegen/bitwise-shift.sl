// RUN: strata-loop-opt %s --emit-llvm -O0 | FileCheck %s
// Bitwise ops are the plain instructions; a shift selects 0 when the amount (unsigned) is at
// least the width, where LLVM's shift would be poison; float mod is frem (C fmod).
// CHECK-LABEL: define void @bits(
// CHECK: and i8
// CHECK: or i8
// CHECK: xor i8
// CHECK: [[SHL:%[0-9a-z.]+]] = shl i16 [[X:%[0-9a-z.]+]], [[N:%[0-9a-z.]+]]
// CHECK: [[BIG:%[0-9a-z.]+]] = icmp uge i16 [[N]], 16
// CHECK: select i1 [[BIG]], i16 0, i16 [[SHL]]
// CHECK: [[SHR:%[0-9a-z.]+]] = lshr i64 [[Y:%[0-9a-z.]+]], [[M:%[0-9a-z.]+]]
// CHECK: [[BIG2:%[0-9a-z.]+]] = icmp uge i64 [[M]], 64
// CHECK: select i1 [[BIG2]], i64 0, i64 [[SHR]]
// CHECK: frem float
func @bits(%a: u8[4] in, %b: u8[4] in, %c: u8[4] out, %s: i16[4] inout, %t: i64[4] inout,
           %f: f32[4] inout) {
  for %i in [0, 4) serial {
    %c[%i] = bitxor(bitor(bitand(%a[%i], %b[%i]), 1u8), %a[%i])
    %s[%i] = shl(%s[%i], cast<i16>(%i))
    %t[%i] = shr(%t[%i], %i * 20)
    %f[%i] = %f[%i] % 1.5
  }
}
