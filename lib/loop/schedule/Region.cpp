// The region of a buffer that a statement accesses, and redirection of accesses into a smaller
// buffer: shared by cache_read/cache_write (Cache.cpp) and compute_at (ComputeAt.cpp).
#include "ScheduleInternal.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Simplify.h"

namespace strata::loop::sched {

namespace {

// min/max(cur, add), not repeating a bound that `cur` already holds.
Expr combine(ExprKind kind, const Expr &cur, const Expr &add) {
  if (equal(cur, add))
    return cur;
  for (Expr e = cur; e.kind() == kind; e = e->operands[0])
    if (equal(e->operands[1], add) || equal(e->operands[0], add))
      return cur;
  return simplify(binary(kind, cur, add));
}

// Merges one access's interval into the region. Bounds must differ by a constant unless the
// region merges symbolically (then they combine with min/max).
void merge(Region &r, const std::vector<Interval> &access) {
  if (!r.accessed) {
    r.accessed = true;
    r.dims = access;
    return;
  }
  for (size_t d = 0; d < access.size() && r.error.empty(); ++d) {
    auto lo = difference(access[d].min, r.dims[d].min).asInt();
    auto hi = difference(access[d].max, r.dims[d].max).asInt();
    if ((!lo || !hi) && !r.mergeSymbolic) {
      r.error = "cannot bound dimension " + std::to_string(d) + " of the region";
      return;
    }
    if (!lo)
      r.dims[d].min = combine(ExprKind::Min, r.dims[d].min, access[d].min);
    else if (*lo < 0)
      r.dims[d].min = access[d].min;
    if (!hi)
      r.dims[d].max = combine(ExprKind::Max, r.dims[d].max, access[d].max);
    else if (*hi > 0)
      r.dims[d].max = access[d].max;
  }
}

void access(Region &r, const std::vector<Expr> &indices, const BoundsScope &scope) {
  std::vector<Interval> iv;
  for (const Expr &i : indices) {
    Interval b = boundsOf(i, scope);
    if (!b.bounded()) {
      r.error = "the index " + printExpr(i) + " is unbounded";
      return;
    }
    iv.push_back({simplify(b.min), simplify(b.max)});
  }
  merge(r, iv);
}

void collect(const Expr &e, const BufferNode *b, const BoundsScope &scope, Region &r) {
  if (!e)
    return;
  if (e.kind() == ExprKind::Load && e->buffer.get() == b) {
    r.loaded = true;
    access(r, e->operands, scope);
  }
  for (const Expr &o : e->operands)
    collect(o, b, scope, r);
}

// a - b with the terms of both sums collected, so that (x * 4 + y + 1) - x * 4 gives y + 1 (the
// simplifier only cancels a term in the first position).
void flatten(const Expr &e, int64_t sign, std::vector<std::pair<Expr, int64_t>> &terms,
             int64_t &constant) {
  if (auto c = e.asInt()) {
    constant += sign * *c;
  } else if (e.kind() == ExprKind::Add || e.kind() == ExprKind::Sub) {
    flatten(e->operands[0], sign, terms, constant);
    flatten(e->operands[1], e.kind() == ExprKind::Add ? sign : -sign, terms, constant);
  } else {
    for (auto &[t, k] : terms)
      if (equal(t, e)) {
        k += sign;
        return;
      }
    terms.push_back({e, sign});
  }
}

} // namespace

void collectRegion(const Stmt &s, const BufferNode *b, const BoundsScope &scope, Region &r) {
  if (!s)
    return;
  collect(s->min, b, scope, r);
  collect(s->extent, b, scope, r);
  collect(s->value, b, scope, r);
  for (const Expr &i : s->indices)
    collect(i, b, scope, r);
  if (s->kind == StmtKind::Store && s->buffer.get() == b) {
    r.stored = true;
    access(r, s->indices, scope);
  }
  BoundsScope inner = scope;
  if (s->kind == StmtKind::For)
    inner[s->var.get()] = loopBounds(s->min, s->extent, scope);
  collectRegion(s->body, b, inner, r);
  collectRegion(s->elseBody, b, scope, r);
  for (const Stmt &c : s->stmts)
    collectRegion(c, b, scope, r);
}

bool enclosingScope(const Stmt &s, const StmtNode *target, BoundsScope &scope) {
  if (!s)
    return false;
  if (s.get() == target)
    return true;
  if (s->kind == StmtKind::For) {
    scope[s->var.get()] = loopBounds(s->min, s->extent, scope);
    if (enclosingScope(s->body, target, scope))
      return true;
    scope.erase(s->var.get());
    return false;
  }
  if (enclosingScope(s->body, target, scope) || enclosingScope(s->elseBody, target, scope))
    return true;
  for (const Stmt &c : s->stmts)
    if (enclosingScope(c, target, scope))
      return true;
  return false;
}

Stmt findAllocation(const Stmt &s, const std::string &name) {
  if (!s)
    return nullptr;
  if (s->kind == StmtKind::Allocate && s->buffer->name == name)
    return s;
  for (const Stmt *c : {&s->body, &s->elseBody})
    if (Stmt a = findAllocation(*c, name))
      return a;
  for (const Stmt &c : s->stmts)
    if (Stmt a = findAllocation(c, name))
      return a;
  return nullptr;
}

Expr difference(const Expr &a, const Expr &b) {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;
  flatten(a, 1, terms, constant);
  flatten(b, -1, terms, constant);
  Expr sum;
  for (bool positive : {true, false})
    for (const auto &[t, k] : terms) {
      if (k == 0 || (k > 0) != positive)
        continue;
      Expr term = k == 1 || k == -1 ? t : t * intImm(k > 0 ? k : -k);
      sum = !sum ? (k > 0 ? term : intImm(0) - term) : k > 0 ? sum + term : sum - term;
    }
  if (!sum)
    return intImm(constant);
  if (constant != 0)
    sum = constant > 0 ? sum + intImm(constant) : sum - intImm(-constant);
  return simplify(sum);
}

std::vector<Expr> Redirect::shift(const std::vector<Expr> &idx) {
  std::vector<Expr> out;
  for (size_t d = 0; d < idx.size(); ++d) {
    const Expr &i = idx[d];
    if (i.kind() == ExprKind::Ramp)
      out.push_back(ramp(difference(i->operands[0], lo[d]), i->operands[1], i.type().lanes));
    else if (i.kind() == ExprKind::Broadcast)
      out.push_back(broadcast(difference(i->operands[0], lo[d]), i.type().lanes));
    else if (i.type().isVector())
      error = "a vector index that is not a ramp or broadcast";
    else
      out.push_back(difference(i, lo[d]));
  }
  return out;
}

Expr Redirect::expr(const Expr &e) {
  if (!e || (e->operands.empty() && e.kind() != ExprKind::Load))
    return e;
  std::vector<Expr> ops;
  for (const Expr &o : e->operands)
    ops.push_back(expr(o));
  if (e.kind() == ExprKind::Load && e->buffer.get() == from)
    return error.empty() ? load(to, shift(ops)) : e;
  return withOperands(e, std::move(ops));
}

Stmt Redirect::stmt(const Stmt &s) {
  if (!s)
    return s;
  auto n = std::make_shared<StmtNode>(*s);
  for (Expr *e : {&n->min, &n->extent, &n->value})
    *e = expr(*e);
  for (Expr &i : n->indices)
    i = expr(i);
  if (n->kind == StmtKind::Store && n->buffer.get() == from) {
    n->buffer = to;
    n->indices = shift(n->indices);
  }
  n->body = stmt(s->body);
  n->elseBody = stmt(s->elseBody);
  for (Stmt &c : n->stmts)
    c = stmt(c);
  return n->kind == StmtKind::Seq ? seq(n->stmts) : Stmt(n);
}

} // namespace strata::loop::sched
