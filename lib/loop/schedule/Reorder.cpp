// reorder and fuse.
//
// Neither checks data dependences: like Halide's and TVM's, these primitives trust the caller
// (the default schedule applies them to loops it knows are independent, or to reductions whose
// per-element accumulation order they keep).
#include "ScheduleInternal.h"
#include "strata/loop/Simplify.h"
#include "strata/support/Error.h"

#include <algorithm>
#include <set>

namespace strata::loop::sched {

llvm::Expected<Stmt> reorderLoops(const Stmt &root, const Step &step,
                                  const std::vector<std::string> &names) {
  std::set<std::string> unique(names.begin(), names.end());
  if (unique.size() != names.size())
    return stepError(step, "a loop is named twice");
  std::vector<const StmtNode *> loops;
  for (const std::string &n : names) {
    llvm::Expected<const StmtNode *> l = findLoop(root, n);
    if (!l)
      return stepError(step, llvm::toString(l.takeError()));
    loops.push_back(*l);
  }
  // The outermost named loop is the one whose perfect nest holds all the others.
  for (const StmtNode *top : loops) {
    llvm::Expected<Stmt> r = rewriteLoop(root, top->var->name, [&](const Stmt &loop)
                                                                   -> llvm::Expected<Stmt> {
      Nest full = perfectNest(loop);
      std::vector<size_t> pos;
      for (size_t i = 0; i < full.loops.size(); ++i)
        if (unique.count(full.loops[i]->var->name))
          pos.push_back(i);
      if (pos.size() != names.size())
        return Stmt(); // not this one
      Nest nest = perfectNest(loop, pos.back() + 1);
      std::vector<Stmt> order = nest.loops;
      for (size_t k = 0; k < pos.size(); ++k)
        order[pos[k]] = *std::find_if(nest.loops.begin(), nest.loops.end(),
                                      [&](const Stmt &l) { return l->var->name == names[k]; });
      // A loop's bounds may only mention loops that stay outside it.
      for (size_t p = 0; p < order.size(); ++p)
        for (size_t q = p; q < order.size(); ++q)
          if (uses(order[p]->min, order[q]->var.get()) ||
              uses(order[p]->extent, order[q]->var.get()))
            return stepError(step, "the bounds of %" + order[p]->var->name + " depend on %" +
                                       order[q]->var->name);
      return buildNest(order, nest.guards, nest.body);
    });
    if (!r)
      return r.takeError();
    if (*r)
      return *r;
  }
  return stepError(step, "the loops are not perfectly nested");
}

llvm::Error applyReorder(LoopFunction &f, const Step &step) {
  llvm::Expected<Stmt> s = reorderLoops(f.body, step, step.args);
  if (!s)
    return s.takeError();
  f.body = *s;
  return llvm::Error::success();
}

// fuse(outer, inner [, fused]): `for o { for i { B } }` -> `for x in [0, eo * ei) { B[o :=
// mo + floordiv(x, ei), i := mi + floormod(x, ei)] }`, keeping the outer loop's kind (fusing two
// parallel loops gives one parallel loop of more work items).
llvm::Error applyFuse(LoopFunction &f, const Step &step) {
  const std::string &outer = step.args[0], &inner = step.args[1];
  std::string fused = step.args.size() == 3 ? step.args[2] : outer + "." + inner;
  llvm::Expected<Stmt> s = rewriteLoop(f.body, outer, [&](const Stmt &o) -> llvm::Expected<Stmt> {
    const Stmt &i = o->body;
    if (i->kind != StmtKind::For || i->var->name != inner)
      return makeError("%" + inner + " is not the whole body of %" + outer);
    if (uses(i->min, o->var.get()) || uses(i->extent, o->var.get()))
      return makeError("the bounds of %" + inner + " depend on %" + outer);
    DType dt = o->var->dtype;
    Var x = makeVar(fused, dt);
    Expr ov = binary(ExprKind::FloorDiv, var(x), i->extent);
    Expr iv = binary(ExprKind::FloorMod, var(x), i->extent);
    if (o->min.asInt() != 0)
      ov = o->min + ov;
    if (i->min.asInt() != 0)
      iv = i->min + iv;
    Stmt body = substitute(i->body, VarMap{{o->var.get(), ov}, {i->var.get(), iv}});
    return forLoop(x, intImm(0, dt), simplify(o->extent * i->extent), o->forKind, body);
  });
  if (!s)
    return stepError(step, llvm::toString(s.takeError()));
  f.body = *s;
  return llvm::Error::success();
}

} // namespace strata::loop::sched
