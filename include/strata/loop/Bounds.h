// Bounds analysis of integer index expressions.
//
// boundsOf() computes a symbolic interval [min, max] of an expression from the intervals of the
// loop variables in scope; scalar parameters stay symbolic and are assumed >= 1 (they are
// extents). proveLE() decides `a <= b` for all such parameter values, exactly for affine
// expressions and through min/max by case split; it answers "not proven" rather than guess.
// Schedules use these to handle loop tails; checkBounds() proves every buffer access in range.
#pragma once
#include "strata/loop/IR.h"

#include <map>
#include <string>
#include <vector>

namespace strata::loop {

// Inclusive bounds; a null end is unbounded.
struct Interval {
  Expr min, max;
  bool bounded() const { return min && max; }
};

using BoundsScope = std::map<const VarNode *, Interval>;

// Variables not in `scope` are parameters: their interval is [v, v].
Interval boundsOf(const Expr &e, const BoundsScope &scope);
// The interval of a loop variable ranging over [min, min + extent), given the enclosing scope.
Interval loopBounds(const Expr &min, const Expr &extent, const BoundsScope &scope);

// True if a <= b is proven for every value >= 1 of the free variables (parameters).
bool proveLE(const Expr &a, const Expr &b);
// The value of a loop-variable-free integer expression when it folds to a constant.
std::optional<int64_t> constantValue(const Expr &e);

// One message per access whose indices are not provably within [0, shape) in every dimension.
// Enclosing `if` conditions of the forms `e < b`, `e <= b`, `b > e` and `b >= e` (and
// conjunctions) count as facts about e.
std::vector<std::string> checkBounds(const LoopFunction &f);

} // namespace strata::loop
