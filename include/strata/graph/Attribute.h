// Typed op attributes. Each op's attributes are declared with their kinds in the op table, so the
// verifier can check them and the parser can read literals such as `[]` without ambiguity.
#pragma once
#include "strata/graph/Type.h"
#include "strata/support/Tensor.h"

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace strata {

// Dims: a list of dims some of which are symbolic (a reshape's target, resize's sizes computed
// from symbolic dims). Its normal form: a list whose entries are all static is Ints (make one
// with Attribute::dims), so ops that accept Dims also accept Ints, and a static list has one form.
enum class AttrKind : uint8_t { Int, Float, String, Ints, Floats, Tensor, DType, Dims };
std::string_view attrKindName(AttrKind k);

class Attribute {
public:
  using Storage = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, Tensor, DType, std::vector<Dim>>;
  Attribute() : v_(int64_t{0}) {}
  Attribute(int64_t i) : v_(i) {}           // NOLINT
  Attribute(int i) : v_(int64_t{i}) {}      // NOLINT
  Attribute(bool b) : v_(int64_t{b}) {}     // NOLINT
  Attribute(double f) : v_(f) {}            // NOLINT
  Attribute(std::string s) : v_(std::move(s)) {}              // NOLINT
  Attribute(const char *s) : v_(std::string(s)) {}            // NOLINT
  Attribute(std::vector<int64_t> v) : v_(std::move(v)) {}     // NOLINT
  Attribute(std::vector<double> v) : v_(std::move(v)) {}      // NOLINT
  Attribute(Tensor t) : v_(std::move(t)) {}                   // NOLINT
  Attribute(DType t) : v_(t) {}                               // NOLINT
  // A list of dims in normal form: Ints when every entry is static, Dims otherwise.
  static Attribute dims(const std::vector<Dim> &d);
  // Any stored value as it is (a Dims list of sizes only is not in normal form: the verifier
  // refuses it).
  explicit Attribute(Storage s) : v_(std::move(s)) {}

  AttrKind kind() const { return static_cast<AttrKind>(v_.index()); }
  int64_t getInt() const { return std::get<int64_t>(v_); }
  double getFloat() const { return std::get<double>(v_); }
  const std::string &getString() const { return std::get<std::string>(v_); }
  const std::vector<int64_t> &getInts() const { return std::get<std::vector<int64_t>>(v_); }
  const std::vector<double> &getFloats() const { return std::get<std::vector<double>>(v_); }
  const Tensor &getTensor() const { return std::get<Tensor>(v_); }
  DType getDType() const { return std::get<DType>(v_); }
  const std::vector<Dim> &getDims() const { return std::get<std::vector<Dim>>(v_); }
  // The entries of an Ints or Dims attribute as dims.
  std::vector<Dim> asDims() const;

  // Structural equality; tensors compare by content.
  bool operator==(const Attribute &o) const;

private:
  Storage v_;
};

// Attributes of one op, ordered by name so printing is deterministic.
using AttrMap = std::map<std::string, Attribute>;

} // namespace strata
