// The default walks of IRVisitor and IRMutator, and the shared walks built on them (Visitor.h).
#include "strata/loop/Visitor.h"

namespace strata::loop {

void IRVisitor::visit(const Expr &e) {
  if (e)
    ExprVisitor::visit(e);
}
void IRVisitor::visit(const Stmt &s) {
  if (s)
    StmtVisitor::visit(s);
}

void IRVisitor::visitOperands(const Expr &e) {
  for (const Expr &o : e->operands)
    visit(o);
}
void IRVisitor::visitIntImm(const Expr &) {}
void IRVisitor::visitFloatImm(const Expr &) {}
void IRVisitor::visitVar(const Expr &) {}
void IRVisitor::visitLoad(const Expr &e) { visitOperands(e); }
void IRVisitor::visitBinary(const Expr &e) { visitOperands(e); }
void IRVisitor::visitNot(const Expr &e) { visitOperands(e); }
void IRVisitor::visitSelect(const Expr &e) { visitOperands(e); }
void IRVisitor::visitCast(const Expr &e) { visitOperands(e); }
void IRVisitor::visitCall(const Expr &e) { visitOperands(e); }
void IRVisitor::visitCheckIndex(const Expr &e) { visitOperands(e); }
void IRVisitor::visitRamp(const Expr &e) { visitOperands(e); }
void IRVisitor::visitBroadcast(const Expr &e) { visitOperands(e); }

void IRVisitor::visitFor(const Stmt &s) {
  visit(s->min);
  visit(s->extent);
  visit(s->body);
}
void IRVisitor::visitStore(const Stmt &s) {
  visit(s->value);
  for (const Expr &i : s->indices)
    visit(i);
}
void IRVisitor::visitAllocate(const Stmt &s) { visit(s->body); }
void IRVisitor::visitIfThenElse(const Stmt &s) {
  visit(s->value);
  visit(s->body);
  visit(s->elseBody);
}
void IRVisitor::visitSeq(const Stmt &s) {
  for (const Stmt &c : s->stmts)
    visit(c);
}

Expr IRMutator::mutate(const Expr &e) { return e ? visit(e) : e; }
Stmt IRMutator::mutate(const Stmt &s) { return s ? visit(s) : s; }

Expr IRMutator::mutateOperands(const Expr &e) {
  if (e->operands.empty())
    return e;
  std::vector<Expr> ops;
  ops.reserve(e->operands.size());
  for (const Expr &o : e->operands)
    ops.push_back(mutate(o));
  return withOperands(e, std::move(ops));
}
Expr IRMutator::visitIntImm(const Expr &e) { return e; }
Expr IRMutator::visitFloatImm(const Expr &e) { return e; }
Expr IRMutator::visitVar(const Expr &e) { return e; }
Expr IRMutator::visitLoad(const Expr &e) { return mutateOperands(e); }
Expr IRMutator::visitBinary(const Expr &e) { return mutateOperands(e); }
Expr IRMutator::visitNot(const Expr &e) { return mutateOperands(e); }
Expr IRMutator::visitSelect(const Expr &e) { return mutateOperands(e); }
Expr IRMutator::visitCast(const Expr &e) { return mutateOperands(e); }
Expr IRMutator::visitCall(const Expr &e) { return mutateOperands(e); }
Expr IRMutator::visitCheckIndex(const Expr &e) { return mutateOperands(e); }
Expr IRMutator::visitRamp(const Expr &e) { return mutateOperands(e); }
Expr IRMutator::visitBroadcast(const Expr &e) { return mutateOperands(e); }

Stmt IRMutator::visitFor(const Stmt &s) {
  Expr min = mutate(s->min);
  Expr extent = mutate(s->extent);
  return rebuildFor(s, std::move(min), std::move(extent), mutate(s->body));
}
Stmt IRMutator::visitStore(const Stmt &s) {
  Expr value = mutate(s->value);
  std::vector<Expr> indices;
  indices.reserve(s->indices.size());
  for (const Expr &i : s->indices)
    indices.push_back(mutate(i));
  return rebuildStore(s, std::move(indices), std::move(value));
}
Stmt IRMutator::visitAllocate(const Stmt &s) {
  Stmt body = mutate(s->body);
  return body == s->body ? s : allocate(s->buffer, std::move(body));
}
Stmt IRMutator::visitIfThenElse(const Stmt &s) {
  Expr cond = mutate(s->value);
  Stmt thenBody = mutate(s->body);
  return rebuildIfThenElse(s, std::move(cond), std::move(thenBody), mutate(s->elseBody));
}
Stmt IRMutator::visitSeq(const Stmt &s) {
  std::vector<Stmt> stmts;
  stmts.reserve(s->stmts.size());
  bool changed = false;
  for (const Stmt &c : s->stmts) {
    stmts.push_back(mutate(c));
    changed |= stmts.back() != c;
  }
  return changed ? seq(std::move(stmts)) : s;
}

Stmt IRMutator::rebuildFor(const Stmt &s, Expr min, Expr extent, Stmt body) {
  if (min.same(s->min) && extent.same(s->extent) && body == s->body)
    return s;
  return forLoop(s->var, std::move(min), std::move(extent), s->forKind, std::move(body));
}
Stmt IRMutator::rebuildStore(const Stmt &s, std::vector<Expr> indices, Expr value) {
  bool same = value.same(s->value) && indices.size() == s->indices.size();
  for (size_t i = 0; same && i < indices.size(); ++i)
    same = indices[i].same(s->indices[i]);
  return same ? s : store(s->buffer, std::move(indices), std::move(value));
}
Stmt IRMutator::rebuildIfThenElse(const Stmt &s, Expr cond, Stmt thenBody, Stmt elseBody) {
  if (cond.same(s->value) && thenBody == s->body && elseBody == s->elseBody)
    return s;
  return ifThenElse(std::move(cond), std::move(thenBody), std::move(elseBody));
}

namespace {

// Finds the first node of type Node (Expr or Stmt) for which pred holds, parents first.
template <typename Node> class FirstMatch : public IRVisitor {
public:
  explicit FirstMatch(const std::function<bool(const Node &)> &pred) : pred_(pred) {}
  Node found;

  using IRVisitor::visit;
  void visit(const Node &n) override {
    if (found || !n)
      return;
    if (pred_(n))
      found = n;
    else
      IRVisitor::visit(n);
  }

private:
  const std::function<bool(const Node &)> &pred_;
};

// Expressions hold no statements, so a statement search does not enter them.
class StmtMatch : public FirstMatch<Stmt> {
public:
  using FirstMatch::FirstMatch;
  using FirstMatch::visit;
  void visit(const Expr &) override {}
};

} // namespace

void forEachExpr(const Expr &e, const std::function<void(const Expr &)> &fn) {
  anyExpr(e, [&](const Expr &x) {
    fn(x);
    return false;
  });
}
void forEachExpr(const Stmt &s, const std::function<void(const Expr &)> &fn) {
  FirstMatch<Expr>([&](const Expr &x) {
    fn(x);
    return false;
  }).visit(s);
}
bool anyExpr(const Expr &e, const std::function<bool(const Expr &)> &pred) {
  FirstMatch<Expr> search(pred);
  search.visit(e);
  return bool(search.found);
}
void forEachStmt(const Stmt &s, const std::function<void(const Stmt &)> &fn) {
  findStmt(s, [&](const Stmt &x) {
    fn(x);
    return false;
  });
}
Stmt findStmt(const Stmt &s, const std::function<bool(const Stmt &)> &pred) {
  StmtMatch search(pred);
  search.visit(s);
  return search.found;
}

namespace {

class BufferSubstitution : public IRMutator {
public:
  explicit BufferSubstitution(const std::map<const BufferNode *, Buffer> &to) : to_(to) {}

protected:
  Expr visitLoad(const Expr &e) override {
    Expr r = mutateOperands(e);
    auto it = to_.find(e->buffer.get());
    return it == to_.end() ? r : load(it->second, r->operands);
  }
  Stmt visitStore(const Stmt &s) override {
    Stmt r = IRMutator::visitStore(s);
    auto it = to_.find(s->buffer.get());
    return it == to_.end() ? r : store(it->second, r->indices, r->value);
  }

private:
  const std::map<const BufferNode *, Buffer> &to_;
};

} // namespace

Stmt substituteBuffers(const Stmt &s, const std::map<const BufferNode *, Buffer> &to) {
  return BufferSubstitution(to).mutate(s);
}

} // namespace strata::loop
