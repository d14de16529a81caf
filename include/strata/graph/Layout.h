// Channel layouts of activations and convolution weights: plain NCHW (channels at dim 1) and
// the blocked NCHW<c>c form used by the layout-nchwc pass, plus the tensor transforms between
// them (used by the pass on constants and by the interpreter's relayout and blocked conv).
//
//   activation  NCHW     [N, C, S...]            (S: any number of spatial dims)
//               NCHW<c>c [N, ceil(C/c), S..., c] element (n, cb, s, ci) = plain (n, cb*c+ci, s)
//               When c does not divide C the last block has pad lanes (channels C..): their
//               values are unspecified but finite (zeros, copies of channel C-1, or what the ops
//               of a blocked region make of those), and no result depends on them: blocked convs
//               give them zero weights, a relayout back drops them.
//   conv weight plain    [O, I, K...]
//               blocked  [O/co, I/ci, K..., ci, co]  ("OIhw<ci>i<co>o"; ci = 1 for depthwise)
//   matmul b    plain    [K, N]
//               panels   [N/p, K, p]             element (j, k, q) = plain (k, j*p + q)
#pragma once
#include "strata/support/Tensor.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

// 0 for a plain layout ("" or "NCHW"), c for "NCHW<c>c" (c >= 1), nullopt for anything else.
std::optional<int64_t> parseChannelLayout(std::string_view layout);
std::string blockedLayoutName(int64_t block); // "NCHW8c"

// Activations: [N, C, S...] <-> [N, ceil(C/c), S..., c]; pad lanes are zeros. `channels` is
// the plain channel count (0: every lane of every block).
Tensor blockChannels(const Tensor &plain, int64_t block);
Tensor unblockChannels(const Tensor &blocked, int64_t channels = 0);

// `x` grown with zeros along its first two dims to [d0, d1, ...] (each at least x's).
Tensor zeroPadLeading(const Tensor &x, int64_t d0, int64_t d1);

// Conv weights: [O, I, K...] <-> [O/co, I/ci, K..., ci, co].
Tensor blockConvWeight(const Tensor &plain, int64_t inBlock, int64_t outBlock);
Tensor unblockConvWeight(const Tensor &blocked);

// Matmul right operands: [K, N] <-> [N/p, K, p] (matmul's b_panel). N must be divisible by p.
// Each panel is one contiguous K x p block: the tiled kernel's loads of a column tile walk it in
// order, where rows of a plain [K, N] one lie N*4 bytes apart (a multiple of 4 KiB for N = 1024,
// 3072, ..., so every row of a panel falls into one L1 set).
Tensor packMatMulPanels(const Tensor &plain, int64_t panel);
Tensor unpackMatMulPanels(const Tensor &panels);

// The tiled matmul kernel's column tile, in vectors, for `rows` rows (1..4) out of `vectors`
// vectors of columns with `registers` SIMD registers: at most (registers - 1) / (rows + 1)
// (rows * C accumulators, C loads of b, one broadcast of a) and at most 8; a divisor of
// `vectors` near that when there is one (`*divides` says whether it is), else the width of
// balanced tiles whose last one is clamped. The lowering and pack-matmul-weights both ask this
// one function, so a packed panel is exactly one tile wide.
int64_t matMulColumnVectors(int64_t vectors, int64_t rows, int64_t registers,
                            bool *divides = nullptr);

// gather_channels' sources: channel `c` of operands with `channels[j]` channels each,
// concatenated, is channel `channel` of operand `operand`; nullopt when c is outside them. The
// interpreter, the lowering and layout-nchwc's composition of gathers all ask this.
struct ChannelOrigin {
  size_t operand;
  int64_t channel;
};
std::optional<ChannelOrigin> concatenatedChannel(const std::vector<int64_t> &channels, int64_t c);

} // namespace strata
