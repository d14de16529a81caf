// relayout: moves channels between the plain NCHW layout and a blocked NCHW<c>c layout.
#include "Kernels.h"

#include "strata/graph/Layout.h"

namespace strata::interp {

namespace {

Tensors relayoutKernel(const Op &op, const Tensors &operands) {
  const Tensor &x = operands[0];
  const ops::RelayoutOp relayout(op);
  int64_t from = relayout.from(), to = relayout.to();
  if ((from == 0) == (to == 0))
    structured::fail(op, "expected one plain and one blocked layout");
  if (to) {
    if (x.rank() < 2)
      structured::fail(op, "cannot block " + shapeToString(x.shape()) + " by " +
                               std::to_string(to) + " channels");
    return {blockChannels(x, to)};
  }
  const int64_t channels = relayout.channels();
  if (x.rank() < 3 || x.shape().back() != from || channels < 0 ||
      channels > x.shape()[1] * from || (channels > 0 && channels <= (x.shape()[1] - 1) * from))
    structured::fail(op, shapeToString(x.shape()) + " is not blocked by " + std::to_string(from) +
                             (channels ? " into " + std::to_string(channels) + " channels" : ""));
  return {unblockChannels(x, channels)};
}

} // namespace

void registerLayoutKernels(KernelFn *table) {
  table[static_cast<size_t>(OpKind::Relayout)] = relayoutKernel;
}

} // namespace strata::interp
