// The visitor and mutator bases (Visitor.h): what the default walks reach, in which order, and
// that mutation shares what it does not change.
#include "strata/loop/Visitor.h"
#include "ScheduleCheck.h"

#include <gtest/gtest.h>

using namespace strata;
using namespace strata::loop;

namespace {

using strata::loop::testing::parse;

// Loads in a loop bound, a condition, a store index (a load inside a load's index) and values.
const char *kLoads = R"(func @f(%a: f32[8] in, %ix: i64[8] in, %n: i64[1] in, %o: f32[8] out) {
  for %i in [0, %n[0]) serial {
    if %ix[%i] < 4 {
      %o[%ix[%ix[%i]]] = %a[%i] + %a[%ix[%i]]
    } else {
      %o[%i] = 0.0
    }
  }
}
)";

class Counter : public IRVisitor {
public:
  int loads = 0, vars = 0;
  std::vector<std::string> order; // buffer names of the loads, in visiting order

protected:
  void visitLoad(const Expr &e) override {
    ++loads;
    order.push_back(e->buffer->name);
    IRVisitor::visitLoad(e);
  }
  void visitVar(const Expr &) override { ++vars; }
};

TEST(VisitorTest, CountsLoadsAndVarsEverywhere) {
  LoopFunction f = parse(kLoads);
  Counter c;
  c.visit(f.body);
  // %n[0]; %ix[%i]; value %a[%i], %a[%ix[%i]]; index %ix[%ix[%i]] (two loads).
  EXPECT_EQ(c.loads, 7);
  EXPECT_EQ(c.vars, 5); // the uses of %i (%n is a buffer here)
  // Bounds, then the condition, then a store's value before its indices, parents first.
  EXPECT_EQ(c.order, (std::vector<std::string>{"n", "ix", "a", "a", "ix", "ix", "ix"}));
}

TEST(VisitorTest, SharedWalks) {
  LoopFunction f = parse(kLoads);
  int loads = 0;
  forEachExpr(f.body, [&](const Expr &e) { loads += e.kind() == ExprKind::Load; });
  EXPECT_EQ(loads, 7);
  int stores = 0;
  forEachStmt(f.body, [&](const Stmt &s) { stores += s->kind == StmtKind::Store; });
  EXPECT_EQ(stores, 2);
  Stmt cond = findStmt(f.body, [](const Stmt &s) { return s->kind == StmtKind::IfThenElse; });
  ASSERT_TRUE(cond);
  EXPECT_EQ(printExpr(cond->value), "%ix[%i] < 4");
  EXPECT_FALSE(findStmt(f.body, [](const Stmt &s) { return s->kind == StmtKind::Allocate; }));
  EXPECT_TRUE(anyExpr(cond->value, [](const Expr &e) { return e.kind() == ExprKind::Load; }));
  EXPECT_FALSE(anyExpr(cond->value, [](const Expr &e) { return e.kind() == ExprKind::Ramp; }));
}

// An evaluator: every kind needs a hook; extra arguments travel with the dispatch.
class ConstantEval : public ExprFunctor<int64_t(const Expr &, int64_t x)> {
protected:
  int64_t visitIntImm(const Expr &e, int64_t) override { return e->intValue; }
  int64_t visitFloatImm(const Expr &, int64_t) override { return -1; }
  int64_t visitVar(const Expr &, int64_t x) override { return x; }
  int64_t visitLoad(const Expr &, int64_t) override { return -1; }
  int64_t visitBinary(const Expr &e, int64_t x) override {
    int64_t a = visit(e->operands[0], x), b = visit(e->operands[1], x);
    return e.kind() == ExprKind::Add ? a + b : e.kind() == ExprKind::Mul ? a * b : -1;
  }
  int64_t visitNot(const Expr &, int64_t) override { return -1; }
  int64_t visitSelect(const Expr &, int64_t) override { return -1; }
  int64_t visitCast(const Expr &, int64_t) override { return -1; }
  int64_t visitCall(const Expr &, int64_t) override { return -1; }
  int64_t visitRamp(const Expr &, int64_t) override { return -1; }
  int64_t visitBroadcast(const Expr &, int64_t) override { return -1; }
  int64_t visitCheckIndex(const Expr &, int64_t) override { return -1; }
};

TEST(VisitorTest, FunctorDispatchesWithArguments) {
  Var x = makeVar("x");
  ConstantEval eval;
  EXPECT_EQ(eval(var(x) * intImm(3) + intImm(1), 5), 16);
}

class Substitute : public IRMutator {
public:
  Substitute(const VarNode *from, Expr to) : from_(from), to_(std::move(to)) {}

protected:
  Expr visitVar(const Expr &e) override { return e->var.get() == from_ ? to_ : e; }

private:
  const VarNode *from_;
  Expr to_;
};

TEST(VisitorTest, MutatorSharesUnchangedSubtrees) {
  Var i = makeVar("i"), x = makeVar("x");
  loop::Buffer a = makeBuffer("a", DType::I64, {intImm(8)}),
               o = makeBuffer("o", DType::I64, {intImm(8)});
  Expr untouched = load(a, {var(i)}) * intImm(2);
  Stmt keep = store(o, {var(i)}, untouched);
  Stmt change = store(o, {var(i) + intImm(1)}, untouched + var(x));
  Stmt loop = forLoop(i, intImm(0), intImm(4), ForKind::Serial, seq({keep, change}));

  Stmt out = Substitute(x.get(), intImm(7)).mutate(loop);
  ASSERT_NE(out, loop); // the path down to the use of %x is rebuilt
  EXPECT_TRUE(out->min.same(loop->min));
  EXPECT_TRUE(out->extent.same(loop->extent));
  ASSERT_EQ(out->body->stmts.size(), 2u);
  EXPECT_EQ(out->body->stmts[0], keep); // the statement without %x is the same node
  const Stmt &changed = out->body->stmts[1];
  EXPECT_NE(changed, change);
  EXPECT_TRUE(changed->indices[0].same(change->indices[0])); // unchanged operands shared too
  EXPECT_TRUE(changed->value->operands[0].same(untouched));
  EXPECT_EQ(printExpr(changed->value), "%a[%i] * 2 + 7");

  // Nothing to substitute: the very same tree comes back.
  EXPECT_EQ(Substitute(makeVar("y").get(), intImm(0)).mutate(loop), loop);
  Expr e = untouched + var(i);
  EXPECT_TRUE(Substitute(x.get(), intImm(7)).mutate(e).same(e));
}

// Replaces each store by the sequence "store; store" and removes stores to %drop.
class Duplicate : public IRMutator {
public:
  explicit Duplicate(const BufferNode *drop) : drop_(drop) {}

protected:
  Stmt visitStore(const Stmt &s) override {
    return s->buffer.get() == drop_ ? nullptr : seq({s, s});
  }

private:
  const BufferNode *drop_;
};

TEST(VisitorTest, MutatorReflattensSequences) {
  loop::Buffer o = makeBuffer("o", DType::I64, {intImm(8)}),
               d = makeBuffer("d", DType::I64, {intImm(8)});
  Stmt s1 = store(o, {intImm(0)}, intImm(1)), s2 = store(o, {intImm(1)}, intImm(2));
  Stmt gone = store(d, {intImm(0)}, intImm(3));
  Stmt list = seq({s1, gone, s2});
  ASSERT_EQ(list->stmts.size(), 3u);

  Stmt out = Duplicate(d.get()).mutate(list);
  ASSERT_EQ(out->kind, StmtKind::Seq);
  ASSERT_EQ(out->stmts.size(), 4u); // one flat sequence, the dropped store gone
  for (const Stmt &c : out->stmts)
    EXPECT_EQ(c->kind, StmtKind::Store);
  EXPECT_EQ(out->stmts[0], s1);
  EXPECT_EQ(out->stmts[1], s1);
  EXPECT_EQ(out->stmts[2], s2);
  EXPECT_EQ(out->stmts[3], s2);

  // A loop body that becomes a sequence stays a loop around one flat sequence.
  Var i = makeVar("i");
  Stmt loop = forLoop(i, intImm(0), intImm(2), ForKind::Serial, s1);
  Stmt twice = Duplicate(d.get()).mutate(loop);
  ASSERT_EQ(twice->body->kind, StmtKind::Seq);
  EXPECT_EQ(twice->body->stmts.size(), 2u);
}

} // namespace
