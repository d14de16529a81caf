// Shape functions of the blocked channel layouts: relayout, and conv with layout = "NCHW<c>c"
// (inferred by unblocking the operand types, running the plain conv rule and blocking the
// result, so the two can never disagree on window arithmetic), and the Winograd transforms
// (winograd_input / winograd_output, whose results carry the same blocked layouts).
#include "TypeInferenceImpl.h"

#include "strata/graph/Layout.h"
#include "strata/graph/Winograd.h"
#include "strata/support/ShapeMath.h"

namespace strata::infer {

namespace {

// blocks * block as a static dim; the block comes from a layout attribute ("NCHW<c>c", any c).
Dim unblockedDim(int64_t blocks, int64_t block, const std::string &what) {
  std::optional<int64_t> n = shape::checkedMul(blocks, block);
  if (!n)
    fail(what + " unblocks to " + std::to_string(blocks) + " x " + std::to_string(block) +
         ", past int64");
  return Dim(*n);
}

// [N, C, S...] -> [N, ceil(C/block), S..., block]; the last block's lanes past C are padding.
TensorType blockType(const TensorType &t, int64_t block, const char *what) {
  if (t.rank() < 2)
    fail(std::string(what) + " of rank " + std::to_string(t.rank()) +
         " has no channel dim to block");
  const Dim &channels = t.dims[1];
  if (!channels.isStatic())
    fail(std::string(what) + " has " + channels.str() + " channels, not a static count");
  std::vector<Dim> dims = {t.dims[0], Dim((channels.size + block - 1) / block)};
  dims.insert(dims.end(), t.dims.begin() + 2, t.dims.end());
  dims.push_back(Dim(block));
  return t.withDims(std::move(dims));
}

// [N, C/block, S..., block] -> [N, C, S...]; `channels` (when positive) is C, whose blocks must
// be exactly those of the operand.
TensorType unblockType(const TensorType &t, int64_t block, const char *what,
                       int64_t channels = 0) {
  if (t.rank() < 3)
    fail(std::string(what) + " of rank " + std::to_string(t.rank()) +
         " is not blocked [N, C/c, S..., c]");
  if (!(t.dims.back() == Dim(block)) || !t.dims[1].isStatic())
    fail(std::string(what) + " of shape " + dimsToString(t.dims) + " is not blocked by " +
         std::to_string(block));
  Dim all = unblockedDim(t.dims[1].size, block, what);
  if (channels < 0 || channels > all.size || (channels > 0 && channels <= all.size - block))
    fail("channels " + std::to_string(channels) + " do not fill the " +
         std::to_string(t.dims[1].size) + " blocks of " + std::to_string(block) + " of " + what);
  std::vector<Dim> dims = {t.dims[0], channels > 0 ? Dim(channels) : all};
  dims.insert(dims.end(), t.dims.begin() + 2, t.dims.end() - 1);
  return t.withDims(std::move(dims));
}

TensorType relayoutType(const InferContext &c) {
  const auto attrs = c.view<ops::RelayoutOp>();
  int64_t from = attrs.from(), to = attrs.to();
  if ((from == 0) == (to == 0))
    fail("relayout converts between a plain and a blocked layout, not \"" +
         c.attrs.at("from").getString() + "\" to \"" + c.attrs.at("to").getString() + "\"");
  if (to) {
    const TensorType &x = c.operand(0);
    if (attrs.channels() != 0 && x.rank() >= 2 && !(x.dims[1] == Dim(attrs.channels())))
      fail("channels " + std::to_string(attrs.channels()) + " is not operand 0's " +
           x.dims[1].str());
    return blockType(x, to, "operand 0");
  }
  return unblockType(c.operand(0), from, "operand 0", attrs.channels());
}

} // namespace

std::vector<TensorType> inferBlockedConv(const InferContext &c, int64_t block) {
  const TensorType &x = c.operand(0), &w = c.operand(1);
  if (c.view<ops::ConvOp>().plain_input()) { // plain operands, blocked result
    if (x.rank() + 1 == w.rank() || x.rank() < 3)
      fail("operand 0 of a conv with plain_input must be plain [N, C, S...], got " +
           dimsToString(x.dims));
    TensorType y = inferPlainConv(c).at(0);
    if (!y.dims[1].isStatic() || y.dims[1].size % block != 0)
      fail("a conv with plain_input needs output channels (" + y.dims[1].str() +
           ") that fill whole blocks of " + std::to_string(block));
    return {blockType(y, block, "the conv result")};
  }
  TensorType plainX = unblockType(x, block, "operand 0");
  // w: [O/co, I/ci, K..., ci, co] -> [O, I, K...]
  if (w.rank() != x.rank() + 1 || !w.isStatic())
    fail("operand 1 (blocked weight) must be static of rank " + std::to_string(x.rank() + 1) +
         ", got " + dimsToString(w.dims));
  int64_t inBlock = w.dims[w.rank() - 2].size, outBlock = w.dims.back().size;
  if (outBlock != block)
    fail("operand 1 (blocked weight) has output block " + std::to_string(outBlock) +
         " but the layout blocks by " + std::to_string(block));
  std::vector<Dim> plainW = {unblockedDim(w.dims[0].size, outBlock, "operand 1 (blocked weight)"),
                             unblockedDim(w.dims[1].size, inBlock, "operand 1 (blocked weight)")};
  plainW.insert(plainW.end(), w.dims.begin() + 2, w.dims.end() - 2);
  std::vector<TensorType> plainOperands = {plainX, w.withDims(std::move(plainW))};
  for (size_t i = 2; i < c.numOperands(); ++i)
    plainOperands.push_back(c.operand(static_cast<unsigned>(i)));
  InferContext plain{c.kind, plainOperands, c.attrs, c.freshSymbols};
  return {blockType(inferPlainConv(plain).at(0), block, "the conv result")};
}

std::vector<TensorType> inferRelayout(const InferContext &c) { return {relayoutType(c)}; }

std::vector<TensorType> inferGatherChannels(const InferContext &c) {
  const auto attrs = c.view<ops::GatherChannelsOp>();
  const std::vector<int64_t> &channels = attrs.channels(), &sources = attrs.sources();
  const int64_t block = attrs.layout();
  if (channels.size() != c.numOperands())
    fail("attribute 'channels' has " + std::to_string(channels.size()) + " entries for " +
         std::to_string(c.numOperands()) + " operands");
  if (sources.empty())
    fail("attribute 'sources' is empty");
  int64_t total = 0;
  TensorType first;
  for (unsigned j = 0; j < c.numOperands(); ++j) {
    const TensorType &x = c.operand(j);
    const std::string what = "operand " + std::to_string(j);
    if (channels[j] < 1 || channels[j] > (int64_t(1) << 40)) // also keeps the sums in int64
      fail("attribute 'channels' entry " + std::to_string(j) + " is " +
           std::to_string(channels[j]) + ", not a positive count up to 2^40");
    TensorType plain = block ? unblockType(x, block, what.c_str()) : x;
    if (plain.rank() < 3)
      fail(what + " of shape " + dimsToString(x.dims) + " has no spatial dims");
    const int64_t blocks = (channels[j] + std::max<int64_t>(block, 1) - 1) / std::max<int64_t>(block, 1);
    if (!(x.dims[1] == Dim(block ? blocks : channels[j])))
      fail(what + " of shape " + dimsToString(x.dims) + " does not hold " +
           std::to_string(channels[j]) + " channels");
    if (j == 0) {
      first = plain;
    } else {
      requireSameDType(c, j, 0);
      std::vector<Dim> a = first.dims, b = plain.dims;
      a.erase(a.begin() + 1);
      b.erase(b.begin() + 1);
      if (a != b)
        fail(what + " of shape " + dimsToString(x.dims) + " differs from operand 0 " +
             dimsToString(c.operand(0).dims) + " outside the channels");
    }
    total += channels[j];
  }
  for (int64_t s : sources)
    if (s < 0 || s >= total)
      fail("source channel " + std::to_string(s) + " is not among the operands' " +
           std::to_string(total) + " channels");
  std::vector<Dim> dims = first.dims;
  dims[1] = Dim(static_cast<int64_t>(sources.size()));
  TensorType y = first.withDims(std::move(dims));
  return {block ? blockType(y, block, "the result") : y};
}

std::vector<TensorType> inferBlockedPool(const InferContext &c, int64_t block) {
  InferContext plain{c.kind, {unblockType(c.operand(0), block, "operand 0")}, c.attrs,
                     c.freshSymbols};
  return {blockType(inferPlainPool(plain).at(0), block, "the pool result")};
}

} // namespace strata::infer

namespace strata::infer {

namespace {

const winograd::Transform &winogradTransform(const InferContext &c, int64_t m) {
  const winograd::Transform *tr = winograd::transformFor(m);
  if (!tr)
    fail("tile " + std::to_string(m) + " has no Winograd transform (2 or 4)");
  requireDType(c, 0, c.operand(0).dtype == DType::F32, "f32");
  return *tr;
}

// ceil(size / m) tiles along a dim, as a dim (a formula for a symbolic size).
Dim tilesAlong(const Dim &size, int64_t m) {
  if (size.isStatic())
    return Dim(winograd::tilesAlong(size.size, m));
  return Dim::of(SymExpr::ceilDiv(size.expr, SymExpr(m)));
}

} // namespace

std::vector<TensorType> inferWinogradInput(const InferContext &c) {
  const auto attrs = c.view<ops::WinogradInputOp>();
  const winograd::Transform &tr = winogradTransform(c, attrs.tile());
  const int64_t block = attrs.layout();
  TensorType x = block ? unblockType(c.operand(0), block, "operand 0") : c.operand(0);
  if (x.rank() != 4)
    fail("operand 0 must be [N, C, H, W] (blocked: [N, C/c, H, W, c]), got " +
         dimsToString(c.operand(0).dims));
  const std::vector<int64_t> &pads = attrs.pads();
  if (pads.size() != 4)
    fail("pads must be [top, left, bottom, right], got " + intsToString(pads));
  SymExpr tiles(1);
  for (size_t d = 0; d < 2; ++d) {
    const Dim &size = x.dims[d + 2];
    // Pads beyond the input's own size only add zero tiles; bounding them keeps sums in range
    // (a symbolic size: pads of at most 2, the 3x3 window's reach).
    const int64_t limit = size.isStatic() ? size.size + 2 : 2;
    if (pads[d] < 0 || pads[d + 2] < 0 || pads[d] > limit || pads[d + 2] > limit)
      fail("pads " + intsToString(pads) + " must be in [0, " +
           (size.isStatic() ? std::string("size + 2") : std::string("2")) + "] for sizes " +
           dimsToString(x.dims));
    if (size.isStatic() && size.size + pads[d] + pads[d + 2] - 2 < 1)
      fail("the padded input " + dimsToString(x.dims) + " is smaller than the 3x3 window");
    // A symbolic output size below 1 is an empty conv result: no tiles (the plan checks sizes
    // are >= 0 when bound).
    try {
      tiles = tiles *
              tilesAlong(Dim::of(size.asExpr() + SymExpr(pads[d] + pads[d + 2] - 2)), tr.m).asExpr();
    } catch (const SymExprError &e) {
      fail(std::string(e.what()) + " counting tiles");
    }
  }
  if (!x.dims[1].isStatic())
    fail("operand 0 needs a static channel count, got " + dimsToString(x.dims));
  return {x.withDims({x.dims[0], Dim(tr.t * tr.t), Dim::of(tiles), x.dims[1]})};
}

std::vector<TensorType> inferWinogradOutput(const InferContext &c) {
  const auto attrs = c.view<ops::WinogradOutputOp>();
  const winograd::Transform &tr = winogradTransform(c, attrs.tile());
  const TensorType &p = c.operand(0);
  if (p.rank() != 4 || !p.dims[1].isStatic() || !p.dims[3].isStatic())
    fail("operand 0 must be [N, t^2, tiles, K] with static t^2 and K, got " +
         dimsToString(p.dims));
  const std::vector<Dim> size = attrs.output_size();
  if (size.size() != 2)
    fail("output_size must be two sizes, got " + dimsToString(size));
  for (const Dim &s : size)
    if (s.isStatic() && (s.size < 1 || s.size > (int64_t(1) << 31)))
      fail("output_size must be two sizes in [1, 2^31], got " + dimsToString(size));
  Dim tiles;
  try {
    tiles = Dim::of(tilesAlong(size[0], tr.m).asExpr() * tilesAlong(size[1], tr.m).asExpr());
  } catch (const SymExprError &e) {
    fail(std::string(e.what()) + " counting tiles");
  }
  if (p.dims[1].size != tr.t * tr.t || p.dims[2] != tiles)
    fail("operand 0 " + dimsToString(p.dims) + " is not [N, " + std::to_string(tr.t * tr.t) +
         ", " + tiles.str() + ", K] for tile " + std::to_string(tr.m) + " and output_size " +
         dimsToString(size));
  const int64_t k = p.dims[3].size;
  if (c.numOperands() > 1) {
    requireSameDType(c, 0, 1);
    if (!(c.operand(1).dims == std::vector<Dim>{Dim(k)}))
      fail("operand 1 (bias) must be [" + std::to_string(k) + "], got " +
           dimsToString(c.operand(1).dims));
  }
  TensorType y = p.withDims({p.dims[0], Dim(k), size[0], size[1]});
  const int64_t block = attrs.layout();
  if (!block)
    return {y};
  if (k % block != 0)
    fail("a blocked result needs channels (" + std::to_string(k) + ") in whole blocks of " +
         std::to_string(block));
  return {blockType(y, block, "the result")};
}

} // namespace strata::infer
