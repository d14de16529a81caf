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
#include "strata/loop/Simplify.h"
#include "strata/support/Error.h"

namespace strata::loop::sched {

namespace {

llvm::Error cache(LoopFunction &f, const Step &step, bool write) {
  const std::string &bufName = step.args[0], &loopName = step.args[1];
  std::string localName = step.args.size() == 3 ? step.args[2] : bufName + ".local";
  Buffer buf;
  for (const Param &p : f.params)
    if (p.isBuffer() && p.buffer->name == bufName)
      buf = p.buffer;
  if (!buf)
    if (Stmt a = findAllocation(f.body, bufName))
      buf = a->buffer;
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
    collectRegion(loop, buf.get(), {}, r);
    if (!r.error.empty())
      return makeError(r.error);
    if (!r.accessed)
      return makeError("%" + loopName + " does not access %" + bufName);
    if (write && !r.stored)
      return makeError("%" + loopName + " does not store to %" + bufName);
    if (!write && r.stored)
      return makeError("%" + loopName + " stores to %" + bufName + "; use cache_write");
    std::vector<Expr> shape, lo;
    for (size_t d = 0; d < r.dims.size(); ++d) {
      auto e = simplify(r.dims[d].max - r.dims[d].min + intImm(1)).asInt();
      if (!e)
        return makeError("the region's extent in dimension " + std::to_string(d) +
                         " is not a constant");
      shape.push_back(intImm(*e));
      lo.push_back(r.dims[d].min);
    }
    Buffer local = makeBuffer(localName, buf->dtype, shape, {}, MemoryScope::Local);
    Redirect redirect(buf.get(), local, lo);
    Stmt body = redirect.mutate(loop);
    if (!redirect.error.empty())
      return makeError(redirect.error);

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
