// Bitwise and shift expressions print as calls and round-trip; the verifier wants integer
// operands; the simplifier folds constants with the shared scalar semantics (logical shifts, an
// amount >= the width gives 0) and drops identities with 0.
// RUN: rm -rf %t && split-file --no-leading-lines %s %t
// RUN: strata-loop-opt %t/bits.sl > %t/1 && strata-loop-opt %t/1 > %t/2 && diff %t/1 %t/2
// RUN: strata-loop-opt %t/bits.sl | FileCheck %s --check-prefix=PRINT
// RUN: strata-loop-opt %t/bits.sl --simplify | FileCheck %s --check-prefix=SIMP
// RUN: not strata-loop-opt %t/float.sl 2>&1 | FileCheck %s --check-prefix=ERR

//--- bits.sl
func @bits(%a: u8[8] in, %b: u8[8] in, %out: u8[8] out, %w: i32[4] out) {
  for %i in [0, 8) serial {
    %out[%i] = bitxor(bitand(%a[%i], %b[%i]), bitor(%a[%i], 15u8))
  }
  // PRINT:     %out[%i] = bitxor(bitand(%a[%i], %b[%i]), bitor(%a[%i], 15u8))
  // SIMP:      %out[%i] = bitxor(bitand(%a[%i], %b[%i]), bitor(%a[%i], 15u8))
  for %j in [0, 8) serial {
    %out[%j] = shr(shl(%a[%j], %b[%j]), bitor(%b[%j], 0u8))
  }
  // PRINT:     %out[%j] = shr(shl(%a[%j], %b[%j]), bitor(%b[%j], 0u8))
  // SIMP:      %out[%j] = shr(shl(%a[%j], %b[%j]), %b[%j])
  %w[0] = shl(1i32, 31i32)
  %w[1] = shr(-1i32, 28i32)
  %w[2] = shl(3i32, 32i32) + shr(5i32, -1i32)
  %w[3] = bitand(7i32, bitxor(-1i32, 2i32))
  // PRINT:     %w[0] = shl(1i32, 31i32)
  // SIMP:      %w[0] = -2147483648i32
  // SIMP-NEXT: %w[1] = 15i32
  // SIMP-NEXT: %w[2] = 0i32
  // SIMP-NEXT: %w[3] = 5i32
}
//--- float.sl
func @f(%x: f32[1] inout) {
  %x[0] = bitand(%x[0], 1.0)
}
// ERR: verifier: @f: bitand(%x[0], 1.0): bitand needs integer operands, not f32
