// Tensor types of the graph IR: dtype, shape (each dim a constant or a named symbol) and device.
#pragma once
#include "strata/support/DType.h"
#include "strata/support/ShapeMath.h"
#include "strata/support/Tensor.h"

#include <optional>
#include <string>
#include <vector>

namespace strata {

// One dimension: a known size (>= 0) or a symbol bound at run time (e.g. "batch").
struct Dim {
  int64_t size = 0;   // valid when symbol is empty
  std::string symbol; // non-empty for a symbolic dim

  Dim() = default;
  Dim(int64_t s) : size(s) {} // NOLINT: implicit from a size is the common case
  static Dim sym(std::string name) {
    Dim d;
    d.size = -1;
    d.symbol = std::move(name);
    return d;
  }
  bool isStatic() const { return symbol.empty(); }
  bool operator==(const Dim &o) const { return symbol == o.symbol && (!isStatic() || size == o.size); }
  std::string str() const; // "3" or "?batch"
};

enum class Device : uint8_t { CPU, GPU };

struct TensorType {
  DType dtype = DType::F32;
  std::vector<Dim> dims;
  Device device = Device::CPU;

  TensorType() = default;
  TensorType(DType dt, std::vector<Dim> d, Device dev = Device::CPU)
      : dtype(dt), dims(std::move(d)), device(dev) {}
  static TensorType fromShape(DType dt, const Shape &shape);

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  bool isStatic() const;
  // Concrete shape; only valid when isStatic().
  Shape staticShape() const;
  // Element count when static, otherwise nullopt.
  std::optional<int64_t> staticNumElements() const;
  TensorType withDType(DType dt) const { return TensorType(dt, dims, device); }
  TensorType withDims(std::vector<Dim> d) const { return TensorType(dtype, std::move(d), device); }

  bool operator==(const TensorType &o) const {
    return dtype == o.dtype && dims == o.dims && device == o.device;
  }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
  // Text form: tensor<1x3x?batch xf32>; a symbolic dim is followed by a space so the
  // following 'x' is not read as part of its name. Device suffix ", gpu" only when not cpu.
  std::string str() const;
};

} // namespace strata

// Dims in the shape arithmetic of support/ShapeMath.h (broadcastShapes<Dim>).
template <> struct strata::shape::DimTraits<strata::Dim> {
  static bool isStatic(const Dim &d) { return d.isStatic(); }
  static int64_t size(const Dim &d) { return d.size; }
  static std::string str(const Dim &d) { return d.str(); }
};
