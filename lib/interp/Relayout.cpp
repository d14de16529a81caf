// relayout: moves channels between the plain NCHW layout and a blocked NCHW<c>c layout;
// gather_channels: picks channels of several operands in either layout.
#include "Kernels.h"

#include "strata/graph/Layout.h"

#include <cstring>

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

// Result channel o = channel sources[o] of the operands' channels concatenated; plain
// [N, C, S...] element (n, ch, s) sits at (n * C + ch) * S + s, blocked [N, C/c, S..., c] at
// ((n * C/c + ch / c) * S + s) * c + ch % c; the result's pad lanes are 0.
Tensors gatherChannelsKernel(const Op &op, const Tensors &operands) {
  const ops::GatherChannelsOp attrs(op);
  const std::vector<int64_t> &channels = attrs.channels(), &sources = attrs.sources();
  const int64_t block = attrs.layout();
  if (channels.size() != operands.size() || sources.empty())
    structured::fail(op, "channels or sources do not match the operands");
  const Tensor &x0 = operands[0];
  const int64_t images = x0.shape()[0];
  int64_t spatial = 1;
  for (size_t d = 2; d < x0.shape().size() - (block ? 1 : 0); ++d)
    spatial *= x0.shape()[d];
  const int64_t outChannels = static_cast<int64_t>(sources.size());
  const int64_t outSlots = block ? (outChannels + block - 1) / block * block : outChannels;
  Shape shape = x0.shape();
  shape[1] = block ? outSlots / block : outChannels;
  Tensor out(x0.dtype(), shape); // zero-filled: the pad lanes
  const size_t size = dtypeSize(x0.dtype());
  auto offset = [&](int64_t n, int64_t ch, int64_t s, int64_t slots) {
    return block ? ((n * (slots / block) + ch / block) * spatial + s) * block + ch % block
                 : (n * slots + ch) * spatial + s;
  };
  auto *dst = static_cast<uint8_t *>(out.rawData());
  for (int64_t o = 0; o < outChannels; ++o) {
    const int64_t src = sources[static_cast<size_t>(o)];
    std::optional<ChannelOrigin> origin = concatenatedChannel(channels, src);
    if (!origin)
      structured::fail(op, "source channel " + std::to_string(src) + " out of range");
    const size_t j = origin->operand;
    const int64_t ch = origin->channel;
    const int64_t slots = block ? (channels[j] + block - 1) / block * block : channels[j];
    const auto *from = static_cast<const uint8_t *>(operands[j].rawData());
    for (int64_t n = 0; n < images; ++n)
      for (int64_t s = 0; s < spatial; ++s)
        std::memcpy(dst + offset(n, o, s, outSlots) * size, from + offset(n, ch, s, slots) * size,
                    size);
  }
  return {std::move(out)};
}

} // namespace

void registerLayoutKernels(KernelFn *table) {
  table[static_cast<size_t>(OpKind::Relayout)] = relayoutKernel;
  table[static_cast<size_t>(OpKind::GatherChannels)] = gatherChannelsKernel;
}

} // namespace strata::interp
