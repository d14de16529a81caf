// Internal to the canonicalize pass: the pattern families (one file each) and the small helpers
// they share. Every pattern is a named function so `--stats` can count it.
#pragma once
#include "strata/graph/Ops.h"
#include "strata/graph/passes/Rewrite.h"
#include "strata/support/ShapeMath.h"

#include <functional>

namespace strata::canonicalize {

// Algebraic identities (CanonicalizeAlgebra.cpp).
void addAlgebraPatterns(PatternSet &patterns, const PassOptions &options);
// Data-movement and cast cleanups (CanonicalizeDataMovement.cpp).
void addDataMovementPatterns(PatternSet &patterns, const PassOptions &options);
// Einsums that are matrix products as matmuls (CanonicalizeEinsum.cpp).
void addEinsumPatterns(PatternSet &patterns, const PassOptions &options);

using RewriteFn = std::function<bool(Op &, PatternRewriter &)>;

// A pattern whose match-and-rewrite is a plain function.
class FunctionPattern : public RewritePattern {
public:
  FunctionPattern(OpKind root, std::string name, RewriteFn fn)
      : RewritePattern(root, std::move(name)), fn_(std::move(fn)) {}
  bool matchAndRewrite(Op &op, PatternRewriter &r) const override { return fn_(op, r); }

private:
  RewriteFn fn_;
};

inline void addPattern(PatternSet &patterns, OpKind root, std::string name, RewriteFn fn) {
  patterns.add<FunctionPattern>(root, std::move(name), std::move(fn));
}

// perm[i] == i for every i.
inline bool isIdentityPermutation(const std::vector<int64_t> &perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

// Replaces op's single result by `v`, but only when that keeps the result type identical (a
// fold must not change a shape that broadcasting or an attribute established).
inline bool replaceIfSameType(Op &op, Value *v, PatternRewriter &r) {
  if (v->type() != op.result(0)->type())
    return false;
  r.replaceOp(op, {v});
  return true;
}

} // namespace strata::canonicalize

namespace strata::canonicalize {

// Creates `kind(operands)` before op and replaces op with it, but only when the new op's
// inferred result types equal op's (checked before anything is created).
inline bool replaceWithNew(Op &op, OpKind kind, const std::vector<Value *> &operands,
                           PatternRewriter &r, AttrMap attrs = {}) {
  std::vector<TensorType> operandTypes;
  for (Value *v : operands)
    operandTypes.push_back(v->type());
  auto types = inferResultTypes(kind, operandTypes, attrs);
  if (!types) {
    llvm::consumeError(types.takeError());
    return false;
  }
  if (types->size() != op.numResults())
    return false;
  for (unsigned i = 0; i < op.numResults(); ++i)
    if ((*types)[i] != op.result(i)->type())
      return false;
  Op *created = r.builder().create(kind, operands, std::move(attrs));
  std::vector<Value *> results;
  for (unsigned i = 0; i < created->numResults(); ++i)
    results.push_back(created->result(i));
  r.replaceOp(op, results);
  return true;
}

} // namespace strata::canonicalize
