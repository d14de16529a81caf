// The greedy pattern-rewrite driver: a worklist of ops (all graphs, regions included), popped
// one at a time; dead ops are erased, live ones offered to the patterns registered for their
// kind. Whatever a rewrite touches goes back on the worklist, so the loop ends at a fixed point
// (or at the rewrite cap, which is reported as a likely cycle).
#include "strata/graph/passes/Rewrite.h"
#include "strata/graph/ValueSymbols.h"
#include "strata/graph/Walk.h"
#include "strata/support/Error.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace strata {

namespace {

bool isGraphOutput(const Value *v, const Graph &g) {
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    if (g.output(i) == v)
      return true;
  return false;
}

// An op is dead when nothing reads its results. Every graph op is pure, so erasing is safe; but
// an op defining a data-dependent size is left to dce, which keeps it while other values
// mention that size.
bool isDead(const Op &op) {
  if (!dataDependentDims(op).empty())
    return false;
  const Graph *g = op.parentGraph();
  for (unsigned i = 0; i < op.numResults(); ++i) {
    const Value *r = op.result(i);
    if (r->hasUses() || (g && isGraphOutput(r, *g)))
      return false;
  }
  return true;
}

class Driver;

class DriverRewriter final : public PatternRewriter {
public:
  DriverRewriter(Driver &d, const PassOptions &opts) : driver_(d), options_(opts) {}
  void setRoot(Op &root) {
    builder_.emplace(*root.parentGraph());
    builder_->setInsertBefore(&root);
    builder_->setLocation(root.location());
  }
  Builder &builder() override { return *builder_; }
  void replaceOp(Op &op, const std::vector<Value *> &values) override;
  void replaceAllUsesWith(Value *from, Value *to) override;
  void setOperand(Op &op, unsigned i, Value *v) override;
  void notifyChanged(Op &op) override;
  const PassOptions &options() const override { return options_; }

private:
  Driver &driver_;
  const PassOptions &options_;
  std::optional<Builder> builder_;
};

class Driver {
public:
  Driver(const PatternSet &patterns, PassContext &ctx, std::string prefix,
         const GreedyRewriteConfig &config)
      : ctx_(ctx), prefix_(std::move(prefix)), config_(config) {
    byKind_.resize(numOpKinds());
    for (const auto &p : patterns.patterns())
      byKind_[static_cast<size_t>(p->root())].push_back(p.get());
    fired_.assign(patterns.patterns().size(), 0);
    for (size_t i = 0; i < patterns.patterns().size(); ++i)
      index_[patterns.patterns()[i].get()] = i;
    patterns_ = &patterns;
  }

  llvm::Expected<bool> run(Graph &g) {
    std::vector<Op *> all;
    collect(g, all);
    // The worklist is a stack: push in reverse so ops are first visited in program order.
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      live_.insert(*it);
      push(*it);
    }
    DriverRewriter rewriter(*this, ctx_.options);
    while (!worklist_.empty()) {
      Op *op = worklist_.back();
      worklist_.pop_back();
      queued_.erase(op);
      if (!live_.count(op))
        continue; // erased after it was queued
      if (isDead(*op)) {
        eraseDeadOp(op);
        continue;
      }
      const auto &candidates = byKind_[static_cast<size_t>(op->kind())];
      for (const RewritePattern *p : candidates) {
        Graph &parent = *op->parentGraph();
        size_t opsBefore = parent.numOps();
        erasedInParent_ = 0;
        parentOfRoot_ = &parent;
        rewriter.setRoot(*op);
        bool applied = false;
        try {
          applied = p->matchAndRewrite(*op, rewriter);
        } catch (const std::exception &e) {
          return makeError("pattern '" + p->name() + "' failed: " + e.what());
        }
        if (!applied)
          continue;
        changed_ = true;
        ++fired_[index_[p]];
        ctx_.stats.add(prefix_ + "." + p->name());
        if (++total_ > config_.maxRewrites)
          return capError();
        // Ops the pattern created (through the builder or the graph) are the ones not yet live.
        int64_t created =
            static_cast<int64_t>(parent.numOps()) - static_cast<int64_t>(opsBefore) + erasedInParent_;
        if (created > 0)
          adoptNewOps(parent, created);
        if (live_.count(op))
          push(op);
        break;
      }
    }
    return changed_;
  }

  // --- called by the rewriter -----------------------------------------------------------------
  void pushUsers(const Value *v) {
    for (const Use &u : v->uses())
      push(u.user);
  }
  void pushDef(const Value *v) {
    if (v)
      if (Op *d = v->definingOp())
        push(d);
  }
  void push(Op *op) {
    if (live_.count(op) && queued_.insert(op).second)
      worklist_.push_back(op);
  }
  void erase(Op *op) {
    for (Value *operand : op->operands())
      pushDef(operand);
    forget(op);
    if (op->parentGraph() == parentOfRoot_)
      ++erasedInParent_;
    op->parentGraph()->eraseOp(op);
  }

private:
  // The ops patterns may rewrite: a kernel's region is sealed (graph/Kernel.h).
  static void collect(Graph &g, std::vector<Op *> &out) {
    forEachOp(
        g, [&](const Op &op) { out.push_back(const_cast<Op *>(&op)); }, KernelRegions::Skip);
  }

  // Drops `op` and everything in its regions from the live set (they are about to be erased).
  void forget(Op *op) {
    live_.erase(op);
    for (unsigned r = 0; r < op->numRegions(); ++r)
      for (Op &inner : op->region(r).ops()) {
        for (Value *operand : inner.operands())
          pushDef(operand); // a region may read values of an enclosing graph
        forget(&inner);
      }
  }

  void eraseDeadOp(Op *op) {
    changed_ = true;
    parentOfRoot_ = nullptr;
    erase(op);
  }

  void adoptNewOps(Graph &parent, int64_t created) {
    for (Op &o : parent.ops()) {
      if (created == 0)
        break;
      if (live_.count(&o))
        continue;
      --created;
      std::vector<Op *> fresh;
      fresh.push_back(&o);
      for (unsigned r = 0; r < o.numRegions() && o.kind() != OpKind::Kernel; ++r)
        collect(o.region(r), fresh);
      for (Op *f : fresh) {
        live_.insert(f);
        push(f);
        // Its operands may have lost their last other user to this rewrite.
        for (Value *operand : f->operands())
          pushDef(operand);
      }
    }
  }

  llvm::Error capError() const {
    size_t best = 0;
    for (size_t i = 1; i < fired_.size(); ++i)
      if (fired_[i] > fired_[best])
        best = i;
    const RewritePattern &p = *patterns_->patterns()[best];
    return makeError("rewrite cap " + std::to_string(config_.maxRewrites) + " reached; pattern '" +
                     p.name() + "' fired " + std::to_string(fired_[best]) +
                     " times \xE2\x80\x94 likely a cycle");
  }

  PassContext &ctx_;
  std::string prefix_;
  const GreedyRewriteConfig &config_;
  const PatternSet *patterns_ = nullptr;
  std::vector<std::vector<const RewritePattern *>> byKind_;
  std::unordered_map<const RewritePattern *, size_t> index_;
  std::vector<int64_t> fired_;
  int64_t total_ = 0;
  bool changed_ = false;

  std::vector<Op *> worklist_;
  std::unordered_set<Op *> queued_;
  std::unordered_set<Op *> live_; // ops not erased; pointers of erased ops may be reused
  const Graph *parentOfRoot_ = nullptr;
  int64_t erasedInParent_ = 0;
};

void DriverRewriter::replaceOp(Op &op, const std::vector<Value *> &values) {
  assert(values.size() == op.numResults() && "replaceOp needs one value per result");
  for (unsigned i = 0; i < op.numResults(); ++i) {
    Value *from = op.result(i);
    driver_.pushUsers(from);
    from->replaceAllUsesWith(values[i]);
    driver_.pushDef(values[i]);
  }
  driver_.erase(&op);
}

void DriverRewriter::replaceAllUsesWith(Value *from, Value *to) {
  driver_.pushUsers(from);
  from->replaceAllUsesWith(to);
  driver_.pushDef(from); // may be dead now
  driver_.pushDef(to);
}

void DriverRewriter::setOperand(Op &op, unsigned i, Value *v) {
  Value *old = op.operand(i);
  op.setOperand(i, v);
  driver_.push(&op);
  driver_.pushDef(old);
  driver_.pushDef(v);
}

void DriverRewriter::notifyChanged(Op &op) {
  driver_.push(&op);
  for (unsigned i = 0; i < op.numResults(); ++i)
    driver_.pushUsers(op.result(i));
}

} // namespace

llvm::Expected<bool> applyPatternsGreedily(Graph &g, const PatternSet &patterns, PassContext &ctx,
                                           const std::string &statsPrefix,
                                           const GreedyRewriteConfig &config) {
  Driver driver(patterns, ctx, statsPrefix, config);
  return driver.run(g);
}

int64_t rewriteEachOp(Graph &g, const std::function<bool(Graph &, Op &)> &rewrite) {
  int64_t rewritten = 0;
  forEachGraph(g, [&](Graph &graph) {
    for (Op *op : graph.opList()) {
      try {
        rewritten += rewrite(graph, *op);
      } catch (const BuildError &) {
        // (left as it is)
      }
    }
  });
  return rewritten;
}

const Tensor *constantValue(const Value *v) {
  if (!v)
    return nullptr;
  const Op *def = v->definingOp();
  if (!def || def->kind() != OpKind::Constant || !def->hasAttr("value"))
    return nullptr;
  const Tensor &t = def->attr("value").getTensor();
  // An elided constant (blob without data) has a known type but no readable elements.
  return t.valid() ? &t : nullptr;
}

bool isConstantSplat(const Value *v, double x) {
  const Tensor *t = constantValue(v);
  // Empty tensors are not splats: an identity rule must not fire on a value it cannot see.
  if (!t || t->numElements() == 0)
    return false;
  for (int64_t i = 0, n = t->numElements(); i < n; ++i)
    if (t->getDouble(i) != x)
      return false;
  return true;
}

} // namespace strata
