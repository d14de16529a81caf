// A dense tensor value: dtype, concrete shape and a shared, immutable-by-convention byte buffer.
// Constants in the graph IR, interpreter values and file I/O all use it. Buffers are shared by
// reference counting, so copying a Tensor never copies its data.
#pragma once
#include "strata/support/DType.h"

#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace strata {

// Raw storage. Either owns its bytes or views bytes kept alive by `keepAlive` (e.g. an mmap).
class Buffer {
public:
  explicit Buffer(size_t bytes) : owned_(bytes), data_(owned_.data()), size_(bytes) {}
  Buffer(const void *data, size_t bytes, std::shared_ptr<void> keepAlive)
      : keepAlive_(std::move(keepAlive)), data_(static_cast<uint8_t *>(const_cast<void *>(data))),
        size_(bytes) {}
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  uint8_t *data() { return data_; }
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

private:
  std::vector<uint8_t> owned_;
  std::shared_ptr<void> keepAlive_;
  uint8_t *data_;
  size_t size_;
};

using Shape = std::vector<int64_t>;

// Number of elements of a shape (1 for rank 0). Saturates instead of overflowing.
int64_t numElements(const Shape &shape);
// Row-major strides in elements.
std::vector<int64_t> contiguousStrides(const Shape &shape);
std::string shapeToString(const Shape &shape); // "2x3x4" ("" for a scalar)

class Tensor {
public:
  Tensor() = default;
  // Zero-filled tensor.
  Tensor(DType dtype, Shape shape);
  Tensor(DType dtype, Shape shape, std::shared_ptr<Buffer> buffer);

  template <typename T> static Tensor fromVector(DType dtype, Shape shape, const std::vector<T> &v) {
    Tensor t(dtype, std::move(shape));
    if (size_t bytes = std::min(t.byteSize(), v.size() * sizeof(T)))
      std::memcpy(t.rawData(), v.data(), bytes);
    return t;
  }
  static Tensor scalar(DType dtype, double value); // rank-0 tensor holding `value` converted
  // A tensor whose bytes were elided from printed IR (`blob<"HASH">` without a blob section):
  // dtype and shape are known, the data is not (valid() is false). contentHash() returns `hash`
  // so the tensor prints as the same blob reference again; anything that reads data must check.
  static Tensor elided(DType dtype, Shape shape, std::string hash);
  bool isElided() const { return !buffer_ && !elidedHash_.empty(); }

  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const { return strata::numElements(shape_); }
  size_t byteSize() const { return static_cast<size_t>(numElements()) * dtypeSize(dtype_); }
  bool valid() const { return buffer_ != nullptr; }

  const void *rawData() const { return buffer_ ? buffer_->data() : nullptr; }
  void *rawData() { return buffer_ ? buffer_->data() : nullptr; }
  template <typename T> const T *data() const { return static_cast<const T *>(rawData()); }
  template <typename T> T *data() { return static_cast<T *>(rawData()); }
  const std::shared_ptr<Buffer> &buffer() const { return buffer_; }

  // Element i converted to double / int64 (any dtype; f16/bf16 decoded).
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  // Store `v` at element i converting to this tensor's dtype (saturating casts are not done).
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);
  std::vector<int64_t> toIntVector() const;
  std::vector<double> toDoubleVector() const;

  // Same data, new shape (element count must match). Shares the buffer.
  Tensor reshaped(Shape shape) const;
  // Deep copy.
  Tensor clone() const;
  // Byte-wise equality of dtype, shape and data.
  bool identical(const Tensor &other) const;
  bool operator==(const Tensor &other) const { return identical(other); }
  // Hex digest of dtype, shape and bytes (FNV-1a 128-bit style, 32 hex chars): names large constants.
  std::string contentHash() const;

private:
  DType dtype_ = DType::F32;
  Shape shape_;
  std::shared_ptr<Buffer> buffer_;
  std::string elidedHash_; // only for elided tensors
};

} // namespace strata
