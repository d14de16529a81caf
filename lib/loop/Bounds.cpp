// Interval bounds and a small prover for index expressions.
//
// The prover rewrites `b - a` into a linear form (constant + sum of coefficient * atom), where an
// atom is any subexpression that is not +, - or multiplication by a constant. It then bounds the
// form from below using per-atom constant bounds: a parameter is >= 1; floordiv, floormod, min and
// max of bounded operands are bounded. min/max at the top of either side are split into cases,
// which is how symbolic tail bounds such as min(4, n - 4 * io) are handled.
#include "strata/loop/Bounds.h"

#include "strata/loop/Printer.h"
#include "strata/loop/Simplify.h"
#include "strata/loop/Visitor.h"

namespace strata::loop {

namespace {

struct Linear {
  int64_t constant = 0;
  std::vector<std::pair<Expr, int64_t>> terms; // atom, coefficient (atoms pairwise unequal)
};

bool addTerm(Linear &l, const Expr &atom, int64_t coef) {
  for (auto &[a, c] : l.terms)
    if (equal(a, atom))
      return !__builtin_add_overflow(c, coef, &c);
  l.terms.push_back({atom, coef});
  return true;
}

// l += scale * r
bool accumulate(Linear &l, const Linear &r, int64_t scale) {
  int64_t c;
  if (__builtin_mul_overflow(r.constant, scale, &c) ||
      __builtin_add_overflow(l.constant, c, &l.constant))
    return false;
  for (const auto &[a, k] : r.terms)
    if (__builtin_mul_overflow(k, scale, &c) || !addTerm(l, a, c))
      return false;
  return true;
}

std::optional<Linear> linearize(const Expr &e) {
  Linear l;
  if (auto v = e.asInt()) {
    l.constant = *v;
    return l;
  }
  const ExprNode &n = *e;
  if (n.type.lanes != 1 || !isInteger(n.type.dtype))
    return std::nullopt;
  if (n.kind == ExprKind::Add || n.kind == ExprKind::Sub) {
    auto a = linearize(n.operands[0]), b = linearize(n.operands[1]);
    if (!a || !b || !accumulate(l, *a, 1) || !accumulate(l, *b, n.kind == ExprKind::Add ? 1 : -1))
      return std::nullopt;
    return l;
  }
  if (n.kind == ExprKind::Mul) {
    auto a = linearize(n.operands[0]), b = linearize(n.operands[1]);
    if (a && b && a->terms.empty() && accumulate(l, *b, a->constant))
      return l;
    if (a && b && b->terms.empty() && accumulate(l, *a, b->constant))
      return l;
    if (!a || !b)
      return std::nullopt;
  }
  l.terms.push_back({e, 1});
  return l;
}

std::optional<int64_t> atomLower(const Expr &e);
std::optional<int64_t> atomUpper(const Expr &e);

// Lower (or upper, with `upper`) constant bound of a linear form.
std::optional<int64_t> linearBound(const Linear &l, bool upper) {
  int64_t sum = l.constant;
  for (const auto &[atom, coef] : l.terms) {
    if (coef == 0)
      continue;
    bool wantUpper = (coef > 0) == upper;
    std::optional<int64_t> b = wantUpper ? atomUpper(atom) : atomLower(atom);
    int64_t t;
    if (!b || __builtin_mul_overflow(*b, coef, &t) || __builtin_add_overflow(sum, t, &sum))
      return std::nullopt;
  }
  return sum;
}

std::optional<int64_t> exprBound(const Expr &e, bool upper) {
  auto l = linearize(e);
  if (!l)
    return std::nullopt;
  if (l->terms.size() == 1 && l->constant == 0 && l->terms[0].second == 1 &&
      l->terms[0].first.same(e))
    return upper ? atomUpper(e) : atomLower(e);
  return linearBound(*l, upper);
}

std::optional<int64_t> floorDiv(std::optional<int64_t> a, int64_t c) {
  if (!a)
    return std::nullopt;
  int64_t q = *a / c;
  return (*a % c != 0 && *a < 0) ? q - 1 : q;
}

std::optional<int64_t> atomLower(const Expr &e) {
  const ExprNode &n = *e;
  std::optional<int64_t> c;
  if (n.operands.size() == 2)
    c = n.operands[1].asInt();
  switch (n.kind) {
  case ExprKind::Var: return 1; // a free variable is a parameter, i.e. an extent
  case ExprKind::FloorDiv:
    return c && *c > 0 ? floorDiv(exprBound(n.operands[0], false), *c) : std::nullopt;
  case ExprKind::FloorMod: return c && *c > 0 ? std::optional<int64_t>(0) : std::nullopt;
  case ExprKind::Min: {
    auto a = exprBound(n.operands[0], false), b = exprBound(n.operands[1], false);
    return a && b ? std::optional(std::min(*a, *b)) : std::nullopt;
  }
  case ExprKind::Max: {
    auto a = exprBound(n.operands[0], false), b = exprBound(n.operands[1], false);
    return a && b ? std::max(*a, *b) : a ? a : b;
  }
  case ExprKind::Mul: {
    auto a = exprBound(n.operands[0], false), b = exprBound(n.operands[1], false);
    int64_t p;
    if (a && b && *a >= 0 && *b >= 0 && !__builtin_mul_overflow(*a, *b, &p))
      return p;
    return std::nullopt;
  }
  default: return std::nullopt;
  }
}

std::optional<int64_t> atomUpper(const Expr &e) {
  const ExprNode &n = *e;
  std::optional<int64_t> c;
  if (n.operands.size() == 2)
    c = n.operands[1].asInt();
  switch (n.kind) {
  case ExprKind::FloorDiv:
    return c && *c > 0 ? floorDiv(exprBound(n.operands[0], true), *c) : std::nullopt;
  case ExprKind::FloorMod: return c && *c > 0 ? std::optional<int64_t>(*c - 1) : std::nullopt;
  case ExprKind::Min: {
    auto a = exprBound(n.operands[0], true), b = exprBound(n.operands[1], true);
    return a && b ? std::min(*a, *b) : a ? a : b;
  }
  case ExprKind::Max: {
    auto a = exprBound(n.operands[0], true), b = exprBound(n.operands[1], true);
    return a && b ? std::optional(std::max(*a, *b)) : std::nullopt;
  }
  default: return std::nullopt;
  }
}

bool proveLEDepth(const Expr &a, const Expr &b, int depth) {
  if (!a || !b)
    return false;
  if (depth < 8) {
    if (b.kind() == ExprKind::Min)
      return proveLEDepth(a, b->operands[0], depth + 1) &&
             proveLEDepth(a, b->operands[1], depth + 1);
    if (a.kind() == ExprKind::Max)
      return proveLEDepth(a->operands[0], b, depth + 1) &&
             proveLEDepth(a->operands[1], b, depth + 1);
    if (b.kind() == ExprKind::Max && (proveLEDepth(a, b->operands[0], depth + 1) ||
                                      proveLEDepth(a, b->operands[1], depth + 1)))
      return true;
    if (a.kind() == ExprKind::Min && (proveLEDepth(a->operands[0], b, depth + 1) ||
                                      proveLEDepth(a->operands[1], b, depth + 1)))
      return true;
  }
  auto la = linearize(a), lb = linearize(b);
  if (!la || !lb || !accumulate(*lb, *la, -1))
    return false;
  auto low = linearBound(*lb, false);
  return low && *low >= 0;
}

// Integer helpers that fold constants, so bounds of constant loops stay constants.
Expr k(int64_t v, const Expr &like) { return intImm(v, like.type().dtype); }
Expr fold(ExprKind kind, const Expr &a, const Expr &b) {
  if (!a || !b)
    return Expr();
  return simplify(binary(kind, a, b));
}
// fold(kind, a, b), or whichever of a and b is bounded (min of an upper bound, max of a lower).
Expr foldEither(ExprKind kind, const Expr &a, const Expr &b) {
  return a && b ? fold(kind, a, b) : a ? a : b;
}

} // namespace

bool proveLE(const Expr &a, const Expr &b) { return proveLEDepth(a, b, 0); }

std::optional<int64_t> constantValue(const Expr &e) {
  auto l = linearize(e);
  if (l && l->terms.empty())
    return l->constant;
  return std::nullopt;
}

namespace {

// Symbolic bounds of integer expressions; anything else (floats, bools, loads, calls) is
// unbounded, except integer and bool constants, which bound themselves.
class BoundsOf : public ExprFunctor<Interval(const Expr &)> {
public:
  explicit BoundsOf(const BoundsScope &scope) : scope_(scope) {}

  Interval visit(const Expr &e) override {
    if (e.kind() != ExprKind::IntImm && !isInteger(e.type().dtype))
      return {};
    return ExprFunctor::visit(e);
  }

protected:
  Interval visitIntImm(const Expr &e) override { return {e, e}; }
  Interval visitFloatImm(const Expr &) override { return {}; }
  Interval visitVar(const Expr &e) override {
    auto it = scope_.find(e->var.get());
    return it != scope_.end() ? it->second : Interval{e, e};
  }
  Interval visitLoad(const Expr &) override { return {}; }
  Interval visitNot(const Expr &) override { return {}; }
  Interval visitCall(const Expr &) override { return {}; }
  Interval visitBroadcast(const Expr &e) override { return visit(e->operands[0]); }
  // Within [0, max(size - 1, 0)] whatever the value is.
  Interval visitCheckIndex(const Expr &e) override {
    const Expr &size = e->operands[1];
    Interval s = visit(size);
    Expr last =
        s.max ? fold(ExprKind::Max, fold(ExprKind::Sub, s.max, k(1, size)), k(0, size)) : Expr();
    return {k(0, size), last};
  }
  Interval visitCast(const Expr &e) override {
    const Expr &x = e->operands[0];
    return isInteger(x.type().dtype) ? visit(x) : Interval{};
  }
  Interval visitRamp(const Expr &e) override {
    const ExprNode &n = *e;
    Interval base = visit(n.operands[0]);
    auto s = constantValue(n.operands[1]);
    if (!s)
      return {};
    Expr span = k(*s * (n.type.lanes - 1), n.operands[0]);
    return *s >= 0 ? Interval{base.min, fold(ExprKind::Add, base.max, span)}
                   : Interval{fold(ExprKind::Add, base.min, span), base.max};
  }
  Interval visitSelect(const Expr &e) override {
    Interval t = visit(e->operands[1]), f = visit(e->operands[2]);
    return {fold(ExprKind::Min, t.min, f.min), fold(ExprKind::Max, t.max, f.max)};
  }
  Interval visitBinary(const Expr &e) override {
    const ExprNode &n = *e;
    if (!isBinaryArith(n.kind))
      return {};
    const Expr &x = n.operands[0], &y = n.operands[1];
    Interval a = visit(x), b = visit(y);
    auto c = constantValue(y);
    switch (n.kind) {
    case ExprKind::Add:
      return {fold(ExprKind::Add, a.min, b.min), fold(ExprKind::Add, a.max, b.max)};
    case ExprKind::Sub:
      return {fold(ExprKind::Sub, a.min, b.max), fold(ExprKind::Sub, a.max, b.min)};
    case ExprKind::Mul: {
      auto cx = constantValue(x);
      if (cx) {
        std::swap(a, b);
        c = cx;
      }
      if (c) {
        Expr kc = k(*c, x);
        Interval r{fold(ExprKind::Mul, a.min, kc), fold(ExprKind::Mul, a.max, kc)};
        if (*c < 0)
          std::swap(r.min, r.max);
        return r;
      }
      Expr zero = k(0, x);
      if (a.bounded() && b.bounded() && proveLE(zero, a.min) && proveLE(zero, b.min))
        return {fold(ExprKind::Mul, a.min, b.min), fold(ExprKind::Mul, a.max, b.max)};
      return {};
    }
    case ExprKind::Div:
    case ExprKind::FloorDiv:
      // Truncating division agrees with floor division on a non-negative dividend.
      if (c && *c > 0 && (n.kind == ExprKind::FloorDiv || (a.min && proveLE(k(0, x), a.min))))
        return {fold(ExprKind::FloorDiv, a.min, y), fold(ExprKind::FloorDiv, a.max, y)};
      if (!c && n.kind == ExprKind::FloorDiv && nonNegativeOverPositive(a, b, x, y)) {
        // A run-time divisor: a dividend below q * y (a fused loop over q * y iterations)
        // gives a quotient below q.
        if (Expr q = factorOf(fold(ExprKind::Add, a.max, k(1, x)), y))
          return {k(0, x), fold(ExprKind::Sub, q, k(1, x))};
        return {k(0, x), a.max && b.min ? fold(ExprKind::FloorDiv, a.max, b.min) : Expr()};
      }
      return {};
    case ExprKind::Mod:
    case ExprKind::FloorMod:
      // A run-time divisor >= 1: the remainder lies in [0, y - 1].
      if (!c && n.kind == ExprKind::FloorMod && b.min && b.max && proveLE(k(1, y), b.min))
        return {k(0, x), fold(ExprKind::Sub, b.max, k(1, y))};
      if (!c || *c <= 0 || (n.kind == ExprKind::Mod && !(a.min && proveLE(k(0, x), a.min))))
        return {};
      // Already within [0, c): the remainder is the dividend itself.
      if (a.bounded() && proveLE(k(0, x), a.min) && proveLE(a.max, k(*c - 1, x)))
        return a;
      return {k(0, x), k(*c - 1, x)};
    case ExprKind::Min:
      return {fold(ExprKind::Min, a.min, b.min), foldEither(ExprKind::Min, a.max, b.max)};
    case ExprKind::Max:
      return {foldEither(ExprKind::Max, a.min, b.min), fold(ExprKind::Max, a.max, b.max)};
    default:
      return {};
    }
  }

private:
  // x in `a` non-negative, y in `b` at least 1.
  static bool nonNegativeOverPositive(const Interval &a, const Interval &b, const Expr &x,
                                      const Expr &y) {
    return a.min && b.min && proveLE(k(0, x), a.min) && proveLE(k(1, y), b.min);
  }
  // e / y when e is a product with y as a factor (n * h / h = n), else null.
  static Expr factorOf(const Expr &e, const Expr &y) {
    if (!e || e.kind() != ExprKind::Mul)
      return Expr();
    const Expr &l = e->operands[0], &r = e->operands[1];
    if (equal(r, y))
      return l;
    if (equal(l, y))
      return r;
    if (Expr q = factorOf(l, y))
      return fold(ExprKind::Mul, q, r);
    if (Expr q = factorOf(r, y))
      return fold(ExprKind::Mul, l, q);
    return Expr();
  }

  const BoundsScope &scope_;
};

} // namespace

Interval boundsOf(const Expr &e, const BoundsScope &scope) { return BoundsOf(scope).visit(e); }

Interval loopBounds(const Expr &min, const Expr &extent, const BoundsScope &scope) {
  Interval m = boundsOf(min, scope), e = boundsOf(extent, scope);
  Expr last = e.max ? fold(ExprKind::Sub, e.max, k(1, extent)) : Expr();
  return {m.min, fold(ExprKind::Add, m.max, last)};
}

namespace {

struct Fact { // lhs <= rhs
  Expr lhs, rhs;
};

void collectFacts(const Expr &c, std::vector<Fact> &facts) {
  const ExprNode &n = *c;
  if (n.kind == ExprKind::And) {
    collectFacts(n.operands[0], facts);
    collectFacts(n.operands[1], facts);
    return;
  }
  if (!isComparison(n.kind) || n.operands[0].type().lanes != 1 ||
      !isInteger(n.operands[0].type().dtype))
    return;
  const Expr &a = n.operands[0], &b = n.operands[1];
  auto minusOne = [](const Expr &e) { return simplify(e - intImm(1, e.type().dtype)); };
  switch (n.kind) {
  case ExprKind::LT: facts.push_back({a, minusOne(b)}); break;
  case ExprKind::LE: facts.push_back({a, b}); break;
  case ExprKind::GT: facts.push_back({b, minusOne(a)}); break;
  case ExprKind::GE: facts.push_back({b, a}); break;
  default: break;
  }
}

// Checks every access of a function, in the order the printed text shows them (a store's
// indices before its value, the operands of a load before the load).
class BoundsChecker : public IRVisitor {
public:
  std::vector<std::string> messages;

protected:
  void visitFor(const Stmt &s) override {
    visit(s->min);
    visit(s->extent);
    scope_[s->var.get()] = loopBounds(s->min, s->extent, scope_);
    visit(s->body);
    scope_.erase(s->var.get());
  }
  void visitStore(const Stmt &s) override {
    for (const Expr &i : s->indices)
      visit(i);
    visit(s->value);
    access("store", s->buffer, s->indices);
  }
  void visitIfThenElse(const Stmt &s) override {
    const StmtNode &n = *s;
    visit(n.value);
    size_t mark = facts_.size();
    BoundsScope saved = scope_;
    collectFacts(n.value, facts_);
    for (size_t i = mark; i < facts_.size(); ++i) { // tighten loop variables the facts bound
      const Fact &f = facts_[i];
      if (f.lhs.kind() == ExprKind::Var && scope_.count(f.lhs->var.get())) {
        Interval &iv = scope_[f.lhs->var.get()];
        iv.max = iv.max ? simplify(min(iv.max, f.rhs)) : f.rhs;
      }
      if (f.rhs.kind() == ExprKind::Var && scope_.count(f.rhs->var.get())) {
        Interval &iv = scope_[f.rhs->var.get()];
        iv.min = iv.min ? simplify(max(iv.min, f.lhs)) : f.lhs;
      }
    }
    visit(n.body);
    facts_.resize(mark);
    scope_ = std::move(saved);
    visit(n.elseBody);
  }
  void visitLoad(const Expr &e) override {
    IRVisitor::visitLoad(e);
    access("load", e->buffer, e->operands);
  }

private:
  BoundsScope scope_;
  std::vector<Fact> facts_;

  // Replaces every occurrence of `pat` in an expression by `with`.
  class Replace : public IRMutator {
  public:
    Replace(Expr pat, Expr with) : pat_(std::move(pat)), with_(std::move(with)) {}
    using IRMutator::mutate;
    Expr mutate(const Expr &e) override { return equal(e, pat_) ? with_ : IRMutator::mutate(e); }

  private:
    Expr pat_, with_;
  };

  // Sound intervals of idx: the plain one, and one per fact `l <= r` whose side occurs in idx,
  // with that side abstracted into a fresh variable bounded by the fact.
  std::vector<Interval> candidates(const Expr &idx) {
    std::vector<Interval> out{boundsOf(idx, scope_)};
    for (const Fact &f : facts_)
      for (bool upper : {true, false}) {
        const Expr &side = upper ? f.lhs : f.rhs;
        Var t = makeVar("fact", side.type().dtype);
        Expr abstracted = Replace(side, var(t)).mutate(idx);
        if (abstracted.same(idx))
          continue;
        Interval sb = boundsOf(side, scope_);
        BoundsScope s = scope_;
        s[t.get()] = upper ? Interval{sb.min, f.rhs} : Interval{f.lhs, sb.max};
        out.push_back(boundsOf(abstracted, s));
      }
    return out;
  }

  void access(const char *what, const Buffer &b, const std::vector<Expr> &idx) {
    for (size_t d = 0; d < idx.size() && d < b->rank(); ++d) {
      Expr last = simplify(b->shape[d] - intImm(1));
      Expr zero = intImm(0, idx[d].type().dtype);
      bool low = false, high = false;
      std::vector<Interval> ivs = candidates(idx[d]);
      for (const Interval &c : ivs) {
        low = low || (c.min && proveLE(zero, c.min));
        high = high || (c.max && proveLE(c.max, last));
      }
      if (low && high)
        continue;
      const Interval &iv = ivs[0];
      std::string access = "%" + b->name + "[";
      for (size_t i = 0; i < idx.size(); ++i)
        access += (i ? ", " : "") + printExpr(idx[i]);
      messages.push_back(std::string(what) + " " + access + "]: index " + printExpr(idx[d]) +
                         " of dimension " + std::to_string(d) + " ranges over [" +
                         (iv.min ? printExpr(iv.min) : "?") + ", " +
                         (iv.max ? printExpr(iv.max) : "?") + "], not provably within [0, " +
                         printExpr(b->shape[d]) + ")");
    }
  }
};

} // namespace

std::vector<std::string> checkBounds(const LoopFunction &f) {
  BoundsChecker c;
  c.visit(f.body);
  return std::move(c.messages);
}

} // namespace strata::loop
