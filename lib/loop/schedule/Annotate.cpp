// vectorize, unroll and parallel: they set a loop's kind and leave its bounds and body alone.
//
// A vectorized or unrolled loop must have a constant extent (its width / copy count); the
// two-argument forms vectorize(v, w) and unroll(v, f) first split v by w (or f) into v.o and v.i
// and mark v.i, so any extent works (a non-multiple leaves the tail guard inside the marked loop;
// code generation masks or scalarizes it). parallel accepts any extent. How each kind becomes
// machine code (vector types, replicated bodies, parallel-for calls) is code generation's job.
#include "ScheduleInternal.h"
#include "strata/loop/Simplify.h"
#include "strata/support/Error.h"

namespace strata::loop::sched {

namespace {

llvm::Error mark(LoopFunction &f, const Step &step, ForKind kind, bool needConstantExtent) {
  std::string name = step.args[0];
  if (step.args.size() == 2) {
    llvm::Expected<int64_t> factor = intArg(step, 1);
    if (!factor)
      return factor.takeError();
    llvm::Expected<Stmt> s = splitLoop(f.body, step, name, *factor, name + ".o", name + ".i");
    if (!s)
      return s.takeError();
    f.body = *s;
    name += ".i";
  }
  llvm::Expected<Stmt> s = rewriteLoop(f.body, name, [&](const Stmt &loop) -> llvm::Expected<Stmt> {
    if (needConstantExtent && !simplify(loop->extent).asInt())
      return makeError("%" + name + " has an extent that is not a constant");
    return withKind(*loop, kind);
  });
  if (!s)
    return stepError(step, llvm::toString(s.takeError()));
  f.body = *s;
  return llvm::Error::success();
}

} // namespace

llvm::Error applyVectorize(LoopFunction &f, const Step &step) {
  return mark(f, step, ForKind::Vectorized, true);
}
llvm::Error applyUnroll(LoopFunction &f, const Step &step) {
  return mark(f, step, ForKind::Unrolled, true);
}
llvm::Error applyParallel(LoopFunction &f, const Step &step) {
  return mark(f, step, ForKind::Parallel, false);
}

} // namespace strata::loop::sched
