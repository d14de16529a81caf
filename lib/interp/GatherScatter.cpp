// Index-driven data movement: gather, gather_elements, gather_nd, scatter_elements and
// scatter_nd (ONNX semantics). Negative indices count from the end of their axis; any index still
// out of range is an InterpError naming the index, the axis and its size.
#include "ElementwiseOps.h"
#include "strata/support/KernelStatus.h"

#include <cstring>

namespace strata::interp {
namespace {

// Wraps a negative index and checks the range.
int64_t resolveIndex(int64_t index, int64_t axis, int64_t size) {
  int64_t resolved = index < 0 ? index + size : index;
  if (resolved < 0 || resolved >= size)
    throw InterpError(indexErrorMessage("indices into axis " + std::to_string(axis), index, -size,
                                        size)); // as generated code reports it
  return resolved;
}

int64_t product(const Shape &s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= s[i];
  return p;
}

// Copies `count` elements of `elem` bytes.
void copyElements(void *dst, int64_t dstOffset, const void *src, int64_t srcOffset, int64_t count,
                  size_t elem) {
  if (count > 0)
    std::memcpy(static_cast<uint8_t *>(dst) + dstOffset * elem,
                static_cast<const uint8_t *>(src) + srcOffset * elem,
                static_cast<size_t>(count) * elem);
}

Tensors gatherKernel(const Op &op, const Tensors &xs) {
  const Tensor &data = xs[0];
  if (data.rank() == 0)
    throw InterpError("gather: data must have rank >= 1");
  const int64_t axis = checkedAxis(ops::GatherOp(op).axis(), data.rank(), "gather");
  std::vector<int64_t> indices = readIndices(xs[1], "gather");
  const int64_t axisSize = data.shape()[axis];
  for (int64_t &i : indices)
    i = resolveIndex(i, axis, axisSize);

  Shape outShape(data.shape().begin(), data.shape().begin() + axis);
  outShape.insert(outShape.end(), xs[1].shape().begin(), xs[1].shape().end());
  outShape.insert(outShape.end(), data.shape().begin() + axis + 1, data.shape().end());
  Tensor out(data.dtype(), outShape);
  const int64_t outer = product(data.shape(), 0, axis);
  const int64_t inner = product(data.shape(), axis + 1, data.shape().size());
  const int64_t n = static_cast<int64_t>(indices.size());
  const size_t elem = dtypeSize(data.dtype());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k)
      copyElements(out.rawData(), (o * n + k) * inner, data.rawData(),
                   (o * axisSize + indices[k]) * inner, inner, elem);
  return {out};
}

// For gather_elements / scatter_elements: the data offset each element of `indices` addresses
// (its own coordinates, with the one along `axis` replaced by the index value).
std::vector<int64_t> elementOffsets(const Shape &dataShape, const Tensor &indexTensor,
                                    int64_t axis, std::string_view what) {
  const int64_t rank = static_cast<int64_t>(dataShape.size());
  const Shape &indexShape = indexTensor.shape();
  if (indexTensor.rank() != rank)
    throw InterpError(std::string(what) + ": indices rank " + std::to_string(indexTensor.rank()) +
                      " differs from data rank " + std::to_string(rank));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indexShape[d] > dataShape[d])
      throw InterpError(std::string(what) + ": indices shape " + shapeText(indexShape) +
                        " exceeds data shape " + shapeText(dataShape) + " at axis " +
                        std::to_string(d));
  std::vector<int64_t> indices = readIndices(indexTensor, what);
  const std::vector<int64_t> strides = contiguousStrides(dataShape);
  std::vector<int64_t> offsets(indices.size());
  std::vector<int64_t> coord(rank, 0);
  for (size_t i = 0; i < indices.size(); ++i) {
    int64_t offset = resolveIndex(indices[i], axis, dataShape[axis]) * strides[axis];
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        offset += coord[d] * strides[d];
    offsets[i] = offset;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coord[d] < indexShape[d])
        break;
      coord[d] = 0;
    }
  }
  return offsets;
}

Tensors gatherElementsKernel(const Op &op, const Tensors &xs) {
  const Tensor &data = xs[0];
  if (data.rank() == 0)
    throw InterpError("gather_elements: data must have rank >= 1");
  const int64_t axis =
      checkedAxis(ops::GatherElementsOp(op).axis(), data.rank(), "gather_elements");
  std::vector<int64_t> offsets = elementOffsets(data.shape(), xs[1], axis, "gather_elements");
  Tensor out(data.dtype(), xs[1].shape());
  const size_t elem = dtypeSize(data.dtype());
  for (size_t i = 0; i < offsets.size(); ++i)
    copyElements(out.rawData(), static_cast<int64_t>(i), data.rawData(), offsets[i], 1, elem);
  return {out};
}

// Shared by gather_nd and scatter_nd: the data offset of the slice each index tuple selects.
// The last dim of `indices` holds tuples of k coordinates into data dims [batchDims, batchDims+k).
struct NdPlan {
  std::vector<int64_t> offsets; // one per tuple, in index order
  int64_t sliceSize = 1;        // elements per selected slice
  Shape tupleShape;             // indices shape without its last dim
};

NdPlan planNd(const Shape &dataShape, const Tensor &indexTensor, int64_t batchDims,
              std::string_view what) {
  const int64_t rank = static_cast<int64_t>(dataShape.size());
  const Shape &indexShape = indexTensor.shape();
  const int64_t q = indexTensor.rank();
  if (q < 1)
    throw InterpError(std::string(what) + ": indices must have rank >= 1");
  if (batchDims < 0 || batchDims >= q || batchDims > rank)
    throw InterpError(std::string(what) + ": batch_dims " + std::to_string(batchDims) +
                      " invalid for data rank " + std::to_string(rank) + " and indices rank " +
                      std::to_string(q));
  const int64_t k = indexShape[q - 1];
  if (k < 1 || k > rank - batchDims)
    throw InterpError(std::string(what) + ": index tuples of length " + std::to_string(k) +
                      " do not fit data rank " + std::to_string(rank) +
                      (batchDims ? " with batch_dims " + std::to_string(batchDims) : ""));
  for (int64_t d = 0; d < batchDims; ++d)
    if (indexShape[d] != dataShape[d])
      throw InterpError(std::string(what) + ": batch dim " + std::to_string(d) + " of indices " +
                        shapeText(indexShape) + " differs from data " + shapeText(dataShape));

  NdPlan plan;
  plan.tupleShape.assign(indexShape.begin(), indexShape.end() - 1);
  plan.sliceSize = product(dataShape, batchDims + k, rank);
  const std::vector<int64_t> strides = contiguousStrides(dataShape);
  const int64_t batchCount = product(dataShape, 0, batchDims);
  const int64_t batchStride = product(dataShape, batchDims, rank);
  const int64_t tuplesPerBatch = product(indexShape, batchDims, q - 1);
  std::vector<int64_t> indices = readIndices(indexTensor, what);
  plan.offsets.reserve(static_cast<size_t>(batchCount * tuplesPerBatch));
  for (int64_t b = 0; b < batchCount; ++b) {
    for (int64_t t = 0; t < tuplesPerBatch; ++t) {
      const int64_t *tuple = indices.data() + (b * tuplesPerBatch + t) * k;
      int64_t offset = b * batchStride;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t axis = batchDims + j;
        offset += resolveIndex(tuple[j], axis, dataShape[axis]) * strides[axis];
      }
      plan.offsets.push_back(offset);
    }
  }
  return plan;
}

Tensors gatherNdKernel(const Op &op, const Tensors &xs) {
  const Tensor &data = xs[0];
  const int64_t batchDims = ops::GatherNDOp(op).batch_dims();
  NdPlan plan = planNd(data.shape(), xs[1], batchDims, "gather_nd");
  const int64_t q = xs[1].rank();
  const int64_t k = xs[1].shape()[q - 1];
  Shape outShape = plan.tupleShape;
  outShape.insert(outShape.end(), data.shape().begin() + batchDims + k, data.shape().end());
  Tensor out(data.dtype(), outShape);
  const size_t elem = dtypeSize(data.dtype());
  for (size_t t = 0; t < plan.offsets.size(); ++t)
    copyElements(out.rawData(), static_cast<int64_t>(t) * plan.sliceSize, data.rawData(),
                 plan.offsets[t], plan.sliceSize, elem);
  return {out};
}

using Reduction = ScatterReduction;

template <typename C> C combine(Reduction r, C old, C update) {
  if constexpr (kIsBool<C>) { // add/mul on bool act as or/and
    switch (r) {
    case Reduction::None:
      return update;
    case Reduction::Add:
    case Reduction::Max:
      return old || update;
    case Reduction::Mul:
    case Reduction::Min:
      return old && update;
    }
    return update;
  } else {
    switch (r) {
    case Reduction::None:
      return update;
    case Reduction::Add:
      return AddFn{}(old, update);
    case Reduction::Mul:
      return MulFn{}(old, update);
    case Reduction::Max:
      return MaxFn{}(old, update);
    case Reduction::Min:
      return MinFn{}(old, update);
    }
    return update;
  }
}

// out = copy of data, then slice i of `updates` (sliceSize elements) is combined into out at
// offsets[i], in index order (later duplicates win for reduction none).
Tensor scatter(const Tensor &data, const Tensor &updates, const std::vector<int64_t> &offsets,
               int64_t sliceSize, Reduction reduction, std::string_view what) {
  if (updates.dtype() != data.dtype())
    throw InterpError(std::string(what) + ": updates dtype " +
                      std::string(dtypeName(updates.dtype())) + " differs from data dtype " +
                      std::string(dtypeName(data.dtype())));
  Tensor out = data.clone();
  visitDType(data.dtype(), [&](auto tag) {
    using T = ElemTraits<decltype(tag)::value>;
    using S = typename T::Storage;
    S *dst = out.data<S>();
    const S *src = updates.data<S>();
    for (size_t i = 0; i < offsets.size(); ++i)
      for (int64_t j = 0; j < sliceSize; ++j) {
        S &slot = dst[offsets[i] + j];
        slot = T::store(combine(reduction, T::load(slot), T::load(src[i * sliceSize + j])));
      }
  });
  return out;
}

Tensors scatterElementsKernel(const Op &op, const Tensors &xs) {
  const Tensor &data = xs[0], &indices = xs[1], &updates = xs[2];
  if (data.rank() == 0)
    throw InterpError("scatter_elements: data must have rank >= 1");
  if (indices.shape() != updates.shape())
    throw InterpError("scatter_elements: indices shape " + shapeText(indices.shape()) +
                      " differs from updates shape " + shapeText(updates.shape()));
  const int64_t axis =
      checkedAxis(ops::ScatterElementsOp(op).axis(), data.rank(), "scatter_elements");
  Reduction reduction = ops::ScatterElementsOp(op).reduction();
  std::vector<int64_t> offsets = elementOffsets(data.shape(), indices, axis, "scatter_elements");
  return {scatter(data, updates, offsets, 1, reduction, "scatter_elements")};
}

Tensors scatterNdKernel(const Op &op, const Tensors &xs) {
  const Tensor &data = xs[0], &indices = xs[1], &updates = xs[2];
  Reduction reduction = ops::ScatterNDOp(op).reduction();
  NdPlan plan = planNd(data.shape(), indices, 0, "scatter_nd");
  const int64_t k = indices.shape().back();
  Shape expected = plan.tupleShape;
  expected.insert(expected.end(), data.shape().begin() + k, data.shape().end());
  if (updates.shape() != expected)
    throw InterpError("scatter_nd: updates shape " + shapeText(updates.shape()) + ", expected " +
                      shapeText(expected));
  return {scatter(data, updates, plan.offsets, plan.sliceSize, reduction, "scatter_nd")};
}

} // namespace

void registerGatherScatterKernels(KernelFn *table) {
  auto set = [&](OpKind k, KernelFn fn) { table[static_cast<size_t>(k)] = fn; };
  set(OpKind::Gather, gatherKernel);
  set(OpKind::GatherElements, gatherElementsKernel);
  set(OpKind::GatherND, gatherNdKernel);
  set(OpKind::ScatterElements, scatterElementsKernel);
  set(OpKind::ScatterND, scatterNdKernel);
}

} // namespace strata::interp
