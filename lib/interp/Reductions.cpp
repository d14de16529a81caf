// Reductions and row-wise normalizations: reduce, arg_reduce, softmax, log_softmax, layer_norm,
// cumsum.
#include "Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::interp::structured {

namespace {

// A tensor viewed as [outer, axisSize, inner] around one axis.
struct AxisSplit {
  int64_t outer = 1, axisSize = 1, inner = 1;
};

AxisSplit splitAt(const Shape &shape, int64_t axis) {
  AxisSplit s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis)
      s.outer *= shape[d];
    else if (d == axis)
      s.axisSize = shape[d];
    else
      s.inner *= shape[d];
  }
  return s;
}

// Floats accumulate sums and products in double; integers wrap in their own type; bools (max /
// min only) use bytes so accumulator vectors are plain arrays.
template <typename T>
using Accum = std::conditional_t<std::is_floating_point_v<T>, double,
                                 std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;

template <typename T>
Tensor reduceTyped(const Op &op, const Tensor &x, const Shape &keptShape, const Shape &outShape,
                   ReduceKind kind) {
  using A = Accum<T>;
  if constexpr (std::is_same_v<T, bool>)
    if (kind != ReduceKind::Max && kind != ReduceKind::Min)
      fail(op, "only max and min reductions are defined on bool");
  int64_t outCount = numElements(keptShape);
  int64_t inCount = x.numElements();
  int64_t groupSize = outCount ? inCount / outCount : 0;
  A identity{};
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    identity = A(0);
    break;
  case ReduceKind::Prod:
    identity = A(1);
    break;
  case ReduceKind::Max:
    identity = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                    : std::numeric_limits<A>::lowest();
    break;
  case ReduceKind::Min:
    identity = std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                    : std::numeric_limits<A>::max();
    break;
  }
  std::vector<A> acc(static_cast<size_t>(outCount), identity);
  std::vector<int64_t> target = broadcastOffsets(op, keptShape, x.shape());
  const T *in = x.data<T>();
  for (int64_t i = 0; i < inCount; ++i) {
    A &a = acc[target[i]];
    A v = static_cast<A>(in[i]);
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      a = wrapAdd(a, v);
      break;
    case ReduceKind::Prod:
      a = wrapMul(a, v);
      break;
    case ReduceKind::Max:
    case ReduceKind::Min: {
      bool takeIt = kind == ReduceKind::Max ? v > a : v < a;
      if constexpr (std::is_floating_point_v<A>)
        takeIt = takeIt || (std::isnan(v) && !std::isnan(a)); // NaN propagates
      if (takeIt)
        a = v;
      break;
    }
    }
  }
  Tensor result(x.dtype(), outShape);
  T *out = result.data<T>();
  for (int64_t o = 0; o < outCount; ++o) {
    A a = acc[o];
    if (kind == ReduceKind::Mean) {
      if constexpr (std::is_floating_point_v<A>)
        a = groupSize ? a / static_cast<A>(groupSize) : std::numeric_limits<A>::quiet_NaN();
      else if constexpr (std::is_signed_v<A>)
        a = groupSize ? static_cast<A>(static_cast<int64_t>(a) / groupSize) : A(0);
      else if constexpr (!std::is_same_v<A, bool>)
        a = groupSize ? static_cast<A>(static_cast<uint64_t>(a) / static_cast<uint64_t>(groupSize))
                      : A(0);
    }
    out[o] = static_cast<T>(a);
  }
  return result;
}

} // namespace

Tensors reduceKernel(const Op &op, const Tensors &operands) {
  DType dtype = operands[0].dtype();
  Tensor x = widenHalf(operands[0]);
  const ops::ReduceOp reduce(op);
  ReduceKind kind = reduce.kind();
  int64_t rank = x.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : reduce.axes())
    reduced[checkedAxis(axis, rank, "reduce")] = true;
  bool keepDims = reduce.keepdims();
  Shape keptShape, outShape;
  for (int64_t d = 0; d < rank; ++d) {
    keptShape.push_back(reduced[d] ? 1 : x.shape()[d]);
    if (!reduced[d] || keepDims)
      outShape.push_back(keptShape.back());
  }
  Tensor result = visitDType(op, x.dtype(), /*allowInts=*/true, [&](auto tag) {
    return reduceTyped<decltype(tag)>(op, x, keptShape, outShape, kind);
  });
  return {narrowFromF32(result, dtype)};
}

Tensors argReduceKernel(const Op &op, const Tensors &operands) {
  Tensor x = widenHalf(operands[0]);
  const ops::ArgReduceOp argReduce(op);
  bool wantMax = argReduce.kind() == ArgKind::Max;
  bool selectLast = argReduce.select_last_index();
  bool keepDims = argReduce.keepdims();
  int64_t rank = x.rank();
  if (rank == 0)
    fail(op, "operand must have rank >= 1");
  int64_t axis = checkedAxis(argReduce.axis(), rank, "arg_reduce");
  AxisSplit s = splitAt(x.shape(), axis);
  if (s.axisSize == 0 && s.outer * s.inner > 0)
    fail(op, std::string("cannot take arg ") + (wantMax ? "max" : "min") + " along an empty axis");
  Shape outShape = x.shape();
  if (keepDims)
    outShape[axis] = 1;
  else
    outShape.erase(outShape.begin() + axis);
  Tensor result(DType::I64, outShape);
  int64_t *out = result.data<int64_t>();
  visitDType(op, x.dtype(), /*allowInts=*/true, [&](auto tag) {
    using T = decltype(tag);
    const T *in = x.data<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        const T *line = in + o * s.axisSize * s.inner + i;
        int64_t bestIdx = 0;
        T best = line[0];
        for (int64_t a = 1; a < s.axisSize; ++a) {
          T v = line[a * s.inner];
          bool better = wantMax ? v > best : v < best;
          if (selectLast && v == best)
            better = true;
          if constexpr (std::is_floating_point_v<T>) {
            // Like numpy: the first NaN wins (the last one with select_last_index).
            if (std::isnan(best))
              better = selectLast && std::isnan(v);
            else if (std::isnan(v))
              better = true;
          }
          if (better) {
            best = v;
            bestIdx = a;
          }
        }
        out[o * s.inner + i] = bestIdx;
      }
  });
  return {result};
}

namespace {

template <typename T> Tensor softmaxTyped(const Tensor &x, const AxisSplit &s, bool logarithm) {
  Tensor result(x.dtype(), x.shape());
  const T *in = x.data<T>();
  T *out = result.data<T>();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      int64_t base = o * s.axisSize * s.inner + i;
      // Subtracting the row max keeps exp() from overflowing.
      double maxValue = -std::numeric_limits<double>::infinity();
      for (int64_t a = 0; a < s.axisSize; ++a)
        maxValue = std::max(maxValue, static_cast<double>(in[base + a * s.inner]));
      double sum = 0;
      for (int64_t a = 0; a < s.axisSize; ++a)
        sum += std::exp(static_cast<double>(in[base + a * s.inner]) - maxValue);
      double logSum = std::log(sum);
      for (int64_t a = 0; a < s.axisSize; ++a) {
        double shifted = static_cast<double>(in[base + a * s.inner]) - maxValue;
        out[base + a * s.inner] =
            static_cast<T>(logarithm ? shifted - logSum : std::exp(shifted) / sum);
      }
    }
  return result;
}

Tensors softmaxCommon(const Op &op, const Tensors &operands, bool logarithm) {
  DType dtype = operands[0].dtype();
  Tensor x = widenHalf(operands[0]);
  if (x.rank() == 0)
    fail(op, "operand must have rank >= 1");
  int64_t axis = checkedAxis(logarithm ? ops::LogSoftmaxOp(op).axis() : ops::SoftmaxOp(op).axis(),
                             x.rank(), "softmax");
  AxisSplit s = splitAt(x.shape(), axis);
  Tensor result = visitDType(op, x.dtype(), /*allowInts=*/false, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>)
      return softmaxTyped<T>(x, s, logarithm);
    else
      return Tensor();
  });
  return {narrowFromF32(result, dtype)};
}

} // namespace

Tensors softmaxKernel(const Op &op, const Tensors &operands) {
  return softmaxCommon(op, operands, /*logarithm=*/false);
}

Tensors logSoftmaxKernel(const Op &op, const Tensors &operands) {
  return softmaxCommon(op, operands, /*logarithm=*/true);
}

Tensors layerNormKernel(const Op &op, const Tensors &operands) {
  DType dtype = operands[0].dtype();
  Tensor x = widenHalf(operands[0]);
  Tensor scale = widenHalf(operands[1]);
  Tensor bias = operands.size() > 2 ? widenHalf(operands[2]) : Tensor();
  for (size_t i = 1; i < operands.size(); ++i)
    if (operands[i].dtype() != dtype)
      fail(op, "scale and bias must have the input's dtype " + std::string(dtypeName(dtype)));
  if (x.rank() == 0)
    fail(op, "operand must have rank >= 1");
  int64_t rank = x.rank();
  const ops::LayerNormOp layerNorm(op);
  int64_t axis = checkedAxis(layerNorm.axis(), rank, "layer_norm");
  double epsilon = layerNorm.epsilon();
  Shape trailing(x.shape().begin() + axis, x.shape().end());
  int64_t outer = numElements(Shape(x.shape().begin(), x.shape().begin() + axis));
  int64_t inner = numElements(trailing);

  // scale/bias broadcast numpy-style against x; when they only span the normalized dims their
  // offsets depend on the position inside the row alone.
  auto offsetsFor = [&](const Tensor &t, bool &perRow) {
    perRow = t.rank() <= rank - axis;
    return broadcastOffsets(op, t.shape(), perRow ? trailing : x.shape());
  };
  bool scalePerRow = true, biasPerRow = true;
  std::vector<int64_t> scaleOffsets = offsetsFor(scale, scalePerRow);
  std::vector<int64_t> biasOffsets =
      bias.valid() ? offsetsFor(bias, biasPerRow) : std::vector<int64_t>();

  Tensor result(x.dtype(), x.shape());
  visitDType(op, x.dtype(), /*allowInts=*/false, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T *in = x.data<T>(), *scaleData = scale.data<T>();
      const T *biasData = bias.valid() ? bias.data<T>() : nullptr;
      T *out = result.data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        const T *row = in + o * inner;
        double mean = 0, variance = 0;
        for (int64_t i = 0; i < inner; ++i)
          mean += static_cast<double>(row[i]);
        mean /= static_cast<double>(inner);
        for (int64_t i = 0; i < inner; ++i) {
          double d = static_cast<double>(row[i]) - mean;
          variance += d * d;
        }
        variance /= static_cast<double>(inner);
        double invStd = 1.0 / std::sqrt(variance + epsilon);
        for (int64_t i = 0; i < inner; ++i) {
          int64_t flat = o * inner + i;
          double y = (static_cast<double>(row[i]) - mean) * invStd;
          y *= static_cast<double>(scaleData[scaleOffsets[scalePerRow ? i : flat]]);
          if (biasData)
            y += static_cast<double>(biasData[biasOffsets[biasPerRow ? i : flat]]);
          out[flat] = static_cast<T>(y);
        }
      }
    }
  });
  return {narrowFromF32(result, dtype)};
}

Tensors cumSumKernel(const Op &op, const Tensors &operands) {
  DType dtype = operands[0].dtype();
  Tensor x = widenHalf(operands[0]);
  if (x.rank() == 0)
    fail(op, "operand must have rank >= 1");
  const ops::CumSumOp cumSum(op);
  int64_t axis = checkedAxis(cumSum.axis(), x.rank(), "cumsum");
  bool exclusive = cumSum.exclusive();
  bool reverse = cumSum.reverse();
  AxisSplit s = splitAt(x.shape(), axis);
  Tensor result(x.dtype(), x.shape());
  visitDType(op, x.dtype(), /*allowInts=*/true, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      fail(op, "bool input is not supported");
    } else {
      using A = Accum<T>;
      const T *in = x.data<T>();
      T *out = result.data<T>();
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          int64_t base = o * s.axisSize * s.inner + i;
          A running{};
          for (int64_t step = 0; step < s.axisSize; ++step) {
            int64_t a = reverse ? s.axisSize - 1 - step : step;
            A v = static_cast<A>(in[base + a * s.inner]);
            if (!exclusive)
              running = wrapAdd(running, v);
            out[base + a * s.inner] = static_cast<T>(running);
            if (exclusive)
              running = wrapAdd(running, v);
          }
        }
    }
  });
  return {narrowFromF32(result, dtype)};
}

} // namespace strata::interp::structured
