// Walks over the loop IR, after Halide's IRVisitor/IRMutator and TVM's ExprFunctor/StmtFunctor
// (docs/loop-ir.md, "Visitors and mutators"). One dispatch on the node kind lives here, so an
// analysis or a pass overrides the kinds it cares about and inherits the walk over the rest.
//
// - ExprFunctor<R(const Expr &, Args...)>, StmtFunctor<R(const Stmt &, Args...)>: visit(n, args)
//   calls the hook of n's kind and returns its result. Every hook is pure virtual, so an evaluator
//   (interpreter, bounds, code generation, printer) handles every kind, and a new kind fails to
//   compile until each evaluator does. The binary kinds (arithmetic, bitwise, comparisons, && and
//   ||) share visitBinary; e.kind() tells them apart. `n` must not be null.
// - IRVisitor: a read-only walk. Each default hook visits the node's children, in order, and does
//   nothing else; null children (an absent else branch) are skipped.
// - IRMutator: a rebuilding walk. mutate(n) returns the new node (null stays null). Each default
//   hook mutates the children in order and rebuilds the node only if one of them changed, by
//   pointer identity; otherwise it returns the node itself, so unchanged subtrees stay shared
//   (as withOperands does). A sequence is rebuilt with seq(), which re-flattens a child that
//   became a sequence and drops one that became null.
//
// Children, in the order both walks take them: an expression's operands (a load's indices); a
// For's min, extent, body; a Store's value, then its indices (Halide and TVM visit the stored
// value first too); an Allocate's body (buffer shapes and strides belong to the buffer and are
// not visited); an IfThenElse's condition, then branch, else branch; a Seq's statements.
//
// Overriding visit() / mutate() themselves acts on every node, before or after its hook (a search
// that stops early, a rewrite applied to each rebuilt node). A subclass that overrides one
// overload of visit or mutate hides the other: add `using IRVisitor::visit;`.
#pragma once
#include "strata/loop/IR.h"

#include <functional>
#include <map>

namespace strata::loop {

template <typename F> class ExprFunctor;
template <typename F> class StmtFunctor;

template <typename R, typename... Args> class ExprFunctor<R(const Expr &, Args...)> {
public:
  virtual ~ExprFunctor() = default;
  R operator()(const Expr &e, Args... args) { return visit(e, args...); }

  virtual R visit(const Expr &e, Args... args) {
    switch (e.kind()) {
    case ExprKind::IntImm:
      return visitIntImm(e, args...);
    case ExprKind::FloatImm:
      return visitFloatImm(e, args...);
    case ExprKind::Var:
      return visitVar(e, args...);
    case ExprKind::Load:
      return visitLoad(e, args...);
    case ExprKind::Add:
    case ExprKind::Sub:
    case ExprKind::Mul:
    case ExprKind::Div:
    case ExprKind::Mod:
    case ExprKind::FloorDiv:
    case ExprKind::FloorMod:
    case ExprKind::Min:
    case ExprKind::Max:
    case ExprKind::BitAnd:
    case ExprKind::BitOr:
    case ExprKind::BitXor:
    case ExprKind::Shl:
    case ExprKind::Shr:
    case ExprKind::EQ:
    case ExprKind::NE:
    case ExprKind::LT:
    case ExprKind::LE:
    case ExprKind::GT:
    case ExprKind::GE:
    case ExprKind::And:
    case ExprKind::Or:
      return visitBinary(e, args...);
    case ExprKind::Not:
      return visitNot(e, args...);
    case ExprKind::Select:
      return visitSelect(e, args...);
    case ExprKind::Cast:
      return visitCast(e, args...);
    case ExprKind::Call:
      return visitCall(e, args...);
    case ExprKind::Ramp:
      return visitRamp(e, args...);
    case ExprKind::Broadcast:
      return visitBroadcast(e, args...);
    case ExprKind::CheckIndex:
      return visitCheckIndex(e, args...);
    }
    __builtin_unreachable(); // every kind is listed above (-Wswitch keeps it so)
  }

protected:
  virtual R visitIntImm(const Expr &e, Args... args) = 0;
  virtual R visitFloatImm(const Expr &e, Args... args) = 0;
  virtual R visitVar(const Expr &e, Args... args) = 0;
  virtual R visitLoad(const Expr &e, Args... args) = 0;
  virtual R visitBinary(const Expr &e, Args... args) = 0;
  virtual R visitNot(const Expr &e, Args... args) = 0;
  virtual R visitSelect(const Expr &e, Args... args) = 0;
  virtual R visitCast(const Expr &e, Args... args) = 0;
  virtual R visitCall(const Expr &e, Args... args) = 0;
  virtual R visitRamp(const Expr &e, Args... args) = 0;
  virtual R visitBroadcast(const Expr &e, Args... args) = 0;
  virtual R visitCheckIndex(const Expr &e, Args... args) = 0;
};

template <typename R, typename... Args> class StmtFunctor<R(const Stmt &, Args...)> {
public:
  virtual ~StmtFunctor() = default;
  R operator()(const Stmt &s, Args... args) { return visit(s, args...); }

  virtual R visit(const Stmt &s, Args... args) {
    switch (s->kind) {
    case StmtKind::For:
      return visitFor(s, args...);
    case StmtKind::Store:
      return visitStore(s, args...);
    case StmtKind::Allocate:
      return visitAllocate(s, args...);
    case StmtKind::IfThenElse:
      return visitIfThenElse(s, args...);
    case StmtKind::Seq:
      return visitSeq(s, args...);
    }
    __builtin_unreachable(); // every kind is listed above (-Wswitch keeps it so)
  }

protected:
  virtual R visitFor(const Stmt &s, Args... args) = 0;
  virtual R visitStore(const Stmt &s, Args... args) = 0;
  virtual R visitAllocate(const Stmt &s, Args... args) = 0;
  virtual R visitIfThenElse(const Stmt &s, Args... args) = 0;
  virtual R visitSeq(const Stmt &s, Args... args) = 0;
};

class IRVisitor : public ExprFunctor<void(const Expr &)>, public StmtFunctor<void(const Stmt &)> {
public:
  using ExprVisitor = ExprFunctor<void(const Expr &)>;
  using StmtVisitor = StmtFunctor<void(const Stmt &)>;
  using ExprVisitor::operator();
  using StmtVisitor::operator();

  void visit(const Expr &e) override; // null: nothing to visit
  void visit(const Stmt &s) override;

protected:
  // Immediates and variables have no children.
  void visitIntImm(const Expr &e) override;
  void visitFloatImm(const Expr &e) override;
  void visitVar(const Expr &e) override;
  // The others visit their operands (visitOperands).
  void visitLoad(const Expr &e) override;
  void visitBinary(const Expr &e) override;
  void visitNot(const Expr &e) override;
  void visitSelect(const Expr &e) override;
  void visitCast(const Expr &e) override;
  void visitCall(const Expr &e) override;
  void visitRamp(const Expr &e) override;
  void visitBroadcast(const Expr &e) override;
  void visitCheckIndex(const Expr &e) override;
  void visitOperands(const Expr &e);

  void visitFor(const Stmt &s) override;
  void visitStore(const Stmt &s) override;
  void visitAllocate(const Stmt &s) override;
  void visitIfThenElse(const Stmt &s) override;
  void visitSeq(const Stmt &s) override;
};

class IRMutator : protected ExprFunctor<Expr(const Expr &)>,
                  protected StmtFunctor<Stmt(const Stmt &)> {
public:
  virtual Expr mutate(const Expr &e); // null stays null
  virtual Stmt mutate(const Stmt &s);

protected:
  using ExprMutator = ExprFunctor<Expr(const Expr &)>;
  using StmtMutator = StmtFunctor<Stmt(const Stmt &)>;
  using ExprMutator::visit;
  using StmtMutator::visit;

  // Immediates and variables are returned as they are.
  Expr visitIntImm(const Expr &e) override;
  Expr visitFloatImm(const Expr &e) override;
  Expr visitVar(const Expr &e) override;
  // The others are mutateOperands(e).
  Expr visitLoad(const Expr &e) override;
  Expr visitBinary(const Expr &e) override;
  Expr visitNot(const Expr &e) override;
  Expr visitSelect(const Expr &e) override;
  Expr visitCast(const Expr &e) override;
  Expr visitCall(const Expr &e) override;
  Expr visitRamp(const Expr &e) override;
  Expr visitBroadcast(const Expr &e) override;
  Expr visitCheckIndex(const Expr &e) override;
  // e with every operand mutated, in order (withOperands: e itself when none changed).
  Expr mutateOperands(const Expr &e);

  Stmt visitFor(const Stmt &s) override;
  Stmt visitStore(const Stmt &s) override;
  Stmt visitAllocate(const Stmt &s) override;
  Stmt visitIfThenElse(const Stmt &s) override;
  Stmt visitSeq(const Stmt &s) override;

  // `s` with new children, or `s` itself when every child is pointer-identical to its old one;
  // for hooks that mutate some children themselves.
  static Stmt rebuildFor(const Stmt &s, Expr min, Expr extent, Stmt body);
  static Stmt rebuildStore(const Stmt &s, std::vector<Expr> indices, Expr value);
  static Stmt rebuildIfThenElse(const Stmt &s, Expr cond, Stmt thenBody, Stmt elseBody);
};

// --- walks common enough to share; each is an IRVisitor underneath.

// Calls fn on e and on every expression below it, parents before their operands.
void forEachExpr(const Expr &e, const std::function<void(const Expr &)> &fn);
// Calls fn on every expression node that `s` holds at any depth (loop bounds, conditions, stored
// values and indices), in IRVisitor order, parents before their operands.
void forEachExpr(const Stmt &s, const std::function<void(const Expr &)> &fn);
// True if pred holds for e or for an expression below it; stops at the first that does.
bool anyExpr(const Expr &e, const std::function<bool(const Expr &)> &pred);
// Calls fn on s and on every statement below it, parents first.
void forEachStmt(const Stmt &s, const std::function<void(const Stmt &)> &fn);
// The first statement in s (s included, parents first) for which pred holds, or null.
Stmt findStmt(const Stmt &s, const std::function<bool(const Stmt &)> &pred);

// --- rewrites common enough to share; each is an IRMutator underneath.

// `s` with every load from and store to a mapped buffer made on its replacement (same shape and
// strides: the caller's promise), the rest shared.
Stmt substituteBuffers(const Stmt &s, const std::map<const BufferNode *, Buffer> &to);

} // namespace strata::loop
