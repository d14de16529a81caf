// The loop IR verifier: walks statements with the set of visible variables and buffers, and
// checks each expression's operand types bottom-up. It reports every problem it finds rather than
// stopping at the first, quoting the offending expression in its printed form.
#include "strata/loop/Verifier.h"
#include "strata/support/Error.h"

#include "strata/loop/Bounds.h"
#include "strata/loop/Printer.h"

#include <algorithm>
#include <map>
#include <set>

namespace strata::loop {

namespace {

bool validName(const std::string &n) {
  return !n.empty() && std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
}

class Verifier {
public:
  std::vector<std::string> errors;

  void function(const LoopFunction &f) {
    if (!validName(f.name))
      error("function name '" + f.name + "' is not an identifier");
    for (const Param &p : f.params) {
      if ((p.isBuffer() && !p.buffer) || (!p.isBuffer() && !p.scalar)) {
        error("parameter without a node");
        return;
      }
      declareName(p.name());
      if (p.isBuffer())
        buffers_.insert(p.buffer.get());
      else
        vars_.insert(p.scalar.get());
    }
    // Shapes may use any scalar parameter, declared before or after the buffer.
    for (const Param &p : f.params)
      if (p.isBuffer())
        bufferShape(*p.buffer);
    for (const Param &p : f.params)
      if (p.isBuffer())
        roles_[p.buffer.get()] = p.role;
    stmt(f.body);
  }

private:
  std::set<const VarNode *> vars_;
  std::set<const BufferNode *> buffers_;
  std::vector<std::string> names_; // visible names, innermost last
  std::map<const BufferNode *, ParamRole> roles_;

  void error(std::string msg) { errors.push_back(std::move(msg)); }

  void declareName(const std::string &n) {
    if (!validName(n))
      error("name '" + n + "' is not an identifier ([A-Za-z0-9_.]+)");
    else if (std::find(names_.begin(), names_.end(), n) != names_.end())
      error("duplicate name %" + n);
    names_.push_back(n);
  }

  void bufferShape(const BufferNode &b) {
    if (b.strides.size() != b.shape.size())
      error("buffer %" + b.name + " has " + std::to_string(b.shape.size()) + " dimensions but " +
            std::to_string(b.strides.size()) + " strides");
    for (const auto *list : {&b.shape, &b.strides})
      for (const Expr &e : *list) {
        expr(e);
        if (e && e.type() != Type{DType::I64, 1})
          error("shape or stride " + printExpr(e) + " of buffer %" + b.name +
                " must be a scalar i64, not " + typeName(e.type()));
      }
  }

  void indices(const BufferNode &b, const std::vector<Expr> &idx, int lanes,
               const std::string &what) {
    if (idx.size() != b.rank())
      error(what + ": " + std::to_string(idx.size()) + " indices for buffer %" + b.name +
            " of rank " + std::to_string(b.rank()));
    for (const Expr &i : idx) {
      expr(i);
      if (!i)
        continue;
      if (!isInteger(i.type().dtype))
        error(what + ": index " + printExpr(i) + " must be an integer, not " +
              typeName(i.type()));
      if (i.type().lanes != 1 && i.type().lanes != lanes)
        error(what + ": index " + printExpr(i) + " has " + std::to_string(i.type().lanes) +
              " lanes, the access has " + std::to_string(lanes));
    }
  }

  void expr(const Expr &e) {
    if (!e) {
      error("null expression");
      return;
    }
    const ExprNode &n = *e;
    for (const Expr &o : n.operands)
      expr(o);
    for (const Expr &o : n.operands)
      if (!o)
        return;
    auto bad = [&](const std::string &why) { error(printExpr(e) + ": " + why); };
    const std::vector<Expr> &ops = n.operands;
    Type t0 = ops.empty() ? Type{} : ops[0].type();
    switch (n.kind) {
    case ExprKind::IntImm:
      if (!isInteger(n.type.dtype) && n.type.dtype != DType::Bool)
        bad("integer constant of non-integer type " + typeName(n.type));
      return;
    case ExprKind::FloatImm:
      if (!isFloat(n.type.dtype))
        bad("float constant of non-float type " + typeName(n.type));
      return;
    case ExprKind::Var:
      if (!vars_.count(n.var.get()))
        bad("variable is used outside its loop (or is not a parameter)");
      return;
    case ExprKind::Load:
      if (!buffers_.count(n.buffer.get()))
        bad("buffer %" + n.buffer->name + " is not visible here");
      indices(*n.buffer, ops, n.type.lanes, "load " + printExpr(e));
      return;
    case ExprKind::Not:
      if (t0.dtype != DType::Bool)
        bad("operand of '!' must be bool, not " + typeName(t0));
      return;
    case ExprKind::Select:
      if (t0.dtype != DType::Bool || (t0.lanes != 1 && t0.lanes != ops[1].type().lanes))
        bad("condition must be bool with 1 lane or the value's lanes, not " + typeName(t0));
      if (ops[1].type() != ops[2].type())
        bad("select arms differ in type: " + typeName(ops[1].type()) + " vs " +
            typeName(ops[2].type()));
      return;
    case ExprKind::Cast: return;
    case ExprKind::Call:
      if (static_cast<int>(ops.size()) != intrinsicArity(n.intrinsic))
        bad("wrong number of arguments");
      for (const Expr &o : ops)
        if (o.type() != t0)
          bad("arguments differ in type");
      if (!isFloat(t0.dtype) && n.intrinsic != Intrinsic::Abs)
        bad(std::string(intrinsicName(n.intrinsic)) + " needs float arguments, not " +
            typeName(t0));
      return;
    case ExprKind::Ramp:
      if (!isInteger(t0.dtype) || t0.lanes != 1 || ops[1].type() != t0)
        bad("ramp base and stride must be scalar integers of one type");
      if (n.type.lanes < 2)
        bad("a ramp needs at least 2 lanes");
      return;
    case ExprKind::Broadcast:
      if (t0.lanes != 1)
        bad("broadcast value must be a scalar");
      if (n.type.lanes < 2)
        bad("a broadcast needs at least 2 lanes");
      return;
    default: break;
    }
    // Binary operators.
    Type t1 = ops[1].type();
    if (t0 != t1) {
      bad("operand types differ: " + typeName(t0) + " vs " + typeName(t1));
      return;
    }
    if (n.kind == ExprKind::And || n.kind == ExprKind::Or) {
      if (t0.dtype != DType::Bool)
        bad("logical operands must be bool, not " + typeName(t0));
      return;
    }
    if (isComparison(n.kind))
      return;
    if (t0.dtype == DType::Bool)
      bad("arithmetic on bool");
    bool intOnly = n.kind == ExprKind::FloorDiv || n.kind == ExprKind::FloorMod || isBitwise(n.kind);
    if (intOnly && !isInteger(t0.dtype))
      bad(std::string(exprKindName(n.kind)) + " needs integer operands, not " + typeName(t0));
  }

  void stmt(const Stmt &s) {
    if (!s) {
      error("null statement");
      return;
    }
    const StmtNode &n = *s;
    switch (n.kind) {
    case StmtKind::For: {
      std::string what = "for %" + n.var->name;
      expr(n.min);
      expr(n.extent);
      Type vt{n.var->dtype, 1};
      if (!isInteger(n.var->dtype))
        error(what + ": loop variable must be an integer");
      if ((n.min && n.min.type() != vt) || (n.extent && n.extent.type() != vt))
        error(what + ": min and extent must be scalars of the loop variable's type " +
              typeName(vt));
      declareName(n.var->name);
      vars_.insert(n.var.get());
      stmt(n.body);
      vars_.erase(n.var.get());
      names_.pop_back();
      return;
    }
    case StmtKind::Store: {
      std::string what = "store to %" + n.buffer->name;
      if (!buffers_.count(n.buffer.get()))
        error(what + ": buffer is not visible here");
      if (auto it = roles_.find(n.buffer.get()); it != roles_.end() && it->second == ParamRole::In)
        error(what + ": buffer is an input");
      expr(n.value);
      int lanes = n.value ? n.value.type().lanes : 1;
      indices(*n.buffer, n.indices, lanes, what);
      if (n.value && n.value.type().dtype != n.buffer->dtype)
        error(what + ": value " + printExpr(n.value) + " has type " + typeName(n.value.type()) +
              " but the buffer holds " + std::string(dtypeName(n.buffer->dtype)));
      return;
    }
    case StmtKind::Allocate:
      bufferShape(*n.buffer);
      declareName(n.buffer->name);
      buffers_.insert(n.buffer.get());
      stmt(n.body);
      buffers_.erase(n.buffer.get());
      names_.pop_back();
      return;
    case StmtKind::IfThenElse:
      expr(n.value);
      if (n.value && n.value.type() != Type{DType::Bool, 1})
        error("if " + printExpr(n.value) + ": condition must be a scalar bool, not " +
              typeName(n.value.type()));
      stmt(n.body);
      if (n.elseBody)
        stmt(n.elseBody);
      return;
    case StmtKind::Seq:
      for (const Stmt &c : n.stmts)
        stmt(c);
      return;
    }
  }
};

} // namespace

std::vector<std::string> verifyFunctionDiagnostics(const LoopFunction &f,
                                                   const VerifyOptions &opts) {
  Verifier v;
  v.function(f);
  // Bounds are only meaningful on a well-formed function.
  if (opts.checkBounds && v.errors.empty())
    for (std::string &m : checkBounds(f))
      v.errors.push_back(std::move(m));
  return std::move(v.errors);
}

llvm::Error verifyFunction(const LoopFunction &f, const VerifyOptions &opts) {
  std::vector<std::string> errs = verifyFunctionDiagnostics(f, opts);
  if (errs.empty())
    return llvm::Error::success();
  std::string msg;
  for (const std::string &e : errs)
    msg += (msg.empty() ? "" : "\n") + ("verifier: @" + f.name + ": " + e);
  return makeError(msg);
}

} // namespace strata::loop
