// unique_count and unique (ONNX Unique): the distinct elements, or slices along an axis,
// compared as row-major sequences of their elements (== and <, so every NaN is distinct).
#include "Kernels.h"

#include <algorithm>
#include <cstring>

namespace strata::interp::structured {

namespace {

// The items of x: `n` of them, item i's element e at pre-index p, post-index q (e = p * post + q).
struct Items {
  const Tensor &x;
  int64_t n = 0, pre = 1, post = 1;
  int64_t flat(int64_t i, int64_t e) const { return (e / post * n + i) * post + e % post; }
  int64_t length() const { return pre * post; }
  // Element e of items i and j: equal, and i's less (integers compared exactly).
  bool same(int64_t i, int64_t j, int64_t e) const {
    return isFloat(x.dtype()) ? x.getDouble(flat(i, e)) == x.getDouble(flat(j, e))
                              : x.getInt(flat(i, e)) == x.getInt(flat(j, e));
  }
  bool below(int64_t i, int64_t j, int64_t e) const {
    return isFloat(x.dtype()) ? x.getDouble(flat(i, e)) < x.getDouble(flat(j, e))
                              : x.getInt(flat(i, e)) < x.getInt(flat(j, e));
  }
  bool equal(int64_t i, int64_t j) const {
    for (int64_t e = 0; e < length(); ++e)
      if (!same(i, j, e))
        return false;
    return true;
  }
  bool less(int64_t i, int64_t j) const {
    for (int64_t e = 0; e < length(); ++e)
      if (!same(i, j, e))
        return below(i, j, e);
    return false;
  }
};

Items itemsOf(const Op &op, const Tensor &x, int64_t axis, bool hasAxis) {
  Items items{x};
  if (!hasAxis) {
    items.n = x.numElements();
    return items;
  }
  if (axis < 0 || axis >= x.rank())
    fail(op, "axis " + std::to_string(axis) + " is not within rank " + std::to_string(x.rank()));
  for (int64_t d = 0; d < x.rank(); ++d) {
    int64_t size = x.shape()[static_cast<size_t>(d)];
    if (d < axis)
      items.pre *= size;
    else if (d > axis)
      items.post *= size;
  }
  items.n = x.shape()[static_cast<size_t>(axis)];
  return items;
}

// The first occurrence of every item (first[i] == i for a distinct one).
std::vector<int64_t> firstOccurrences(const Items &items) {
  std::vector<int64_t> first(static_cast<size_t>(items.n));
  for (int64_t i = 0; i < items.n; ++i) {
    first[i] = i;
    for (int64_t j = 0; j < i; ++j)
      if (first[j] == j && items.equal(j, i)) {
        first[i] = j;
        break;
      }
  }
  return first;
}

} // namespace

Tensors uniqueCountKernel(const Op &op, const Tensors &operands) {
  const ops::UniqueCountOp attrs(op);
  Items items = itemsOf(op, operands[0], attrs.axis(), attrs.has_axis());
  std::vector<int64_t> first = firstOccurrences(items);
  int64_t distinct = 0;
  for (int64_t i = 0; i < items.n; ++i)
    distinct += first[i] == i;
  return {Tensor::scalar(DType::I64, static_cast<double>(distinct))};
}

Tensors uniqueKernel(const Op &op, const Tensors &operands) {
  const ops::UniqueOp attrs(op);
  const Tensor &x = operands[0];
  Items items = itemsOf(op, x, attrs.axis(), attrs.has_axis());
  std::vector<int64_t> first = firstOccurrences(items), order;
  for (int64_t i = 0; i < items.n; ++i)
    if (first[i] == i)
      order.push_back(i);
  if (attrs.sorted())
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return items.less(a, b); });
  const int64_t u = static_cast<int64_t>(order.size());
  if (operands[1].dtype() != DType::I64 || operands[1].numElements() != 1 ||
      operands[1].getInt(0) != u)
    fail(op, "the count operand does not hold the " + std::to_string(u) + " distinct items");
  std::vector<int64_t> position(static_cast<size_t>(items.n));
  for (int64_t r = 0; r < u; ++r)
    position[static_cast<size_t>(order[static_cast<size_t>(r)])] = r;
  Shape yShape = {u};
  if (attrs.has_axis()) {
    yShape = x.shape();
    yShape[static_cast<size_t>(attrs.axis())] = u;
  }
  Tensor y(x.dtype(), yShape), indices(DType::I64, {u}), inverse(DType::I64, {items.n}),
      counts(DType::I64, {u});
  for (int64_t r = 0; r < u; ++r) {
    const int64_t i = order[static_cast<size_t>(r)];
    indices.setInt(r, i);
    int64_t count = 0;
    for (int64_t j = 0; j < items.n; ++j)
      count += first[j] == i;
    counts.setInt(r, count);
    const size_t size = dtypeSize(x.dtype());
    for (int64_t e = 0; e < items.length(); ++e) {
      const int64_t to = (e / items.post * u + r) * items.post + e % items.post;
      std::memcpy(static_cast<uint8_t *>(y.rawData()) + to * size,
                  static_cast<const uint8_t *>(x.rawData()) + items.flat(i, e) * size, size);
    }
  }
  for (int64_t j = 0; j < items.n; ++j)
    inverse.setInt(j, position[static_cast<size_t>(first[j])]);
  return {y, indices, inverse, counts};
}

} // namespace strata::interp::structured
