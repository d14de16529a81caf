// Variable substitution and loop lookup for the schedule primitives.
#include "ScheduleInternal.h"
#include "strata/support/Error.h"

namespace strata::loop::sched {

Expr substitute(const Expr &e, const VarMap &m) {
  if (e.kind() == ExprKind::Var) {
    auto it = m.find(e->var.get());
    return it == m.end() ? e : it->second;
  }
  if (e->operands.empty())
    return e;
  std::vector<Expr> ops;
  ops.reserve(e->operands.size());
  for (const Expr &o : e->operands)
    ops.push_back(substitute(o, m));
  return withOperands(e, std::move(ops));
}

Stmt substitute(const Stmt &s, const VarMap &m) {
  if (!s)
    return s;
  auto n = std::make_shared<StmtNode>(*s);
  auto sub = [&](Expr &e) {
    if (e)
      e = substitute(e, m);
  };
  sub(n->min);
  sub(n->extent);
  sub(n->value);
  for (Expr &i : n->indices)
    sub(i);
  n->body = substitute(s->body, m);
  n->elseBody = substitute(s->elseBody, m);
  for (Stmt &c : n->stmts)
    c = substitute(c, m);
  return n;
}

Stmt mapExprs(const Stmt &s, const std::function<Expr(const Expr &)> &fn) {
  if (!s)
    return s;
  auto n = std::make_shared<StmtNode>(*s);
  for (Expr *e : {&n->min, &n->extent, &n->value})
    if (*e)
      *e = fn(*e);
  for (Expr &i : n->indices)
    i = fn(i);
  n->body = mapExprs(s->body, fn);
  n->elseBody = mapExprs(s->elseBody, fn);
  for (Stmt &c : n->stmts)
    c = mapExprs(c, fn);
  return n->kind == StmtKind::Seq ? seq(n->stmts) : Stmt(n);
}

bool uses(const Expr &e, const VarNode *v) {
  if (e.kind() == ExprKind::Var)
    return e->var.get() == v;
  for (const Expr &o : e->operands)
    if (uses(o, v))
      return true;
  return false;
}

bool hasLoad(const Expr &e) {
  if (e.kind() == ExprKind::Load)
    return true;
  for (const Expr &o : e->operands)
    if (hasLoad(o))
      return true;
  return false;
}

namespace {
void collectLoops(const Stmt &s, const std::string &name, std::vector<const StmtNode *> &out) {
  if (!s)
    return;
  if (s->kind == StmtKind::For && s->var->name == name)
    out.push_back(s.get());
  collectLoops(s->body, name, out);
  collectLoops(s->elseBody, name, out);
  for (const Stmt &c : s->stmts)
    collectLoops(c, name, out);
}

// Rebuilds the path from `s` down to `target`; nullptr result means "not below s".
llvm::Expected<Stmt> rewriteAt(const Stmt &s, const StmtNode *target, const LoopRewrite &fn) {
  if (!s)
    return Stmt();
  if (s.get() == target)
    return fn(s);
  auto n = std::make_shared<StmtNode>(*s);
  bool changed = false;
  auto visit = [&](Stmt &child) -> llvm::Error {
    llvm::Expected<Stmt> r = rewriteAt(child, target, fn);
    if (!r)
      return r.takeError();
    if (*r) {
      child = *r;
      changed = true;
    }
    return llvm::Error::success();
  };
  if (llvm::Error err = visit(n->body))
    return err;
  if (llvm::Error err = visit(n->elseBody))
    return err;
  for (Stmt &c : n->stmts)
    if (llvm::Error err = visit(c))
      return err;
  if (!changed)
    return Stmt();
  if (n->kind == StmtKind::Seq) // re-flatten: a rewrite may return a sequence
    return seq(n->stmts);
  return Stmt(n);
}
} // namespace

llvm::Expected<const StmtNode *> findLoop(const Stmt &root, const std::string &name) {
  std::vector<const StmtNode *> found;
  collectLoops(root, name, found);
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
