// The arithmetic simplifier (see Simplify.h). Operands are simplified first; then the node's
// rules are tried in order, one rule a line, each with its law. A rule that builds a new node
// re-enters `rewrite` on it, so rules compose; every rule makes the tree smaller or moves a
// constant rightward/outward, so this terminates.
#include "strata/loop/Simplify.h"

#include "Arith.h"
#include "strata/loop/Visitor.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::loop {

namespace {

bool isInt(const Expr &e) { return isInteger(e.type().dtype) && e.type().lanes == 1; }
std::optional<int64_t> ci(const Expr &e) { // integer (not bool) constant
  return e.type().dtype == DType::Bool ? std::nullopt : e.asInt();
}
bool isConst(const Expr &e) { return e.kind() == ExprKind::IntImm || e.kind() == ExprKind::FloatImm; }
bool isCommutative(ExprKind k) {
  return k == ExprKind::Add || k == ExprKind::Mul || k == ExprKind::Min || k == ExprKind::Max ||
         k == ExprKind::EQ || k == ExprKind::NE || k == ExprKind::And || k == ExprKind::Or ||
         k == ExprKind::BitAnd || k == ExprKind::BitOr || k == ExprKind::BitXor;
}

// Expressions, bottom-up: each node rebuilt from simplified operands is then rewritten.
class Simplifier : public IRMutator {
public:
  explicit Simplifier(const BoundsScope *scope) : scope_(scope) {}

  using IRMutator::mutate;
  Expr mutate(const Expr &e) override {
    Expr rebuilt = IRMutator::mutate(e);
    return rebuilt ? rewrite(rebuilt) : rebuilt;
  }

  Expr rewrite(const Expr &e) {
    if (Expr r = fold(e))
      return r;
    const ExprNode &n = *e;
    switch (n.kind) {
    case ExprKind::Add: return add(e, n.operands[0], n.operands[1]);
    case ExprKind::Sub: return sub(e, n.operands[0], n.operands[1]);
    case ExprKind::Mul: return mul(e, n.operands[0], n.operands[1]);
    case ExprKind::Div:
    case ExprKind::FloorDiv: return div(e, n.operands[0], n.operands[1]);
    case ExprKind::Mod:
    case ExprKind::FloorMod: return mod(e, n.operands[0], n.operands[1]);
    case ExprKind::Min:
    case ExprKind::Max: return minMax(e, n.operands[0], n.operands[1]);
    case ExprKind::And:
    case ExprKind::Or:
    case ExprKind::Not: return logic(e);
    case ExprKind::Select: return selectRule(e);
    case ExprKind::CheckIndex:
      return checkRule(e);
    case ExprKind::BitAnd:
    case ExprKind::BitOr:
    case ExprKind::BitXor:
    case ExprKind::Shl:
    case ExprKind::Shr: return bitwise(e, n.operands[0], n.operands[1]);
    case ExprKind::Cast:
      if (n.operands[0].type() == n.type) // cast<T>(x: T) -> x
        return n.operands[0];
      return e;
    default:
      if (isComparison(n.kind))
        return compare(e, n.operands[0], n.operands[1]);
      return e;
    }
  }

private:
  const BoundsScope *scope_;

  Expr re(Expr e) { return rewrite(e); }
  Expr k(int64_t v, const Expr &like) { return intImm(v, like.type().dtype); }

  // Constant folding through the shared scalar semantics, and constants moved to the right.
  Expr fold(const Expr &e) {
    const ExprNode &n = *e;
    if (n.kind == ExprKind::Cast && isConst(n.operands[0])) {
      const Expr &x = n.operands[0];
      DType from = x.type().dtype, to = n.type.dtype;
      arith::Scalar s = arith::castScalar({x->intValue, x->floatValue}, from, to);
      return isFloat(to) ? floatImm(s.f, to) : intImm(s.i, to);
    }
    if (n.kind == ExprKind::Not && n.operands[0].asInt())
      return boolImm(!*n.operands[0].asInt());
    if (n.operands.size() != 2 || n.kind == ExprKind::Load || n.kind == ExprKind::Ramp ||
        n.kind == ExprKind::Call)
      return Expr();
    const Expr &a = n.operands[0], &b = n.operands[1];
    DType t = a.type().dtype;
    if (a.asInt() && b.asInt()) {
      auto v = arith::intBinary(n.kind, *a.asInt(), *b.asInt(), t);
      if (!v)
        return Expr(); // x / 0 stays for the interpreter to report
      return isComparison(n.kind) ? boolImm(*v) : intImm(*v, t);
    }
    if (a.asFloat() && b.asFloat()) {
      double v = arith::floatBinary(n.kind, *a.asFloat(), *b.asFloat(), t);
      return isComparison(n.kind) ? boolImm(v != 0) : floatImm(v, t);
    }
    if (isCommutative(n.kind) && isConst(a) && !isConst(b)) // c op x -> x op c
      return re(binary(n.kind, b, a));
    return Expr();
  }

  // A check proven to pass with a non-negative value (a constant, or loop bounds within
  // [0, size)) is that value; one that fails, or may, stays for the run to report.
  Expr checkRule(const Expr &e) {
    const Expr &v = e->operands[0], &size = e->operands[1];
    if (v.type().lanes != 1)
      return e;
    auto cv = v.asInt(), cs = size.asInt();
    if (cv && cs)
      return *cv >= -*cs && *cv < *cs ? k(*cv < 0 ? *cv + *cs : *cv, v) : e;
    return le(k(0, v), v) && le(v, re(size - k(1, size))) ? v : e;
  }

  // Ints only: proves a <= b from loop bounds.
  bool le(const Expr &a, const Expr &b) {
    if (!scope_ || !isInt(a) || !isInt(b))
      return false;
    Interval ia = boundsOf(a, *scope_), ib = boundsOf(b, *scope_);
    return ia.max && ib.min && proveLE(ia.max, ib.min);
  }
  // Ints only: proves 0 <= x < c.
  bool inRange(const Expr &x, int64_t c) { return le(k(0, x), x) && le(x, k(c - 1, x)); }

  Expr add(const Expr &e, const Expr &x, const Expr &y) {
    auto c = ci(y);
    if (isInt(x)) {
      if (c == 0) return x;                                              // x + 0 -> x
      if (c && *c < 0 && *c != INT64_MIN) return re(x - k(-*c, x));      // x + -c -> x - c
      if (c && x.kind() == ExprKind::Add && ci(x->operands[1]))          // (x + c1) + c2 -> x + (c1 + c2)
        return re(x->operands[0] + re(x->operands[1] + y));
      if (c && x.kind() == ExprKind::Sub && ci(x->operands[1]))          // (x - c1) + c2 -> x + (c2 - c1)
        return re(x->operands[0] + re(y - x->operands[1]));
      if (!c && x.kind() == ExprKind::Add && ci(x->operands[1]))         // (x + c) + y -> (x + y) + c
        return re(re(x->operands[0] + y) + x->operands[1]);
      if (!c && x.kind() == ExprKind::Sub && ci(x->operands[1]))         // (x - c) + y -> (x + y) - c
        return re(re(x->operands[0] + y) - x->operands[1]);
      if (y.kind() == ExprKind::Sub && equal(y->operands[1], x))         // x + (y - x) -> y
        return y->operands[0];
      if (x.kind() == ExprKind::Sub && equal(x->operands[1], y))         // (x - y) + y -> x
        return x->operands[0];
    }
    if (auto f = y.asFloat(); f && *f == 0 && std::signbit(*f)) return x; // x + -0.0 -> x (exact)
    return e;
  }

  Expr sub(const Expr &e, const Expr &x, const Expr &y) {
    auto c = ci(y);
    if (auto f = y.asFloat(); f && *f == 0 && !std::signbit(*f)) return x; // x - 0.0 -> x (exact)
    if (!isInt(x)) return e;
    if (c == 0) return x;                                                // x - 0 -> x
    if (equal(x, y)) return k(0, x);                                     // x - x -> 0
    if (c && *c < 0 && *c != INT64_MIN) return re(x + k(-*c, x));        // x - -c -> x + c
    if (c && x.kind() == ExprKind::Add && ci(x->operands[1]))            // (x + c1) - c2 -> x + (c1 - c2)
      return re(x->operands[0] + re(x->operands[1] - y));
    if (c && x.kind() == ExprKind::Sub && ci(x->operands[1]))            // (x - c1) - c2 -> x - (c1 + c2)
      return re(x->operands[0] - re(x->operands[1] + y));
    if (x.kind() == ExprKind::Add && equal(x->operands[0], y))           // (x + y) - x -> y
      return x->operands[1];
    if (x.kind() == ExprKind::Add && equal(x->operands[1], y))           // (x + y) - y -> x
      return x->operands[0];
    if (y.kind() == ExprKind::Add && equal(y->operands[0], x))           // x - (x + y) -> 0 - y
      return re(k(0, x) - y->operands[1]);
    if (x.kind() == ExprKind::Add && y.kind() == ExprKind::Add &&        // (x + c1) - (y + c2) -> (x - y) + (c1 - c2)
        ci(x->operands[1]) && ci(y->operands[1]))
      return re(re(x->operands[0] - y->operands[0]) + re(x->operands[1] - y->operands[1]));
    return e;
  }

  Expr mul(const Expr &e, const Expr &x, const Expr &y) {
    if (auto f = y.asFloat(); f && *f == 1) return x;                    // x * 1.0 -> x (exact)
    if (!isInt(x)) return e;
    auto c = ci(y);
    if (c == 1) return x;                                                // x * 1 -> x
    if (c == 0) return k(0, x);                                          // x * 0 -> 0
    if (c && x.kind() == ExprKind::Mul && ci(x->operands[1]))            // (x * c1) * c2 -> x * (c1 * c2)
      return re(x->operands[0] * re(x->operands[1] * y));
    return e;
  }

  // x as a sum of terms times constants plus a constant (through +, - and * by constants);
  // false when a coefficient would overflow or the sum is too deep to be worth it.
  struct LinearForm {
    std::vector<std::pair<Expr, int64_t>> terms; // (term, coefficient)
    int64_t constant = 0;
  };
  static bool linearize(const Expr &x, int64_t scale, LinearForm &out, int depth = 0) {
    if (depth > 24)
      return false;
    if (auto c = ci(x)) {
      int64_t v;
      if (__builtin_mul_overflow(*c, scale, &v) || __builtin_add_overflow(out.constant, v, &out.constant))
        return false;
      return true;
    }
    switch (x.kind()) {
    case ExprKind::Add:
      return linearize(x->operands[0], scale, out, depth + 1) &&
             linearize(x->operands[1], scale, out, depth + 1);
    case ExprKind::Sub:
      return scale != INT64_MIN && linearize(x->operands[0], scale, out, depth + 1) &&
             linearize(x->operands[1], -scale, out, depth + 1);
    case ExprKind::Mul:
      if (auto c = ci(x->operands[1])) {
        int64_t v;
        return !__builtin_mul_overflow(*c, scale, &v) && linearize(x->operands[0], v, out, depth + 1);
      }
      break;
    default:
      break;
    }
    out.terms.push_back({x, scale});
    return true;
  }
  Expr sumOf(const std::vector<std::pair<Expr, int64_t>> &terms, int64_t constant, const Expr &like) {
    Expr sum;
    for (const auto &[t, coef] : terms) {
      Expr term = coef == 1 ? t : t * k(coef, like);
      sum = sum ? sum + term : term;
    }
    if (!sum)
      return k(constant, like);
    return constant ? sum + k(constant, like) : sum;
  }
  // floordiv(q * c + r, c) -> q + floordiv(r, c) and floormod(q * c + r, c) -> floormod(r, c),
  // exact for integers, with the terms of x whose coefficients c divides as q: a delinearized
  // index of a linearized one (reshapes) cancels once the rest is proven within [0, c).
  Expr splitMultiples(const Expr &x, int64_t c, bool wantQuotient) {
    if (x.kind() != ExprKind::Add && x.kind() != ExprKind::Sub && x.kind() != ExprKind::Mul)
      return Expr();
    LinearForm lf;
    if (!linearize(x, 1, lf))
      return Expr();
    std::vector<std::pair<Expr, int64_t>> q, r;
    for (const auto &[t, coef] : lf.terms)
      (coef % c == 0 ? q : r).push_back({t, coef / (coef % c == 0 ? c : 1)});
    int64_t qc = lf.constant / c, rc = lf.constant % c;
    if (rc < 0) {
      rc += c;
      --qc;
    }
    // The rest r = h * g + l with g dividing c and 0 <= l < g proven: floordiv(r, c) =
    // floordiv(h, c / g) and floormod(r, c) = floormod(h, c / g) * g + l (a split dim's index).
    Expr rest;
    std::vector<int64_t> candidates;
    for (const auto &[t, coef] : r)
      if (coef > 1 && c % coef == 0)
        candidates.push_back(coef);
    std::sort(candidates.rbegin(), candidates.rend());
    for (int64_t g : candidates) {
      std::vector<std::pair<Expr, int64_t>> high, low;
      for (const auto &[t, coef] : r)
        (coef % g == 0 ? high : low).push_back({t, coef % g == 0 ? coef / g : coef});
      Expr lowSum = re(sumOf(low, rc, x));
      if (!inRange(lowSum, g))
        continue;
      Expr h = re(sumOf(high, 0, x));
      rest = wantQuotient ? re(binary(ExprKind::FloorDiv, h, k(c / g, x)))
                          : re(re(re(binary(ExprKind::FloorMod, h, k(c / g, x))) * k(g, x)) + lowSum);
      break;
    }
    if (q.empty() && qc == 0 && !rest)
      return Expr();
    if (!rest)
      rest = re(binary(wantQuotient ? ExprKind::FloorDiv : ExprKind::FloorMod, re(sumOf(r, rc, x)),
                       k(c, x)));
    if (!wantQuotient)
      return rest;
    return re(re(sumOf(q, qc, x)) + rest);
  }

  Expr div(const Expr &e, const Expr &x, const Expr &y) {
    if (!isInt(x)) return e;
    auto c = ci(y);
    bool floor = e.kind() == ExprKind::FloorDiv;
    if (c == 1) return x;                                                // x / 1 -> x
    if (c && *c != 0 && x.kind() == ExprKind::Mul && equal(x->operands[1], y)) // (x * c) / c -> x
      return x->operands[0];
    if (!c || *c <= 0) return e;
    if (floor && inRange(x, *c)) return k(0, x);                         // floordiv(x, c) -> 0 if 0 <= x < c
    if (floor && x.kind() == ExprKind::Mul && ci(x->operands[1]) &&      // floordiv(x * c1, c2) -> x * (c1 / c2) if c2 | c1
        *ci(x->operands[1]) % *c == 0)
      return re(x->operands[0] * k(*ci(x->operands[1]) / *c, x));
    if (floor && x.kind() == ExprKind::Add && x->operands[0].kind() == ExprKind::Mul && // floordiv(x * c + y, c) -> x + floordiv(y, c)
        equal(x->operands[0]->operands[1], y))
      return re(x->operands[0]->operands[0] + re(binary(ExprKind::FloorDiv, x->operands[1], y)));
    if (floor)
      if (Expr split = splitMultiples(x, *c, true))                      // floordiv(q * c + r, c) -> q + floordiv(r, c)
        return split;
    return e;
  }

  Expr mod(const Expr &e, const Expr &x, const Expr &y) {
    if (!isInt(x)) return e;
    auto c = ci(y);
    bool floor = e.kind() == ExprKind::FloorMod;
    if (c == 1) return k(0, x);                                          // x % 1 -> 0
    if (c && *c != 0 && x.kind() == ExprKind::Mul && equal(x->operands[1], y)) // (x * c) % c -> 0
      return k(0, x);
    if (!c || *c <= 0) return e;
    if (floor && inRange(x, *c)) return x;                               // floormod(x, c) -> x if 0 <= x < c
    if (floor && x.kind() == ExprKind::Add && x->operands[0].kind() == ExprKind::Mul && // floormod(x * c + y, c) -> floormod(y, c)
        equal(x->operands[0]->operands[1], y))
      return re(binary(ExprKind::FloorMod, x->operands[1], y));
    if (floor)
      if (Expr split = splitMultiples(x, *c, false))                     // floormod(q * c + r, c) -> floormod(r, c)
        return split;
    return e;
  }

  Expr minMax(const Expr &e, const Expr &x, const Expr &y) {
    bool isMin = e.kind() == ExprKind::Min;
    if (equal(x, y)) return x;                                           // min(x, x) -> x
    if (isInt(x) && x.kind() == e.kind() && ci(x->operands[1]) && ci(y)) // min(min(x, c1), c2) -> min(x, min(c1, c2))
      return re(binary(e.kind(), x->operands[0], re(binary(e.kind(), x->operands[1], y))));
    if (le(x, y)) return isMin ? x : y;                                  // min(x, y) -> x if x <= y (bounds)
    if (le(y, x)) return isMin ? y : x;                                  // min(x, y) -> y if y <= x (bounds)
    return e;
  }

  Expr compare(const Expr &e, const Expr &x, const Expr &y) {
    if (!isInt(x)) return e;
    ExprKind kd = e.kind();
    bool reflexiveTrue = kd == ExprKind::EQ || kd == ExprKind::LE || kd == ExprKind::GE;
    if (equal(x, y)) return boolImm(reflexiveTrue);                      // x == x, x <= x -> true; x < x -> false
    // Ordering facts from bounds: lt means x < y proven, ge means x >= y proven, etc.
    auto one = [&](const Expr &v) { return re(v + k(1, v)); };
    switch (kd) {
    case ExprKind::LT:
      if (le(one(x), y)) return boolImm(true);                           // x < y if x + 1 <= y (bounds)
      if (le(y, x)) return boolImm(false);                               // !(x < y) if y <= x (bounds)
      break;
    case ExprKind::LE:
      if (le(x, y)) return boolImm(true);                                // x <= y (bounds)
      if (le(one(y), x)) return boolImm(false);                          // !(x <= y) if y < x (bounds)
      break;
    case ExprKind::GT: {                                                 // x > y folds as y < x
      Expr r = re(binary(ExprKind::LT, y, x));
      return r.asInt() ? r : e;
    }
    case ExprKind::GE: {                                                 // x >= y folds as y <= x
      Expr r = re(binary(ExprKind::LE, y, x));
      return r.asInt() ? r : e;
    }
    default: break;
    }
    return e;
  }

  Expr logic(const Expr &e) {
    const ExprNode &n = *e;
    if (n.kind == ExprKind::Not) {
      if (n.operands[0].kind() == ExprKind::Not) return n.operands[0]->operands[0]; // !!x -> x
      return e;
    }
    const Expr &x = n.operands[0], &y = n.operands[1];
    auto c = y.asInt(); // constants were moved to the right by fold()
    bool isAnd = n.kind == ExprKind::And;
    if (c && x.type().lanes == 1)
      return (*c != 0) == isAnd ? x : y;                                 // x && true -> x, x && false -> false; dual for ||
    if (equal(x, y)) return x;                                           // x && x -> x, x || x -> x
    return e;
  }

  // Identities with a constant right operand (constants were moved right by fold()).
  Expr bitwise(const Expr &e, const Expr &x, const Expr &y) {
    auto c = ci(y);
    if (!isInt(x) || !c) return e;
    if (*c == 0 && e.kind() == ExprKind::BitAnd) return y;               // x & 0 -> 0
    if (*c == 0) return x;                                               // x | 0, x ^ 0, x << 0, x >> 0 -> x
    if (*c == -1 && e.kind() == ExprKind::BitAnd) return x;              // x & ~0 -> x (y is t-wide)
    return e;
  }

  Expr selectRule(const Expr &e) {
    const ExprNode &n = *e;
    if (auto c = n.operands[0].asInt()) return *c ? n.operands[1] : n.operands[2]; // select(true, a, b) -> a
    if (equal(n.operands[1], n.operands[2])) return n.operands[1];                // select(c, a, a) -> a
    return e;
  }
};

// Statements: expressions simplified with the bounds of the loops around them; a loop that runs
// no iterations and a branch on a constant condition go away.
class StmtSimplifier : public IRMutator {
public:
  explicit StmtSimplifier(const BoundsScope &scope) : scope_(scope) {}

  using IRMutator::mutate;
  Expr mutate(const Expr &e) override { return Simplifier(&scope_).mutate(e); }

protected:
  Stmt visitFor(const Stmt &s) override {
    Expr mn = mutate(s->min), ext = mutate(s->extent);
    if (auto c = ext.asInt(); c && *c <= 0) // a loop that runs no iterations
      return seq({});
    scope_[s->var.get()] = loopBounds(mn, ext, scope_);
    Stmt body = mutate(s->body);
    scope_.erase(s->var.get());
    return rebuildFor(s, mn, ext, body);
  }
  Stmt visitIfThenElse(const Stmt &s) override {
    Expr c = mutate(s->value);
    if (auto v = c.asInt())
      return *v ? mutate(s->body) : s->elseBody ? mutate(s->elseBody) : seq({});
    Stmt thenBody = mutate(s->body);
    return rebuildIfThenElse(s, c, thenBody, mutate(s->elseBody));
  }

private:
  BoundsScope scope_;
};

} // namespace

Expr simplify(const Expr &e, const BoundsScope *scope) { return Simplifier(scope).mutate(e); }

Stmt simplify(const Stmt &s, const BoundsScope &scope) { return StmtSimplifier(scope).mutate(s); }

LoopFunction simplify(const LoopFunction &f) {
  LoopFunction r = f;
  if (f.body)
    r.body = simplify(f.body);
  pruneAnnotations(r); // loops of one iteration are gone
  return r;
}

} // namespace strata::loop
