//===- VectorMath.h - Polynomial f32 math emitted as portable LLVM IR ------------------------===//
//
// Elementwise transcendental functions for f32 tensors, emitted inline as LLVM IR built only
// from instructions every backend vectorizes: fadd/fmul/fdiv, llvm.fmuladd, llvm.fabs, integer
// operations on the float bits, compares and selects (plus f64 arithmetic for the argument
// reduction of sin/cos and for pow). No libm calls, so a `<N x float>` loop stays a vector loop
// on x86-64 v2/v3, AArch64 and NVPTX alike.
//
// Every function accepts a `float` or a fixed `<N x float>` value and returns the same type.
// Special values follow C99/IEEE libm (NaN in gives NaN out, infinities and signed zeros as
// libm returns them). Measured error bounds, valid ranges and the approximations themselves
// are documented in docs/vector-math.md and enforced by unittests/codegen/VectorMathTest.cpp.
//
// The emitters clear the builder's fast-math flags for the instructions they create (the
// range reductions depend on exact IEEE rounding) and restore them afterwards.
//
//===-----------------------------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/IRBuilder.h>

#include <optional>

namespace strata::codegen {

llvm::Value *emitExp(llvm::IRBuilderBase &b, llvm::Value *x);
llvm::Value *emitLog(llvm::IRBuilderBase &b, llvm::Value *x);
llvm::Value *emitTanh(llvm::IRBuilderBase &b, llvm::Value *x);
llvm::Value *emitErf(llvm::IRBuilderBase &b, llvm::Value *x);
/// 1 / (1 + exp(-x)), evaluated without overflow for either sign of x.
llvm::Value *emitSigmoid(llvm::IRBuilderBase &b, llvm::Value *x);
/// The error bound holds for |x| <= 2^26; see docs/vector-math.md for larger arguments.
llvm::Value *emitSin(llvm::IRBuilderBase &b, llvm::Value *x);
llvm::Value *emitCos(llvm::IRBuilderBase &b, llvm::Value *x);
llvm::Value *emitAtan(llvm::IRBuilderBase &b, llvm::Value *x);
/// x^y with C99 pow's special cases (pow(x, +-0) = 1, pow(1, y) = 1, negative base with an
/// integer exponent, NaN for a negative finite base with a non-integer exponent, ...).
llvm::Value *emitPow(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *y);

/// The functions above as data, so lowering can map an op name to an emitter.
enum class MathFn { Exp, Log, Tanh, Erf, Sigmoid, Sin, Cos, Atan, Pow };

/// The graph op name of `fn` ("exp", "log", ..., "pow").
llvm::StringRef mathFnName(MathFn fn);
/// The inverse of mathFnName; nullopt when `name` is not one of these functions.
std::optional<MathFn> mathFnByName(llvm::StringRef name);
/// Number of operands: 2 for Pow, 1 otherwise.
unsigned mathFnArity(MathFn fn);
/// Emits `fn` applied to `args` (mathFnArity(fn) values of one f32 scalar or vector type).
llvm::Value *emitMathFn(llvm::IRBuilderBase &b, MathFn fn, llvm::ArrayRef<llvm::Value *> args);

} // namespace strata::codegen
