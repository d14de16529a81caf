// Loop IR node construction, type computation and structural equality.
#include "strata/loop/IR.h"
#include "strata/loop/Visitor.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace strata::loop {

std::string typeName(Type t) {
  std::string s(dtypeName(t.dtype));
  if (t.lanes != 1)
    s += "x" + std::to_string(t.lanes);
  return s;
}

namespace {
struct IntrinsicInfo {
  Intrinsic kind;
  std::string_view name;
  int arity;
};
constexpr IntrinsicInfo kIntrinsics[] = {
#define X(e, n, a) {Intrinsic::e, n, a},
    STRATA_LOOP_INTRINSICS(X)
#undef X
};
} // namespace

std::string_view intrinsicName(Intrinsic i) { return kIntrinsics[static_cast<int>(i)].name; }
int intrinsicArity(Intrinsic i) { return kIntrinsics[static_cast<int>(i)].arity; }
std::optional<Intrinsic> lookupIntrinsic(std::string_view name) {
  for (const auto &info : kIntrinsics)
    if (info.name == name)
      return info.kind;
  return std::nullopt;
}

std::string_view exprKindName(ExprKind k) {
  static constexpr std::string_view names[] = {
      "int",      "float",    "var",  "load", "add",       "sub",        "mul",    "div", "mod",
      "floordiv", "floormod", "min",  "max",  "bitand",    "bitor",      "bitxor", "shl", "shr",
      "eq",       "ne",       "lt",   "le",   "gt",        "ge",         "and",    "or",  "not",
      "select",   "cast",     "call", "ramp", "broadcast", "check_index"};
  return names[static_cast<int>(k)];
}
bool isBinaryArith(ExprKind k) { return k >= ExprKind::Add && k <= ExprKind::Max; }
bool isComparison(ExprKind k) { return k >= ExprKind::EQ && k <= ExprKind::GE; }
bool isBitwise(ExprKind k) { return k >= ExprKind::BitAnd && k <= ExprKind::Shr; }

Var makeVar(std::string name, DType dtype) {
  return std::make_shared<const VarNode>(VarNode{std::move(name), dtype});
}

ExprKind Expr::kind() const { return node_->kind; }
Type Expr::type() const { return node_->type; }
std::optional<int64_t> Expr::asInt() const {
  if (node_ && node_->kind == ExprKind::IntImm)
    return node_->intValue;
  return std::nullopt;
}
std::optional<double> Expr::asFloat() const {
  if (node_ && node_->kind == ExprKind::FloatImm)
    return node_->floatValue;
  return std::nullopt;
}

std::string_view memoryScopeName(MemoryScope s) {
  switch (s) {
  case MemoryScope::Global: return "global";
  case MemoryScope::Local: return "local";
  case MemoryScope::Shared: return "shared";
  }
  return "?";
}

namespace {
// Nodes are filled in before they are frozen behind a pointer-to-const.
std::shared_ptr<ExprNode> node(ExprKind k, Type t, std::vector<Expr> ops = {}) {
  auto n = std::make_shared<ExprNode>();
  n->kind = k;
  n->type = t;
  n->operands = std::move(ops);
  return n;
}
int lanesOf(const Expr &e) { return e ? e.type().lanes : 1; }
} // namespace

Expr intImm(int64_t v, DType t) {
  auto n = node(ExprKind::IntImm, {t, 1});
  n->intValue = t == DType::Bool ? v != 0 : v;
  return Expr(std::move(n));
}
Expr boolImm(bool v) { return intImm(v, DType::Bool); }

Expr floatImm(double v, DType t) {
  // Constants hold exactly the value the dtype can represent, so folding and printing agree.
  switch (t) {
  case DType::F32: v = static_cast<float>(v); break;
  case DType::F16: v = halfToFloat(floatToHalf(static_cast<float>(v))); break;
  case DType::BF16: v = bf16ToFloat(floatToBf16(static_cast<float>(v))); break;
  default: break;
  }
  auto n = node(ExprKind::FloatImm, {t, 1});
  n->floatValue = v;
  return Expr(std::move(n));
}

Expr var(const Var &v) {
  auto n = node(ExprKind::Var, {v->dtype, 1});
  n->var = v;
  return Expr(std::move(n));
}

Expr load(const Buffer &b, std::vector<Expr> indices) {
  int lanes = 1;
  for (const Expr &i : indices)
    lanes = std::max(lanes, lanesOf(i));
  auto n = node(ExprKind::Load, {b->dtype, lanes}, std::move(indices));
  n->buffer = b;
  return Expr(std::move(n));
}

Expr binary(ExprKind k, Expr a, Expr b) {
  Type t = a ? a.type() : Type{};
  if (isComparison(k))
    t.dtype = DType::Bool;
  return Expr(node(k, t, {std::move(a), std::move(b)}));
}

Expr logicalNot(Expr a) {
  int lanes = lanesOf(a); // read before `a` is moved from
  return Expr(node(ExprKind::Not, {DType::Bool, lanes}, {std::move(a)}));
}

Expr select(Expr cond, Expr t, Expr f) {
  Type ty = t ? t.type() : Type{};
  return Expr(node(ExprKind::Select, ty, {std::move(cond), std::move(t), std::move(f)}));
}

Expr cast(DType t, Expr x) {
  int lanes = lanesOf(x);
  return Expr(node(ExprKind::Cast, {t, lanes}, {std::move(x)}));
}

Expr call(Intrinsic i, std::vector<Expr> args) {
  Type t = !args.empty() && args[0] ? args[0].type() : Type{DType::F32, 1};
  auto n = node(ExprKind::Call, t, std::move(args));
  n->intrinsic = i;
  return Expr(std::move(n));
}

Expr ramp(Expr base, Expr stride, int lanes) {
  DType d = base ? base.type().dtype : DType::I64;
  return Expr(node(ExprKind::Ramp, {d, lanes}, {std::move(base), std::move(stride)}));
}

Expr broadcast(Expr value, int lanes) {
  DType d = value ? value.type().dtype : DType::I64;
  return Expr(node(ExprKind::Broadcast, {d, lanes}, {std::move(value)}));
}

Expr checkIndex(Expr value, Expr size, std::string site) {
  Type t = value ? value.type() : Type{};
  auto n = node(ExprKind::CheckIndex, t, {std::move(value), std::move(size)});
  n->site = std::move(site);
  return Expr(std::move(n));
}

Expr withOperands(const Expr &e, std::vector<Expr> ops) {
  const ExprNode &n = *e;
  bool same = ops.size() == n.operands.size();
  for (size_t i = 0; same && i < ops.size(); ++i)
    same = ops[i].same(n.operands[i]);
  if (same)
    return e;
  switch (n.kind) {
  case ExprKind::Load: return load(n.buffer, std::move(ops));
  case ExprKind::Not: return logicalNot(std::move(ops[0]));
  case ExprKind::Select: return select(std::move(ops[0]), std::move(ops[1]), std::move(ops[2]));
  case ExprKind::Cast: return cast(n.type.dtype, std::move(ops[0]));
  case ExprKind::Call: return call(n.intrinsic, std::move(ops));
  case ExprKind::Ramp: return ramp(std::move(ops[0]), std::move(ops[1]), n.type.lanes);
  case ExprKind::Broadcast: return broadcast(std::move(ops[0]), n.type.lanes);
  case ExprKind::CheckIndex:
    return checkIndex(std::move(ops[0]), std::move(ops[1]), n.site);
  case ExprKind::IntImm:
  case ExprKind::FloatImm:
  case ExprKind::Var: return e;
  default: return binary(n.kind, std::move(ops[0]), std::move(ops[1]));
  }
}

bool equal(const Expr &a, const Expr &b) {
  if (a.same(b))
    return true;
  if (!a || !b)
    return false;
  const ExprNode &x = *a, &y = *b;
  if (x.kind != y.kind || x.type != y.type || x.operands.size() != y.operands.size())
    return false;
  switch (x.kind) {
  case ExprKind::IntImm:
    if (x.intValue != y.intValue)
      return false;
    break;
  case ExprKind::FloatImm: // bitwise, so that 0.0 and -0.0 (and NaNs) are told apart
    if (std::signbit(x.floatValue) != std::signbit(y.floatValue) ||
        !(x.floatValue == y.floatValue ||
          (std::isnan(x.floatValue) && std::isnan(y.floatValue))))
      return false;
    break;
  case ExprKind::Var:
    if (x.var != y.var)
      return false;
    break;
  case ExprKind::Load:
    if (x.buffer != y.buffer)
      return false;
    break;
  case ExprKind::Call:
    if (x.intrinsic != y.intrinsic)
      return false;
    break;
  case ExprKind::CheckIndex:
    if (x.site != y.site)
      return false;
    break;
  default: break;
  }
  for (size_t i = 0; i < x.operands.size(); ++i)
    if (!equal(x.operands[i], y.operands[i]))
      return false;
  return true;
}

std::vector<Expr> contiguousStrides(const std::vector<Expr> &shape) {
  std::vector<Expr> strides(shape.size());
  Expr stride = intImm(1);
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    auto s = stride.asInt(), e = shape[d].asInt();
    if (s && e)
      stride = intImm(*s * *e);
    else if (s == 1)
      stride = shape[d];
    else
      stride = binary(ExprKind::Mul, shape[d], stride);
  }
  return strides;
}

bool hasContiguousStrides(const BufferNode &b) {
  std::vector<Expr> c = contiguousStrides(b.shape);
  if (c.size() != b.strides.size())
    return false;
  for (size_t i = 0; i < c.size(); ++i)
    if (!equal(c[i], b.strides[i]))
      return false;
  return true;
}

Buffer makeBuffer(std::string name, DType dtype, std::vector<Expr> shape, std::vector<Expr> strides,
                  MemoryScope scope) {
  if (strides.empty())
    strides = contiguousStrides(shape);
  return std::make_shared<const BufferNode>(
      BufferNode{std::move(name), dtype, std::move(shape), std::move(strides), scope});
}

std::string_view forKindName(ForKind k) {
  static constexpr std::string_view names[] = {"serial",   "parallel",  "vectorized",
                                               "unrolled", "gpu_block", "gpu_thread"};
  return names[static_cast<int>(k)];
}
std::optional<ForKind> lookupForKind(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(ForKind::GpuThread); ++i)
    if (forKindName(static_cast<ForKind>(i)) == name)
      return static_cast<ForKind>(i);
  return std::nullopt;
}

std::string_view loopRoleName(LoopRole r) {
  return r == LoopRole::Parallel ? "parallel" : "reduction";
}
std::optional<LoopRole> lookupLoopRole(std::string_view name) {
  if (name == "parallel")
    return LoopRole::Parallel;
  if (name == "reduction")
    return LoopRole::Reduction;
  return std::nullopt;
}

void pruneAnnotations(LoopFunction &f) {
  if (f.notes.empty())
    return;
  std::set<std::string> loops;
  if (f.body)
    forEachStmt(f.body, [&](const Stmt &s) {
      if (s->kind == StmtKind::For)
        loops.insert(s->var->name);
    });
  std::erase_if(f.notes.roles, [&](const auto &r) { return !loops.count(r.first); });
  std::erase_if(f.notes.nests, [&](const auto &n) { return !loops.count(n.first); });
}

namespace {
std::shared_ptr<StmtNode> stmtNode(StmtKind k) {
  auto n = std::make_shared<StmtNode>();
  n->kind = k;
  return n;
}
} // namespace

Stmt forLoop(Var v, Expr min, Expr extent, ForKind kind, Stmt body) {
  auto n = stmtNode(StmtKind::For);
  n->var = std::move(v);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->forKind = kind;
  n->body = std::move(body);
  return n;
}
Stmt store(Buffer b, std::vector<Expr> indices, Expr value) {
  auto n = stmtNode(StmtKind::Store);
  n->buffer = std::move(b);
  n->indices = std::move(indices);
  n->value = std::move(value);
  return n;
}
Stmt allocate(Buffer b, Stmt body) {
  auto n = stmtNode(StmtKind::Allocate);
  n->buffer = std::move(b);
  n->body = std::move(body);
  return n;
}
Stmt ifThenElse(Expr cond, Stmt thenBody, Stmt elseBody) {
  auto n = stmtNode(StmtKind::IfThenElse);
  n->value = std::move(cond);
  n->body = std::move(thenBody);
  n->elseBody = std::move(elseBody);
  return n;
}
Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt &s : stmts) {
    if (!s)
      continue;
    if (s->kind == StmtKind::Seq)
      flat.insert(flat.end(), s->stmts.begin(), s->stmts.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.size() == 1)
    return flat[0];
  auto n = stmtNode(StmtKind::Seq);
  n->stmts = std::move(flat);
  return n;
}

} // namespace strata::loop
