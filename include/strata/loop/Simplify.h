// The arithmetic simplifier: constant folding and a table of algebraic rewrite rules, applied
// bottom-up until no rule fires. Integer rules are exact under two's-complement wrap-around;
// float rules are only those that are exact under IEEE 754 (x * 1.0 -> x, never x + 0.0 -> x).
//
// With a bounds scope (the intervals of enclosing loop variables) the simplifier also uses bounds
// analysis: min(x, y) -> x when x <= y is proven, comparisons that are always true or false fold,
// floordiv/floormod of an operand already inside [0, c) fold.
#pragma once
#include "strata/loop/Bounds.h"
#include "strata/loop/IR.h"

namespace strata::loop {

// `scope` null disables the rules that need bounds analysis (used by bounds analysis itself).
Expr simplify(const Expr &e, const BoundsScope *scope = nullptr);
// Simplifies every expression, tracking loop bounds; drops loops of extent <= 0 and branches with
// constant conditions.
Stmt simplify(const Stmt &s, const BoundsScope &scope = {});
LoopFunction simplify(const LoopFunction &f);

} // namespace strata::loop
