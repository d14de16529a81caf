// relayout: moves channels between the plain NCHW layout and a blocked NCHW<c>c layout.
#include "Kernels.h"

#include "strata/graph/Layout.h"

namespace strata::interp {

namespace {

int64_t layoutBlock(const Op &op, const char *attr) {
  std::optional<int64_t> block = parseChannelLayout(op.stringAttr(attr));
  if (!block)
    structured::fail(op, "unknown layout \"" + op.stringAttr(attr) + "\"");
  return *block;
}

Tensors relayoutKernel(const Op &op, const Tensors &operands) {
  const Tensor &x = operands[0];
  int64_t from = layoutBlock(op, "from"), to = layoutBlock(op, "to");
  if ((from == 0) == (to == 0))
    structured::fail(op, "expected one plain and one blocked layout");
  if (to) {
    if (x.rank() < 2 || x.shape()[1] % to != 0)
      structured::fail(op, "cannot block " + shapeToString(x.shape()) + " by " +
                               std::to_string(to) + " channels");
    return {blockChannels(x, to)};
  }
  if (x.rank() < 3 || x.shape().back() != from)
    structured::fail(op, shapeToString(x.shape()) + " is not blocked by " + std::to_string(from));
  return {unblockChannels(x)};
}

} // namespace

void registerLayoutKernels(KernelFn *table) {
  table[static_cast<size_t>(OpKind::Relayout)] = relayoutKernel;
}

} // namespace strata::interp
