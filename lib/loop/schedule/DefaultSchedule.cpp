// The default schedule (docs/loop-ir.md, "Default schedule"): structural pattern matching on the
// loop IR chooses replayable steps per top-level loop nest — tile a matmul/conv-like nest, vectorize
// innermost loops along the stored buffer's unit-stride dimension, parallelize the outermost
// independent loop. Every step is chosen only when a dependence check shows it keeps results
// bit-identical; a step the primitive itself rejects is skipped, never forced.
#include "ScheduleInternal.h"

#include "strata/loop/Bounds.h"
#include "strata/loop/Schedule.h"
#include "strata/loop/Visitor.h"

#include <algorithm>
#include <map>
#include <set>

namespace strata::loop {
namespace {
using namespace sched;

struct Access {
  const BufferNode *buffer;
  const std::vector<Expr> *indices;
};

std::vector<Access> loadsIn(const Expr &e) {
  std::vector<Access> loads;
  forEachExpr(e, [&](const Expr &x) {
    if (x.kind() == ExprKind::Load)
      loads.push_back({x->buffer.get(), &x->operands});
  });
  return loads;
}

// Everything a loop body touches: stores and loads (of buffers not allocated inside it), the
// variables of loops inside it, whether it contains a loop at all.
struct BodyInfo {
  std::vector<Access> stores, loads;
  std::set<const BufferNode *> locals;
  std::set<const VarNode *> innerVars;
  bool hasLoop = false;
};

class BodyCollector : public IRVisitor {
public:
  explicit BodyCollector(BodyInfo &info) : info_(info) {}

protected:
  void visitFor(const Stmt &s) override {
    info_.hasLoop = true;
    info_.innerVars.insert(s->var.get());
    IRVisitor::visitFor(s);
  }
  void visitStore(const Stmt &s) override {
    info_.stores.push_back({s->buffer.get(), &s->indices});
    IRVisitor::visitStore(s);
  }
  void visitAllocate(const Stmt &s) override {
    info_.locals.insert(s->buffer.get());
    IRVisitor::visitAllocate(s);
  }
  void visitLoad(const Expr &e) override {
    info_.loads.push_back({e->buffer.get(), &e->operands});
    IRVisitor::visitLoad(e);
  }

private:
  BodyInfo &info_;
};

void collect(const Stmt &s, BodyInfo &info) { BodyCollector(info).visit(s); }

bool sameIndices(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i]))
      return false;
  return true;
}

// `e` is `v`, `v + c` or `c + v` with `c` free of `v` and of loops inside v's loop: distinct
// values of v then give distinct values of e.
bool injectiveIn(const Expr &e, const VarNode *v, const BodyInfo &info) {
  auto isV = [&](const Expr &x) { return x.kind() == ExprKind::Var && x->var.get() == v; };
  if (isV(e))
    return true;
  if (e.kind() != ExprKind::Add)
    return false;
  for (int side = 0; side < 2; ++side) {
    const Expr &c = e->operands[1 - side];
    if (!isV(e->operands[side]) || uses(c, v))
      continue;
    bool inner = anyExpr(c, [&](const Expr &x) {
      return x.kind() == ExprKind::Var && info.innerVars.count(x->var.get());
    });
    if (!inner)
      return true;
  }
  return false;
}

// Distinct iterations of `loop` touch disjoint elements of every buffer it stores to: every store
// and load of such a buffer has, at one dim, the same index injective in the loop variable (all
// of them at one index list, or, say, the copy and fill branches of a pad, each with loops of
// its own inside the padded dims). Then the iterations may run in any order, or at once, with
// identical results.
bool independent(const StmtNode &loop, BodyInfo *out = nullptr) {
  BodyInfo info;
  collect(loop.body, info);
  std::map<const BufferNode *, std::vector<const std::vector<Expr> *>> accesses;
  for (const Access &s : info.stores)
    if (!info.locals.count(s.buffer))
      accesses[s.buffer].push_back(s.indices);
  for (const Access &l : info.loads)
    if (auto it = accesses.find(l.buffer); it != accesses.end())
      it->second.push_back(l.indices);
  for (const auto &[buffer, lists] : accesses) {
    const std::vector<Expr> &first = *lists.front();
    bool disjoint = false;
    for (size_t d = 0; d < first.size() && !disjoint; ++d) {
      if (!injectiveIn(first[d], loop.var.get(), info))
        continue;
      disjoint = std::all_of(lists.begin(), lists.end(), [&](const std::vector<Expr> *l) {
        return l->size() == first.size() && equal((*l)[d], first[d]);
      });
    }
    if (!disjoint)
      return false;
  }
  if (out)
    *out = std::move(info);
  return true;
}

// The loop named `name`.
Stmt findLoopNamed(const Stmt &s, const std::string &name) {
  return findStmt(s,
                  [&](const Stmt &l) { return l->kind == StmtKind::For && l->var->name == name; });
}

bool isLoop(const Stmt &s) { return s->kind == StmtKind::For; }

// Roots of the loop nests: the outermost loops of the function body.
class RootCollector : public IRVisitor {
public:
  std::vector<std::string> roots;

protected:
  void visitFor(const Stmt &s) override { roots.push_back(s->var->name); } // not the loops inside
};

// Loops under `s` (itself included), outermost first; `innermost` keeps only loops without loops.
void collectLoops(const Stmt &s, std::vector<Stmt> &out, bool innermost) {
  forEachStmt(s, [&](const Stmt &l) {
    if (isLoop(l) && (!innermost || !findStmt(l->body, isLoop)))
      out.push_back(l);
  });
}

// `red` is a perfect reduction nest accumulating into one element: its body is a single store
// `O[I] = f(O[I], ...)` whose indices use none of the reduction variables.
const StmtNode *reductionStore(const Stmt &red) {
  if (!red || red->kind != StmtKind::For)
    return nullptr;
  Nest n = perfectNest(red);
  if (!n.body || n.body->kind != StmtKind::Store)
    return nullptr;
  for (const Stmt &l : n.loops)
    for (const Expr &i : n.body->indices)
      if (uses(i, l->var.get()))
        return nullptr;
  for (const Access &l : loadsIn(n.body->value))
    if (l.buffer == n.body->buffer.get() && sameIndices(*l.indices, n.body->indices))
      return n.body.get();
  return nullptr;
}

int64_t constExtent(const Stmt &loop) { return loop->extent.asInt().value_or(-1); }

// A (run-time) extent proven >= 0: two negative extents, of a nest that runs nothing, would
// multiply into a positive fused one.
bool provenNonNegative(const Expr &extent) {
  return proveLE(intImm(0, extent.type().dtype), extent);
}

// A run-time-extent loop is fused with the loop inside it for parallelism only when each fused
// iteration runs at least this many inner iterations (a run-time extent among them counts as
// enough).
constexpr int64_t kMinFusedIterationWork = 256;

class Scheduler {
public:
  Scheduler(const LoopFunction &f, const ScheduleTarget &t, std::string *why)
      : w_(f), notes_(f.notes), t_(t), why_(why) {}

  Schedule run() {
    RootCollector roots;
    roots.visit(w_.body);
    for (const std::string &root : roots.roots)
      scheduleNest(root);
    return steps_;
  }

  LoopFunction takeScheduled() { return std::move(w_); }

private:
  LoopFunction w_;              // the function with the steps so far applied
  const LoopAnnotations notes_; // lowering's, for the loops as lowered
  const ScheduleTarget &t_;
  std::string *why_;
  Schedule steps_;
  std::map<std::string, std::string> origin_; // loop made by a step -> the loop it came from
  std::set<std::string> independent_;          // original loops with independent iterations

  void note(const std::string &root, const std::string &msg) {
    if (why_)
      *why_ += "nest %" + root + ": " + msg + "\n";
  }
  bool tryStep(const std::string &root, Step s, const std::string &reason) {
    if (llvm::Error e = applyStep(w_, s)) {
      note(root, "skipped " + printStep(s) + " (" + llvm::toString(std::move(e)) + ")");
      return false;
    }
    note(root, printStep(s) + ": " + reason);
    steps_.push_back(std::move(s));
    return true;
  }
  std::string originOf(std::string name) const {
    for (auto it = origin_.find(name); it != origin_.end(); it = origin_.find(name))
      name = it->second;
    return name;
  }
  // Lowering's role for a loop (or the loop it came from), if it stated one.
  bool hasRole(const std::string &name, LoopRole r) const {
    const LoopRole *role = notes_.roleOf(originOf(name));
    return role && *role == r;
  }
  bool hasAnyRole(const Stmt &s) const {
    return findStmt(s, [&](const Stmt &l) {
             return isLoop(l) && notes_.roleOf(originOf(l->var->name));
           }) != nullptr;
  }
  void derive(const std::string &from, std::initializer_list<std::string> made) {
    for (const std::string &m : made)
      origin_[m] = from;
  }
  // Vector lanes for the first buffer `s` stores to (outside its own allocations).
  int lanesFor(const Stmt &s) const {
    BodyInfo info;
    collect(s, info);
    for (const Access &a : info.stores)
      if (!info.locals.count(a.buffer))
        return std::max<int>(1, t_.vectorBytes / static_cast<int>(dtypeSize(a.buffer->dtype)));
    return 1;
  }

  void scheduleNest(std::string root) {
    std::vector<Stmt> loops;
    collectLoops(findLoopNamed(w_.body, root), loops, false);
    for (const Stmt &l : loops)
      if (l->forKind != ForKind::Serial) {
        // A nest that lowering already shaped (a register-tiled micro-kernel) is kept as is.
        note(root, "kept: loop %" + l->var->name + " is already " +
                       std::string(forKindName(l->forKind)));
        return;
      }
    if (const NestInfo *nest = notes_.nestAt(root); nest && nest->registerTiled)
      return parallelizeRegisterTiled(root, *nest);
    for (const Stmt &l : loops)
      if (independent(*l))
        independent_.insert(l->var->name);
    root = tile(root);
    root = vectorize(root);
    parallelize(root);
  }

  // Matmul/conv-like: a perfect nest of independent loops around a body that contains a
  // (reduction) loop. The two innermost independent loops are tiled; if the body is a perfect
  // reduction nest its loops move outside the tile (each element still accumulates in the same
  // order) and the accumulator tile is cached locally. Returns the (possibly renamed) root.
  std::string tile(const std::string &root) {
    Nest n = perfectNest(findLoopNamed(w_.body, root));
    size_t r = 0; // the independent prefix of the nest: the output loops
    while (r < n.loops.size() && independent_.count(n.loops[r]->var->name) &&
           !hasRole(n.loops[r]->var->name, LoopRole::Reduction))
      ++r;
    if (r < n.loops.size() && !n.guards.empty())
      return root; // guards we cannot place relative to the reduction loop: leave the nest
    const Stmt red = r < n.loops.size() ? n.loops[r] : n.body;
    BodyInfo body;
    collect(red, body);
    if (r < 2 || (red->kind != StmtKind::For && !body.hasLoop))
      return root;
    // Where lowering stated the loops' roles, the nest is matmul/conv-like only if it says so.
    const bool annotated = hasAnyRole(findLoopNamed(w_.body, root));
    if (annotated && !findStmt(red, [&](const Stmt &l) {
          return isLoop(l) && hasRole(l->var->name, LoopRole::Reduction);
        })) {
      note(root, "not tiled: no reduction inside the output loops");
      return root;
    }
    const Stmt &a = n.loops[r - 2], &b = n.loops[r - 1];
    const std::string an = a->var->name, bn = b->var->name;
    int64_t fi = t_.tileRows, fj = t_.tileColVectors * lanesFor(red);
    int64_t ea = constExtent(a), eb = constExtent(b);
    if (ea >= 0 && ea <= fi && eb >= 0 && eb <= fj) {
      note(root, "not tiled: the output already fits one tile");
      return root;
    }
    // A dim smaller than its factor is tiled whole (an exact split, no guard).
    fi = ea >= 0 ? std::min(fi, ea) : fi;
    fj = eb >= 0 ? std::min(fj, eb) : fj;
    if (!tryStep(root, {"tile", {an, bn, std::to_string(fi), std::to_string(fj)}},
                 "matmul/conv-like nest, tile the output"))
      return root;
    derive(an, {an + ".o", an + ".i"});
    derive(bn, {bn + ".o", bn + ".i"});
    std::string newRoot = root == an ? an + ".o" : root == bn ? bn + ".o" : root;

    if (const StmtNode *acc = reductionStore(red)) {
      // Perfect reduction: reorder(r..., a.i, b.i), then stage the tile across the reduction.
      Step reorder{"reorder", {}};
      for (const Stmt &r : perfectNest(red).loops)
        reorder.args.push_back(r->var->name);
      reorder.args.push_back(an + ".i");
      reorder.args.push_back(bn + ".i");
      if (tryStep(root, reorder, "reduction loops outside the tile, order per element kept"))
        tryStep(root, {"cache_write", {acc->buffer->name, red->var->name}},
                "accumulate the tile in a local buffer");
    } else if (red->kind == StmtKind::Seq && red->stmts.size() == 2 &&
               red->stmts[0]->kind == StmtKind::Store) {
      // init; reduction: the loop nest is imperfect, so only the tile is staged locally.
      const StmtNode *acc = reductionStore(red->stmts[1]);
      const StmtNode &init = *red->stmts[0];
      bool initReadsOut = false;
      for (const Access &l : loadsIn(init.value))
        initReadsOut |= l.buffer == init.buffer.get();
      if (acc && acc->buffer == init.buffer && sameIndices(acc->indices, init.indices) &&
          !initReadsOut)
        tryStep(root, {"cache_write", {acc->buffer->name, an + ".i"}},
                "accumulate the tile in a local buffer");
    }
    return newRoot;
  }

  // Innermost loops whose iterations are independent and whose variable indexes the last,
  // unit-stride dim of everything they store: vectorize at the target's width.
  std::string vectorize(std::string root) {
    std::vector<Stmt> inner;
    collectLoops(findLoopNamed(w_.body, root), inner, true);
    for (const Stmt &l : inner) {
      BodyInfo info;
      const std::string name = l->var->name;
      if (!independent(*l, &info)) {
        note(root, "%" + name + " not vectorized: its iterations depend on each other");
        continue;
      }
      if (info.stores.empty())
        continue;
      bool contiguous = true;
      std::string strided;
      for (const Access &s : info.stores) {
        const BufferNode &buf = *s.buffer;
        bool unit = buf.rank() > 0 && buf.strides.back().asInt() == 1 &&
                    injectiveIn(s.indices->back(), l->var.get(), info);
        if (!unit && strided.empty())
          strided = buf.name;
        contiguous &= unit;
      }
      if (!contiguous) {
        note(root, "%" + name + " not vectorized: its stores into %" + strided +
                       " are not unit-stride in it");
        continue;
      }
      int lanes = lanesFor(l);
      int64_t e = constExtent(l);
      if (lanes < 2 || (e >= 0 && e < lanes)) {
        note(root, "%" + name + " not vectorized: extent below the vector width");
        continue;
      }
      if (e == lanes) {
        tryStep(root, {"vectorize", {name}}, "innermost contiguous loop");
        continue;
      }
      if (!tryStep(root, {"vectorize", {name, std::to_string(lanes)}}, "innermost contiguous loop"))
        continue;
      derive(name, {name + ".o", name + ".i"});
      if (name == root)
        root = name + ".o";
    }
    return root;
  }

  // A register-tiled micro-kernel: its structure is final; its outermost parallel axis runs in
  // parallel when the nest does enough work. (Its index arithmetic - one loop over flattened
  // output rows and channel blocks - is beyond the independence check; lowering's role says it.)
  void parallelizeRegisterTiled(const std::string &root, const NestInfo &nest) {
    const std::string what =
        "register-tiled " + nest.op + " nest, " + std::to_string(nest.work) + " multiply-adds";
    if (nest.work >= 0 && nest.work < t_.minParallelWork) {
      note(root, "kept serial: " + what);
      return;
    }
    for (const Stmt &l : perfectNest(findLoopNamed(w_.body, root)).loops) {
      int64_t e = constExtent(l);
      if (!hasRole(l->var->name, LoopRole::Parallel) || (e >= 0 && e < t_.minParallelExtent))
        continue;
      tryStep(root, {"parallel", {l->var->name}}, "outermost parallel axis of a " + what);
      return;
    }
    note(root, "kept: no parallel axis in a " + what);
  }

  // The iterations of every loop under `s` (itself included), multiplied, capped at `cap`; a
  // run-time extent counts as enough (`cap`).
  static int64_t iterationsUnder(const Stmt &s, int64_t cap) {
    std::vector<Stmt> all;
    collectLoops(s, all, false);
    int64_t work = 1;
    for (const Stmt &l : all) {
      int64_t e = constExtent(l);
      if (e < 0)
        return cap;
      work = std::min(work * std::max<int64_t>(e, 1), cap);
    }
    return work;
  }

  // The outermost loop of the root's perfect nest with independent iterations and enough of them.
  void parallelize(const std::string &root) {
    if (t_.minParallelWork > 0) {
      const int64_t work = iterationsUnder(findLoopNamed(w_.body, root), t_.minParallelWork);
      if (work < t_.minParallelWork) {
        note(root, "not parallelized: " + std::to_string(work) + " iterations in all");
        return;
      }
    }
    const std::vector<Stmt> loops = perfectNest(findLoopNamed(w_.body, root)).loops;
    for (size_t k = 0; k < loops.size(); ++k) {
      const Stmt &l = loops[k];
      if (l->forKind != ForKind::Serial)
        return;
      int64_t e = constExtent(l);
      if (!independent_.count(originOf(l->var->name)) || (e >= 0 && e < t_.minParallelExtent))
        continue;
      // A run-time extent (a batch, most often 1) may leave every core but one idle: fused with
      // the independent loop inside it (of a static extent, or a run-time one: an image's rows),
      // the parallel loop has both's iterations. Only where each of those iterations does
      // enough work that its index arithmetic (divisions the outer loop's iterations did once)
      // costs nothing.
      if (e < 0 && k + 1 < loops.size()) {
        const Stmt &inner = loops[k + 1];
        const int64_t innerExtent = constExtent(inner);
        const std::string fused = l->var->name + "." + inner->var->name;
        if (inner->forKind == ForKind::Serial && independent_.count(originOf(inner->var->name)) &&
            (innerExtent >= t_.minParallelExtent || provenNonNegative(inner->extent)) &&
            iterationsUnder(inner->body, kMinFusedIterationWork) >= kMinFusedIterationWork &&
            tryStep(root, {"fuse", {l->var->name, inner->var->name, fused}},
                    "a run-time extent with the loop inside it, for parallelism")) {
          origin_[fused] = originOf(l->var->name);
          tryStep(root, {"parallel", {fused}}, "outermost independent loop");
          return;
        }
      }
      tryStep(root, {"parallel", {l->var->name}}, "outermost independent loop");
      return;
    }
    note(root, "no loop parallelized");
  }
};

} // namespace

Schedule defaultSchedule(const LoopFunction &f, const ScheduleTarget &t, std::string *why,
                         LoopFunction *scheduled) {
  Scheduler s(f, t, why);
  Schedule steps = s.run();
  if (scheduled)
    *scheduled = s.takeScheduled();
  return steps;
}

llvm::Error applyDefaultSchedule(LoopFunction &f, const ScheduleTarget &t) {
  return applySchedule(f, defaultSchedule(f, t));
}

} // namespace strata::loop
