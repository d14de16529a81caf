// compute_inline(b): replace every load of an allocated buffer by the expression that computes it.
//
// The producer (Producer.cpp) must be a perfect loop nest around one store b[i, j] = e(i, j)
// indexed by exactly its loop variables; each reader's load b[x, y] becomes e(x, y), then the
// producer and the allocation go away. Exact because e reads only buffers that nothing stores to
// before the last reader (findProducer checks), and because every element read was written: the
// nest covers the whole buffer, or the reads are proven inside what it covers (an allocation
// starts zeroed, so inlining a read of an unwritten element would change its value).
#include "ScheduleInternal.h"
#include "strata/loop/Simplify.h"

namespace strata::loop::sched {

namespace {

bool provenEqual(const Expr &a, const Expr &b) { return proveLE(a, b) && proveLE(b, a); }

// True when the nest writes every element, or every read of the buffer in the readers is inside
// the nest's range in each dimension.
bool readsCovered(const Producer &p, const ProducerLoops &pl, const Stmt &root) {
  const BufferNode &buf = *p.buffer;
  bool whole = true;
  for (size_t d = 0; d < buf.rank(); ++d) {
    const StmtNode &l = *pl.nest.loops[pl.dims[d]];
    whole = whole && provenEqual(l.min, intImm(0)) && provenEqual(l.extent, buf.shape[d]);
  }
  if (whole)
    return true;
  BoundsScope scope;
  enclosingScope(root, p.list.get(), scope);
  Region r;
  r.mergeSymbolic = true;
  for (size_t j = p.index + 1; j <= p.lastReader; ++j)
    collectRegion(p.list->stmts[j], &buf, scope, r);
  if (!r.error.empty())
    return false;
  for (size_t d = 0; d < buf.rank(); ++d) {
    const StmtNode &l = *pl.nest.loops[pl.dims[d]];
    for (const Stmt &other : pl.nest.loops)
      if (uses(l.min, other->var.get()) || uses(l.extent, other->var.get()))
        return false; // a triangular range: not a box
    Interval lo = boundsOf(l.min, scope), ext = boundsOf(l.extent, scope);
    if (!lo.bounded() || !ext.bounded() || !proveLE(lo.max, r.dims[d].min) ||
        !proveLE(r.dims[d].max, simplify(lo.min + ext.min - intImm(1))))
      return false;
  }
  return true;
}

} // namespace

llvm::Error applyComputeInline(LoopFunction &f, const Step &step) {
  const std::string &name = step.args[0];
  llvm::Expected<Producer> p = findProducer(f, name);
  if (!p)
    return stepError(step, llvm::toString(p.takeError()));
  const BufferNode *b = p->buffer.get();
  Stmt nest = p->nest();
  if (countLoads(nest, b))
    return stepError(step, "%" + name + " is read by its own producer (a reduction)");
  if (size_t n = countStores(nest, b); n != 1)
    return stepError(step, "%" + name + " has " + std::to_string(n) +
                               " stores; compute_inline needs exactly one");
  llvm::Expected<ProducerLoops> pl = producerLoops(*p);
  if (!pl)
    return stepError(step, llvm::toString(pl.takeError()));
  if (pl->nest.body->kind != StmtKind::Store || !pl->nest.guards.empty())
    return stepError(step,
                     "the producer of %" + name + " is not a perfect loop nest around its store");
  if (pl->nest.loops.size() != p->buffer->rank())
    return stepError(step, "the producer of %" + name +
                               " has loops that do not index it (the store repeats)");
  if (!readsCovered(*p, *pl, f.body))
    return stepError(step, "the producer of %" + name +
                               " writes part of it, and the reads are not proven inside that part");

  std::vector<const VarNode *> vars;
  for (size_t k : pl->dims)
    vars.push_back(pl->nest.loops[k]->var.get());
  const Expr &value = pl->nest.body->value;
  std::string error;
  std::function<Expr(const Expr &)> inlineLoads = [&](const Expr &e) -> Expr {
    if (e->operands.empty())
      return e;
    std::vector<Expr> ops;
    for (const Expr &o : e->operands)
      ops.push_back(inlineLoads(o));
    if (e.kind() != ExprKind::Load || e->buffer.get() != b)
      return withOperands(e, std::move(ops));
    if (e.type().isVector()) {
      error = "%" + name + " is read with vector indices; vectorize after compute_inline";
      return e;
    }
    VarMap m;
    for (size_t d = 0; d < vars.size(); ++d)
      m[vars[d]] = ops[d].type().dtype == vars[d]->dtype ? ops[d] : cast(vars[d]->dtype, ops[d]);
    return substitute(value, m);
  };

  std::vector<Stmt> stmts;
  for (size_t j = 0; j < p->list->stmts.size(); ++j) {
    const Stmt &s = p->list->stmts[j];
    if (j != p->index)
      stmts.push_back(j > p->index && j <= p->lastReader ? mapExprs(s, inlineLoads) : s);
  }
  if (!error.empty())
    return stepError(step, error);
  Stmt list = seq(std::move(stmts));
  // Nothing refers to the buffer any more: its allocation becomes its body.
  llvm::Expected<Stmt> body = rewriteStmt(f.body, p->allocation.get(), [&](const Stmt &alloc) {
    return rewriteStmt(alloc->body, p->list.get(), [&](const Stmt &) { return list; });
  });
  if (!body)
    return stepError(step, llvm::toString(body.takeError()));
  f.body = *body;
  return llvm::Error::success();
}

} // namespace strata::loop::sched
