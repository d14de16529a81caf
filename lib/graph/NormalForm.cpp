// Bringing attributes into their normal form (NormalForm.h).
#include "strata/graph/NormalForm.h"

#include "strata/support/Error.h"
#include "strata/support/ShapeMath.h"

#include <algorithm>
#include <limits>

namespace strata {

void normalizeAttributes(OpKind kind, const std::vector<TensorType> &operands, AttrMap &attrs) {
  if (operands.empty())
    return;
  const int64_t rank = operands[0].rank();
  for (const AttrSpec &spec : opInfo(kind).attrs) {
    auto it = attrs.find(spec.name);
    if (it == attrs.end())
      continue;
    Attribute &a = it->second;
    if (spec.form == AttrForm::Axis && a.kind() == AttrKind::Int) {
      if (std::optional<int64_t> axis = shape::normalizeAxis(a.getInt(), rank))
        a = Attribute(*axis);
    } else if (spec.form == AttrForm::Axes && a.kind() == AttrKind::Ints) {
      std::vector<int64_t> axes = a.getInts();
      for (int64_t &axis : axes)
        if (std::optional<int64_t> n = shape::normalizeAxis(axis, rank))
          axis = *n;
      std::sort(axes.begin(), axes.end());
      a = Attribute(std::move(axes));
    }
  }
}

llvm::Expected<AttrMap> sliceAttributes(int64_t rank, const std::vector<int64_t> &starts,
                                        const std::vector<int64_t> &ends,
                                        const std::vector<int64_t> &axes,
                                        const std::vector<int64_t> &steps) {
  const size_t n = starts.size();
  if (ends.size() != n || (!axes.empty() && axes.size() != n) ||
      (!steps.empty() && steps.size() != n))
    return makeError("slice: starts, ends, axes and steps must have the same length (got " +
                     std::to_string(n) + ", " + std::to_string(ends.size()) + ", " +
                     std::to_string(axes.size()) + ", " + std::to_string(steps.size()) + ")");
  std::vector<int64_t> s(static_cast<size_t>(rank), 0),
      e(static_cast<size_t>(rank), std::numeric_limits<int64_t>::max()),
      st(static_cast<size_t>(rank), 1);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < n; ++i) {
    int64_t raw = axes.empty() ? static_cast<int64_t>(i) : axes[i];
    std::optional<int64_t> axis = shape::normalizeAxis(raw, rank);
    if (!axis)
      return makeError("slice: axis " + std::to_string(raw) + " is out of range for rank " +
                       std::to_string(rank));
    if (seen[*axis])
      return makeError("slice: axis " + std::to_string(*axis) + " is listed twice");
    seen[*axis] = true;
    s[*axis] = starts[i];
    e[*axis] = ends[i];
    st[*axis] = steps.empty() ? 1 : steps[i];
  }
  return AttrMap{{"starts", Attribute(std::move(s))},
                 {"ends", Attribute(std::move(e))},
                 {"steps", Attribute(std::move(st))}};
}

} // namespace strata
