//===- VectorMathImpl.h - Shared helpers of the vector math emitters -------------------------===//
//
// MathBuilder wraps an IRBuilder with the shape of the value being computed (scalar or
// <N x ...>), so every emitter can ask for f32/i32/f64/i64 constants and operations of that
// shape without repeating the type plumbing.
//
//===-----------------------------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/IR/IRBuilder.h>

#include <cstdint>

namespace strata::codegen::detail {

class MathBuilder {
public:
  /// `like` gives the shape: a float or a fixed vector of floats (asserted).
  MathBuilder(llvm::IRBuilderBase &b, llvm::Value *like);
  ~MathBuilder();
  MathBuilder(const MathBuilder &) = delete;
  MathBuilder &operator=(const MathBuilder &) = delete;

  llvm::IRBuilderBase &ir() { return b; }
  llvm::Type *f32Ty() const { return f32; }
  llvm::Type *i32Ty() const { return i32; }
  llvm::Type *f64Ty() const { return f64; }
  llvm::Type *i64Ty() const { return i64; }

  // Splat constants of this shape.
  llvm::Value *f(double v) { return llvm::ConstantFP::get(f32, v); }
  llvm::Value *d(double v) { return llvm::ConstantFP::get(f64, v); }
  llvm::Value *i(int64_t v) { return llvm::ConstantInt::get(i32, static_cast<uint64_t>(v), true); }
  llvm::Value *l(int64_t v) { return llvm::ConstantInt::get(i64, static_cast<uint64_t>(v), true); }

  llvm::Value *add(llvm::Value *a, llvm::Value *c) { return b.CreateFAdd(a, c); }
  llvm::Value *sub(llvm::Value *a, llvm::Value *c) { return b.CreateFSub(a, c); }
  llvm::Value *mul(llvm::Value *a, llvm::Value *c) { return b.CreateFMul(a, c); }
  llvm::Value *div(llvm::Value *a, llvm::Value *c) { return b.CreateFDiv(a, c); }
  /// a * c + e, fused where the target has FMA (llvm.fmuladd). Used where either result is fine.
  llvm::Value *fma(llvm::Value *a, llvm::Value *c, llvm::Value *e);
  llvm::Value *fabs(llvm::Value *a);
  /// Horner evaluation of sum coefs[k] * t^k (coefs listed from degree 0 up).
  llvm::Value *horner(llvm::Value *t, llvm::ArrayRef<double> coefs, bool inF64 = false);

  llvm::Value *sel(llvm::Value *c, llvm::Value *a, llvm::Value *e) {
    return b.CreateSelect(c, a, e);
  }
  llvm::Value *isNaN(llvm::Value *a) { return b.CreateFCmpUNO(a, a); }

  // Reinterpretation between f32 <-> i32 and f64 <-> i64 of this shape.
  llvm::Value *bits(llvm::Value *a);
  llvm::Value *fromBits(llvm::Value *a);

  /// Round-half-even to an integral value of the same float type, for |v| < 2^22 (f32) or
  /// 2^51 (f64). Adding and subtracting 1.5 * 2^23 (2^52) makes the FPU round for us, which
  /// needs no SSE4.1 `roundps` and no libm call on any target. Also returns, through
  /// `intBits`, the integer itself as i32 (i64), read off the bits of the biased sum.
  llvm::Value *roundMagic(llvm::Value *v, llvm::Value **intBits = nullptr);

  /// |mag| with the sign bit of `sign` (f32 only); NaNs stay NaN.
  llvm::Value *copySign(llvm::Value *mag, llvm::Value *sign);

private:
  llvm::IRBuilderBase &b;
  llvm::FastMathFlags savedFMF;
  llvm::Type *f32, *i32, *f64, *i64;
};

} // namespace strata::codegen::detail
