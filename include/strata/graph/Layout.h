// Channel layouts of activations and convolution weights: plain NCHW (channels at dim 1) and
// the blocked NCHW<c>c form used by the layout-nchwc pass, plus the tensor transforms between
// them (used by the pass on constants and by the interpreter's relayout and blocked conv).
//
//   activation  NCHW     [N, C, S...]            (S: any number of spatial dims)
//               NCHW<c>c [N, C/c, S..., c]       element (n, cb, s, ci) = plain (n, cb*c+ci, s)
//   conv weight plain    [O, I, K...]
//               blocked  [O/co, I/ci, K..., ci, co]  ("OIhw<ci>i<co>o"; ci = 1 for depthwise)
#pragma once
#include "strata/support/Tensor.h"

#include <optional>
#include <string>
#include <string_view>

namespace strata {

// 0 for a plain layout ("" or "NCHW"), c for "NCHW<c>c" (c >= 1), nullopt for anything else.
std::optional<int64_t> parseChannelLayout(std::string_view layout);
std::string blockedLayoutName(int64_t block); // "NCHW8c"

// Activations: [N, C, S...] <-> [N, C/c, S..., c]. C must be divisible by c.
Tensor blockChannels(const Tensor &plain, int64_t block);
Tensor unblockChannels(const Tensor &blocked);

// Conv weights: [O, I, K...] <-> [O/co, I/ci, K..., ci, co].
Tensor blockConvWeight(const Tensor &plain, int64_t inBlock, int64_t outBlock);
Tensor unblockConvWeight(const Tensor &blocked);

} // namespace strata
