// compute_at(b, L): compute an allocated buffer inside a consumer loop, one region at a time.
//
// The producer (Producer.cpp) moves to the start of L's body, and each of its loops that index b
// (plain loop variables v, found by producerLoops) becomes `for v in [0, E)` with the old v :=
// lo + v (no loop at all when E is 1), where [lo, lo + E) is the region L's body reads in that
// dimension: bounds analysis with the loops inside L ranging over their extents and L and the
// loops around it symbolic, so it is one tile or window per iteration of L. Region elements
// outside the producer's original range (a split tail, a window sticking out of the buffer) are
// guarded off unless proven inside it. When every E is a constant the buffer shrinks to the
// region: `allocate b: T[E...]` moves inside L and accesses become b[idx - lo]; otherwise the
// allocation stays and the region is computed in place.
//
// Exact: each element is computed from the same inputs as before (findProducer checks that
// nothing stores to them before the last reader), reads of L's body stay inside the region just
// computed, and a region element the producer never wrote reads as zero both before (the
// allocation starts zeroed) and after (a fresh, zeroed allocation per iteration, or an element
// no iteration writes). Reductions inside one producer nest (`b[i] = 0; for k { b[i] = b[i] +
// ... }`) are supported, since every access of b there is at the same plain indices; init and
// update in separate nests are not.
#include "ScheduleInternal.h"
#include "strata/loop/Simplify.h"

namespace strata::loop::sched {

llvm::Error applyComputeAt(LoopFunction &f, const Step &step) {
  const std::string &name = step.args[0], &loopName = step.args[1];
  llvm::Expected<Producer> p = findProducer(f, name);
  if (!p)
    return stepError(step, llvm::toString(p.takeError()));
  llvm::Expected<const StmtNode *> found = findLoop(f.body, loopName);
  if (!found)
    return stepError(step, llvm::toString(found.takeError()));
  const StmtNode &L = **found;
  const BufferNode *b = p->buffer.get();

  size_t at = SIZE_MAX, reads = 0;
  for (size_t j = p->index + 1; j <= p->lastReader; ++j) {
    BoundsScope unused;
    if (enclosingScope(p->list->stmts[j], &L, unused))
      at = j;
    reads += countLoads(p->list->stmts[j], b);
  }
  if (at == SIZE_MAX) {
    BoundsScope unused;
    return stepError(step, enclosingScope(p->nest(), &L, unused)
                               ? "%" + loopName + " is inside the producer of %" + name
                               : "%" + loopName + " is not in a statement that reads %" + name +
                                     " after its producer");
  }
  if (countLoads(L.body, b) != reads)
    return stepError(step, "%" + name + " is also read outside the body of %" + loopName);
  llvm::Expected<ProducerLoops> pl = producerLoops(*p);
  if (!pl)
    return stepError(step, llvm::toString(pl.takeError()));

  // The region L's body reads, in terms of L's variable and the loops around it.
  Region r;
  r.mergeSymbolic = true;
  collectRegion(L.body, b, {}, r);
  if (!r.error.empty())
    return stepError(step, r.error);
  size_t rank = p->buffer->rank();
  std::vector<Expr> lo, extent;
  bool shrink = true;
  for (size_t d = 0; d < rank; ++d) {
    lo.push_back(r.dims[d].min);
    extent.push_back(simplify(difference(r.dims[d].max, r.dims[d].min) + intImm(1)));
    auto e = extent.back().asInt();
    if (e && *e < 1)
      return stepError(step, "the region of %" + name + " read by %" + loopName + " is empty");
    shrink = shrink && e.has_value();
  }

  // The producer over the region, with guards unless the region is proven inside its range.
  BoundsScope scope;
  enclosingScope(f.body, &L, scope);
  scope[L.var.get()] = loopBounds(L.min, L.extent, scope);
  // Each indexing loop v becomes a fresh v in [0, E) (none for E = 1) with the old v := lo + v.
  VarMap rebase;
  std::vector<Var> fresh(rank);
  for (size_t d = 0; d < rank; ++d) {
    const Var &v = pl->nest.loops[pl->dims[d]]->var;
    Expr base = lo[d].type().dtype == v->dtype ? lo[d] : cast(v->dtype, lo[d]);
    if (extent[d].asInt() == 1) {
      rebase[v.get()] = base;
      continue;
    }
    fresh[d] = makeVar(v->name, v->dtype);
    rebase[v.get()] = base.asInt() == 0 ? var(fresh[d]) : simplify(base + var(fresh[d]));
  }
  std::vector<Stmt> loops;
  for (const Stmt &l : pl->nest.loops)
    loops.push_back(forLoop(l->var, substitute(l->min, rebase), substitute(l->extent, rebase),
                            l->forKind, nullptr));
  std::vector<Expr> guards;
  for (const Expr &g : pl->nest.guards)
    guards.push_back(substitute(g, rebase));
  for (size_t d = 0; d < rank; ++d) {
    const StmtNode &l = *pl->nest.loops[pl->dims[d]];
    Expr pmin = l.min, pend = simplify(l.min + l.extent);
    bool triangular = false; // a range that depends on another producer loop is always guarded
    for (const Stmt &other : pl->nest.loops)
      triangular = triangular || uses(pmin, other->var.get()) || uses(pend, other->var.get());
    Interval low = boundsOf(lo[d], scope), high = boundsOf(r.dims[d].max, scope);
    Expr index = rebase[l.var.get()];
    if (triangular || !low.bounded() || !proveLE(pmin, low.min))
      guards.push_back(binary(ExprKind::GE, index, substitute(pmin, rebase)));
    // With a symbolic extent and start the upper end is always guarded: bounds analysis cannot
    // relate lo + v to the region's end, so only the guard makes the accesses provably in bounds.
    bool fixed = extent[d].asInt().has_value();
    if (triangular || (!fixed && !lo[d].asInt()) || !high.bounded() ||
        !proveLE(simplify(high.max + intImm(1)), pend))
      guards.push_back(binary(ExprKind::LT, index, substitute(pend, rebase)));
    ForKind kind = fixed || l.forKind == ForKind::Serial || l.forKind == ForKind::Parallel
                       ? l.forKind
                       : ForKind::Serial; // vectorized/unrolled need a constant extent
    loops[pl->dims[d]] =
        fresh[d] ? forLoop(fresh[d], intImm(0, fresh[d]->dtype), extent[d], kind, nullptr)
                 : nullptr;
  }
  std::erase(loops, nullptr);
  Stmt producer = buildNest(loops, guards, substitute(pl->nest.body, rebase));

  Stmt inner;
  if (shrink) {
    Buffer local = makeBuffer(name, p->buffer->dtype, extent, {}, p->buffer->scope);
    Redirect redirect(b, local, lo);
    inner = allocate(local, seq({redirect.mutate(producer), redirect.mutate(L.body)}));
    if (!redirect.error.empty())
      return stepError(step, redirect.error);
  } else {
    inner = seq({producer, L.body});
  }
  llvm::Expected<Stmt> reader =
      rewriteStmt(p->list->stmts[at], &L, [&](const Stmt &) { return withBody(L, inner); });
  if (!reader)
    return stepError(step, llvm::toString(reader.takeError()));
  std::vector<Stmt> stmts = p->list->stmts;
  stmts[at] = *reader;
  stmts.erase(stmts.begin() + p->index);
  Stmt list = seq(std::move(stmts));

  // The shrunk buffer is allocated inside L, so the old allocation becomes its body.
  llvm::Expected<Stmt> body =
      rewriteStmt(f.body, p->allocation.get(), [&](const Stmt &alloc) -> llvm::Expected<Stmt> {
        llvm::Expected<Stmt> inside =
            rewriteStmt(alloc->body, p->list.get(), [&](const Stmt &) { return list; });
        if (!inside)
          return inside.takeError();
        return shrink ? *inside : allocate(alloc->buffer, *inside);
      });
  if (!body)
    return stepError(step, llvm::toString(body.takeError()));
  f.body = *body;
  return llvm::Error::success();
}

} // namespace strata::loop::sched
