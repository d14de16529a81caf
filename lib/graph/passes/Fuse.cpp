// Fusion: replaces each planned group of ops (FusionRules.cpp) by one `kernel` op whose region
// holds copies of those ops and whose attributes record the decision (kind, anchor, epilogue,
// prologue: graph/Kernel.h). Kernels are closed: every value a region op reads from outside comes
// in as a kernel operand, except constants of at most kMaxKernelConstantElements elements, which
// are cloned into the region (scalars such as a relu's 0 belong to the kernel's code).
#include "FusionRules.h"

#include "strata/graph/passes/Passes.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace strata {
namespace {

bool isSmallConstant(const Value *v) {
  const Op *def = v->definingOp();
  if (!def || def->kind() != OpKind::Constant)
    return false;
  std::optional<int64_t> n = v->type().staticNumElements();
  return n && *n <= kMaxKernelConstantElements;
}

// Reorders the top-level ops topologically, keeping the current order wherever it is already
// valid. Needed after forming a kernel that also exports an early value: the kernel sits where
// its last op was, and users of the early value may have come before it.
void restoreTopologicalOrder(Graph &g) {
  std::vector<Op *> ops = g.opList();
  std::unordered_map<const Op *, size_t> position, pending;
  for (size_t i = 0; i < ops.size(); ++i)
    position[ops[i]] = i;
  auto topLevel = [&](const Op *user) {
    while (user->parentGraph() != &g)
      user = user->parentGraph()->parentOp();
    return user;
  };
  std::vector<std::vector<const Op *>> users(ops.size());
  for (Op *op : ops)
    for (unsigned r = 0; r < op->numResults(); ++r)
      for (const Use &u : op->result(r)->uses()) {
        const Op *user = topLevel(u.user);
        if (user != op) {
          users[position[op]].push_back(user);
          ++pending[user];
        }
      }
  std::set<size_t> ready; // by original position: stable
  for (size_t i = 0; i < ops.size(); ++i)
    if (!pending[ops[i]])
      ready.insert(i);
  std::vector<Op *> order;
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(ops[i]);
    for (const Op *u : users[i])
      if (--pending[u] == 0)
        ready.insert(position[u]);
  }
  if (order.size() != ops.size() || order == ops)
    return; // unchanged (a cycle cannot happen: the planner refuses those merges)
  for (size_t i = order.size() - 1; i-- > 0;)
    g.moveBefore(order[i], order[i + 1]);
}

class FusePass : public Pass {
public:
  std::string_view name() const override { return "fuse"; }

  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    ctx.stats.add("fuse.ops_before", static_cast<int64_t>(g.numOps()));
    std::vector<fusion::FusionRemark> remarks;
    std::vector<fusion::PlannedKernel> plan = fusion::planKernels(g, ctx.options, &remarks);
    for (const fusion::FusionRemark &r : remarks)
      ctx.remarks.push_back({"fuse", r.producer->location(),
                             "'" + std::string(r.producer->opName()) + "' not fused with '" +
                                 std::string(r.consumer->opName()) + "' (node " +
                                 r.consumer->location() + "): " + r.reason});
    std::set<Op *> clonedConstants;
    for (const fusion::PlannedKernel &k : plan) {
      formKernel(g, k, clonedConstants);
      ctx.stats.add("fuse.kernels");
      ctx.stats.add("fuse.kernels." + std::string(enumName(k.kind)));
      ctx.stats.add("fuse.ops_fused", static_cast<int64_t>(k.ops.size()));
    }
    if (!plan.empty()) {
      restoreTopologicalOrder(g);
      eraseDeadConstants(g, clonedConstants);
    }
    ctx.stats.add("fuse.ops_after", static_cast<int64_t>(g.numOps()));
    return !plan.empty();
  }

private:
  static void formKernel(Graph &g, const fusion::PlannedKernel &k,
                         std::set<Op *> &clonedConstants) {
    std::unordered_set<const Op *> inGroup(k.ops.begin(), k.ops.end());
    std::unordered_set<const Value *> graphOutputs;
    for (unsigned i = 0; i < g.numOutputs(); ++i)
      graphOutputs.insert(g.output(i));

    // Operands: outside values in first-use order (small constants are cloned instead).
    std::vector<Value *> operands;
    std::unordered_map<const Value *, unsigned> operandIndex;
    for (const Op *op : k.ops)
      for (Value *v : op->operands())
        if (!(v->definingOp() && inGroup.count(v->definingOp())) && !isSmallConstant(v) &&
            operandIndex.emplace(v, operands.size()).second)
          operands.push_back(v);

    // Results: group values used outside the group or returned by the graph.
    std::vector<Value *> exported;
    for (const Op *op : k.ops)
      for (unsigned r = 0; r < op->numResults(); ++r) {
        Value *v = op->result(r);
        bool outside = graphOutputs.count(v) != 0;
        for (const Use &u : v->uses())
          outside = outside || !inGroup.count(u.user);
        if (outside)
          exported.push_back(v);
      }

    std::vector<TensorType> resultTypes;
    for (const Value *v : exported)
      resultTypes.push_back(v->type());
    Op *kernel = g.createOp(OpKind::Kernel, operands, resultTypes, {}, k.ops.back());
    kernel->setLocation(k.ops.back()->location());

    Graph &region = kernel->addRegion();
    region.setName(std::string(enumName(k.kind)));
    std::unordered_map<const Op *, const Op *> copyOf; // group op -> its copy in the region
    std::unordered_map<const Value *, Value *> mapped;
    for (Value *v : operands) {
      Value *in = region.addInput(v->type(), v->name());
      mapped[v] = in;
    }
    for (const Op *op : k.ops) {
      std::vector<Value *> regionOperands;
      for (Value *v : op->operands()) {
        auto it = mapped.find(v);
        if (it == mapped.end()) { // a small constant, cloned once at its first use
          Op *c = v->definingOp();
          clonedConstants.insert(c);
          Op *clone = region.createOp(OpKind::Constant, {}, {v->type()}, c->attrs());
          clone->result(0)->setName(v->name());
          it = mapped.emplace(v, clone->result(0)).first;
        }
        regionOperands.push_back(it->second);
      }
      std::vector<TensorType> types;
      for (unsigned r = 0; r < op->numResults(); ++r)
        types.push_back(op->result(r)->type());
      Op *copy = region.createOp(op->kind(), regionOperands, types, op->attrs());
      copy->setLocation(op->location());
      copyOf[op] = copy;
      for (unsigned r = 0; r < op->numResults(); ++r) {
        copy->result(r)->setName(op->result(r)->name());
        mapped[op->result(r)] = copy->result(r);
      }
    }
    for (size_t i = 0; i < exported.size(); ++i) {
      const std::string &name = exported[i]->name();
      region.addOutput(mapped.at(exported[i]), name.empty() ? "r" + std::to_string(i) : name);
    }
    // The decision, naming the copies by their position in the region.
    KernelPlan decision;
    decision.kind = k.kind;
    decision.anchor = k.anchor ? copyOf.at(k.anchor) : nullptr;
    for (const Op *op : k.epilogue)
      decision.epilogue.push_back(copyOf.at(op));
    for (const Op *op : k.prologue)
      decision.prologue.push_back(copyOf.at(op));
    std::vector<const Op *> regionOps;
    for (const Op &op : region.ops())
      regionOps.push_back(&op);
    for (auto &[name, attr] : kernelAttributes(decision, regionOps))
      kernel->setAttr(name, attr);

    // The kernel's results take over the exported values' uses and names.
    for (size_t i = 0; i < exported.size(); ++i) {
      kernel->result(i)->setName(exported[i]->name());
      exported[i]->replaceAllUsesWith(kernel->result(i));
    }
    for (auto it = k.ops.rbegin(); it != k.ops.rend(); ++it)
      g.eraseOp(*it);
  }

  // Constants cloned into kernels that nothing outside uses any more.
  static void eraseDeadConstants(Graph &g, const std::set<Op *> &cloned) {
    std::unordered_set<const Value *> returned;
    for (unsigned i = 0; i < g.numOutputs(); ++i)
      returned.insert(g.output(i));
    for (Op *op : cloned)
      if (!op->result(0)->hasUses() && !returned.count(op->result(0)))
        g.eraseOp(op);
  }
};

} // namespace

std::unique_ptr<Pass> createFusePass() { return std::make_unique<FusePass>(); }

} // namespace strata
