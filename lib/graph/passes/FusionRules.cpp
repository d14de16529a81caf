// The fusion planner: greedy producer-into-consumer merging of op groups under the fusion rules
// (see FusionRules.h), iterated to a fixed point.
#include "FusionRules.h"

#include "strata/graph/Ops.h"
#include "strata/support/ShapeMath.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace strata::fusion {

// The op groups of the op definitions decide the role. A relayout is an index map that marks the
// edge of a blocked region layout-nchwc placed: it joins only other index maps (whyNotMerge);
// arg_reduce reduces rows but yields indices, not values an epilogue could continue from.
Role roleOf(const Op &op, const PassOptions &options) {
  if (op.numRegions() != 0 || op.kind() == OpKind::Constant)
    return Role::None;
  if (options.fusesIntoKernel && !options.fusesIntoKernel(op))
    return Role::None;
  if (op.hasTrait(T_ELEMENTWISE))
    return Role::Elementwise;
  if (op.hasTrait(T_INDEX_MAP))
    return Role::Movement; // a relayout only among index maps (whyNotMerge)
  if (op.hasTrait(T_ANCHOR))
    return Role::Anchor;
  if (op.hasTrait(T_REDUCTION) && op.kind() != OpKind::ArgReduce)
    return Role::Reduction;
  return Role::None;
}

namespace {

// Element counts agree: equal static products and the same symbols (reshape/transpose of the
// anchor's result keep the epilogue in the anchor's index space).
bool sameElementCount(const TensorType &a, const TensorType &b) {
  if (a.dims == b.dims)
    return true;
  // Huge static dims (a hostile file's) overflow the product: such shapes never fuse.
  if (a.isStatic() && b.isStatic()) {
    std::optional<int64_t> na = a.staticNumElements(), nb = b.staticNumElements();
    return na && nb && *na == *nb;
  }
  try {
    SymExpr na(1), nb(1);
    for (const Dim &d : a.dims)
      na = na * d.asExpr();
    for (const Dim &d : b.dims)
      nb = nb * d.asExpr();
    return na == nb;
  } catch (const SymExprError &) {
    return false;
  }
}

// The rows a reduction works on: its input shape and the (normalized) reduced axes. Reductions
// fuse with each other only when these agree, so one kernel walks one row space.
struct RowSignature {
  std::vector<Dim> rowDims;
  std::set<int64_t> axes;
  bool operator==(const RowSignature &o) const { return rowDims == o.rowDims && axes == o.axes; }
};

RowSignature rowSignature(const Op &op) {
  RowSignature s;
  s.rowDims = op.operand(0)->type().dims;
  const int64_t rank = static_cast<int64_t>(s.rowDims.size());
  switch (op.kind()) {
  case OpKind::Reduce: {
    const std::vector<int64_t> &axes = ops::ReduceOp(op).axes();
    s.axes.insert(axes.begin(), axes.end());
    break;
  }
  case OpKind::LayerNorm:
    for (int64_t a = ops::LayerNormOp(op).axis(); a < rank; ++a)
      s.axes.insert(a);
    break;
  case OpKind::Softmax:
    s.axes.insert(ops::SoftmaxOp(op).axis());
    break;
  default:
    s.axes.insert(ops::LogSoftmaxOp(op).axis());
    break;
  }
  return s;
}

class Planner {
public:
  Planner(const Graph &g, const PassOptions &options) : g_(g), options_(options) {
    for (Op *op : g.opList()) {
      index_[op] = static_cast<int>(ops_.size());
      ops_.push_back(op);
      roles_.push_back(roleOf(*op, options));
    }
    for (unsigned i = 0; i < g.numOutputs(); ++i)
      graphOutputs_.insert(g.output(i));
    groupOf_.resize(ops_.size());
    members_.resize(ops_.size());
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
      groupOf_[i] = i;
      members_[i] = {i};
    }
    mark_.assign(ops_.size(), 0);
  }

  // Two phases: single-exit merges first, so a matmul/conv gets its epilogue before any
  // elementwise group could take its consumers as a multi-output kernel; then multi-output
  // elementwise merges.
  void run() {
    pairRelayouts();
    sweep();
    multiOutput_ = true;
    sweep();
  }

  // A relayout whose one user is an index map (out of NCHW<c>c, then a transpose to
  // channels-last) becomes one copy with it first: otherwise the index map joins its own
  // consumer (a layer_norm) and the relayout, which joins only index maps, stays a copy of its
  // own.
  void pairRelayouts() {
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
      if (ops_[i]->kind() != OpKind::Relayout || roles_[i] != Role::Movement || isGraphOutput(i))
        continue;
      std::vector<int> users = usersOf(i);
      // (Not an expand: the copy would write out the whole broadcast.)
      const OpKind k = users.size() == 1 ? ops_[users[0]]->kind() : OpKind::Relayout;
      if (k != OpKind::Transpose && k != OpKind::Reshape && k != OpKind::Slice)
        continue;
      int a = groupOf_[i], b = groupOf_[users[0]];
      if (a != b && canMerge(a, b))
        merge(a, b);
    }
  }

  // Consumers first (reverse graph order), so chains grow upwards from their last op; a merge
  // can enable others (a value's users ending up in one group), hence repeated sweeps.
  void sweep() {
    for (bool changed = true; changed;) {
      changed = false;
      std::set<int> tried;
      for (int i = static_cast<int>(ops_.size()) - 1; i >= 0; --i) {
        int a = groupOf_[i];
        if (roles_[i] == Role::None || !tried.insert(a).second)
          continue;
        for (int b : consumerGroups(a))
          if (canMerge(a, b)) {
            merge(a, b);
            changed = true;
            break;
          }
      }
    }
  }

  std::vector<PlannedKernel> kernels() const {
    std::vector<PlannedKernel> out;
    for (const std::vector<int> &m : members_) {
      int compute = 0, anchors = 0, reductions = 0;
      for (int i : m) {
        compute += roles_[i] != Role::Movement;
        anchors += roles_[i] == Role::Anchor;
        reductions += roles_[i] == Role::Reduction;
      }
      // A lone op stays a plain op, and so does one with a single index map before it (the
      // op's own lowering reads it as fast as a kernel would). With two or more index maps
      // (attention's slice -> reshape -> transpose of a matmul operand) the kernel runs their
      // composed map as one copy instead of one copy per op.
      const int64_t movement = static_cast<int64_t>(m.size()) - compute;
      if (compute < 2 && movement < 2)
        continue;
      PlannedKernel k;
      k.kind = anchors      ? KernelKind::Epilogue
               : reductions ? KernelKind::Reduction
                            : KernelKind::Elementwise;
      for (int i : m)
        k.ops.push_back(ops_[i]);
      if (anchors)
        recordEpilogue(m, k);
      out.push_back(std::move(k));
    }
    std::sort(out.begin(), out.end(), [&](const PlannedKernel &x, const PlannedKernel &y) {
      return index_.at(x.ops.front()) < index_.at(y.ops.front());
    });
    return out;
  }

private:
  const Graph &g_;
  const PassOptions &options_;
  std::vector<Op *> ops_;
  std::vector<Role> roles_;
  std::unordered_map<const Op *, int> index_;
  std::set<const Value *> graphOutputs_;
  std::vector<int> groupOf_;
  std::vector<std::vector<int>> members_; // sorted op indices; empty once merged away
  std::vector<int> mark_;                 // scratch membership marks
  int stamp_ = 0;
  bool multiOutput_ = false; // whether producer values may also leave a kernel

  // The top-level op a use belongs to (a use may sit in a nested region of another op).
  int userIndex(const Op *user) const {
    while (user->parentGraph() != &g_)
      user = user->parentGraph()->parentOp();
    return index_.at(user);
  }

  // Top-level ops using the results of op `i`.
  std::vector<int> usersOf(int i) const {
    std::vector<int> users;
    for (unsigned r = 0; r < ops_[i]->numResults(); ++r)
      for (const Use &u : ops_[i]->result(r)->uses())
        users.push_back(userIndex(u.user));
    return users;
  }

  bool isGraphOutput(int i) const {
    for (unsigned r = 0; r < ops_[i]->numResults(); ++r)
      if (graphOutputs_.count(ops_[i]->result(r)))
        return true;
    return false;
  }

  // Groups that consume a value of group `a`, nearest (lowest first op) first.
  std::vector<int> consumerGroups(int a) const {
    std::set<std::pair<int, int>> found; // (first member, group)
    for (int i : members_[a])
      for (int u : usersOf(i))
        if (groupOf_[u] != a && roles_[u] != Role::None)
          found.insert({members_[groupOf_[u]].front(), groupOf_[u]});
    std::vector<int> out;
    for (auto &[first, group] : found)
      out.push_back(group);
    return out;
  }

  void merge(int a, int b) {
    for (int i : members_[a])
      groupOf_[i] = b;
    std::vector<int> joined;
    std::merge(members_[a].begin(), members_[a].end(), members_[b].begin(), members_[b].end(),
               std::back_inserter(joined));
    members_[b] = std::move(joined);
    members_[a].clear();
  }

  // Whether a path leaves the merged group and comes back in: the kernel would then both feed
  // and depend on what is on the path. The path runs through kernels, not ops: reaching one op
  // of another group reaches all of that group's results (its kernel runs as a whole). Groups
  // joined through a shared operand hold ops of independent chains (both directions of a
  // bidirectional RNN share their steps' sequence-length test), so such a path can run from
  // one chain's step to the other's through a third group.
  bool pathThroughOutside(const std::vector<int> &merged) {
    int last = merged.back(); // ops after it cannot reach the group
    std::vector<int> stack;
    std::set<int> seen, seenGroups;
    auto inMerged = [&](int i) { return std::binary_search(merged.begin(), merged.end(), i); };
    for (int i : merged)
      for (int u : usersOf(i))
        if (!inMerged(u) && seen.insert(u).second)
          stack.push_back(u);
    while (!stack.empty()) {
      int x = stack.back();
      stack.pop_back();
      if (inMerged(x))
        return true;
      if (!seenGroups.insert(groupOf_[x]).second)
        continue;
      for (int m : members_[groupOf_[x]])
        if (m <= last)
          for (int u : usersOf(m))
            if (seen.insert(u).second)
              stack.push_back(u);
    }
    return false;
  }

  bool canMerge(int a, int b) { return whyNotMerge(a, b).empty(); }

  // Empty when group `a` may merge into consumer group `b`; otherwise the rule that forbids it.
  std::string whyNotMerge(int a, int b) {
    // A kernel's loop body is one basic block per iteration: past this many ops LLVM's
    // instruction scheduling grows quadratically (a 20,000-op chain: minutes), while a cut costs
    // one store and reload per element.
    if (members_[a].size() + members_[b].size() > kMaxKernelOps)
      return "the kernel would hold more than " + std::to_string(kMaxKernelOps) + " ops";
    std::vector<int> merged;
    std::merge(members_[a].begin(), members_[a].end(), members_[b].begin(), members_[b].end(),
               std::back_inserter(merged));
    ++stamp_;
    for (int i : merged)
      mark_[i] = stamp_;
    auto inMerged = [&](int i) { return mark_[i] == stamp_; };

    int anchors = 0, reductions = 0;
    for (int i : merged) {
      anchors += roles_[i] == Role::Anchor;
      reductions += roles_[i] == Role::Reduction;
    }
    if (anchors > 1)
      return "both sides have a matmul/conv anchor; a kernel has one";
    if (anchors && reductions)
      return "an anchor (matmul/conv) and a reduction do not share a kernel";

    // Index maps stay inside: a data-movement op is never a kernel output, except in a group of
    // index maps alone (a channel shuffle: reshape -> transpose -> reshape, and the two slices
    // of its result): one copy per result through the composed maps instead of one per op.
    const bool movementOnly = std::all_of(merged.begin(), merged.end(),
                                          [&](int i) { return roles_[i] == Role::Movement; });
    // A relayout marks the edge of a blocked region: it joins other index maps (a relayout
    // out of NCHW<c>c then a transpose to channels-last is one copy), never a computing kernel.
    if (!movementOnly)
      for (int i : merged)
        if (ops_[i]->kind() == OpKind::Relayout)
          return "'" + std::string(ops_[i]->opName()) +
                 "' is a relayout at the edge of a blocked region; it joins only index maps";
    for (int i : merged)
      if (roles_[i] == Role::Movement && !movementOnly) {
        if (isGraphOutput(i))
          return "index map '" + std::string(ops_[i]->opName()) + "' is a graph output";
        for (int u : usersOf(i))
          if (!inMerged(u))
            return "index map '" + std::string(ops_[i]->opName()) +
                   "' has a user outside the kernel";
      }

    // Producer values needed outside become extra kernel results; only plain elementwise kernels
    // take that on, and only without a path back into the consumer group.
    bool exclusive = true;
    for (int i : members_[a])
      for (int u : usersOf(i))
        exclusive = exclusive && inMerged(u);
    if (!exclusive && (!multiOutput_ || anchors || reductions))
      return "the producer's result has another user outside the kernel (only elementwise "
             "kernels export extra results)";
    if (pathThroughOutside(merged))
      return "a path leaves the kernel through an outside op and comes back (a cycle)";
    // Anchored kernels have one exit (plus graph outputs): the anchor's index space.
    if ((anchors || reductions) && exits(merged) > 1)
      return "the kernel would have " + std::to_string(exits(merged)) +
             " exits; an anchored or reduction kernel has one";

    if (anchors)
      if (std::string why; !epilogueFits(merged, nullptr, nullptr, &why))
        return why;
    if (reductions && !reductionFits(merged))
      return "the reduction would mix row spaces (different rows or shapes)";
    return "";
  }

public:
  // Why each remaining producer -> consumer edge between groups was not merged: one remark per
  // (producer op, consuming op) pair, for strata explain.
  std::vector<FusionRemark> remarks() {
    std::vector<FusionRemark> out;
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i]->kind() == OpKind::Constant)
        continue; // operands, never fused
      int a = groupOf_[i];
      std::set<int> seen;
      for (int u : usersOf(static_cast<int>(i))) {
        int b = groupOf_[u];
        if (b == a || !seen.insert(u).second)
          continue;
        std::string why;
        if (roles_[i] == Role::None)
          why = "'" + std::string(ops_[i]->opName()) + "' " + noRoleReason(*ops_[i]);
        else if (roles_[u] == Role::None)
          why = "'" + std::string(ops_[u]->opName()) + "' " + noRoleReason(*ops_[u]);
        else
          why = whyNotMerge(a, b);
        if (!why.empty())
          out.push_back({ops_[i], ops_[u], std::move(why)});
      }
    }
    return out;
  }

  std::string noRoleReason(const Op &op) const {
    if (op.numRegions() != 0)
      return "is already a kernel";
    if (options_.fusesIntoKernel && !options_.fusesIntoKernel(op))
      return "has no in-kernel lowering; it runs as a kernel of its own";
    return "fuses with nothing (no elementwise, index-map, anchor or reduction role)";
  }

private:
  // Values of `merged` used by ops outside it.
  int exits(const std::vector<int> &merged) const {
    int n = 0;
    for (int i : merged) {
      std::vector<int> users = usersOf(i);
      n += std::any_of(users.begin(), users.end(), [&](int u) { return mark_[u] != stamp_; });
    }
    return n;
  }

  // Epilogue: everything downstream of the anchor (within the group) keeps its element count;
  // anything else is an index map on an operand (the prologue). Fills `epilogue`/`prologue`
  // (graph indices) when given.
  bool epilogueFits(const std::vector<int> &merged, std::vector<int> *epilogue = nullptr,
                    std::vector<int> *prologue = nullptr, std::string *why = nullptr) const {
    int anchor = *std::find_if(merged.begin(), merged.end(),
                               [&](int i) { return roles_[i] == Role::Anchor; });
    const TensorType &anchorType = ops_[anchor]->result(0)->type();
    std::set<int> downstream = {anchor};
    for (int i : merged) { // graph order: operands are classified before their users
      if (i == anchor)
        continue;
      bool consumesAnchor = false;
      for (const Value *v : ops_[i]->operands())
        if (v->definingOp() && index_.count(v->definingOp()) &&
            downstream.count(index_.at(v->definingOp())))
          consumesAnchor = true;
      if (consumesAnchor) {
        downstream.insert(i);
        if (!sameElementCount(ops_[i]->result(0)->type(), anchorType)) {
          if (why)
            *why = "'" + std::string(ops_[i]->opName()) + "' after the " +
                   std::string(ops_[anchor]->opName()) + " changes its element count (" +
                   anchorType.str() + " -> " + ops_[i]->result(0)->type().str() + ")";
          return false;
        }
        if (epilogue)
          epilogue->push_back(i);
      } else if (roles_[i] != Role::Movement) {
        if (why) // prologue compute is not part of an epilogue
          *why = "'" + std::string(ops_[i]->opName()) + "' computes on an operand of the " +
                 std::string(ops_[anchor]->opName()) +
                 " (only index maps may feed an anchor inside a kernel)";
        return false;
      } else if (prologue) {
        prologue->push_back(i);
      }
    }
    return true;
  }

  // The decision of an anchored group: its anchor, epilogue and prologue ops.
  void recordEpilogue(const std::vector<int> &members, PlannedKernel &k) const {
    for (int i : members)
      if (roles_[i] == Role::Anchor)
        k.anchor = ops_[i];
    std::vector<int> epilogue, prologue;
    epilogueFits(members, &epilogue, &prologue);
    for (int i : epilogue)
      k.epilogue.push_back(ops_[i]);
    for (int i : prologue)
      k.prologue.push_back(ops_[i]);
  }

  // Reduction: one row space; elementwise ops produce row-shaped or reduced-shaped values.
  bool reductionFits(const std::vector<int> &merged) const {
    std::vector<RowSignature> sigs;
    for (int i : merged)
      if (roles_[i] == Role::Reduction)
        sigs.push_back(rowSignature(*ops_[i]));
    for (const RowSignature &s : sigs)
      if (!(s == sigs.front()))
        return false;
    const RowSignature &row = sigs.front();
    std::vector<Dim> kept = row.rowDims, dropped;
    for (size_t d = 0; d < row.rowDims.size(); ++d) {
      if (row.axes.count(static_cast<int64_t>(d)))
        kept[d] = Dim(1);
      else
        dropped.push_back(row.rowDims[d]);
    }
    for (int i : merged) {
      if (roles_[i] != Role::Elementwise)
        continue;
      const std::vector<Dim> &dims = ops_[i]->result(0)->type().dims;
      if (dims != row.rowDims && dims != kept && dims != dropped)
        return false;
    }
    return true;
  }
};

} // namespace

std::vector<PlannedKernel> planKernels(const Graph &g, const PassOptions &options,
                                       std::vector<FusionRemark> *remarks) {
  Planner p(g, options);
  p.run();
  if (remarks)
    *remarks = p.remarks();
  return p.kernels();
}

} // namespace strata::fusion
