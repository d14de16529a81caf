// Variable substitution and loop lookup for the schedule primitives.
#include "ScheduleInternal.h"
#include "strata/loop/Visitor.h"
#include "strata/support/Error.h"

#include <optional>

namespace strata::loop::sched {

namespace {

class Substituter : public IRMutator {
public:
  explicit Substituter(const VarMap &m) : m_(m) {}

protected:
  Expr visitVar(const Expr &e) override {
    auto it = m_.find(e->var.get());
    return it == m_.end() ? e : it->second;
  }

private:
  const VarMap &m_;
};

// Each expression a statement holds is replaced whole, not entered.
class ExprMapper : public IRMutator {
public:
  explicit ExprMapper(const std::function<Expr(const Expr &)> &fn) : fn_(fn) {}
  using IRMutator::mutate;
  Expr mutate(const Expr &e) override { return e ? fn_(e) : e; }

private:
  const std::function<Expr(const Expr &)> &fn_;
};

} // namespace

Expr substitute(const Expr &e, const VarMap &m) { return Substituter(m).mutate(e); }
Stmt substitute(const Stmt &s, const VarMap &m) { return Substituter(m).mutate(s); }

Stmt mapExprs(const Stmt &s, const std::function<Expr(const Expr &)> &fn) {
  return ExprMapper(fn).mutate(s);
}

bool uses(const Expr &e, const VarNode *v) {
  return anyExpr(e, [&](const Expr &x) { return x.kind() == ExprKind::Var && x->var.get() == v; });
}

bool hasLoad(const Expr &e) {
  return anyExpr(e, [](const Expr &x) { return x.kind() == ExprKind::Load; });
}

namespace {
// Rebuilds the path from the root down to every occurrence of `target` (one, in practice) with
// fn(target) in its place; only statements change, so expressions are not entered.
class RewriteAt : public IRMutator {
public:
  RewriteAt(const StmtNode *target, const LoopRewrite &fn) : target_(target), fn_(fn) {}
  std::optional<llvm::Error> error;
  bool rewritten = false; // fn returned a statement, not null ("leave it")

  using IRMutator::mutate;
  Expr mutate(const Expr &e) override { return e; }
  Stmt mutate(const Stmt &s) override {
    if (error) // stop at the first failure
      return s;
    if (s.get() != target_)
      return IRMutator::mutate(s);
    llvm::Expected<Stmt> r = fn_(s);
    if (!r) {
      error = r.takeError();
      return s;
    }
    if (!*r)
      return s;
    rewritten = true;
    return *r;
  }

private:
  const StmtNode *target_;
  const LoopRewrite &fn_;
};

// The rewritten root; null when fn never returned a statement.
llvm::Expected<Stmt> rewriteAt(const Stmt &s, const StmtNode *target, const LoopRewrite &fn) {
  RewriteAt r(target, fn);
  Stmt out = r.mutate(s);
  if (r.error)
    return std::move(*r.error);
  return r.rewritten ? out : Stmt();
}
} // namespace

llvm::Expected<const StmtNode *> findLoop(const Stmt &root, const std::string &name) {
  std::vector<const StmtNode *> found;
  forEachStmt(root, [&](const Stmt &s) {
    if (s->kind == StmtKind::For && s->var->name == name)
      found.push_back(s.get());
  });
  if (found.size() != 1)
    return makeError(found.empty() ? "no loop named %" + name
                                   : "more than one loop named %" + name);
  return found[0];
}

llvm::Expected<Stmt> rewriteLoop(const Stmt &root, const std::string &name, const LoopRewrite &fn) {
  llvm::Expected<const StmtNode *> loop = findLoop(root, name);
  if (!loop)
    return loop.takeError();
  return rewriteAt(root, *loop, fn);
}

llvm::Expected<Stmt> rewriteStmt(const Stmt &root, const StmtNode *target, const LoopRewrite &fn) {
  llvm::Expected<Stmt> r = rewriteAt(root, target, fn);
  if (r && !*r)
    return root;
  return r;
}

Stmt withBody(const StmtNode &loop, Stmt body) {
  return forLoop(loop.var, loop.min, loop.extent, loop.forKind, std::move(body));
}
Stmt withKind(const StmtNode &loop, ForKind kind) {
  return forLoop(loop.var, loop.min, loop.extent, kind, loop.body);
}

Nest perfectNest(const Stmt &loop, size_t maxLoops) {
  // Guards met between loops are collected and later rebuilt below the last loop: sinking
  // `if g { for j { B } }` to `for j { if g { B } }` is exact because g reads no buffer and cannot
  // mention j.
  Nest nest;
  nest.loops.push_back(loop);
  Stmt s = loop->body;
  while (nest.loops.size() < maxLoops) {
    if (s->kind == StmtKind::For) {
      nest.loops.push_back(s);
      s = s->body;
    } else if (s->kind == StmtKind::IfThenElse && !s->elseBody && !hasLoad(s->value)) {
      nest.guards.push_back(s->value);
      s = s->body;
    } else {
      break;
    }
  }
  nest.body = s;
  return nest;
}

Stmt buildNest(const std::vector<Stmt> &loops, const std::vector<Expr> &guards, const Stmt &body) {
  Stmt s = body;
  for (size_t i = guards.size(); i-- > 0;)
    s = ifThenElse(guards[i], s);
  for (size_t i = loops.size(); i-- > 0;)
    s = withBody(*loops[i], s);
  return s;
}

llvm::Error stepError(const Step &step, const llvm::Twine &msg) {
  return makeError("schedule: " + printStep(step) + ": " + msg.str());
}

llvm::Expected<int64_t> intArg(const Step &step, size_t i) {
  const std::string &a = step.args[i];
  int64_t v = 0;
  if (llvm::StringRef(a).getAsInteger(10, v) || v < 1)
    return stepError(step, "argument " + std::to_string(i + 1) +
                               " must be a positive integer, not '" + a + "'");
  return v;
}

} // namespace strata::loop::sched
