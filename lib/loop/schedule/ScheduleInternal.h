// Helpers shared by the schedule primitives (lib/loop/schedule). Private to this directory.
#pragma once
#include "strata/loop/Bounds.h"
#include "strata/loop/IR.h"
#include "strata/loop/Schedule.h"
#include "strata/loop/Visitor.h"

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
// Rebuilds `s` with each expression it holds (loop bounds, conditions, stored values and store
// indices, at every depth) replaced by fn(expression).
Stmt mapExprs(const Stmt &s, const std::function<Expr(const Expr &)> &fn);
// True if `e` mentions `v` / reads any buffer.
bool uses(const Expr &e, const VarNode *v);
bool hasLoad(const Expr &e);

// The loop (For) whose variable is named `name`; an error unless exactly one exists.
llvm::Expected<const StmtNode *> findLoop(const Stmt &root, const std::string &name);
// Rebuilds `root` with the loop named `name` replaced by `fn(loop)`.
using LoopRewrite = std::function<llvm::Expected<Stmt>(const Stmt &loop)>;
llvm::Expected<Stmt> rewriteLoop(const Stmt &root, const std::string &name, const LoopRewrite &fn);
// Rebuilds `root` with the statement `target` (by identity) replaced by `fn(target)`; returns
// `root` unchanged when `target` is not below it.
llvm::Expected<Stmt> rewriteStmt(const Stmt &root, const StmtNode *target, const LoopRewrite &fn);
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
llvm::Error applyComputeAt(LoopFunction &f, const Step &step);     // ComputeAt.cpp
llvm::Error applyComputeInline(LoopFunction &f, const Step &step); // ComputeInline.cpp

// Split.cpp: splits loop `name` by `factor` into `outer` and `inner` (the building block of
// split, tile, vectorize(loop, width) and unroll(loop, factor)).
llvm::Expected<Stmt> splitLoop(const Stmt &root, const Step &step, const std::string &name,
                               int64_t factor, const std::string &outer, const std::string &inner);
// Reorder.cpp: reorders the named loops of one perfect nest into the given order.
llvm::Expected<Stmt> reorderLoops(const Stmt &root, const Step &step,
                                  const std::vector<std::string> &names);

// --- Region.cpp: the part of a buffer a statement accesses.
struct Region {
  std::vector<Interval> dims; // per dimension, over every access seen so far
  bool accessed = false, loaded = false, stored = false;
  // Accesses whose bounds differ by a non-constant combine with min/max instead of failing.
  bool mergeSymbolic = false;
  std::string error;
};
// Adds every access of `b` in `s` to `r`: loops inside `s` range over their extents, variables
// not in `scope` stay symbolic.
void collectRegion(const Stmt &s, const BufferNode *b, const BoundsScope &scope, Region &r);
// The bounds of the loops enclosing `target` (false if it is not below `s`).
bool enclosingScope(const Stmt &s, const StmtNode *target, BoundsScope &scope);
// The `allocate` of the buffer named `name` below `s`, or null.
Stmt findAllocation(const Stmt &s, const std::string &name);
// a - b with the terms of both sums collected, so that (x * 4 + y + 1) - x * 4 gives y + 1.
Expr difference(const Expr &a, const Expr &b);
// Rewrites accesses of `from` into accesses of `to` at index - lo (ramps and broadcasts shift
// their base); `error` is set for a vector index of another form.
class Redirect : public IRMutator {
public:
  Redirect(const BufferNode *from, Buffer to, std::vector<Expr> lo)
      : from(from), to(std::move(to)), lo(std::move(lo)) {}
  const BufferNode *from;
  Buffer to;
  std::vector<Expr> lo;
  std::string error;

protected:
  Expr visitLoad(const Expr &e) override;
  Stmt visitStore(const Stmt &s) override;

private:
  std::vector<Expr> shift(const std::vector<Expr> &idx);
};

// --- Producer.cpp: the loop nest that computes an allocated buffer (compute_at, compute_inline).
struct Producer {
  Buffer buffer;
  Stmt allocation;       // the buffer's `allocate`
  Stmt list;             // the sequence holding the producer and, after it, every reader
  size_t index = 0;      // the producer's position in list->stmts
  size_t lastReader = 0; // position of the last statement of the list that reads the buffer
  Stmt nest() const { return list->stmts[index]; }
};
// Finds the producer of the allocated buffer named `name`: the one statement of a sequence that
// holds every store to it, where every load outside it is in a later statement of that
// sequence, and nothing up to the last reader stores to a buffer the producer reads (so running
// the producer later, or its expression in place of a load, reads the same inputs).
llvm::Expected<Producer> findProducer(const LoopFunction &f, const std::string &name);
// The loops of the producer's perfect nest (Nest, guards included) that index the buffer:
// loops[dims[d]] is the loop whose variable is the index in dimension d of every store and load
// of the buffer inside the producer. An error unless every such access uses exactly these plain
// loop variables (so distinct iterations of them touch distinct elements).
struct ProducerLoops {
  Nest nest;
  std::vector<size_t> dims;
};
llvm::Expected<ProducerLoops> producerLoops(const Producer &p);
// Visits every load of `b` in `s` (including loads inside indices).
void forEachLoad(const Stmt &s, const BufferNode *b, const std::function<void(const Expr &)> &fn);
size_t countStores(const Stmt &s, const BufferNode *b);
size_t countLoads(const Stmt &s, const BufferNode *b);

} // namespace strata::loop::sched
