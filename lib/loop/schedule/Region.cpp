// The region of a buffer that a statement accesses, and redirection of accesses into a smaller
// buffer: shared by cache_read/cache_write (Cache.cpp) and compute_at (ComputeAt.cpp).
#include "ScheduleInternal.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Simplify.h"
#include "strata/loop/Visitor.h"

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

// Every access of one buffer, each bounded with the loops around it (inside the statement walked)
// ranging over their extents.
class RegionCollector : public IRVisitor {
public:
  RegionCollector(const BufferNode *b, const BoundsScope &scope, Region &r)
      : b_(b), scope_(scope), r_(r) {}

protected:
  void visitLoad(const Expr &e) override {
    if (e->buffer.get() == b_) {
      r_.loaded = true;
      access(r_, e->operands, scope_);
    }
    IRVisitor::visitLoad(e);
  }
  void visitStore(const Stmt &s) override {
    IRVisitor::visitStore(s); // the loads in the value and indices first
    if (s->buffer.get() == b_) {
      r_.stored = true;
      access(r_, s->indices, scope_);
    }
  }
  void visitFor(const Stmt &s) override {
    visit(s->min);
    visit(s->extent);
    BoundsScope outer = scope_;
    scope_[s->var.get()] = loopBounds(s->min, s->extent, scope_);
    visit(s->body);
    scope_ = std::move(outer);
  }

private:
  const BufferNode *b_;
  BoundsScope scope_;
  Region &r_;
};

// Fills `scope` with the bounds of the loops around `target`, stopping when it is found.
class EnclosingScope : public IRVisitor {
public:
  EnclosingScope(const StmtNode *target, BoundsScope &scope) : target_(target), scope_(scope) {}
  bool found = false;

  void visit(const Expr &) override {} // statements only
  void visit(const Stmt &s) override {
    if (found || !s)
      return;
    found = s.get() == target_;
    if (!found)
      IRVisitor::visit(s);
  }

protected:
  void visitFor(const Stmt &s) override {
    scope_[s->var.get()] = loopBounds(s->min, s->extent, scope_);
    visit(s->body);
    if (!found)
      scope_.erase(s->var.get());
  }

private:
  const StmtNode *target_;
  BoundsScope &scope_;
};

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
  RegionCollector(b, scope, r).visit(s);
}

bool enclosingScope(const Stmt &s, const StmtNode *target, BoundsScope &scope) {
  EnclosingScope walk(target, scope);
  walk.visit(s);
  return walk.found;
}

Stmt findAllocation(const Stmt &s, const std::string &name) {
  return findStmt(
      s, [&](const Stmt &a) { return a->kind == StmtKind::Allocate && a->buffer->name == name; });
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

Expr Redirect::visitLoad(const Expr &e) {
  Expr m = IRMutator::visitLoad(e);
  if (e->buffer.get() != from)
    return m;
  return error.empty() ? load(to, shift(m->operands)) : e;
}

Stmt Redirect::visitStore(const Stmt &s) {
  Stmt m = IRMutator::visitStore(s);
  if (s->buffer.get() != from)
    return m;
  return store(to, shift(m->indices), m->value);
}

} // namespace strata::loop::sched
