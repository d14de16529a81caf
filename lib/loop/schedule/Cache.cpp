// cache_read and cache_write: stage the part of a buffer that a loop touches in a local buffer.
//
// cache_read(b, L [, name]) wraps loop L in `allocate name: dtype[E...] local { copy-in; L' }`
// and cache_write(b, L [, name]) in `allocate ... { copy-in; L'; copy-out }`, where L' accesses
// name[idx - lo] for every b[idx], and [lo, lo + E) per dimension is the region L touches (from
// bounds analysis, with the loops inside L ranging over their extents; loops outside L stay
// symbolic, so a cache inside a tile covers one tile). E must be a constant. cache_write copies in
// too: elements of the region that L does not write then go back unchanged, so the rewrite is
// exact without proving L overwrites the whole region. Copies of a region that may stick out of
// the buffer (a split tail) are guarded per dimension.
//
// Not checked (like reorder): that no other iteration of an enclosing parallel loop writes the
// same region, which cache_write's copy-out would race with.
#include "ScheduleInternal.h"
#include "strata/loop/Bounds.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Simplify.h"

namespace strata::loop::sched {

namespace {

struct Region {
  std::vector<Interval> dims; // per dimension, over every access seen so far
  bool accessed = false, loaded = false, stored = false;
  std::string error;
};

// Merges one access's interval into the region: bounds must differ by a constant.
void merge(Region &r, const std::vector<Interval> &access) {
  if (!r.accessed) {
    r.accessed = true;
    r.dims = access;
    return;
  }
  for (size_t d = 0; d < access.size() && r.error.empty(); ++d) {
    auto lo = simplify(access[d].min - r.dims[d].min).asInt();
    auto hi = simplify(access[d].max - r.dims[d].max).asInt();
    if (!lo || !hi) {
      r.error = "cannot bound dimension " + std::to_string(d) + " of the region";
      return;
    }
    if (*lo < 0)
      r.dims[d].min = access[d].min;
    if (*hi > 0)
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

void collect(const Stmt &s, const BufferNode *b, const BoundsScope &scope, Region &r) {
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
  collect(s->body, b, inner, r);
  collect(s->elseBody, b, scope, r);
  for (const Stmt &c : s->stmts)
    collect(c, b, scope, r);
}

// The bounds of the loops enclosing `target` (false if it is not below `s`).
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

Buffer findBuffer(const LoopFunction &f, const Stmt &s, const std::string &name) {
  if (!s)
    return nullptr;
  if (s->kind == StmtKind::Allocate && s->buffer->name == name)
    return s->buffer;
  for (const Stmt *c : {&s->body, &s->elseBody})
    if (Buffer b = findBuffer(f, *c, name))
      return b;
  for (const Stmt &c : s->stmts)
    if (Buffer b = findBuffer(f, c, name))
      return b;
  return nullptr;
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

// Accesses of `from` become accesses of `to` at index - lo.
struct Redirect {
  const BufferNode *from;
  Buffer to;
  std::vector<Expr> lo;
  std::string error;

  std::vector<Expr> shift(const std::vector<Expr> &idx) {
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
  Expr expr(const Expr &e) {
    if (!e || (e->operands.empty() && e.kind() != ExprKind::Load))
      return e;
    std::vector<Expr> ops;
    for (const Expr &o : e->operands)
      ops.push_back(expr(o));
    if (e.kind() == ExprKind::Load && e->buffer.get() == from)
      return error.empty() ? load(to, shift(ops)) : e;
    return withOperands(e, std::move(ops));
  }
  Stmt stmt(const Stmt &s) {
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
};

llvm::Error cache(LoopFunction &f, const Step &step, bool write) {
  const std::string &bufName = step.args[0], &loopName = step.args[1];
  std::string localName = step.args.size() == 3 ? step.args[2] : bufName + ".local";
  Buffer buf;
  for (const Param &p : f.params)
    if (p.isBuffer() && p.buffer->name == bufName)
      buf = p.buffer;
  if (!buf)
    buf = findBuffer(f, f.body, bufName);
  if (!buf)
    return stepError(step, "no buffer named %" + bufName);
  llvm::Expected<const StmtNode *> target = findLoop(f.body, loopName);
  if (!target)
    return stepError(step, llvm::toString(target.takeError()));
  BoundsScope outer;
  enclosingScope(f.body, *target, outer);

  llvm::Expected<Stmt> s = rewriteLoop(f.body, loopName, [&](const Stmt &loop)
                                                             -> llvm::Expected<Stmt> {
    Region r;
    collect(loop, buf.get(), {}, r);
    if (!r.error.empty())
      return llvm::createStringError(r.error);
    if (!r.accessed)
      return llvm::createStringError("%" + loopName + " does not access %" + bufName);
    if (write && !r.stored)
      return llvm::createStringError("%" + loopName + " does not store to %" + bufName);
    if (!write && r.stored)
      return llvm::createStringError("%" + loopName + " stores to %" + bufName +
                                     "; use cache_write");
    std::vector<Expr> shape, lo;
    for (size_t d = 0; d < r.dims.size(); ++d) {
      auto e = simplify(r.dims[d].max - r.dims[d].min + intImm(1)).asInt();
      if (!e)
        return llvm::createStringError("the region's extent in dimension " + std::to_string(d) +
                                       " is not a constant");
      shape.push_back(intImm(*e));
      lo.push_back(r.dims[d].min);
    }
    Buffer local = makeBuffer(localName, buf->dtype, shape, {}, MemoryScope::Local);
    Redirect redirect{buf.get(), local, lo, ""};
    Stmt body = redirect.stmt(loop);
    if (!redirect.error.empty())
      return llvm::createStringError(redirect.error);

    // Copy loops over the region (none for a dimension of extent 1); a dimension that may leave
    // the buffer is guarded.
    auto copy = [&](bool in) {
      std::vector<Var> t(shape.size());
      std::vector<Expr> src, dst;
      Expr guard;
      for (size_t d = 0; d < shape.size(); ++d) {
        Expr td = intImm(0);
        if (shape[d].asInt() != 1) {
          t[d] = makeVar(localName + (in ? ".in" : ".out") + std::to_string(d));
          td = var(t[d]);
        }
        Expr g = simplify(lo[d] + td);
        src.push_back(g);
        dst.push_back(td);
        Interval b = boundsOf(lo[d], outer);
        std::vector<Expr> conds;
        if (!b.bounded() || !proveLE(intImm(0), b.min))
          conds.push_back(binary(ExprKind::GE, g, intImm(0)));
        if (!b.bounded() || !proveLE(simplify(b.max + shape[d]), buf->shape[d]))
          conds.push_back(binary(ExprKind::LT, g, buf->shape[d]));
        for (const Expr &c : conds)
          guard = guard ? binary(ExprKind::And, guard, c) : c;
      }
      Stmt st = in ? store(local, dst, load(buf, src)) : store(buf, src, load(local, dst));
      if (guard)
        st = ifThenElse(guard, st);
      for (size_t d = shape.size(); d-- > 0;)
        if (t[d])
          st = forLoop(t[d], intImm(0), shape[d], ForKind::Serial, st);
      return st;
    };
    std::vector<Stmt> parts = {copy(true), body};
    if (write)
      parts.push_back(copy(false));
    return allocate(local, seq(parts));
  });
  if (!s)
    return stepError(step, llvm::toString(s.takeError()));
  f.body = *s;
  return llvm::Error::success();
}

} // namespace

llvm::Error applyCacheRead(LoopFunction &f, const Step &step) { return cache(f, step, false); }
llvm::Error applyCacheWrite(LoopFunction &f, const Step &step) { return cache(f, step, true); }

} // namespace strata::loop::sched
