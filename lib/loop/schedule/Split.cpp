// split and tile.
//
// split(v, f, vo, vi) rewrites `for v in [m, m + e)` into
//   for vo in [0, ceil(e / f)) {
//     for vi in [0, f) { [if vo * f + vi < e] body[v := m + vo * f + vi] } }
// The guard is left out only when e is provably a multiple of f, so a tail never touches memory
// the original loop did not; bounds analysis (Bounds.h) proves the guarded accesses in range.
#include "ScheduleInternal.h"
#include "strata/loop/Simplify.h"

namespace strata::loop::sched {

namespace {
// e / f when e is provably a multiple of f (constants, products with a multiple, sums and
// differences of multiples), e.g. %n * 8 / 4 = %n * 2; nullopt when not proven.
std::optional<Expr> exactDiv(const Expr &e, int64_t f) {
  if (auto c = e.asInt())
    return *c % f == 0 ? std::optional(intImm(*c / f, e.type().dtype)) : std::nullopt;
  if (e.kind() == ExprKind::Mul) {
    const Expr &a = e->operands[0], &b = e->operands[1];
    if (auto q = exactDiv(b, f))
      return a * *q;
    if (auto q = exactDiv(a, f))
      return *q * b;
  }
  if (e.kind() == ExprKind::Add || e.kind() == ExprKind::Sub) {
    auto qa = exactDiv(e->operands[0], f), qb = exactDiv(e->operands[1], f);
    if (qa && qb)
      return binary(e.kind(), *qa, *qb);
  }
  return std::nullopt;
}
} // namespace

llvm::Expected<Stmt> splitLoop(const Stmt &root, const Step &step, const std::string &name,
                               int64_t factor, const std::string &outer,
                               const std::string &inner) {
  llvm::Expected<Stmt> r = rewriteLoop(root, name, [&](const Stmt &loop) -> llvm::Expected<Stmt> {
    DType dt = loop->var->dtype;
    Var vo = makeVar(outer, dt), vi = makeVar(inner, dt);
    Expr f = intImm(factor, dt);
    Expr e = loop->extent;
    std::optional<Expr> quotient = exactDiv(simplify(e), factor);
    bool divisible = quotient.has_value();
    Expr outerExtent =
        simplify(divisible ? *quotient : binary(ExprKind::FloorDiv, e + intImm(factor - 1, dt), f));
    Expr idx = var(vo) * f + var(vi);
    Expr value = loop->min.asInt() == 0 ? idx : loop->min + idx;
    Stmt body = substitute(loop->body, VarMap{{loop->var.get(), value}});
    if (!divisible)
      body = ifThenElse(binary(ExprKind::LT, idx, e), body);
    return forLoop(vo, intImm(0, dt), outerExtent, ForKind::Serial,
                   forLoop(vi, intImm(0, dt), f, ForKind::Serial, body));
  });
  if (!r)
    return stepError(step, llvm::toString(r.takeError()));
  return r;
}

llvm::Error applySplit(LoopFunction &f, const Step &step) {
  llvm::Expected<int64_t> factor = intArg(step, 1);
  if (!factor)
    return factor.takeError();
  const std::string &v = step.args[0];
  std::string outer = step.args.size() == 4 ? step.args[2] : v + ".o";
  std::string inner = step.args.size() == 4 ? step.args[3] : v + ".i";
  llvm::Expected<Stmt> body = splitLoop(f.body, step, v, *factor, outer, inner);
  if (!body)
    return body.takeError();
  f.body = *body;
  return llvm::Error::success();
}

// tile(i, j, fi, fj [, io, jo, ii, ji]) = split(i, fi, io, ii); split(j, fj, jo, ji);
// reorder(io, jo, ii, ji). j must lie in i's perfect nest.
llvm::Error applyTile(LoopFunction &f, const Step &step) {
  const std::vector<std::string> &a = step.args;
  llvm::Expected<int64_t> fi = intArg(step, 2), fj = intArg(step, 3);
  if (!fi)
    return fi.takeError();
  if (!fj)
    return fj.takeError();
  bool named = a.size() == 8;
  std::string io = named ? a[4] : a[0] + ".o", jo = named ? a[5] : a[1] + ".o";
  std::string ii = named ? a[6] : a[0] + ".i", ji = named ? a[7] : a[1] + ".i";
  llvm::Expected<Stmt> s = splitLoop(f.body, step, a[0], *fi, io, ii);
  if (!s)
    return s.takeError();
  s = splitLoop(*s, step, a[1], *fj, jo, ji);
  if (!s)
    return s.takeError();
  s = reorderLoops(*s, step, {io, jo, ii, ji});
  if (!s)
    return s.takeError();
  f.body = *s;
  return llvm::Error::success();
}

} // namespace strata::loop::sched
