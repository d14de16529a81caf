// Pattern rewriting: a pattern matches one root op kind, checks a condition and rewrites
// through the PatternRewriter. A worklist driver applies a set of patterns greedily to a fixed
// point, revisiting the users and operands of whatever changed and erasing dead ops as it goes.
#pragma once
#include "strata/graph/Builder.h"
#include "strata/graph/passes/Pass.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace strata {

class PatternRewriter;

class RewritePattern {
public:
  RewritePattern(OpKind root, std::string name) : root_(root), name_(std::move(name)) {}
  virtual ~RewritePattern() = default;
  OpKind root() const { return root_; }
  const std::string &name() const { return name_; } // counted in --stats
  // Returns true after rewriting `op` through `r`; false (and no change) when it does not apply.
  virtual bool matchAndRewrite(Op &op, PatternRewriter &r) const = 0;

private:
  OpKind root_;
  std::string name_;
};

class PatternSet {
public:
  void add(std::unique_ptr<RewritePattern> p) { patterns_.push_back(std::move(p)); }
  template <typename P, typename... Args> void add(Args &&...args) {
    add(std::make_unique<P>(std::forward<Args>(args)...));
  }
  const std::vector<std::unique_ptr<RewritePattern>> &patterns() const { return patterns_; }

private:
  std::vector<std::unique_ptr<RewritePattern>> patterns_;
};

// The only way patterns change the graph, so the driver can track what to revisit.
class PatternRewriter {
public:
  virtual ~PatternRewriter() = default;
  // Builder inserting before the op being rewritten, stamped with its location.
  virtual Builder &builder() = 0;
  // Replaces all uses of op's results with `values` (one per result) and erases op.
  virtual void replaceOp(Op &op, const std::vector<Value *> &values) = 0;
  // Replaces all uses of `from` with `to`.
  virtual void replaceAllUsesWith(Value *from, Value *to) = 0;
  // Changes one operand in place.
  virtual void setOperand(Op &op, unsigned i, Value *v) = 0;
  // Records an in-place change of op (attributes, result type) so its users are revisited.
  virtual void notifyChanged(Op &op) = 0;
  virtual const PassOptions &options() const = 0;
};

struct GreedyRewriteConfig {
  int64_t maxRewrites = 1'000'000; // cap on pattern applications; exceeding it is an error
};

// Applies `patterns` to every op of `g` (recursing into regions) until none applies.
// Returns whether anything changed; an error when the cap is hit (names the pattern that fired
// most, which is then likely in a cycle). Pattern firings are counted in ctx.stats as
// "<statsPrefix>.<pattern name>".
llvm::Expected<bool> applyPatternsGreedily(Graph &g, const PatternSet &patterns, PassContext &ctx,
                                           const std::string &statsPrefix,
                                           const GreedyRewriteConfig &config = {});

// Calls `rewrite` on every op of `g` and of its regions (each op list taken before, so a rewrite
// may erase its op). A BuildError thrown by one (a form whose types do not come out as the op's)
// leaves that op as it is; what it built before is dead and dce removes it. Returns how many
// rewrites returned true. For one-shot rewrites of one op kind (conv-transpose-to-matmul).
int64_t rewriteEachOp(Graph &g, const std::function<bool(Graph &, Op &)> &rewrite);

// Helpers for patterns.
// The constant tensor defining `v`, or nullptr.
const Tensor *constantValue(const Value *v);
// Whether `v` is a constant whose every element equals `x` (any dtype).
bool isConstantSplat(const Value *v, double x);

} // namespace strata
