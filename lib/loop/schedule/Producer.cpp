// The producer of an allocated buffer: the loop nest that compute_at moves and compute_inline
// dissolves. Both need the same shape of program, found here:
//
//   allocate %B { ...; P; C1; ...; Ck; ... }
//
// where P (a loop nest, possibly below loops shared with the readers) holds every store to B and
// stores nothing else, and every load of B outside P is in C1..Ck. Moving P's work later (into a
// loop of some Ci, or into the loads themselves) is then exact provided C1..Ck store to no
// buffer that P reads.
#include "ScheduleInternal.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Visitor.h"
#include "strata/support/Error.h"

#include <set>

namespace strata::loop::sched {

namespace {

void forEachStore(const Stmt &s, const std::function<void(const StmtNode &)> &fn) {
  forEachStmt(s, [&](const Stmt &st) {
    if (st->kind == StmtKind::Store)
      fn(*st);
  });
}

// Every load in `s`, at any depth (loads inside indices too).
void loadsIn(const Stmt &s, const std::function<void(const Expr &)> &fn) {
  forEachExpr(s, [&](const Expr &e) {
    if (e.kind() == ExprKind::Load)
      fn(e);
  });
}

llvm::Error error(const llvm::Twine &msg) { return makeError(msg.str()); }

} // namespace

void forEachLoad(const Stmt &s, const BufferNode *b, const std::function<void(const Expr &)> &fn) {
  loadsIn(s, [&](const Expr &l) {
    if (l->buffer.get() == b)
      fn(l);
  });
}

size_t countStores(const Stmt &s, const BufferNode *b) {
  size_t n = 0;
  forEachStore(s, [&](const StmtNode &st) { n += st.buffer.get() == b; });
  return n;
}

size_t countLoads(const Stmt &s, const BufferNode *b) {
  size_t n = 0;
  forEachLoad(s, b, [&](const Expr &) { ++n; });
  return n;
}

llvm::Expected<Producer> findProducer(const LoopFunction &f, const std::string &name) {
  for (const Param &p : f.params)
    if (p.isBuffer() && p.buffer->name == name)
      return error("%" + name + " is a parameter; only an allocated buffer has a producer");
  Producer p;
  p.allocation = findAllocation(f.body, name);
  if (!p.allocation)
    return error("no buffer named %" + name);
  p.buffer = p.allocation->buffer;
  const BufferNode *b = p.buffer.get();
  if (countStores(p.allocation->body, b) == 0)
    return error("%" + name + " is never stored");
  auto several = [&](size_t n) {
    return error("%" + name + " is stored by " + std::to_string(n) +
                 " separate statements; one loop nest must compute it");
  };

  // Walk down towards the stores until a sequence has readers after the statement holding them.
  for (Stmt s = p.allocation->body;;) {
    if (s->kind == StmtKind::Seq) {
      std::vector<size_t> holders;
      for (size_t i = 0; i < s->stmts.size(); ++i)
        if (countStores(s->stmts[i], b))
          holders.push_back(i);
      if (holders.size() > 1)
        return several(holders.size());
      p.index = p.lastReader = holders[0];
      for (size_t j = p.index + 1; j < s->stmts.size(); ++j)
        if (countLoads(s->stmts[j], b))
          p.lastReader = j;
      if (p.lastReader > p.index) {
        p.list = s;
        break;
      }
      s = s->stmts[p.index];
    } else if (s->kind == StmtKind::Store) {
      return error("nothing after the producer of %" + name + " reads it");
    } else if (s->kind == StmtKind::IfThenElse && countStores(s->body, b) &&
               countStores(s->elseBody, b)) {
      return several(2);
    } else {
      s = countStores(s->body, b) ? s->body : s->elseBody;
    }
  }

  Stmt nest = p.nest();
  if (nest->kind != StmtKind::For)
    return error("the producer of %" + name + " is not a loop nest");
  std::string other;
  forEachStore(nest, [&](const StmtNode &st) {
    if (st.buffer.get() != b && other.empty())
      other = st.buffer->name;
  });
  if (!other.empty())
    return error("the producer of %" + name + " also stores to %" + other);
  size_t readers = countLoads(nest, b);
  for (size_t j = p.index + 1; j <= p.lastReader; ++j)
    readers += countLoads(p.list->stmts[j], b);
  if (readers != countLoads(p.allocation->body, b))
    return error("%" + name + " is read outside the statements that follow its producer");

  std::set<const BufferNode *> inputs;
  loadsIn(nest, [&](const Expr &l) {
    if (l->buffer.get() != b)
      inputs.insert(l->buffer.get());
  });
  for (size_t j = p.index + 1; j <= p.lastReader; ++j) {
    std::string clash;
    forEachStore(p.list->stmts[j], [&](const StmtNode &st) {
      if (inputs.count(st.buffer.get()) && clash.empty())
        clash = st.buffer->name;
    });
    if (!clash.empty())
      return error("%" + clash + ", which the producer of %" + name +
                   " reads, is stored before the last read of %" + name);
  }
  return p;
}

llvm::Expected<ProducerLoops> producerLoops(const Producer &p) {
  ProducerLoops pl{perfectNest(p.nest()), {}};
  const BufferNode *b = p.buffer.get();
  const std::string &name = p.buffer->name;
  auto brackets = [](const std::vector<Expr> &idx) {
    std::string s;
    for (const Expr &i : idx)
      s += (s.empty() ? "" : ", ") + printExpr(i);
    return "[" + s + "]";
  };
  std::string error;
  std::vector<Expr> first;
  forEachStore(p.nest(), [&](const StmtNode &st) {
    if (st.buffer.get() != b || !error.empty())
      return;
    if (!first.empty()) {
      for (size_t d = 0; d < first.size(); ++d)
        if (!equal(first[d], st.indices[d]))
          error = "%" + name + " is stored at " + brackets(first) + " and at " +
                  brackets(st.indices) + " by its producer";
      return;
    }
    first = st.indices;
    for (const Expr &i : first) {
      size_t k = 0;
      while (k < pl.nest.loops.size() &&
             !(i.kind() == ExprKind::Var && pl.nest.loops[k]->var.get() == i->var.get()))
        ++k;
      if (k == pl.nest.loops.size() || llvm::is_contained(pl.dims, k)) {
        error = "the store to %" + name + " at " + brackets(first) +
                " is not indexed by plain variables of its producer's perfect loop nest";
        return;
      }
      pl.dims.push_back(k);
    }
  });
  if (error.empty())
    forEachLoad(p.nest(), b, [&](const Expr &l) {
      for (size_t d = 0; d < first.size() && error.empty(); ++d)
        if (!equal(first[d], l->operands[d]))
          error = "%" + name + " is read at " + brackets(l->operands) +
                  " by its producer, which stores it at " + brackets(first);
    });
  if (!error.empty())
    return makeError(error);
  return pl;
}

} // namespace strata::loop::sched
