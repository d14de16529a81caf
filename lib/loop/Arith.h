// Scalar semantics of loop IR operations, shared by the simplifier's constant folding and the
// interpreter so that the two can never disagree. Private to lib/loop.
//
// Integers are held in an int64_t: signed types sign-extended, unsigned types zero-extended
// (u64 as its bit pattern); results wrap to the type's width. Floats are held in a double rounded
// to the type's precision after every operation.
#pragma once
#include "strata/loop/IR.h"

#include <optional>

namespace strata::loop::arith {

// Wraps v to the width and signedness of integer type t (bool: 0 or 1).
int64_t wrap(uint64_t v, DType t);
// Rounds v to float type t.
double round(double v, DType t);

// Binary integer op (arithmetic or comparison; comparisons give 0/1). Returns nullopt for
// division or remainder by zero and for INT64_MIN / -1, which have no defined result.
std::optional<int64_t> intBinary(ExprKind k, int64_t a, int64_t b, DType t);
// Binary float op (arithmetic or comparison; comparisons give 0/1 in a double). min/max follow
// IEEE minNum/maxNum: a NaN operand yields the other operand.
double floatBinary(ExprKind k, double a, double b, DType t);

// A scalar of some dtype: `i` for integers and bool, `f` for floats.
struct Scalar {
  int64_t i = 0;
  double f = 0;
};
// Conversion between dtypes. Float to integer truncates toward zero and saturates (NaN -> 0).
Scalar castScalar(Scalar v, DType from, DType to);
// Math intrinsics on floats, evaluated in double and rounded to t.
double intrinsic(Intrinsic in, const double *args, DType t);

} // namespace strata::loop::arith
