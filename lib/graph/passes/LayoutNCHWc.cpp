// layout-nchwc: rewrites 2-D and 3-D convolutions to the blocked NCHW<c>c layout (c = vector
// width; 3-D: [N, C/c, D, H, W, c]),
// with weights blocked at compile time, and lets elementwise ops between blocked convs (bias,
// activations, residual adds) run on blocked tensors, so relayouts remain only at the borders
// of conv regions.
//
// Channel counts c does not divide are padded, as ONNX Runtime's NCHWc layout does: the last
// block's pad lanes get zero weights and zero bias, so no real channel reads them, and a
// relayout back to NCHW drops them (Layout.h). A conv is blocked when it is 2-D with a constant
// float weight and it is
//   - ungrouped, or depthwise (group == C_in == C_out), with padding costing at most half its
//     multiply-adds more (the stem's 3 input channels stay plain; a 3-D conv, which has no
//     plain-input kernel, up to 8x);
//   - grouped with whole blocks per group;
//   - grouped with groups narrower than a block (ResNeXt/RegNet: equal channel counts, the
//     group width dividing c): each block of c output channels then reads only its own input
//     block, and the conv runs as one with c-wide groups whose weights are zero across the
//     original groups: up to 4x the multiply-adds, on whole vectors instead of a scalar nest.
// A conv with too few input channels to pad (the stem) but cheaply padded output channels
// reads its plain input and writes a blocked result (`plain_input`). Max/avg pools and
// reductions over H and W of a blocked value run blocked. Concats along the channels of blocked
// values concatenate their blocks when the channel counts are whole blocks; otherwise they, the
// slices of the channels alone and channel shuffles (reshape, transpose, reshape) of blocked
// values gather the channels (gather_channels, composed so that each channel is copied once
// from where it was computed). Everything else (other reductions, reshapes) keeps NCHW and gets
// a relayout at its border.
// An elementwise op goes blocked when one operand already exists in blocked form and every
// other operand does too, is a constant that is a scalar or per-channel ([C,1,1], [1,C,1,1]),
// or is a computed per-channel [N,C,1,1] (squeeze-and-excitation's scale, relayouted: N x C
// values): then blocking it costs next to nothing, while keeping it plain would need a
// relayout of the feature map back and forth. On padded channels only ops that keep finite pad
// lanes finite are blocked (no exp, log, sqrt, div, pow), so a pad lane times its zero weight
// stays 0.
#include "strata/graph/Layout.h"
#include "strata/graph/Ops.h"
#include "strata/graph/passes/Passes.h"
#include "strata/graph/passes/Rewrite.h"
#include "strata/support/Error.h"
#include "strata/support/ShapeMath.h"

#include <algorithm>
#include <cstring>
#include <optional>
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

// [N, C, H, W] or [N, C, D, H, W]: the ranks whose convs, elementwise ops and spatial reductions
// run blocked (3-D: video models).
bool isSpatialRank(const TensorType &t) { return t.rank() == 4 || t.rank() == 5; }

class LayoutNCHWcPass : public Pass {
public:
  std::string_view name() const override { return "layout-nchwc"; }

  llvm::Expected<bool> run(Graph &g, PassContext &ctx) override {
    if (ctx.options.vectorWidth < 1)
      return makeError("layout-nchwc: vector width must be positive");
    ctx_ = &ctx;
    block_ = chooseBlock(g, ctx.options.vectorWidth);
    blocked_ = blockedLayoutName(block_);
    plainToBlocked_.clear();
    bool changed = false;
    for (Op *op : g.opList()) {
      // Each rewrite counts itself as layout-nchwc.<what it did>.
      auto counted = [&](bool done, const char *stat) {
        if (done)
          ctx.stats.add(std::string("layout-nchwc.") + stat);
        return done;
      };
      std::string why;
      switch (op->kind()) {
      case OpKind::Conv:
        if (counted(blockConv(g, *op, why), "blocked-convs") ||
            counted(blockConvOutput(g, *op), "blocked-outputs"))
          changed = true;
        else if (!why.empty())
          ctx.remarks.push_back({"layout-nchwc", op->location(), why});
        break;
      case OpKind::Reduce:
        changed |= counted(blockSpatialReduction(g, *op), "blocked-reductions");
        break;
      case OpKind::Pool:
        changed |= counted(blockPool(g, *op), "blocked-pools");
        break;
      case OpKind::Concat:
        changed |= blockConcat(g, *op); // counts blocked or gathered concats itself
        break;
      case OpKind::Slice:
        changed |= counted(gatherChannelSlice(g, *op), "gathered-slices");
        break;
      case OpKind::Reshape:
        changed |= counted(gatherChannelShuffle(g, *op), "gathered-shuffles");
        break;
      default:
        changed |= op->hasTrait(T_ELEMENTWISE) &&
                   counted(blockElementwise(g, *op), "blocked-elementwise");
      }
    }
    int64_t cancelled = cancelRelayoutPairs(g);
    ctx.stats.add("layout-nchwc.cancelled-relayouts", cancelled);
    changed |= cancelled > 0;
    eraseDeadRelayouts(g);
    return changed;
  }

private:
  PassContext *ctx_ = nullptr;
  int64_t block_ = 8;

  // The block: the vector width, or a narrower one (down to 8) where that costs less in all:
  // each conv's multiply-adds at its padded (or regrouped) channel counts, times width / block
  // for the narrower vectors; a conv left unblocked counts double.
  int64_t chooseBlock(const Graph &g, int64_t width) {
    auto cost = [&](int64_t b) {
      double total = 0;
      for (const Op &op : g.ops())
        if (op.kind() == OpKind::Conv && isPlainLayout(op) && isSpatialRank(op.operand(0)->type()) &&
            op.result(0)->type().isStatic()) {
          std::string why;
          std::optional<BlockedShape> shape = blockedShape(op, b, why);
          std::optional<int64_t> weights = op.operand(1)->type().staticNumElements();
          if (!weights)
            continue;
          double outputs = static_cast<double>(*op.result(0)->type().staticNumElements());
          double perOutput = static_cast<double>(*weights) /
                             static_cast<double>(op.result(0)->type().dims[1].size);
          total += shape ? outputs * perOutput * shape->costRatio * static_cast<double>(width) /
                               static_cast<double>(b)
                         : 2 * outputs * perOutput;
        }
      return total;
    };
    int64_t best = width;
    double bestCost = cost(width);
    for (int64_t b = width / 2; b >= 8 && b * 2 <= width && width % b == 0; b /= 2)
      if (double c = cost(b); c < bestCost) {
        best = b;
        bestCost = c;
      }
    return best;
  }
  std::string blocked_;
  // A plain value -> the same tensor in the blocked layout, defined before any later op.
  std::unordered_map<const Value *, Value *> plainToBlocked_;

  static int64_t roundUp(int64_t n, int64_t b) { return (n + b - 1) / b * b; }

  // Padding may cost half the multiply-adds more; regrouping up to 4x (the vector kernel
  // against a scalar nest for grouped convs).
  static constexpr double kMaxPaddingCost = 1.5, kMaxRegroupingCost = 4.0,
                          kMaxVolumePaddingCost = 8.0;

  // How a conv is blocked by `b`: its padded channel counts, the blocked conv's group, the
  // input block of its weight (1: depthwise) and its multiply-adds relative to the plain conv's.
  struct BlockedShape {
    int64_t inChannels = 0, outChannels = 0; // padded
    int64_t group = 1, inBlock = 1;
    bool regrouped = false; // groups narrower than a block, widened to b
    double costRatio = 1;
  };

  // nullopt (with `why`) when the conv cannot be blocked by `b`.
  static std::optional<BlockedShape> blockedShape(const Op &conv, int64_t b, std::string &why) {
    const TensorType &x = conv.operand(0)->type(), &y = conv.result(0)->type();
    const Dim &in = x.dims[1], &out = y.dims[1];
    if (!in.isStatic() || !out.isStatic() || in.size < 1 || out.size < 1) {
      why = "not blocked: the channel counts are not static";
      return std::nullopt;
    }
    const int64_t ci = in.size, co = out.size, group = ops::ConvOp(conv).group();
    const TensorType &w = conv.operand(1)->type();
    BlockedShape s;
    s.inChannels = roundUp(ci, b);
    s.outChannels = roundUp(co, b);
    if (group == 1) {
      s.inBlock = b;
      s.costRatio = static_cast<double>(s.inChannels * s.outChannels) / static_cast<double>(ci * co);
    } else if (group == ci && co == ci && w.rank() >= 2 && w.dims[1] == Dim(1)) {
      s.group = s.outChannels; // depthwise: each output channel reads its own input channel
      s.costRatio = static_cast<double>(s.outChannels) / static_cast<double>(co);
    } else if (ci % group == 0 && co % group == 0 && (ci / group) % b == 0 &&
               (co / group) % b == 0) {
      s.group = group; // whole blocks per group: no padding
      s.inBlock = b;
    } else if (ci == co && ci % group == 0 && b % (ci / group) == 0) {
      s.group = s.outChannels / b;
      s.inBlock = b;
      s.regrouped = true;
      s.costRatio = static_cast<double>(s.outChannels * b) / static_cast<double>(co * (ci / group));
    } else {
      why = "not blocked: " + std::to_string(group) + " groups of " +
            std::to_string(ci / std::max<int64_t>(group, 1)) + " channels fit neither whole " +
            std::to_string(b) + "-channel blocks nor a block of groups";
      return std::nullopt;
    }
    // A 3-D conv has no plain-input micro-kernel (the stem's 3 channels): padded, it still runs
    // at most of the FMA roof where the generic nest runs at 2% of it.
    const double maxPadding = x.rank() == 5 ? kMaxVolumePaddingCost : kMaxPaddingCost;
    if (s.costRatio > (s.regrouped ? kMaxRegroupingCost : maxPadding)) {
      why = "not blocked: padding " + std::to_string(ci) + " -> " + std::to_string(s.inChannels) +
            " input and " + std::to_string(co) + " -> " + std::to_string(s.outChannels) +
            " output channels to " + std::to_string(b) + "-channel blocks costs " +
            std::to_string(static_cast<int>(s.costRatio * 100 - 100)) + "% more multiply-adds";
      return std::nullopt;
    }
    return s;
  }

  // The plain weight [O, I/group, K...] of the blocked conv: zero-padded to the padded channel
  // counts, or (regrouped) [O', b, K...] where output channel o reads the b channels of its
  // block, with zeros where the original conv's group of o does not reach.
  static Tensor paddedWeight(const Tensor &w, const BlockedShape &s, int64_t b) {
    if (!s.regrouped) // group 1 pads both counts; depthwise and whole-block groups only O
      return zeroPadLeading(w, s.outChannels, s.group == 1 ? s.inChannels : w.shape()[1]);
    const int64_t outs = w.shape()[0], width = w.shape()[1];
    const int64_t taps = w.numElements() / std::max<int64_t>(outs * width, 1);
    Shape shape = w.shape();
    shape[0] = s.outChannels;
    shape[1] = b;
    Tensor out(w.dtype(), shape);
    const size_t size = dtypeSize(w.dtype());
    const auto *src = static_cast<const uint8_t *>(w.rawData());
    auto *dst = static_cast<uint8_t *>(out.rawData());
    for (int64_t o = 0; o < outs; ++o) {
      const int64_t firstOfGroup = o / width * width, blockStart = o / b * b;
      for (int64_t i = 0; i < width; ++i) {
        const int64_t lane = firstOfGroup + i - blockStart; // input channel's lane in o's block
        std::memcpy(dst + ((o * b + lane) * taps) * size, src + ((o * width + i) * taps) * size,
                    static_cast<size_t>(taps) * size);
      }
    }
    return out;
  }

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

  // Replaces plain `oldResult` by a relayout of `blockedResult` back to NCHW (its `channels`
  // real ones); users that can take the blocked form find it through plainToBlocked_.
  void publish(Op &old, Value *blockedResult, Builder &b, int64_t channels) {
    AttrMap attrs = {{"from", blocked_}, {"to", "NCHW"}};
    if (channels % block_ != 0)
      attrs["channels"] = Attribute(channels);
    Value *plain = b.value(OpKind::Relayout, {blockedResult}, attrs);
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
    if (!isSpatialRank(x) || y.rank() != x.rank()) {
      why = "not blocked: only 2-D and 3-D convolutions are";
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
    std::optional<BlockedShape> shape = blockedShape(conv, block_, why);
    if (!shape)
      return false;
    const int64_t outChannels = y.dims[1].size;
    const Tensor *bias = conv.numOperands() > 2 ? constantValue(conv.operand(2)) : nullptr;
    const bool padOut = shape->outChannels != outChannels;
    if (padOut && conv.numOperands() > 2 && (!bias || !bias->valid())) {
      why = "not blocked: " + std::to_string(outChannels) + " output channels need padding and " +
            "the bias is not a constant";
      return false;
    }

    Builder b(g);
    b.setInsertBefore(&conv);
    b.setLocation(conv.location());
    Value *xBlocked = blockedForm(conv.operand(0), b);
    Tensor plainWeight = paddedWeight(*w, *shape, block_);
    Value *wBlocked = b.constant(blockConvWeight(plainWeight, shape->inBlock, block_));
    std::vector<Value *> operands = {xBlocked, wBlocked};
    if (conv.numOperands() > 2) // the bias stays [C_out], padded with zeros
      operands.push_back(padOut ? b.constant(paddedBias(*bias, shape->outChannels))
                                : conv.operand(2));
    AttrMap attrs = conv.attrs();
    attrs["layout"] = blocked_;
    attrs["group"] = Attribute(shape->group);
    Value *result = b.value(OpKind::Conv, operands, attrs);
    if (shape->regrouped)
      ctx_->stats.add("layout-nchwc.regrouped-convs");
    if (padOut || shape->inChannels != x.dims[1].size)
      ctx_->stats.add("layout-nchwc.padded-convs");
    replaceConv(g, conv, result, b, true, padOut);
    return true;
  }

  // Publishes the blocked conv `result` in place of `conv` and erases the weight (and bias)
  // constants it replaced once nothing else reads them.
  void replaceConv(Graph &g, Op &conv, Value *result, Builder &b, bool newWeight, bool newBias) {
    Op *weightDef = newWeight ? conv.operand(1)->definingOp() : nullptr;
    Op *biasDef = newBias && conv.numOperands() > 2 ? conv.operand(2)->definingOp() : nullptr;
    publish(conv, result, b, conv.result(0)->type().dims[1].size);
    for (Op *def : {weightDef, biasDef})
      if (def && isUnused(g, def->result(0)))
        g.eraseOp(def);
  }

  // A bias [C] zero-padded to [padded].
  static Tensor paddedBias(const Tensor &bias, int64_t padded) {
    const int64_t n = bias.numElements();
    return zeroPadLeading(bias.reshaped({1, n}), 1, padded).reshaped({padded});
  }

  // A conv whose input channels are too few to pad (the stem: 3) but whose output channels
  // block cheaply reads its plain input and writes the blocked result (plain_input): the
  // region starts at the conv's stores instead of a relayout of its whole output.
  bool blockConvOutput(Graph &g, Op &conv) {
    if (!isPlainLayout(conv) || ops::ConvOp(conv).group() != 1)
      return false;
    const TensorType &x = conv.operand(0)->type(), &y = conv.result(0)->type();
    const Tensor *w = constantValue(conv.operand(1));
    if (x.rank() != 4 || y.rank() != 4 || x.dtype != DType::F32 || !w || !w->valid() ||
        !y.dims[1].isStatic() || y.dims[1].size < 1)
      return false;
    const int64_t outChannels = y.dims[1].size, padded = roundUp(outChannels, block_);
    if (static_cast<double>(padded) > kMaxPaddingCost * static_cast<double>(outChannels))
      return false;
    const Tensor *bias = conv.numOperands() > 2 ? constantValue(conv.operand(2)) : nullptr;
    if (conv.numOperands() > 2 && (!bias || !bias->valid()))
      return false;
    Builder b(g);
    b.setInsertBefore(&conv);
    b.setLocation(conv.location());
    const bool pad = padded != outChannels;
    std::vector<Value *> operands = {
        conv.operand(0),
        pad ? b.constant(zeroPadLeading(*w, padded, w->shape()[1])) : conv.operand(1)};
    if (bias)
      operands.push_back(pad ? b.constant(paddedBias(*bias, padded)) : conv.operand(2));
    AttrMap attrs = conv.attrs();
    attrs["layout"] = blocked_;
    attrs["plain_input"] = Attribute(int64_t{1});
    replaceConv(g, conv, b.value(OpKind::Conv, operands, attrs), b, pad, pad);
    return true;
  }

  // Max and average pools of a blocked value pool the blocked tensor: the channels of a block
  // are one vector (pad lanes pool to finite values nobody reads).
  bool blockPool(Graph &g, Op &op) {
    const ops::PoolOp pool(op);
    Value *x = lookupBlocked(op.operand(0));
    const TensorType &y = op.result(0)->type();
    if (!x || y.rank() != 4 || !isFloat(y.dtype) || pool.layout() != 0 ||
        (pool.kind() != PoolKind::Max && pool.kind() != PoolKind::Avg) ||
        (pool.kind() == PoolKind::Avg && pool.count_include_pad() && pool.ceil_mode()))
      return false;
    AttrMap attrs = op.attrs();
    attrs["layout"] = blocked_;
    rebuildOnBlocked(g, op, x, std::move(attrs));
    return true;
  }

  // A concat along the channels of blocked values: when their channel counts are whole blocks
  // (all but the last, whose pad lanes become the result's) it concatenates their blocks, else
  // it gathers their channels (gather_channels); either way the blocked form of the result,
  // with no relayout out of the region and back (inception's and densenet's branch concats,
  // squeezenet's fire modules, shufflenet's 58 + 58 channels).
  bool blockConcat(Graph &g, Op &op) {
    const TensorType &y = op.result(0)->type();
    if (y.rank() != 4 || ops::ConcatOp(op).axis() != 1 || !y.dims[1].isStatic())
      return false;
    std::vector<Value *> blocked;
    std::vector<int64_t> counts;
    bool aligned = true;
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const Dim &channels = op.operand(i)->type().dims[1];
      Value *known = lookupBlocked(op.operand(i));
      if (!known || !channels.isStatic() || channels.size < 1)
        return false;
      aligned &= i + 1 == op.numOperands() || channels.size % block_ == 0;
      blocked.push_back(known);
      counts.push_back(channels.size);
    }
    Builder b(g);
    b.setInsertBefore(&op);
    b.setLocation(op.location());
    Value *result;
    if (aligned) {
      result = b.value(OpKind::Concat, blocked, op.attrs());
      ctx_->stats.add("layout-nchwc.blocked-concats");
    } else {
      std::vector<int64_t> sources(static_cast<size_t>(y.dims[1].size));
      for (size_t o = 0; o < sources.size(); ++o)
        sources[o] = static_cast<int64_t>(o);
      result = gatherChannels(b, blocked, counts, sources);
      ctx_->stats.add("layout-nchwc.gathered-concats");
    }
    publish(op, result, b, y.dims[1].size);
    return true;
  }

  // gather_channels of blocked `operands` (each with `counts` real channels) picking `sources`
  // of their concatenated channels; an operand that is itself a gather_channels result is
  // replaced by its operands (every channel is then copied once, from where it was computed),
  // and a gather of one whole operand in order is that operand.
  Value *gatherChannels(Builder &b, const std::vector<Value *> &operands,
                        const std::vector<int64_t> &counts, const std::vector<int64_t> &sources) {
    std::vector<Value *> flat;
    std::vector<int64_t> flatCounts, firstOfFlat;
    auto flatStart = [&](Value *v, int64_t count) { // v's first channel among the flat operands
      for (size_t i = 0; i < flat.size(); ++i)
        if (flat[i] == v)
          return firstOfFlat[i];
      const int64_t start = flat.empty() ? 0 : firstOfFlat.back() + flatCounts.back();
      flat.push_back(v);
      flatCounts.push_back(count);
      firstOfFlat.push_back(start);
      return start;
    };
    // Each operand's channel -> the value it is read from and its channel there.
    struct Origin {
      Value *value;
      int64_t count, channel;
    };
    std::vector<std::vector<Origin>> origins(operands.size());
    for (size_t j = 0; j < operands.size(); ++j) {
      Op *def = operands[j]->definingOp();
      if (def && def->kind() == OpKind::GatherChannels &&
          ops::GatherChannelsOp(*def).layout() == block_) {
        const ops::GatherChannelsOp inner(*def);
        for (int64_t src : inner.sources()) {
          const ChannelOrigin at = *concatenatedChannel(inner.channels(), src); // verified
          origins[j].push_back({def->operand(static_cast<unsigned>(at.operand)),
                                inner.channels()[at.operand], at.channel});
        }
      } else {
        for (int64_t ch = 0; ch < counts[j]; ++ch)
          origins[j].push_back({operands[j], counts[j], ch});
      }
    }
    std::vector<int64_t> flatSources;
    for (int64_t src : sources) {
      const ChannelOrigin at = *concatenatedChannel(counts, src); // the callers' sources are
      const Origin &from = origins[at.operand][static_cast<size_t>(at.channel)]; // in range
      flatSources.push_back(flatStart(from.value, from.count) + from.channel);
    }
    // Every channel of one operand in order (a split undoing a concat): that operand itself.
    bool whole = flat.size() == 1 && static_cast<int64_t>(flatSources.size()) == flatCounts[0];
    for (size_t o = 0; whole && o < flatSources.size(); ++o)
      whole = flatSources[o] == static_cast<int64_t>(o);
    if (whole)
      return flat[0];
    return b.value(OpKind::GatherChannels, flat,
                   {{"channels", Attribute(flatCounts)},
                    {"sources", Attribute(flatSources)},
                    {"layout", blocked_}});
  }

  // The real channel count of rank-4 `v` (static), or 0.
  static int64_t channelCount(const Value *v) {
    const TensorType &t = v->type();
    return t.rank() == 4 && t.dims[1].isStatic() ? t.dims[1].size : 0;
  }

  // A slice of the channels alone (every other dim whole) of a blocked value gathers them
  // (shufflenet's channel split).
  bool gatherChannelSlice(Graph &g, Op &op) {
    Value *x = lookupBlocked(op.operand(0));
    const int64_t channels = channelCount(op.operand(0));
    if (!x || channels < 1 || channelCount(op.result(0)) < 1)
      return false;
    const ops::SliceOp slice(op);
    const TensorType &t = op.operand(0)->type();
    const std::vector<int64_t> &starts = slice.starts(), &ends = slice.ends(), &steps = slice.steps();
    if (starts.size() != 4 || ends.size() != 4 || steps.size() != 4)
      return false;
    for (size_t d : {size_t(0), size_t(2), size_t(3)}) {
      const Dim &dim = t.dims[d];
      if (dim.isStatic() ? shape::sliceRange(dim.size, starts[d], ends[d], steps[d]).length !=
                                   dim.size ||
                               steps[d] != 1 ||
                               shape::sliceRange(dim.size, starts[d], ends[d], 1).start != 0
                         : !shape::isFullSlice(starts[d], ends[d], steps[d]))
        return false;
    }
    const shape::SliceRange range = shape::sliceRange(channels, starts[1], ends[1], steps[1]);
    if (range.length < 1 || range.length != channelCount(op.result(0)))
      return false;
    std::vector<int64_t> sources;
    for (int64_t i = 0; i < range.length; ++i)
      sources.push_back(range.start + i * range.step);
    Builder b(g);
    b.setInsertBefore(&op);
    b.setLocation(op.location());
    publish(op, gatherChannels(b, {x}, {channels}, sources), b, range.length);
    return true;
  }

  // A channel shuffle of a blocked value, reshape [N, C, H, W] -> [N, g, C/g, H, W], transpose
  // (0, 2, 1, 3, 4), reshape back to [N, C, H, W] (shufflenet), gathers the channels: result
  // channel o is (o mod g) * C/g + o / g.
  bool gatherChannelShuffle(Graph &g, Op &op) {
    Op *transpose = op.operand(0)->definingOp();
    if (!transpose || transpose->kind() != OpKind::Transpose ||
        ops::TransposeOp(*transpose).perm() != std::vector<int64_t>{0, 2, 1, 3, 4})
      return false;
    Op *split = transpose->operand(0)->definingOp();
    if (!split || split->kind() != OpKind::Reshape)
      return false;
    Value *x = lookupBlocked(split->operand(0));
    const int64_t channels = channelCount(split->operand(0));
    const TensorType &in = split->operand(0)->type(), &mid = split->result(0)->type();
    if (!x || channels < 1 || op.result(0)->type().dims != in.dims || mid.rank() != 5 ||
        !(mid.dims[0] == in.dims[0]) || !(mid.dims[3] == in.dims[2]) ||
        !(mid.dims[4] == in.dims[3]) || !mid.dims[1].isStatic() || !mid.dims[2].isStatic() ||
        mid.dims[1].size * mid.dims[2].size != channels)
      return false;
    const int64_t groups = mid.dims[1].size, perGroup = mid.dims[2].size;
    std::vector<int64_t> sources;
    for (int64_t o = 0; o < channels; ++o)
      sources.push_back(o % groups * perGroup + o / groups);
    Builder b(g);
    b.setInsertBefore(&op);
    b.setLocation(op.location());
    publish(op, gatherChannels(b, {x}, {channels}, sources), b, channels);
    return true;
  }

  // A constant operand of a rank-4 (or 5) elementwise op in blocked form: scalars and all-ones
  // shapes broadcast the same in both layouts; a per-channel [.., C, 1, 1] constant is blocked
  // to [1, C/c, 1, 1, c]. nullopt when the constant varies along N or a spatial dim.
  std::optional<Tensor> blockedConstant(const Tensor &t, int64_t channels, int64_t rank) const {
    if (t.rank() > rank)
      return std::nullopt;
    Shape aligned(static_cast<size_t>(rank - t.rank()), 1);
    aligned.insert(aligned.end(), t.shape().begin(), t.shape().end());
    for (size_t d = 0; d < aligned.size(); ++d)
      if (d != 1 && aligned[d] != 1)
        return std::nullopt;
    if (aligned[1] == 1)
      return t;
    if (aligned[1] != channels)
      return std::nullopt;
    return blockChannels(t.reshaped(aligned), block_);
  }

  // Ops that map finite values to finite values (pad lanes hold finite values that are not
  // the op's real inputs: exp, log, sqrt, div or pow could make them inf or NaN, and NaN times
  // a zero weight is not zero).
  static bool keepsPadLanesFinite(OpKind kind) {
    switch (kind) {
    case OpKind::Neg: case OpKind::Abs: case OpKind::Sign: case OpKind::Tanh: case OpKind::Erf:
    case OpKind::Sigmoid: case OpKind::HardSwish: case OpKind::Floor: case OpKind::Ceil:
    case OpKind::Round: case OpKind::Sin: case OpKind::Cos: case OpKind::Atan: case OpKind::Add:
    case OpKind::Sub: case OpKind::Mul: case OpKind::Max: case OpKind::Min: case OpKind::Select:
      return true;
    default:
      return false;
    }
  }

  // A computed per-channel operand [N or 1, C, 1, 1] of a 4-D result [N, C, H, W] (a
  // squeeze-and-excitation scale): relayouting its N x C values is cheap, and the op can then
  // stay in the blocked region instead of relayouting the whole feature map out and back.
  static bool isPerChannel(const TensorType &t, const TensorType &y) {
    if (t.rank() != y.rank() || t.dtype != y.dtype ||
        !(t.dims[0] == y.dims[0] || t.dims[0] == Dim(1)) || !(t.dims[1] == y.dims[1]))
      return false;
    for (int64_t d = 2; d < t.rank(); ++d)
      if (!(t.dims[static_cast<size_t>(d)] == Dim(1)))
        return false;
    return true;
  }

  bool blockElementwise(Graph &g, Op &op) {
    if (op.numResults() != 1 || op.numRegions() != 0)
      return false;
    const TensorType &y = op.result(0)->type();
    if (!isSpatialRank(y) || !y.dims[1].isStatic() ||
        (y.dims[1].size % block_ != 0 && !keepsPadLanesFinite(op.kind())))
      return false;
    // Decide first, then build: nothing is created unless every operand has a blocked form.
    std::vector<Value *> blockedOperands(op.numOperands(), nullptr);
    std::vector<std::optional<Tensor>> constants(op.numOperands());
    std::vector<bool> perChannel(op.numOperands(), false);
    bool anyBlocked = false;
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      Value *v = op.operand(i);
      if (Value *known = lookupBlocked(v); known && v->type().dims == y.dims) {
        blockedOperands[i] = known;
        anyBlocked = true;
      } else if (const Tensor *t = constantValue(v); t && t->valid()) {
        constants[i] = blockedConstant(*t, y.dims[1].size, y.rank());
        if (!constants[i])
          return false;
      } else if (isPerChannel(v->type(), y)) {
        perChannel[i] = true; // blocked by a relayout of its N x C values
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
      if (perChannel[i])
        blockedOperands[i] = blockedForm(op.operand(i), b);
      else if (!blockedOperands[i])
        blockedOperands[i] = constants[i]->identical(*constantValue(op.operand(i)))
                                 ? op.operand(i)
                                 : b.constant(*constants[i]);
    Value *result = b.value(op.kind(), blockedOperands, op.attrs());
    publish(op, result, b, y.dims[1].size);
    return true;
  }

  // A reduction over H and W (global average/max pooling) of a blocked value reduces the
  // blocked tensor's dims 2 and 3 instead: [N, C/c, H, W, c] -> [N, C/c, 1, 1, c], the blocked
  // form of [N, C, 1, 1], so the feature map is not relayouted out of the region for it (pad
  // lanes reduce to finite values nobody reads).
  bool blockSpatialReduction(Graph &g, Op &op) {
    const ops::ReduceOp reduce(op);
    Value *x = lookupBlocked(op.operand(0));
    const int64_t rank = op.operand(0)->type().rank();
    if (!x || !isSpatialRank(op.operand(0)->type()) || !reduce.keepdims() ||
        reduce.axes() != (rank == 4 ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{2, 3, 4}))
      return false;
    switch (reduce.kind()) {
    case ReduceKind::Sum: case ReduceKind::Mean: case ReduceKind::Max: case ReduceKind::Min:
      break;
    default:
      return false;
    }
    rebuildOnBlocked(g, op, x, op.attrs());
    return true;
  }

  // `op` (one operand, one 4-D result) recomputed on the blocked form `x` of its operand with
  // `attrs`, published in its place.
  void rebuildOnBlocked(Graph &g, Op &op, Value *x, AttrMap attrs) {
    Builder b(g);
    b.setInsertBefore(&op);
    b.setLocation(op.location());
    Value *result = b.value(op.kind(), {x}, std::move(attrs));
    publish(op, result, b, op.result(0)->type().dims[1].size);
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
