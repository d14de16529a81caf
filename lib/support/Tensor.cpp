#include "strata/support/Tensor.h"
#include "strata/support/Limits.h"
#include "strata/support/ShapeMath.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace strata {

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0)
      return 0;
    if (n > std::numeric_limits<int64_t>::max() / d)
      return std::numeric_limits<int64_t>::max();
    n *= d;
  }
  return n;
}

std::vector<int64_t> contiguousStrides(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * std::max<int64_t>(shape[i + 1], 1);
  return strides;
}

std::string shapeToString(const Shape &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

// Kernels address a tensor through its row-major strides, so those must fit in int64 even when a
// 0 dim leaves it empty: a hostile [0, 2^40, 2^40] has no elements but strides past int64.
static void checkStrides(const Shape &dims, DType dtype) {
  if (!shape::strideExtent(dims))
    throw std::length_error("tensor<" + shapeToString(dims) + "x" + std::string(dtypeName(dtype)) +
                            "> has dims whose product overflows int64");
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  // Refuse before allocating: an absurd shape must be an error, not an out-of-memory kill.
  auto label = [&] {
    return "tensor<" + shapeToString(shape_) + "x" + std::string(dtypeName(dtype)) + ">";
  };
  for (int64_t d : shape_)
    if (d < 0)
      throw std::length_error(label() + " has a negative dim");
  int64_t n = strata::numElements(shape_);
  const int64_t limit = processLimits().maxTensorElements;
  if (n > limit)
    throw std::length_error(label() + " " + tooManyElements(n, limit));
  if (n > std::numeric_limits<int64_t>::max() / 16) // a raised limit: bytes must still fit
    throw std::length_error(label() + " is too large (its byte size overflows)");
  checkStrides(shape_, dtype);
  buffer_ = std::make_shared<Buffer>(byteSize());
}

Tensor::Tensor(DType dtype, Shape shape, std::shared_ptr<Buffer> buffer)
    : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)) {
  if (!buffer_ || buffer_->size() < byteSize())
    throw std::invalid_argument("tensor buffer smaller than its shape requires");
  checkStrides(shape_, dtype_); // e.g. reshaped() of an empty tensor
}

Tensor Tensor::scalar(DType dtype, double value) {
  Tensor t(dtype, {});
  t.setDouble(0, value);
  return t;
}

double Tensor::getDouble(int64_t i) const {
  const uint8_t *p = buffer_->data();
  switch (dtype_) {
  case DType::F16:
    return halfToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::BF16:
    return bf16ToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::Bool: // read as a byte: any non-zero byte is true (a C++ bool load of 2 is UB)
    return p[i] != 0 ? 1.0 : 0.0;
#define X(e, n, ty, s)                                                                             \
  case DType::e:                                                                                   \
    return static_cast<double>(reinterpret_cast<const ty *>(p)[i]);
    X(F32, , float, )
    X(F64, , double, ) X(I8, , int8_t, ) X(I16, , int16_t, ) X(I32, , int32_t, ) X(I64, , int64_t, )
        X(U8, , uint8_t, ) X(U16, , uint16_t, ) X(U32, , uint32_t, ) X(U64, , uint64_t, )
#undef X
  }
  return 0;
}

int64_t Tensor::getInt(int64_t i) const {
  const uint8_t *p = buffer_->data();
  switch (dtype_) {
  case DType::I64:
    return reinterpret_cast<const int64_t *>(p)[i];
  case DType::U64:
    return static_cast<int64_t>(reinterpret_cast<const uint64_t *>(p)[i]);
  case DType::I32:
    return reinterpret_cast<const int32_t *>(p)[i];
  default: {
    double d = getDouble(i);
    if (std::isnan(d))
      return 0;
    if (d >= 9.2e18)
      return std::numeric_limits<int64_t>::max();
    if (d <= -9.2e18)
      return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(d);
  }
  }
}

void Tensor::setDouble(int64_t i, double v) {
  uint8_t *p = buffer_->data();
  switch (dtype_) {
  case DType::F16:
    reinterpret_cast<uint16_t *>(p)[i] = floatToHalf(static_cast<float>(v));
    return;
  case DType::BF16:
    reinterpret_cast<uint16_t *>(p)[i] = floatToBf16(static_cast<float>(v));
    return;
  case DType::F32:
    reinterpret_cast<float *>(p)[i] = static_cast<float>(v);
    return;
  case DType::F64:
    reinterpret_cast<double *>(p)[i] = v;
    return;
  case DType::Bool:
    reinterpret_cast<bool *>(p)[i] = v != 0;
    return;
  default: // saturating, as a conversion of a double beyond int64 would be undefined
    setInt(i, std::isnan(v) ? 0
              : v >= 0x1p63 ? std::numeric_limits<int64_t>::max()
              : v < -0x1p63 ? std::numeric_limits<int64_t>::min()
                            : static_cast<int64_t>(v));
    return;
  }
}

void Tensor::setInt(int64_t i, int64_t v) {
  uint8_t *p = buffer_->data();
  switch (dtype_) {
#define X(e, ty)                                                                                   \
  case DType::e:                                                                                   \
    reinterpret_cast<ty *>(p)[i] = static_cast<ty>(v);                                             \
    return;
    X(I8, int8_t) X(I16, int16_t) X(I32, int32_t) X(I64, int64_t) X(U8, uint8_t) X(U16, uint16_t)
    X(U32, uint32_t) X(U64, uint64_t)
#undef X
  case DType::Bool:
    reinterpret_cast<bool *>(p)[i] = v != 0;
    return;
  default:
    setDouble(i, static_cast<double>(v));
    return;
  }
}

std::vector<int64_t> Tensor::toIntVector() const {
  std::vector<int64_t> v(static_cast<size_t>(numElements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = getInt(static_cast<int64_t>(i));
  return v;
}

std::vector<double> Tensor::toDoubleVector() const {
  std::vector<double> v(static_cast<size_t>(numElements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = getDouble(static_cast<int64_t>(i));
  return v;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (strata::numElements(shape) != numElements())
    throw std::invalid_argument("reshape changes the number of elements");
  return Tensor(dtype_, std::move(shape), buffer_);
}

Tensor Tensor::elided(DType dtype, Shape shape, std::string hash) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.elidedHash_ = std::move(hash);
  return t;
}

Tensor Tensor::clone() const {
  if (!buffer_)
    return *this; // nothing to copy (default or elided tensor)
  Tensor t(dtype_, shape_);
  if (byteSize())
    std::memcpy(t.rawData(), rawData(), byteSize());
  return t;
}

bool Tensor::identical(const Tensor &o) const {
  if (!buffer_ || !o.buffer_) // elided data: equal only to the same blob reference
    return dtype_ == o.dtype_ && shape_ == o.shape_ && !buffer_ && !o.buffer_ &&
           elidedHash_ == o.elidedHash_;
  return dtype_ == o.dtype_ && shape_ == o.shape_ &&
         (byteSize() == 0 || rawData() == o.rawData() ||
          std::memcmp(rawData(), o.rawData(), byteSize()) == 0);
}

std::string Tensor::contentHash() const {
  // Two independent 64-bit FNV-1a streams give a 128-bit name; collisions are not a security
  // concern here, only accidental equality of distinct weights.
  if (isElided())
    return elidedHash_;
  uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  auto mix = [&](uint8_t b) {
    h1 = (h1 ^ b) * 0x100000001b3ull;
    h2 = (h2 ^ static_cast<uint8_t>(b + 0x5b)) * 0x100000001b3ull;
  };
  mix(static_cast<uint8_t>(dtype_));
  for (int64_t d : shape_)
    for (int k = 0; k < 8; ++k)
      mix(static_cast<uint8_t>(d >> (8 * k)));
  const uint8_t *p = static_cast<const uint8_t *>(rawData());
  for (size_t i = 0, n = byteSize(); i < n; ++i)
    mix(p[i]);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return buf;
}

} // namespace strata
