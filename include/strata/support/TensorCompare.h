// The one comparison every differential check uses (--verify-semantics, strata bisect): same
// dtype and shape, NaN at the same positions, infinities equal, and for floats
// max |got - want| <= tol * max(max |want| over finite elements, 1e-6); other dtypes exactly.
#pragma once
#include "strata/support/Tensor.h"

#include <optional>
#include <string>

namespace strata {

// Nothing when `got` matches `want`; else what differs ("has shape [2] instead of [3]",
// "max error 0.5 (tolerance 1e-05)", "differs at element 3: 1 instead of 2").
std::optional<std::string> compareTensors(const Tensor &want, const Tensor &got, double tol);

// The largest |got - want| over finite elements of float tensors (0 for others), for reports.
double maxAbsDiff(const Tensor &want, const Tensor &got);

} // namespace strata
