#include "strata/support/SymExpr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>

namespace strata {

namespace {

// Expressions larger than this are refused: shape formulas are small (the largest seen: a concat
// of a detector's 90 per-class selections, one term each), and a hostile model must not make
// products of sums blow up.
constexpr size_t kMaxTerms = 256;

int64_t add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw SymExprError("a symbolic dim overflows int64");
  return r;
}
int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw SymExprError("a symbolic dim overflows int64");
  return r;
}
int64_t floorDivInt(int64_t a, int64_t b) { // b > 0
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

std::string monomialKey(const std::vector<SymExpr::AtomRef> &factors) {
  std::string k;
  for (const auto &f : factors) {
    if (!k.empty())
      k += '*';
    k += f->key;
  }
  return k;
}

bool atomNonNegative(const SymExpr::Atom &a) {
  switch (a.kind) {
  case SymExpr::Atom::Symbol: return true;
  case SymExpr::Atom::FloorDiv: // the divisor is never the constant 0
    return a.a.provablyNonNegative() && a.b.provablyNonNegative();
  case SymExpr::Atom::Min: return a.a.provablyNonNegative() && a.b.provablyNonNegative();
  case SymExpr::Atom::Max: return a.a.provablyNonNegative() || a.b.provablyNonNegative();
  case SymExpr::Atom::FloatToInt: return a.f->provablyNonNegative();
  }
  return false;
}

} // namespace

struct SymExprImpl {
  static const std::vector<SymExpr::Term> &terms(const SymExpr &e) {
    static const std::vector<SymExpr::Term> none;
    return e.terms_ ? *e.terms_ : none;
  }
  static SymExpr atom(SymExpr::Atom a) {
    SymExpr::Term t;
    t.coeff = 1;
    t.factors.push_back(std::make_shared<const SymExpr::Atom>(std::move(a)));
    return SymExpr::fromTerms({std::move(t)});
  }
  static SymExpr make(std::vector<SymExpr::Term> terms) { return SymExpr::fromTerms(std::move(terms)); }
  // `e` scaled by `k`.
  static SymExpr scale(const SymExpr &e, int64_t k) {
    std::vector<SymExpr::Term> out = terms(e);
    for (auto &t : out)
      t.coeff = mul(t.coeff, k);
    return make(std::move(out));
  }
  // The single atom of coefficient 1 (and, in `constant`, the constant term) when `e` is
  // atom + constant; null otherwise.
  static const SymExpr::Atom *atomPlusConstant(const SymExpr &e, int64_t &constant) {
    const auto &ts = terms(e);
    constant = 0;
    const SymExpr::Atom *found = nullptr;
    for (const auto &t : ts) {
      if (t.factors.empty()) {
        constant = t.coeff;
      } else if (t.factors.size() == 1 && t.coeff == 1 && !found) {
        found = t.factors[0].get();
      } else {
        return nullptr;
      }
    }
    return found;
  }
};

SymExpr::SymExpr(int64_t constant) {
  if (constant != 0) {
    Term t;
    t.coeff = constant;
    terms_ = std::make_shared<const std::vector<Term>>(std::vector<Term>{std::move(t)});
    key_ = std::make_shared<const std::string>(std::to_string(constant));
  }
}

SymExpr SymExpr::symbol(std::string name) {
  Atom a;
  a.kind = Atom::Symbol;
  a.key = name;
  a.name = std::move(name);
  return SymExprImpl::atom(std::move(a));
}

// Merges terms with equal monomials, drops zero coefficients, sorts (constant last) and prints.
SymExpr SymExpr::fromTerms(std::vector<Term> terms) {
  std::map<std::string, Term> merged;
  Term constant;
  for (Term &t : terms) {
    std::sort(t.factors.begin(), t.factors.end(),
              [](const AtomRef &x, const AtomRef &y) { return x->key < y->key; });
    if (t.factors.empty()) {
      constant.coeff = add(constant.coeff, t.coeff);
      continue;
    }
    std::string k = monomialKey(t.factors);
    auto [it, inserted] = merged.try_emplace(k, t);
    if (!inserted)
      it->second.coeff = add(it->second.coeff, t.coeff);
  }
  std::vector<Term> out;
  for (auto &[k, t] : merged)
    if (t.coeff != 0)
      out.push_back(std::move(t));
  if (constant.coeff != 0)
    out.push_back(constant);
  if (out.size() > kMaxTerms)
    throw SymExprError("a symbolic dim has more than " + std::to_string(kMaxTerms) + " terms");
  SymExpr e;
  if (out.empty())
    return e;
  std::string text;
  for (const Term &t : out) {
    bool first = text.empty();
    std::string mono = monomialKey(t.factors);
    if (mono.empty()) {
      text += (t.coeff < 0 || first ? "" : "+") + std::to_string(t.coeff);
    } else if (t.coeff == 1) {
      text += (first ? "" : "+") + mono;
    } else if (t.coeff == -1) {
      text += "-" + mono;
    } else {
      text += (t.coeff < 0 || first ? "" : "+") + std::to_string(t.coeff) + "*" + mono;
    }
  }
  e.terms_ = std::make_shared<const std::vector<Term>>(std::move(out));
  e.key_ = std::make_shared<const std::string>(std::move(text));
  return e;
}

const std::string &SymExpr::key() const {
  static const std::string zero = "0";
  return key_ ? *key_ : zero;
}

std::string SymExpr::str() const { return key(); }
bool SymExpr::operator==(const SymExpr &o) const { return key() == o.key(); }

bool SymExpr::isConstant() const {
  const auto &ts = SymExprImpl::terms(*this);
  return ts.empty() || (ts.size() == 1 && ts[0].factors.empty());
}

std::optional<int64_t> SymExpr::constant() const {
  if (!isConstant())
    return std::nullopt;
  const auto &ts = SymExprImpl::terms(*this);
  return ts.empty() ? 0 : ts[0].coeff;
}

const std::string *SymExpr::symbolName() const {
  const auto &ts = SymExprImpl::terms(*this);
  if (ts.size() == 1 && ts[0].coeff == 1 && ts[0].factors.size() == 1 &&
      ts[0].factors[0]->kind == Atom::Symbol)
    return &ts[0].factors[0]->name;
  return nullptr;
}

bool SymExpr::provablyNonNegative() const {
  for (const Term &t : SymExprImpl::terms(*this)) {
    if (t.coeff < 0)
      return false;
    for (const auto &f : t.factors)
      if (!atomNonNegative(*f))
        return false;
  }
  return true;
}

void SymExpr::collectSymbols(std::set<std::string> &out) const {
  for (const Term &t : SymExprImpl::terms(*this))
    for (const auto &f : t.factors) {
      if (f->kind == Atom::Symbol) {
        out.insert(f->name);
      } else if (f->kind == Atom::FloatToInt) {
        f->f->collectSymbols(out);
      } else {
        f->a.collectSymbols(out);
        f->b.collectSymbols(out);
      }
    }
}

SymExpr operator+(const SymExpr &a, const SymExpr &b) {
  std::vector<SymExpr::Term> ts = SymExprImpl::terms(a);
  const auto &tb = SymExprImpl::terms(b);
  ts.insert(ts.end(), tb.begin(), tb.end());
  return SymExprImpl::make(std::move(ts));
}

const std::vector<SymExpr::Term> &SymExpr::terms() const { return SymExprImpl::terms(*this); }

SymExpr SymExpr::operator-() const { return SymExprImpl::scale(*this, -1); }
SymExpr operator-(const SymExpr &a, const SymExpr &b) { return a + (-b); }

SymExpr operator*(const SymExpr &a, const SymExpr &b) {
  const auto &ta = SymExprImpl::terms(a), &tb = SymExprImpl::terms(b);
  if (ta.size() * tb.size() > kMaxTerms)
    throw SymExprError("a symbolic dim has more than " + std::to_string(kMaxTerms) + " terms");
  std::vector<SymExpr::Term> out;
  for (const auto &x : ta)
    for (const auto &y : tb) {
      SymExpr::Term t;
      t.coeff = mul(x.coeff, y.coeff);
      t.factors = x.factors;
      t.factors.insert(t.factors.end(), y.factors.begin(), y.factors.end());
      out.push_back(std::move(t));
    }
  return SymExprImpl::make(std::move(out));
}

namespace {
// t / div as a term when div's coefficient and atoms divide t's, else nullopt.
std::optional<SymExpr::Term> divideTerm(const SymExpr::Term &t, const SymExpr::Term &div) {
  if (div.coeff == 0 || t.coeff % div.coeff != 0)
    return std::nullopt;
  std::vector<SymExpr::AtomRef> left = t.factors;
  for (const SymExpr::AtomRef &f : div.factors) {
    auto it = std::find_if(left.begin(), left.end(),
                           [&](const SymExpr::AtomRef &x) { return x->key == f->key; });
    if (it == left.end())
      return std::nullopt;
    left.erase(it);
  }
  return SymExpr::Term{t.coeff / div.coeff, std::move(left)};
}
} // namespace

SymExpr SymExpr::floorDiv(const SymExpr &a, const SymExpr &b) {
  if (std::optional<int64_t> c = b.constant()) {
    int64_t d = *c;
    if (d == 0)
      throw SymExprError("a symbolic dim divides by zero");
    if (d < 0)
      return floorDiv(-a, -b);
    if (d == 1)
      return a;
    // a = d*q + r term by term with each remainder coefficient in [0, d): ⌊a/d⌋ = q + ⌊r/d⌋ since
    // q is an integer for every binding.
    std::vector<Term> whole, rest;
    int64_t restConstant = 0;
    for (const Term &t : SymExprImpl::terms(a)) {
      int64_t q = floorDivInt(t.coeff, d), r = t.coeff - q * d;
      if (q != 0)
        whole.push_back({q, t.factors});
      if (r == 0)
        continue;
      if (t.factors.empty())
        restConstant = r;
      else
        rest.push_back({r, t.factors});
    }
    SymExpr quotient = SymExprImpl::make(std::move(whole));
    if (rest.empty()) // 0 <= restConstant < d
      return quotient;
    // ⌊g*x / g*m⌋ = ⌊x/m⌋: divide the remainder and the divisor by their common factor.
    int64_t g = d;
    for (const Term &t : rest)
      g = std::gcd(g, t.coeff);
    g = std::gcd(g, restConstant);
    if (restConstant != 0)
      rest.push_back({restConstant, {}});
    for (Term &t : rest)
      t.coeff /= g;
    d /= g;
    SymExpr r = SymExprImpl::make(std::move(rest));
    if (d == 1)
      return quotient + r;
    // ⌊(⌊x/m⌋ + k)/d⌋ = ⌊(x + k*m)/(m*d)⌋ for positive m, d: nested window sizes (a pool after a
    // strided conv) stay one division of the input dim.
    int64_t k = 0;
    if (const Atom *inner = SymExprImpl::atomPlusConstant(r, k);
        inner && inner->kind == Atom::FloorDiv && inner->b.constant().value_or(0) > 0) {
      int64_t m = *inner->b.constant();
      return quotient + floorDiv(inner->a + SymExpr(mul(k, m)), SymExpr(mul(m, d)));
    }
    Atom at;
    at.kind = Atom::FloorDiv;
    at.a = r;
    at.b = SymExpr(d);
    at.key = "fdiv(" + r.str() + "," + std::to_string(d) + ")";
    return quotient + SymExprImpl::atom(std::move(at));
  }
  if (a == b)
    return SymExpr(1); // a dim divided by itself (a zero dim divides nothing: refused at run time)
  // Exact division by a monomial that divides every term (Reshape's -1 over symbolic dims).
  const auto &tb = SymExprImpl::terms(b);
  if (tb.size() == 1 && tb[0].coeff > 0) {
    const Term &div = tb[0];
    std::vector<Term> out;
    bool exact = true;
    for (const Term &t : SymExprImpl::terms(a)) {
      std::optional<Term> q = divideTerm(t, div);
      if (!q) {
        exact = false;
        break;
      }
      out.push_back(std::move(*q));
    }
    if (exact)
      return SymExprImpl::make(std::move(out));
  }
  // Exact division by a sum with a monomial quotient (a batch of windows over the window count:
  // n*k / k for a k of several terms): some term of a is q times b's first term.
  if (tb.size() > 1 && tb[0].coeff != 0) {
    for (const Term &t : SymExprImpl::terms(a)) {
      std::optional<Term> qt = divideTerm(t, tb[0]);
      if (!qt)
        continue;
      SymExpr q = SymExprImpl::make({std::move(*qt)});
      if (q * b == a)
        return q;
    }
  }
  Atom at;
  at.kind = Atom::FloorDiv;
  at.a = a;
  at.b = b;
  at.key = "fdiv(" + a.str() + "," + b.str() + ")";
  return SymExprImpl::atom(std::move(at));
}

SymExpr SymExpr::ceilDiv(const SymExpr &a, const SymExpr &b) {
  if (std::optional<int64_t> d = b.constant(); d && *d > 0)
    return floorDiv(a + SymExpr(*d - 1), b); // the form window sizes take: ⌈h/2⌉ = ⌊(h+1)/2⌋
  return -floorDiv(-a, b);
}

SymExpr SymExpr::mod(const SymExpr &a, const SymExpr &b) { return a - b * floorDiv(a, b); }

namespace {
SymExpr minMax(const SymExpr &a, const SymExpr &b, bool isMax) {
  SymExpr diff = a - b; // a >= b when diff is provably >= 0
  if (diff.provablyNonNegative())
    return isMax ? a : b;
  if ((-diff).provablyNonNegative())
    return isMax ? b : a;
  SymExpr::Atom at;
  at.kind = isMax ? SymExpr::Atom::Max : SymExpr::Atom::Min;
  at.a = a < b ? a : b;
  at.b = a < b ? b : a;
  at.key = std::string(isMax ? "max(" : "min(") + at.a.str() + "," + at.b.str() + ")";
  return SymExprImpl::atom(std::move(at));
}
} // namespace

SymExpr SymExpr::min(const SymExpr &a, const SymExpr &b) { return minMax(a, b, false); }
SymExpr SymExpr::max(const SymExpr &a, const SymExpr &b) { return minMax(a, b, true); }

namespace {

// A float converted toward zero (ONNX Cast), nullopt for NaN, infinities and values past int64.
std::optional<int64_t> truncated(std::optional<double> v) {
  if (!v || !std::isfinite(*v) || std::fabs(*v) >= 9.2233720368547758e18)
    return std::nullopt;
  return static_cast<int64_t>(std::trunc(*v));
}

double roundTo(double v, bool wide) { return wide ? v : static_cast<double>(static_cast<float>(v)); }

// One operation in the node's width: f32 operands are exact in double, and +, -, *, / of two
// f32 values computed in double then rounded to f32 give the f32 result.
double apply(SymFloat::Op op, double x, double y, bool wide) {
  double r = 0;
  switch (op) {
  case SymFloat::Add: r = x + y; break;
  case SymFloat::Sub: r = x - y; break;
  case SymFloat::Mul: r = x * y; break;
  case SymFloat::Div: r = x / y; break;
  // NaN propagates (torch.min / ONNX Min); no size conversion accepts it.
  case SymFloat::Min: r = std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y); break;
  case SymFloat::Max: r = std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); break;
  case SymFloat::Floor: r = std::floor(x); break;
  case SymFloat::Ceil: r = std::ceil(x); break;
  case SymFloat::Round: r = std::nearbyint(x); break; // the default mode: half to even
  default: r = x; break;
  }
  return roundTo(r, wide);
}

const char *opName(SymFloat::Op op) {
  switch (op) {
  case SymFloat::Add: return "fadd";
  case SymFloat::Sub: return "fsub";
  case SymFloat::Mul: return "fmul";
  case SymFloat::Div: return "fquo";
  case SymFloat::Min: return "fmin";
  case SymFloat::Max: return "fmax";
  case SymFloat::Floor: return "ffloor";
  case SymFloat::Ceil: return "fceil";
  case SymFloat::Round: return "fround";
  default: return "";
  }
}

std::string floatText(double v, bool wide) {
  char buf[40];
  std::snprintf(buf, sizeof buf, wide ? "%.17g" : "%.9g", v);
  return buf;
}

constexpr size_t kMaxFloatKey = 4096; // a hostile model's nesting stays small

SymFloatRef finish(SymFloat n) {
  if (n.key.size() > kMaxFloatKey)
    throw SymExprError("a float size computation is too large");
  return std::make_shared<const SymFloat>(std::move(n));
}

} // namespace

SymFloatRef SymFloat::constant(double v, bool wide) {
  SymFloat n;
  n.op = Const;
  n.wide = wide;
  n.value = roundTo(v, wide);
  n.key = std::string(wide ? "f64c(" : "f32c(") + floatText(n.value, wide) + ")";
  return finish(std::move(n));
}

namespace {
// Whether every value of `f` is an integer (or not finite): roundings of integers, sizes, and
// sums, differences, products, mins and maxes of such (a rounded product of integers stays one).
bool integral(const SymFloat &f) {
  switch (f.op) {
  case SymFloat::Const: return f.value == std::trunc(f.value);
  case SymFloat::FromInt:
  case SymFloat::Floor:
  case SymFloat::Ceil:
  case SymFloat::Round: return true;
  case SymFloat::Div: return false;
  case SymFloat::Convert: return integral(*f.a);
  default: return integral(*f.a) && integral(*f.b);
  }
}
} // namespace

SymFloatRef SymFloat::fromInt(const SymExpr &size, bool wide) {
  if (std::optional<int64_t> c = size.constant())
    return constant(static_cast<double>(wide ? static_cast<double>(*c)
                                             : static_cast<double>(static_cast<float>(*c))),
                    wide);
  // An integer-valued float made a size and back (torchvision's int(ceil(h / 32) * 32) read as
  // a float again): the same float when no width is lost.
  const auto &ts = size.terms();
  if (ts.size() == 1 && ts[0].coeff == 1 && ts[0].factors.size() == 1 &&
      ts[0].factors[0]->kind == SymExpr::Atom::FloatToInt) {
    const SymFloatRef &f = ts[0].factors[0]->f;
    if ((wide || !f->wide) && integral(*f))
      return unary(Convert, f, wide);
  }
  SymFloat n;
  n.op = FromInt;
  n.wide = wide;
  n.size = size;
  n.key = std::string(wide ? "i2f64(" : "i2f32(") + size.str() + ")";
  return finish(std::move(n));
}

SymFloatRef SymFloat::binary(Op op, const SymFloatRef &a, const SymFloatRef &b) {
  if (op < Add || op > Max)
    throw SymExprError("not a binary float operation");
  if (a->wide != b->wide)
    throw SymExprError("float operands of different widths");
  if (a->op == Const && b->op == Const)
    return constant(apply(op, a->value, b->value, a->wide), a->wide);
  SymFloat n;
  n.op = op;
  n.wide = a->wide;
  n.a = a;
  n.b = b;
  n.key = std::string(opName(op)) + "(" + a->key + "," + b->key + ")";
  return finish(std::move(n));
}

SymFloatRef SymFloat::unary(Op op, const SymFloatRef &a, bool wide) {
  if (op == Convert && a->wide == wide)
    return a;
  if (op != Convert)
    wide = a->wide;
  if (a->op == Const)
    return constant(op == Convert ? a->value : apply(op, a->value, 0, wide), wide);
  SymFloat n;
  n.op = op;
  n.wide = wide;
  n.a = a;
  n.key = std::string(op == Convert ? (wide ? "tof64" : "tof32") : opName(op)) + "(" + a->key +
          ")";
  return finish(std::move(n));
}

std::optional<double> SymFloat::constantValue() const {
  return op == Const ? std::optional<double>(value) : std::nullopt;
}

std::optional<double> SymFloat::evaluate(
    const std::function<std::optional<int64_t>(const std::string &)> &lookup) const {
  switch (op) {
  case Const: return value;
  case FromInt: {
    std::optional<int64_t> v = size.evaluate(lookup);
    if (!v)
      return std::nullopt;
    return wide ? static_cast<double>(*v) : static_cast<double>(static_cast<float>(*v));
  }
  case Convert: {
    std::optional<double> x = a->evaluate(lookup);
    return x ? std::optional<double>(roundTo(*x, wide)) : std::nullopt;
  }
  default: {
    std::optional<double> x = a->evaluate(lookup);
    std::optional<double> y = b ? b->evaluate(lookup) : std::optional<double>(0);
    if (!x || !y)
      return std::nullopt;
    return apply(op, *x, *y, wide);
  }
  }
}

SymFloatRef SymFloat::substitute(
    const std::function<std::optional<SymExpr>(const std::string &)> &lookup) const {
  switch (op) {
  case Const: return constant(value, wide);
  case FromInt: return fromInt(size.substitute(lookup), wide);
  case Floor:
  case Ceil:
  case Round:
  case Convert: return unary(op, a->substitute(lookup), wide);
  default: return binary(op, a->substitute(lookup), b->substitute(lookup));
  }
}

void SymFloat::collectSymbols(std::set<std::string> &out) const {
  if (op == FromInt)
    size.collectSymbols(out);
  if (a)
    a->collectSymbols(out);
  if (b)
    b->collectSymbols(out);
}

bool SymFloat::provablyNonNegative() const {
  switch (op) {
  case Const: return value >= 0;
  case FromInt: return size.provablyNonNegative();
  case Sub: return false;
  case Max: return a->provablyNonNegative() || b->provablyNonNegative();
  case Add:
  case Mul:
  case Div: // a division by zero gives +inf or NaN, which no size conversion accepts
  case Min: return a->provablyNonNegative() && b->provablyNonNegative();
  default: return a->provablyNonNegative(); // floor, ceil, round, convert
  }
}

SymExpr SymExpr::fromFloat(const SymFloatRef &f) {
  if (std::optional<double> c = f->constantValue()) {
    std::optional<int64_t> v = truncated(c);
    if (!v)
      throw SymExprError("a float size " + floatText(*c, true) + " is not a finite int64");
    return SymExpr(*v);
  }
  // ftoi(ffloor(x)) and ftoi(x) of an integer-valued x agree; keep the text as written.
  Atom at;
  at.kind = Atom::FloatToInt;
  at.f = f;
  at.key = "ftoi(" + f->key + ")";
  return SymExprImpl::atom(std::move(at));
}

std::optional<int64_t> SymExpr::evaluate(
    const std::function<std::optional<int64_t>(const std::string &)> &lookup) const {
  int64_t sum = 0;
  for (const Term &t : SymExprImpl::terms(*this)) {
    int64_t v = t.coeff;
    for (const AtomRef &f : t.factors) {
      std::optional<int64_t> x;
      if (f->kind == Atom::Symbol) {
        x = lookup(f->name);
      } else if (f->kind == Atom::FloatToInt) {
        x = truncated(f->f->evaluate(lookup));
      } else {
        std::optional<int64_t> p = f->a.evaluate(lookup), q = f->b.evaluate(lookup);
        if (!p || !q)
          return std::nullopt;
        if (f->kind == Atom::FloorDiv) {
          if (*q == 0 || (*p == INT64_MIN && *q == -1))
            return std::nullopt;
          int64_t r = *p / *q;
          x = (*p % *q != 0 && ((*p < 0) != (*q < 0))) ? r - 1 : r;
        } else {
          x = f->kind == Atom::Min ? std::min(*p, *q) : std::max(*p, *q);
        }
      }
      if (!x || __builtin_mul_overflow(v, *x, &v))
        return std::nullopt;
    }
    if (__builtin_add_overflow(sum, v, &sum))
      return std::nullopt;
  }
  return sum;
}

SymExpr SymExpr::substitute(
    const std::function<std::optional<SymExpr>(const std::string &)> &lookup) const {
  SymExpr sum;
  for (const Term &t : SymExprImpl::terms(*this)) {
    SymExpr v(t.coeff);
    for (const AtomRef &f : t.factors) {
      switch (f->kind) {
      case Atom::Symbol: {
        std::optional<SymExpr> x = lookup(f->name);
        v = v * (x ? *x : SymExpr::symbol(f->name));
        break;
      }
      case Atom::FloorDiv: v = v * floorDiv(f->a.substitute(lookup), f->b.substitute(lookup)); break;
      case Atom::Min: v = v * min(f->a.substitute(lookup), f->b.substitute(lookup)); break;
      case Atom::Max: v = v * max(f->a.substitute(lookup), f->b.substitute(lookup)); break;
      case Atom::FloatToInt: v = v * fromFloat(f->f->substitute(lookup)); break;
      }
    }
    sum = sum + v;
  }
  return sum;
}

namespace {

// Recursive descent over str()'s grammar:
//   sum := product (('+' | '-') product)*     product := unary ('*' unary)*
//   unary := '-' unary | integer | name | name '(' sum ',' sum ')' | '(' sum ')'
class Parser {
public:
  explicit Parser(std::string_view s) : s_(s) {}
  std::optional<SymExpr> run(std::string &error) {
    try {
      SymExpr e = sum();
      skip();
      if (pos_ != s_.size())
        fail("unexpected '" + std::string(1, s_[pos_]) + "'");
      return e;
    } catch (const SymExprError &e) {
      error = e.what();
      return std::nullopt;
    }
  }

private:
  [[noreturn]] void fail(const std::string &why) {
    throw SymExprError("symbolic dim '" + std::string(s_) + "' at column " +
                       std::to_string(pos_ + 1) + ": " + why);
  }
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ')
      ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c))
      fail(std::string("expected '") + c + "'");
  }
  SymExpr sum() {
    if (++depth_ > 64)
      fail("nested too deeply");
    SymExpr e = product();
    while (true) {
      if (eat('+'))
        e = e + product();
      else if (eat('-'))
        e = e - product();
      else
        break;
    }
    --depth_;
    return e;
  }
  SymExpr product() {
    SymExpr e = unary();
    while (eat('*'))
      e = e * unary();
    return e;
  }
  static bool nameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '$';
  }
  SymExpr unary() {
    if (++depth_ > 64)
      fail("nested too deeply");
    SymExpr e = primary();
    --depth_;
    return e;
  }
  SymExpr primary() {
    if (eat('-'))
      return -unary();
    if (eat('(')) {
      SymExpr e = sum();
      expect(')');
      return e;
    }
    skip();
    size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      int64_t v = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        int digit = s_[pos_++] - '0';
        if (v > (INT64_MAX - digit) / 10)
          fail("integer too large");
        v = v * 10 + digit;
      }
      return SymExpr(v);
    }
    while (pos_ < s_.size() && nameChar(s_[pos_]))
      ++pos_;
    if (pos_ == start)
      fail(pos_ < s_.size() ? "unexpected '" + std::string(1, s_[pos_]) + "'" : "unexpected end");
    std::string name(s_.substr(start, pos_ - start));
    if (!eat('('))
      return SymExpr::symbol(name);
    if (name == "ftoi") {
      SymFloatRef f = floatExpr();
      expect(')');
      return SymExpr::fromFloat(f);
    }
    SymExpr x = sum();
    expect(',');
    SymExpr y = sum();
    expect(')');
    if (name == "fdiv")
      return SymExpr::floorDiv(x, y);
    if (name == "cdiv")
      return SymExpr::ceilDiv(x, y);
    if (name == "mod")
      return SymExpr::mod(x, y);
    if (name == "min")
      return SymExpr::min(x, y);
    if (name == "max")
      return SymExpr::max(x, y);
    fail("unknown function '" + name + "'");
  }

  // A SymFloat's text (SymFloat in SymExpr.h): name '(' arguments ')'.
  SymFloatRef floatExpr() {
    if (++depth_ > 64)
      fail("nested too deeply");
    skip();
    size_t start = pos_;
    while (pos_ < s_.size() && nameChar(s_[pos_]))
      ++pos_;
    std::string name(s_.substr(start, pos_ - start));
    expect('(');
    SymFloatRef r;
    static const std::pair<const char *, SymFloat::Op> kBinary[] = {
        {"fadd", SymFloat::Add}, {"fsub", SymFloat::Sub}, {"fmul", SymFloat::Mul},
        {"fquo", SymFloat::Div}, {"fmin", SymFloat::Min}, {"fmax", SymFloat::Max}};
    static const std::pair<const char *, SymFloat::Op> kUnary[] = {
        {"ffloor", SymFloat::Floor}, {"fceil", SymFloat::Ceil}, {"fround", SymFloat::Round}};
    if (name == "i2f32" || name == "i2f64") {
      r = SymFloat::fromInt(sum(), name == "i2f64");
    } else if (name == "f32c" || name == "f64c") {
      skip();
      size_t end = s_.find(')', pos_);
      if (end == std::string_view::npos)
        fail("expected ')'");
      std::string literal(s_.substr(pos_, end - pos_));
      char *stop = nullptr;
      double v = std::strtod(literal.c_str(), &stop);
      if (literal.empty() || stop != literal.c_str() + literal.size())
        fail("bad float constant '" + literal + "'");
      pos_ = end;
      r = SymFloat::constant(v, name == "f64c");
    } else if (name == "tof32" || name == "tof64") {
      r = SymFloat::unary(SymFloat::Convert, floatExpr(), name == "tof64");
    } else {
      for (const auto &[text, op] : kBinary)
        if (name == text) {
          SymFloatRef a = floatExpr();
          expect(',');
          r = SymFloat::binary(op, a, floatExpr());
        }
      for (const auto &[text, op] : kUnary)
        if (name == text) {
          SymFloatRef a = floatExpr();
          r = SymFloat::unary(op, a, a->wide);
        }
      if (!r)
        fail("unknown float function '" + name + "'");
    }
    expect(')');
    --depth_;
    return r;
  }

  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

} // namespace

std::optional<SymExpr> SymExpr::parse(std::string_view text, std::string &error) {
  return Parser(text).run(error);
}

} // namespace strata
