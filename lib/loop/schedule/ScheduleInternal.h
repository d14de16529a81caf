// Helpers shared by the schedule primitives (lib/loop/schedule). Private to this directory.
#pragma once
#include "strata/loop/IR.h"
#include "strata/loop/Schedule.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace strata::loop::sched {

// --- Substitute.cpp
using VarMap = std::map<const VarNode *, Expr>;
// Replaces every use of a mapped variable; unchanged subtrees stay shared.
Expr substitute(const Expr &e, const VarMap &m);
Stmt substitute(const Stmt &s, const VarMap &m);
// True if `e` mentions `v` / reads any buffer.
bool uses(const Expr &e, const VarNode *v);
bool hasLoad(const Expr &e);

// The loop (For) whose variable is named `name`; an error unless exactly one exists.
llvm::Expected<const StmtNode *> findLoop(const Stmt &root, const std::string &name);
// Rebuilds `root` with the loop named `name` replaced by `fn(loop)`.
using LoopRewrite = std::function<llvm::Expected<Stmt>(const Stmt &loop)>;
llvm::Expected<Stmt> rewriteLoop(const Stmt &root, const std::string &name, const LoopRewrite &fn);
// A For node with a new body (kind, bounds and variable kept).
Stmt withBody(const StmtNode &loop, Stmt body);
Stmt withKind(const StmtNode &loop, ForKind kind);

// A perfect nest starting at a loop: loops[0] contains loops[1] ... directly or through guards
// (`if` without else whose condition reads no buffer); `guards` are those conditions outermost
// first, `body` what the innermost loop's guards enclose.
struct Nest {
  std::vector<Stmt> loops;
  std::vector<Expr> guards;
  Stmt body;
};
// Walks down from `loop` while the next statement is a loop or a guard, collecting at most
// `maxLoops` loops. Guards after the last loop are harmless: rebuilding puts them back in place.
Nest perfectNest(const Stmt &loop, size_t maxLoops = SIZE_MAX);
// Rebuilds a nest: loops outermost first, then the guards (nested in order), then the body.
Stmt buildNest(const std::vector<Stmt> &loops, const std::vector<Expr> &guards, const Stmt &body);

// "schedule: split(i, 8, io, ii): MESSAGE"
llvm::Error stepError(const Step &step, const llvm::Twine &msg);
llvm::Expected<int64_t> intArg(const Step &step, size_t i);

// --- the primitives; each rewrites f.body (applyStep verifies and commits).
llvm::Error applySplit(LoopFunction &f, const Step &step);     // Split.cpp
llvm::Error applyTile(LoopFunction &f, const Step &step);      // Split.cpp
llvm::Error applyReorder(LoopFunction &f, const Step &step);   // Reorder.cpp
llvm::Error applyFuse(LoopFunction &f, const Step &step);      // Reorder.cpp
llvm::Error applyVectorize(LoopFunction &f, const Step &step); // Annotate.cpp
llvm::Error applyUnroll(LoopFunction &f, const Step &step);    // Annotate.cpp
llvm::Error applyParallel(LoopFunction &f, const Step &step);  // Annotate.cpp
llvm::Error applyCacheRead(LoopFunction &f, const Step &step); // Cache.cpp
llvm::Error applyCacheWrite(LoopFunction &f, const Step &step);

// Split.cpp: splits loop `name` by `factor` into `outer` and `inner` (the building block of
// split, tile, vectorize(loop, width) and unroll(loop, factor)).
llvm::Expected<Stmt> splitLoop(const Stmt &root, const Step &step, const std::string &name,
                               int64_t factor, const std::string &outer, const std::string &inner);
// Reorder.cpp: reorders the named loops of one perfect nest into the given order.
llvm::Expected<Stmt> reorderLoops(const Stmt &root, const Step &step,
                                  const std::vector<std::string> &names);

} // namespace strata::loop::sched
