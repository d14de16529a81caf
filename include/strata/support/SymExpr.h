// Symbolic integer expressions for tensor dims that are not known until run time: a polynomial
// with int64 coefficients over atoms, an atom being a named symbol (an input's dim, "batch"), a
// floor division, min or max of expressions that does not simplify further, or a float
// computation on sizes converted back to an integer (SymFloat: a detector's resize to
// floor(h * min(800 / min(h, w), 1333 / max(h, w))) in f32, evaluated in the same rounding).
//
// Every expression is kept in one canonical form (terms merged and sorted, constants folded,
// divisions by constants split into whole and remainder parts), so two dims computed along
// different paths that are equal as formulas compare equal: a residual add of a conv branch and its
// skip path, both ⌊(H+1)/2⌋, unify without a check. Symbols stand for dims, so every symbol is
// taken to be >= 0; that is what lets max(h, 0) become h.
//
// Arithmetic on hostile constants may overflow int64: the operations then throw SymExprError, as
// they do for a division by zero; callers that take sizes from model files turn it into an error
// naming the node. No LLVM or graph dependency: the runtime evaluates these too.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct SymExprError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SymFloat;
using SymFloatRef = std::shared_ptr<const SymFloat>;

class SymExpr {
public:
  SymExpr(int64_t constant = 0); // NOLINT: a constant is an expression
  static SymExpr symbol(std::string name);

  static SymExpr floorDiv(const SymExpr &a, const SymExpr &b);
  static SymExpr ceilDiv(const SymExpr &a, const SymExpr &b);
  static SymExpr mod(const SymExpr &a, const SymExpr &b); // floor modulo: a - b * floorDiv(a, b)
  static SymExpr min(const SymExpr &a, const SymExpr &b);
  static SymExpr max(const SymExpr &a, const SymExpr &b);
  // The float value converted to an integer as ONNX's Cast does (toward zero): a constant when
  // `f` folds to one, else the atom "ftoi(...)". Evaluation fails for NaN, infinities and values
  // past int64.
  static SymExpr fromFloat(const SymFloatRef &f);
  friend SymExpr operator+(const SymExpr &a, const SymExpr &b);
  friend SymExpr operator-(const SymExpr &a, const SymExpr &b);
  friend SymExpr operator*(const SymExpr &a, const SymExpr &b);
  SymExpr operator-() const;

  bool isConstant() const;
  // The value when isConstant().
  std::optional<int64_t> constant() const;
  // The name when the expression is exactly one symbol.
  const std::string *symbolName() const;
  // Whether the value is >= 0 for every binding of the symbols to sizes >= 0 (a sufficient test:
  // non-negative coefficients over non-negative atoms).
  bool provablyNonNegative() const;
  // Every symbol the expression mentions.
  void collectSymbols(std::set<std::string> &out) const;

  // The value under `lookup` (a symbol's bound size, nullopt when unbound). Nullopt when a symbol
  // is unbound, a division is by zero or a step overflows int64.
  std::optional<int64_t> evaluate(
      const std::function<std::optional<int64_t>(const std::string &)> &lookup) const;
  // The expression with each symbol `lookup` knows replaced by its value (the rest kept).
  SymExpr substitute(
      const std::function<std::optional<SymExpr>(const std::string &)> &lookup) const;

  // Canonical text: "2*h+1", "fdiv(h+1,2)", "min(n,4)"; parse() reads it back.
  std::string str() const;
  // Parses str()'s form (and any expression in it: + - * ( ), fdiv/cdiv/mod/min/max calls).
  // On malformed text returns nullopt with the reason in `error`.
  static std::optional<SymExpr> parse(std::string_view text, std::string &error);

  bool operator==(const SymExpr &o) const;
  bool operator!=(const SymExpr &o) const { return !(*this == o); }
  // A total order (by canonical text) for containers.
  bool operator<(const SymExpr &o) const { return key() < o.key(); }

  // The representation (public for the implementation's helpers; use the API above).
  struct Atom;
  using AtomRef = std::shared_ptr<const Atom>;
  struct Term {
    int64_t coeff = 0;
    std::vector<AtomRef> factors; // sorted by key; empty for the constant term
  };
  // The canonical terms (for translating an expression into another IR: lowering builds loop
  // IR index arithmetic from them).
  const std::vector<Term> &terms() const;

private:
  friend struct SymExprImpl;
  // Sorted terms with nonzero coefficients (the constant term last); null for the constant 0.
  std::shared_ptr<const std::vector<Term>> terms_;
  std::shared_ptr<const std::string> key_; // str(), computed once
  const std::string &key() const;
  static SymExpr fromTerms(std::vector<Term> terms);
};

struct SymExpr::Atom {
  enum Kind : uint8_t { Symbol, FloorDiv, Min, Max, FloatToInt } kind = Symbol;
  std::string name; // Symbol
  SymExpr a, b;     // FloorDiv: a / b; Min, Max: the operands, sorted by key
  SymFloatRef f;    // FloatToInt
  std::string key;  // canonical text
};

// A float (f32, or f64 when `wide`) computed from sizes: what ONNX shape arithmetic does between
// a Cast of sizes to float and a Cast back. Each operation rounds to its width as the tensor ops
// would; operands of a binary operation share a width. Nodes fold when every leaf is constant.
// Text (inside ftoi(...)): i2f32(S) i2f64(S) (a size converted), f32c(V) f64c(V) (a constant),
// fadd fsub fmul fquo fmin fmax (A,B), ffloor fceil fround (A) (round: half to even), tof32 tof64.
struct SymFloat {
  enum Op : uint8_t { FromInt, Const, Add, Sub, Mul, Div, Min, Max, Floor, Ceil, Round, Convert };
  Op op = Const;
  bool wide = false;
  SymExpr size;       // FromInt
  double value = 0;   // Const (already rounded to the width)
  SymFloatRef a, b;   // operands
  std::string key;    // canonical text

  static SymFloatRef fromInt(const SymExpr &size, bool wide);
  static SymFloatRef constant(double v, bool wide);
  // Add..Max of two operands of one width (a SymExprError otherwise).
  static SymFloatRef binary(Op op, const SymFloatRef &a, const SymFloatRef &b);
  // Floor, Ceil, Round keep the width; Convert rounds to `wide`'s.
  static SymFloatRef unary(Op op, const SymFloatRef &a, bool wide);
  std::optional<double> constantValue() const;
  std::optional<double> evaluate(
      const std::function<std::optional<int64_t>(const std::string &)> &lookup) const;
  SymFloatRef substitute(
      const std::function<std::optional<SymExpr>(const std::string &)> &lookup) const;
  void collectSymbols(std::set<std::string> &out) const;
  // Whether the value is >= 0 (or NaN, which no size conversion accepts) for every binding.
  bool provablyNonNegative() const;
};

} // namespace strata
