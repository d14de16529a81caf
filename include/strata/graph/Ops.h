// Typed accessors for every op's attributes, generated from the op definitions (OpTable.def):
//
//   ops::SliceOp s(op);           // or ops::SliceOp(attrs) before the op exists
//   s.starts(); s.steps();        // const std::vector<int64_t> &
//   ops::PadOp(op).mode();        // PadMode, not a string
//   ops::ReshapeOp(op).allowzero()// bool; the default applied here, nowhere else
//
// The verifier guarantees what the accessors return is present, of its kind and in normal form
// (axes non-negative, flags 0/1, enums among their texts). On an unverified graph a missing or
// ill-formed attribute throws std::invalid_argument naming it.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/graph/OpEnums.h"

#include <cassert>
#include <optional>
#include <stdexcept>

namespace strata::ops {

class OpView {
public:
  const AttrMap &attrs() const { return *attrs_; }

protected:
  explicit OpView(const AttrMap &a) : attrs_(&a) {}

  int64_t intOf(const char *n) const { return get(n, AttrKind::Int).getInt(); }
  int64_t intOr(const char *n, int64_t dflt) const {
    const Attribute *a = find(n, AttrKind::Int);
    return a ? a->getInt() : dflt;
  }
  bool flagOf(const char *n) const { return checkFlag(n, intOf(n)); }
  bool flagOr(const char *n, bool dflt) const {
    const Attribute *a = find(n, AttrKind::Int);
    return a ? checkFlag(n, a->getInt()) : dflt;
  }
  double floatOf(const char *n) const { return get(n, AttrKind::Float).getFloat(); }
  const std::string &stringOf(const char *n) const { return get(n, AttrKind::String).getString(); }
  const std::string &stringOr(const char *n) const {
    static const std::string empty;
    const Attribute *a = find(n, AttrKind::String);
    return a ? a->getString() : empty;
  }
  const std::vector<int64_t> &intsOf(const char *n) const {
    return get(n, AttrKind::Ints).getInts();
  }
  const std::vector<int64_t> &intsOr(const char *n) const {
    static const std::vector<int64_t> empty;
    const Attribute *a = find(n, AttrKind::Ints);
    return a ? a->getInts() : empty;
  }
  // An ints or dims attribute (OpTable.def's A_DIMS) as dims.
  std::vector<Dim> dimsOf(const char *n) const;
  Dim dimOf(const char *n) const;
  std::optional<Dim> dimOr(const char *n) const {
    return attrs_->count(n) ? std::optional<Dim>(dimOf(n)) : std::nullopt;
  }
  const std::vector<double> &floatsOf(const char *n) const {
    return get(n, AttrKind::Floats).getFloats();
  }
  const Tensor &tensorOf(const char *n) const { return get(n, AttrKind::Tensor).getTensor(); }
  DType dtypeOf(const char *n) const { return get(n, AttrKind::DType).getDType(); }
  template <typename T> T enumOf(const char *n) const {
    const std::string &text = stringOf(n);
    if (std::optional<T> v = parseEnum<T>(text))
      return *v;
    throw std::invalid_argument("attribute '" + std::string(n) + "' is \"" + text +
                                "\"; expected one of " + enumTexts<T>());
  }
  // The block of a channel layout attribute: 0 when plain (or, for layoutOr, absent).
  int64_t layoutOf(const char *n) const;
  int64_t layoutOr(const char *n) const;

private:
  const AttrMap *attrs_;
  const Attribute *find(const char *n, AttrKind kind) const;
  const Attribute &get(const char *n, AttrKind kind) const;
  static bool checkFlag(const char *n, int64_t v);
};

#define A_INT(n)                                                                                   \
  int64_t n() const { return intOf(#n); }
#define A_FLOAT(n)                                                                                 \
  double n() const { return floatOf(#n); }
#define A_STRING(n)                                                                                \
  const std::string &n() const { return stringOf(#n); }
#define A_STRING_OR(n)                                                                             \
  const std::string &n() const { return stringOr(#n); }
#define A_INTS(n)                                                                                  \
  const std::vector<int64_t> &n() const { return intsOf(#n); }
#define A_INTS_OR(n)                                                                               \
  const std::vector<int64_t> &n() const { return intsOr(#n); }
#define A_DIMS(n)                                                                                  \
  std::vector<Dim> n() const { return dimsOf(#n); }
#define A_DIM(n)                                                                                   \
  Dim n() const { return dimOf(#n); }
#define A_DIM_OR(n)                                                                                \
  std::optional<Dim> n() const { return dimOr(#n); }
#define A_FLOATS(n)                                                                                \
  const std::vector<double> &n() const { return floatsOf(#n); }
#define A_TENSOR(n)                                                                                \
  const Tensor &n() const { return tensorOf(#n); }
#define A_DTYPE(n)                                                                                 \
  DType n() const { return dtypeOf(#n); }
#define A_FLAG(n)                                                                                  \
  bool n() const { return flagOf(#n); }
#define A_INT_OR(n, d)                                                                             \
  int64_t n() const { return intOr(#n, d); }
#define A_FLAG_OR(n, d)                                                                            \
  bool n() const { return flagOr(#n, d); }
#define A_AXIS(n)                                                                                  \
  int64_t n() const { return intOf(#n); }
#define A_AXES(n)                                                                                  \
  const std::vector<int64_t> &n() const { return intsOf(#n); }
#define A_ENUM(T, n)                                                                               \
  T n() const { return enumOf<T>(#n); }
#define A_LAYOUT(n)                                                                                \
  int64_t n() const { return layoutOf(#n); }
#define A_LAYOUT_OR(n)                                                                             \
  int64_t n() const { return layoutOr(#n); }
#define OP(e, name, lo, hi, res, traits, dtypes, shape, onnx, ...)                                 \
  class e##Op : public OpView {                                                                    \
  public:                                                                                          \
    static constexpr OpKind kKind = OpKind::e;                                                     \
    explicit e##Op(const AttrMap &a) : OpView(a) {}                                                \
    explicit e##Op(const Op &op) : OpView(op.attrs()) { assert(op.kind() == kKind); }              \
    __VA_ARGS__                                                                                    \
  };
#include "strata/graph/OpTable.def"

// The attribute value of an enum (its text), for building ops: {"mode", enumAttr(PadMode::Edge)}.
template <typename T> Attribute enumAttr(T v) { return Attribute(std::string(enumName(v))); }

} // namespace strata::ops
