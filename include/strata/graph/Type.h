// Tensor types of the graph IR: dtype, shape (each dim a constant or a symbolic expression) and
// device.
#pragma once
#include "strata/support/DType.h"
#include "strata/support/ShapeMath.h"
#include "strata/support/SymExpr.h"
#include "strata/support/Tensor.h"

#include <optional>
#include <string>
#include <vector>

namespace strata {

// One dimension: a known size (>= 0), or a symbolic expression over sizes bound at run time: a
// plain symbol ("batch", an input's dim) or a formula of symbols (⌊(h+1)/2⌋ after a strided conv).
struct Dim {
  int64_t size = 0; // valid when static; -1 for a symbolic dim
  SymExpr expr;     // valid when symbolic

  Dim() = default;
  Dim(int64_t s) : size(s) {} // NOLINT: implicit from a size is the common case
  static Dim sym(std::string name) { return of(SymExpr::symbol(std::move(name))); }
  // `e` as a dim: static when it is a constant.
  static Dim of(const SymExpr &e) {
    if (std::optional<int64_t> c = e.constant())
      return Dim(*c);
    Dim d;
    d.size = -1;
    d.expr = e;
    d.symbolic_ = true;
    return d;
  }
  bool isStatic() const { return !symbolic_; }
  // The symbol's name when the dim is exactly one symbol (not a formula), else null.
  const std::string *symbolName() const { return symbolic_ ? expr.symbolName() : nullptr; }
  // The dim as an expression (a constant when static).
  SymExpr asExpr() const { return symbolic_ ? expr : SymExpr(size); }
  bool operator==(const Dim &o) const {
    return symbolic_ == o.symbolic_ && (symbolic_ ? expr == o.expr : size == o.size);
  }
  bool operator!=(const Dim &o) const { return !(*this == o); }
  std::string str() const; // "3", "?batch" or "?(fdiv(h+1,2))"

private:
  bool symbolic_ = false;
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
  // Text form: tensor<1x3x?batch x?(fdiv(w+1,2)) xf32>; a symbolic dim is followed by a space so
  // the following 'x' is not read as part of its name. Device suffix ", gpu" only when not cpu.
  std::string str() const;
};

} // namespace strata

// Dims in the shape arithmetic of support/ShapeMath.h (broadcastShapes<Dim>).
template <> struct strata::shape::DimTraits<strata::Dim> {
  static bool isStatic(const Dim &d) { return d.isStatic(); }
  static int64_t size(const Dim &d) { return d.size; }
  static std::string str(const Dim &d) { return d.str(); }
};
