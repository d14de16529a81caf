// Type inference for the blocked channel layouts: relayout, and conv with layout = "NCHW<c>c"
// (inferred by unblocking the operand types, running the plain conv rule and blocking the
// result, so the two can never disagree on window arithmetic).
#include "TypeInferenceImpl.h"

#include "strata/graph/Layout.h"

namespace strata::infer {

namespace {

int64_t layoutAttr(const InferContext &c, const char *name) {
  const std::string &text = c.stringAttr(name);
  std::optional<int64_t> block = parseChannelLayout(text);
  if (!block)
    fail("attribute '" + std::string(name) + "' \"" + text +
         "\" is not a channel layout (\"NCHW\" or \"NCHW<c>c\")");
  return *block;
}

// [N, C, S...] -> [N, C/block, S..., block]
TensorType blockType(const TensorType &t, int64_t block, const char *what) {
  if (t.rank() < 2)
    fail(std::string(what) + " of rank " + std::to_string(t.rank()) +
         " has no channel dim to block");
  const Dim &channels = t.dims[1];
  if (!channels.isStatic() || channels.size % block != 0)
    fail(std::string(what) + " has " + channels.str() + " channels, not a multiple of " +
         std::to_string(block));
  std::vector<Dim> dims = {t.dims[0], Dim(channels.size / block)};
  dims.insert(dims.end(), t.dims.begin() + 2, t.dims.end());
  dims.push_back(Dim(block));
  return t.withDims(std::move(dims));
}

// [N, C/block, S..., block] -> [N, C, S...]
TensorType unblockType(const TensorType &t, int64_t block, const char *what) {
  if (t.rank() < 3)
    fail(std::string(what) + " of rank " + std::to_string(t.rank()) +
         " is not blocked [N, C/c, S..., c]");
  if (!(t.dims.back() == Dim(block)) || !t.dims[1].isStatic())
    fail(std::string(what) + " of shape " + dimsToString(t.dims) + " is not blocked by " +
         std::to_string(block));
  std::vector<Dim> dims = {t.dims[0], Dim(t.dims[1].size * block)};
  dims.insert(dims.end(), t.dims.begin() + 2, t.dims.end() - 1);
  return t.withDims(std::move(dims));
}

TensorType inferRelayout(const InferContext &c) {
  int64_t from = layoutAttr(c, "from"), to = layoutAttr(c, "to");
  if ((from == 0) == (to == 0))
    fail("relayout converts between a plain and a blocked layout, not \"" + c.stringAttr("from") +
         "\" to \"" + c.stringAttr("to") + "\"");
  return to ? blockType(c.operand(0), to, "operand 0") : unblockType(c.operand(0), from, "operand 0");
}

TensorType inferBlockedConv(const InferContext &c, int64_t block) {
  const TensorType &x = c.operand(0), &w = c.operand(1);
  TensorType plainX = unblockType(x, block, "operand 0");
  // w: [O/co, I/ci, K..., ci, co] -> [O, I, K...]
  if (w.rank() != x.rank() + 1 || !w.isStatic())
    fail("operand 1 (blocked weight) must be static of rank " + std::to_string(x.rank() + 1) +
         ", got " + dimsToString(w.dims));
  int64_t inBlock = w.dims[w.rank() - 2].size, outBlock = w.dims.back().size;
  if (outBlock != block)
    fail("operand 1 (blocked weight) has output block " + std::to_string(outBlock) +
         " but the layout blocks by " + std::to_string(block));
  std::vector<Dim> plainW = {Dim(w.dims[0].size * outBlock), Dim(w.dims[1].size * inBlock)};
  plainW.insert(plainW.end(), w.dims.begin() + 2, w.dims.end() - 2);
  std::vector<TensorType> plainOperands = {plainX, w.withDims(std::move(plainW))};
  for (size_t i = 2; i < c.numOperands(); ++i)
    plainOperands.push_back(c.operand(static_cast<unsigned>(i)));
  InferContext plain{c.kind, plainOperands, c.attrs, c.freshSymbols};
  return blockType(inferStructured(plain).at(0), block, "the conv result");
}

} // namespace

bool usesBlockedLayout(OpKind kind, const AttrMap &attrs) {
  if (kind == OpKind::Relayout)
    return true;
  if (kind != OpKind::Conv)
    return false;
  auto it = attrs.find("layout");
  if (it == attrs.end() || it->second.kind() != AttrKind::String)
    return false;
  std::optional<int64_t> block = parseChannelLayout(it->second.getString());
  return !block || *block != 0; // an invalid name is reported by inferLayout
}

std::vector<TensorType> inferLayout(const InferContext &c) {
  if (c.kind == OpKind::Relayout)
    return {inferRelayout(c)};
  return {inferBlockedConv(c, layoutAttr(c, "layout"))};
}

} // namespace strata::infer
