// layout-nchwc: rewrites 2-D convolutions to the blocked NCHW<c>c layout (c = vector width),
// with weights blocked at compile time, and lets elementwise ops between blocked convs (bias,
// activations, residual adds) run on blocked tensors, so relayouts remain only at the borders
// of conv regions.
//
// Rule for what stays NCHW: a conv is blocked when it is 2-D, its weight is a constant, its
// input and output channel counts are multiples of c, and it is either ungrouped or depthwise
// (group == C_in == C_out). Everything else (e.g. a stem conv with 3 input channels, pools,
// reductions, reshapes) keeps NCHW and gets a relayout at its border. An elementwise op goes
// blocked when one operand already exists in blocked form and every other operand does too or
// is a constant that is a scalar or per-channel ([C,1,1], [1,C,1,1]): then blocking it costs
// nothing extra, while keeping it plain would need a relayout back and forth.
#include "strata/graph/Layout.h"
#include "strata/graph/Ops.h"
#include "strata/graph/passes/Passes.h"
#include "strata/graph/passes/Rewrite.h"
#include "strata/support/Error.h"

#include <unordered_map>

namespace strata {
namespace {

// No op reads `v` and it is not a graph output.
bool isUnused(const Graph &g, const Value *v) {
  if (v->hasUses())
    return false;
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    if (g.output(i) == v)
      return false;
  return true;
}

bool isPlainLayout(const Op &op) { return ops::ConvOp(op).layout() == 0; }

class LayoutNCHWcPass : public Pass {
public:
  std::string_view name() const override { return "layout-nchwc"; }

  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    if (ctx.options.vectorWidth < 1)
      return makeError("layout-nchwc: vector width must be positive");
    block_ = chooseBlock(g, ctx.options.vectorWidth);
    blocked_ = blockedLayoutName(block_);
    plainToBlocked_.clear();
    bool changed = false;
    for (Op *op : g.opList()) {
      std::string why;
      if (op->kind() == OpKind::Conv && blockConv(g, *op, why)) {
        ctx.stats.add("layout-nchwc.blocked-convs");
        changed = true;
      } else if (!why.empty()) {
        ctx.remarks.push_back({"layout-nchwc", op->location(), why});
      } else if (op->hasTrait(T_ELEMENTWISE) && blockElementwise(g, *op)) {
        ctx.stats.add("layout-nchwc.blocked-elementwise");
        changed = true;
      }
    }
    int64_t cancelled = cancelRelayoutPairs(g);
    ctx.stats.add("layout-nchwc.cancelled-relayouts", cancelled);
    changed |= cancelled > 0;
    eraseDeadRelayouts(g);
    return changed;
  }

private:
  int64_t block_ = 8;

  // The block: the vector width, halved while a narrower block would let more convs be blocked
  // (mobilenet's 24- and 144-channel layers block by 8, not by 16), down to 8.
  int64_t chooseBlock(const Graph &g, int64_t width) {
    auto blockable = [&](int64_t b) {
      int64_t n = 0;
      for (const Op &op : g.ops())
        if (op.kind() == OpKind::Conv && op.operand(0)->type().rank() == 4) {
          const Dim &in = op.operand(0)->type().dims[1], &out = op.result(0)->type().dims[1];
          n += in.isStatic() && out.isStatic() && in.size % b == 0 && out.size % b == 0;
        }
      return n;
    };
    int64_t b = width;
    while (b > 8 && b % 2 == 0 && blockable(b / 2) > blockable(b))
      b /= 2;
    return b;
  }
  std::string blocked_;
  // A plain value -> the same tensor in the blocked layout, defined before any later op.
  std::unordered_map<const Value *, Value *> plainToBlocked_;

  bool channelsBlockable(const Dim &d) const { return d.isStatic() && d.size % block_ == 0; }

  // The blocked form of plain `v`, creating a relayout before `at` unless it already exists.
  Value *blockedForm(Value *v, Builder &b) {
    if (Value *known = lookupBlocked(v))
      return known;
    Value *blockedValue = b.value(OpKind::Relayout, {v}, {{"from", "NCHW"}, {"to", blocked_}});
    plainToBlocked_[v] = blockedValue;
    return blockedValue;
  }
  Value *lookupBlocked(const Value *v) const {
    auto it = plainToBlocked_.find(v);
    return it == plainToBlocked_.end() ? nullptr : it->second;
  }

  // Replaces plain `oldResult` by a relayout of `blockedResult` back to NCHW; users that can
  // take the blocked form find it through plainToBlocked_.
  void publish(Op &old, Value *blockedResult, Builder &b) {
    Value *plain =
        b.value(OpKind::Relayout, {blockedResult}, {{"from", blocked_}, {"to", "NCHW"}});
    plainToBlocked_[plain] = blockedResult;
    old.result(0)->replaceAllUsesWith(plain);
    if (!old.result(0)->name().empty() && plain->name().empty())
      plain->setName(old.result(0)->name());
    old.parentGraph()->eraseOp(&old);
  }

  // Blocks `conv` when the rule above allows; otherwise says why not in `why`.
  bool blockConv(Graph &g, Op &conv, std::string &why) {
    if (!isPlainLayout(conv))
      return false;
    const TensorType &x = conv.operand(0)->type(), &y = conv.result(0)->type();
    const Tensor *w = constantValue(conv.operand(1));
    if (x.rank() != 4 || y.rank() != 4) {
      why = "not blocked: only 2-D convolutions are";
      return false;
    }
    if (!w || !w->valid()) {
      why = "not blocked: the weight is not a constant";
      return false;
    }
    if (!isFloat(x.dtype)) {
      why = "not blocked: not a float convolution";
      return false;
    }
    for (auto [d, what] : {std::pair{&x.dims[1], "input"}, {&y.dims[1], "output"}})
      if (!channelsBlockable(*d)) {
        why = "not blocked: " + d->str() + " " + what + " channels are not a multiple of the " +
              std::to_string(block_) + "-channel block";
        return false;
      }
    int64_t group = ops::ConvOp(conv).group();
    int64_t inChannels = x.dims[1].size, outChannels = y.dims[1].size;
    int64_t inBlock;
    if (group == 1)
      inBlock = block_;
    else if (group == inChannels && outChannels == inChannels && w->shape()[1] == 1)
      inBlock = 1; // depthwise: each output channel reads its own input channel
    else {
      why = "not blocked: grouped (" + std::to_string(group) + " groups) and not depthwise";
      return false;
    }

    Builder b(g);
    b.setInsertBefore(&conv);
    b.setLocation(conv.location());
    Value *xBlocked = blockedForm(conv.operand(0), b);
    Value *wBlocked = b.constant(blockConvWeight(*w, inBlock, block_));
    std::vector<Value *> operands = {xBlocked, wBlocked};
    if (conv.numOperands() > 2)
      operands.push_back(conv.operand(2)); // the bias stays [C_out]
    AttrMap attrs = conv.attrs();
    attrs["layout"] = blocked_;
    Value *result = b.value(OpKind::Conv, operands, attrs);
    Op *weightDef = conv.operand(1)->definingOp();
    publish(conv, result, b);
    if (weightDef && isUnused(g, weightDef->result(0)))
      g.eraseOp(weightDef);
    return true;
  }

  // A constant operand of a rank-4 elementwise op in blocked form: scalars and all-ones shapes
  // broadcast the same in both layouts; a per-channel [.., C, 1, 1] constant is blocked to
  // [1, C/c, 1, 1, c]. nullopt when the constant varies along N, H or W.
  std::optional<Tensor> blockedConstant(const Tensor &t, int64_t channels) const {
    if (t.rank() > 4)
      return std::nullopt;
    Shape aligned(4 - t.rank(), 1);
    aligned.insert(aligned.end(), t.shape().begin(), t.shape().end());
    if (aligned[0] != 1 || aligned[2] != 1 || aligned[3] != 1)
      return std::nullopt;
    if (aligned[1] == 1)
      return t;
    if (aligned[1] != channels)
      return std::nullopt;
    return blockChannels(t.reshaped(aligned), block_);
  }

  bool blockElementwise(Graph &g, Op &op) {
    if (op.numResults() != 1 || op.numRegions() != 0)
      return false;
    const TensorType &y = op.result(0)->type();
    if (y.rank() != 4 || !channelsBlockable(y.dims[1]))
      return false;
    // Decide first, then build: nothing is created unless every operand has a blocked form.
    std::vector<Value *> blockedOperands(op.numOperands(), nullptr);
    std::vector<std::optional<Tensor>> constants(op.numOperands());
    bool anyBlocked = false;
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      Value *v = op.operand(i);
      if (Value *known = lookupBlocked(v); known && v->type().dims == y.dims) {
        blockedOperands[i] = known;
        anyBlocked = true;
      } else if (const Tensor *t = constantValue(v); t && t->valid()) {
        constants[i] = blockedConstant(*t, y.dims[1].size);
        if (!constants[i])
          return false;
      } else {
        return false;
      }
    }
    if (!anyBlocked)
      return false;
    Builder b(g);
    b.setInsertBefore(&op);
    b.setLocation(op.location());
    for (unsigned i = 0; i < op.numOperands(); ++i)
      if (!blockedOperands[i])
        blockedOperands[i] = constants[i]->identical(*constantValue(op.operand(i)))
                                 ? op.operand(i)
                                 : b.constant(*constants[i]);
    Value *result = b.value(op.kind(), blockedOperands, op.attrs());
    publish(op, result, b);
    return true;
  }

  // relayout(relayout(x, A -> B), B -> A) -> x. Returns how many were cancelled.
  static int64_t cancelRelayoutPairs(Graph &g) {
    int64_t cancelled = 0;
    for (Op *op : g.opList()) {
      if (op->kind() != OpKind::Relayout)
        continue;
      Op *inner = op->operand(0)->definingOp();
      if (!inner || inner->kind() != OpKind::Relayout ||
          ops::RelayoutOp(*inner).from() != ops::RelayoutOp(*op).to() ||
          ops::RelayoutOp(*inner).to() != ops::RelayoutOp(*op).from())
        continue;
      op->result(0)->replaceAllUsesWith(inner->operand(0));
      g.eraseOp(op);
      ++cancelled;
    }
    return cancelled;
  }

  // Relayouts this pass created that nobody reads (dead NCHW views of blocked values).
  static void eraseDeadRelayouts(Graph &g) {
    std::vector<Op *> ops = g.opList();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it)
      if ((*it)->kind() == OpKind::Relayout && isUnused(g, (*it)->result(0)))
        g.eraseOp(*it);
  }
};

} // namespace

std::unique_ptr<Pass> createLayoutNCHWcPass() { return std::make_unique<LayoutNCHWcPass>(); }

} // namespace strata
