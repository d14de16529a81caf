// Shape functions of the blocked channel layouts: relayout, and conv with layout = "NCHW<c>c"
// (inferred by unblocking the operand types, running the plain conv rule and blocking the
// result, so the two can never disagree on window arithmetic).
#include "TypeInferenceImpl.h"

#include "strata/graph/Layout.h"
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

std::vector<TensorType> inferBlockedPool(const InferContext &c, int64_t block) {
  InferContext plain{c.kind, {unblockType(c.operand(0), block, "operand 0")}, c.attrs,
                     c.freshSymbols};
  return {blockType(inferPlainPool(plain).at(0), block, "the pool result")};
}

} // namespace strata::infer
