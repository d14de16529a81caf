// hoist-loop-invariants: an op of a loop's body that reads only the loop's captures, constants
// and other such ops computes the same value in every iteration: it moves before the loop, and
// the body reads its result as a new capture (graph/ControlFlow.h's layout: the capture is
// appended to the loop's operands and to the body's inputs). Ops are pure, so computing one
// before a loop that runs no iteration changes no result. Ops with regions stay, and so do ops
// defining a data-dependent size or sized by one the body decides.
#include "strata/graph/Clone.h"
#include "strata/graph/ControlFlow.h"
#include "strata/graph/ValueSymbols.h"
#include "strata/graph/Walk.h"
#include "strata/graph/passes/Passes.h"

#include <set>
#include <unordered_set>

namespace strata {
namespace {

int64_t hoistFrom(Op &loop) {
  auto captures = firstCapture(loop);
  if (!captures) {
    llvm::consumeError(captures.takeError());
    return 0;
  }
  Graph &body = loop.region(0);
  Graph &parent = *loop.parentGraph();
  // Body values computed the same in every iteration, and their values before the loop (body
  // input i binds operand i).
  ValueMap outside;
  for (unsigned i = *captures; i < body.numInputs() && i < loop.numOperands(); ++i)
    outside[body.input(i)] = loop.operand(i);
  std::vector<Op *> hoisted, constantCopies;
  // Sizes the body decides in each iteration: an op defining one, or whose result is sized by
  // one (an expand to a size read from data), stays.
  const std::set<std::string> decided = sizesDecidedIn(body);
  auto sizedByBody = [&](const Op &op) {
    for (unsigned r = 0; r < op.numResults(); ++r)
      for (const Dim &d : op.result(r)->type().dims)
        if (readsAnyOf(d, decided))
          return true;
    return false;
  };
  for (Op &op : body.ops()) {
    if (op.numRegions() != 0 || !dataDependentDims(op).empty() || sizedByBody(op))
      continue;
    bool invariant = true;
    for (Value *v : op.operands())
      invariant &= outside.count(v) != 0;
    if (!invariant)
      continue;
    // A constant is copied out when an op moving out reads it; it stays for the body's others.
    Op *copy = cloneOp(parent, op, outside);
    parent.moveBefore(copy, &loop);
    if (op.kind() == OpKind::Constant)
      constantCopies.push_back(copy);
    else
      hoisted.push_back(&op);
  }
  // Each hoisted result the body still reads becomes a capture.
  std::unordered_set<Op *> moving(hoisted.begin(), hoisted.end());
  for (Op *op : hoisted)
    for (unsigned r = 0; r < op->numResults(); ++r) {
      Value *inner = op->result(r);
      bool readByRest = inner->isGraphOutput();
      for (const Use &u : inner->uses())
        readByRest |= !moving.count(u.user);
      if (!readByRest)
        continue;
      Value *captured = outside.at(inner);
      loop.addOperand(captured);
      Value *in = body.addInput(captured->type(), inner->name());
      std::vector<Use> uses = inner->uses();
      for (const Use &u : uses)
        if (!moving.count(u.user))
          u.user->setOperand(u.operandIndex, in);
      for (unsigned o = 0; o < body.numOutputs(); ++o)
        if (body.output(o) == inner)
          body.setOutput(o, in);
    }
  // The moved ops are now read only by each other: erase users first.
  for (auto it = hoisted.rbegin(); it != hoisted.rend(); ++it)
    body.eraseOp(*it);
  // Copied constants no moved op reads.
  for (Op *c : constantCopies)
    if (!c->result()->hasUses())
      parent.eraseOp(c);
  return static_cast<int64_t>(hoisted.size());
}

class HoistLoopInvariantsPass final : public Pass {
public:
  std::string_view name() const override { return "hoist-loop-invariants"; }
  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    int64_t moved = 0;
    // Inner loops first: what leaves an inner loop may then leave the outer one.
    forEachGraph(g, [&](Graph &graph) {
      for (Op *op : graph.opList())
        if (op->kind() == OpKind::Loop)
          moved += hoistFrom(*op);
    });
    if (moved)
      ctx.stats.add("hoist-loop-invariants.hoisted", moved);
    return moved > 0;
  }
};

} // namespace

std::unique_ptr<Pass> createHoistLoopInvariantsPass() {
  return std::make_unique<HoistLoopInvariantsPass>();
}

} // namespace strata
