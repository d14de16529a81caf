// topk: the k largest (or smallest) entries along an axis, with their i64 indices.
#include "Kernels.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace strata::interp::structured {


Tensors topKKernel(const Op &op, const Tensors &operands) {
  DType dtype = operands[0].dtype();
  Tensor x = widenHalf(operands[0]);
  if (x.rank() == 0)
    fail(op, "operand must have rank >= 1");
  const ops::TopKOp topK(op);
  int64_t axis = checkedAxis(topK.axis(), x.rank(), "topk");
  const int64_t k = boundSize(topK.k()); // a symbolic k under the running graph's bindings
  bool largest = topK.largest();
  int64_t axisSize = x.shape()[axis];
  if (k < 0 || k > axisSize)
    fail(op, "k = " + std::to_string(k) + " is out of range for axis of size " +
                 std::to_string(axisSize));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    inner *= x.shape()[d];
  Shape outShape = x.shape();
  outShape[axis] = k;
  Tensor values(x.dtype(), outShape), indices(DType::I64, outShape);
  int64_t *indexOut = indices.data<int64_t>();
  // Results are always sorted: ONNX leaves the order unspecified when sorted=0.
  visitDType(op, x.dtype(), /*allowInts=*/true, [&](auto tag) {
    using T = decltype(tag);
    const T *in = x.data<T>();
    T *valueOut = values.data<T>();
    std::vector<int64_t> order(static_cast<size_t>(axisSize));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T *line = in + o * axisSize * inner + i;
        std::iota(order.begin(), order.end(), int64_t{0});
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
          return comesFirst(line[a * inner], a, line[b * inner], b, largest);
        });
        int64_t outBase = o * k * inner + i;
        for (int64_t j = 0; j < k; ++j) {
          valueOut[outBase + j * inner] = line[order[j] * inner];
          indexOut[outBase + j * inner] = order[j];
        }
      }
  });
  return {narrowFromF32(values, dtype), indices};
}

} // namespace strata::interp::structured
