// Deliberate miscompiles for testing strata bisect (see FaultInjection.h).
#include "strata/driver/FaultInjection.h"
#include "strata/support/Error.h"

#include "strata/loop/Visitor.h"

#include <functional>

namespace strata::driver {

std::string FaultInjection::text() const {
  switch (rung) {
  case Rung::None:
    return "";
  case Rung::GraphPass:
    return "graph-pass:" + name;
  case Rung::Kernel:
    return "kernel:" + name;
  case Rung::Schedule:
    return "schedule:" + name;
  case Rung::LlvmPass:
    return "llvm-pass:" + name;
  }
  return "";
}

llvm::Expected<FaultInjection> parseFaultInjection(llvm::StringRef spec) {
  auto [rung, name] = spec.split(':');
  FaultInjection f;
  f.name = name.trim().str();
  if (rung == "graph-pass")
    f.rung = FaultInjection::Rung::GraphPass;
  else if (rung == "kernel")
    f.rung = FaultInjection::Rung::Kernel;
  else if (rung == "schedule")
    f.rung = FaultInjection::Rung::Schedule;
  else if (rung == "llvm-pass")
    f.rung = FaultInjection::Rung::LlvmPass;
  if (f.rung == FaultInjection::Rung::None || f.name.empty())
    return makeError("--inject-fault '" + spec.str() +
                     "': expected graph-pass:PASS, kernel:KERNEL, schedule:STEP or "
                     "llvm-pass:PASS");
  if (f.rung == FaultInjection::Rung::Schedule && f.name.find('(') != std::string::npos) {
    auto steps = loop::parseSchedule(f.name);
    if (!steps)
      return makeError("--inject-fault '" + spec.str() + "': " + llvm::toString(steps.takeError()));
    if (steps->size() != 1)
      return makeError("--inject-fault '" + spec.str() + "': expected one schedule step");
    f.name = loop::printStep(steps->front()); // the canonical text steps are compared in
  }
  return f;
}

bool perturbLargestConstant(Graph &g) {
  Op *best = nullptr;
  int64_t bestElements = -1;
  for (Op &op : g.ops()) {
    if (op.kind() != OpKind::Constant || !isFloat(op.result()->type().dtype))
      continue;
    const Tensor &t = op.attr("value").getTensor();
    if (t.valid() && t.numElements() > bestElements) {
      best = &op;
      bestElements = t.numElements();
    }
  }
  if (!best)
    return false;
  // A new tensor: the old one's data may be shared with other graphs.
  Tensor t = best->attr("value").getTensor().clone();
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, t.getDouble(i) * 1.5 + 0.25);
  best->setAttr("value", std::move(t));
  return true;
}

namespace {

bool isResult(const loop::LoopFunction &f, const loop::BufferNode *b) {
  for (const loop::Param &p : f.params)
    if (p.isBuffer() && p.buffer.get() == b &&
        (p.role == loop::ParamRole::Out || p.role == loop::ParamRole::InOut))
      return true;
  return false;
}

// `s` with `target` (a store) replaced by `replacement`; the rest shared.
loop::Stmt replaceStmt(const loop::Stmt &s, const loop::StmtNode *target,
                       const loop::Stmt &replacement) {
  using loop::StmtKind;
  if (!s)
    return s;
  if (s.get() == target)
    return replacement;
  switch (s->kind) {
  case StmtKind::Store:
    return s;
  case StmtKind::For:
    return loop::forLoop(s->var, s->min, s->extent, s->forKind,
                         replaceStmt(s->body, target, replacement));
  case StmtKind::Allocate:
    return loop::allocate(s->buffer, replaceStmt(s->body, target, replacement));
  case StmtKind::IfThenElse:
    return loop::ifThenElse(s->value, replaceStmt(s->body, target, replacement),
                            replaceStmt(s->elseBody, target, replacement));
  case StmtKind::Seq: {
    std::vector<loop::Stmt> stmts;
    for (const loop::Stmt &c : s->stmts)
      stmts.push_back(replaceStmt(c, target, replacement));
    return loop::seq(std::move(stmts));
  }
  }
  return s;
}

} // namespace

bool perturbLastResultStore(loop::LoopFunction &f, const std::string &loopName) {
  loop::Stmt scope = f.body;
  if (!loopName.empty())
    if (loop::Stmt l = loop::findStmt(f.body, [&](const loop::Stmt &s) {
          return s->kind == loop::StmtKind::For && s->var->name == loopName;
        }))
      scope = l;
  const loop::StmtNode *last = nullptr;
  loop::forEachStmt(scope, [&](const loop::Stmt &s) {
    if (s->kind == loop::StmtKind::Store && isResult(f, s->buffer.get()))
      last = s.get();
  });
  if (!last)
    return false;
  loop::Type t = last->value.type();
  loop::Expr one = isFloat(t.dtype) ? loop::floatImm(1.0, t.dtype) : loop::intImm(1, t.dtype);
  if (t.isVector())
    one = loop::broadcast(one, t.lanes);
  loop::Stmt changed = loop::store(last->buffer, last->indices, last->value + one);
  f.body = replaceStmt(f.body, last, changed);
  return true;
}

int64_t faultyStep(const FaultInjection &fault, const loop::Schedule &s) {
  if (fault.rung != FaultInjection::Rung::Schedule)
    return -1;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i].primitive == fault.name || loop::printStep(s[i]) == fault.name)
      return static_cast<int64_t>(i);
  return -1;
}

} // namespace strata::driver
