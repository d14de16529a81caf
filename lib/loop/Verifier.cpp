// The loop IR verifier: walks statements with the set of visible variables and buffers, and
// checks each expression's operand types bottom-up. It reports every problem it finds rather than
// stopping at the first, quoting the offending expression in its printed form.
#include "strata/loop/Verifier.h"
#include "strata/support/Error.h"

#include "strata/loop/Bounds.h"
#include "strata/loop/Printer.h"
#include "strata/loop/Visitor.h"

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

class Verifier : public IRVisitor {
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
    visit(f.body);
  }

  // A null expression or statement is an error too (an absent else branch is not visited).
  void visit(const Expr &e) override {
    if (!e)
      error("null expression");
    else
      IRVisitor::visit(e);
  }
  void visit(const Stmt &s) override {
    if (!s)
      error("null statement");
    else
      IRVisitor::visit(s);
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
        visit(e);
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
      visit(i);
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

  // --- expressions: operands first, bottom-up; a node's own rules are checked only when none of
  // its operands is null.
  bool operandsPresent(const Expr &e) {
    visitOperands(e);
    for (const Expr &o : e->operands)
      if (!o)
        return false;
    return true;
  }
  void bad(const Expr &e, const std::string &why) { error(printExpr(e) + ": " + why); }
  Type operandType(const Expr &e, size_t i) { return e->operands[i].type(); }

  void visitIntImm(const Expr &e) override {
    if (!isInteger(e.type().dtype) && e.type().dtype != DType::Bool)
      bad(e, "integer constant of non-integer type " + typeName(e.type()));
  }
  void visitFloatImm(const Expr &e) override {
    if (!isFloat(e.type().dtype))
      bad(e, "float constant of non-float type " + typeName(e.type()));
  }
  void visitVar(const Expr &e) override {
    if (!vars_.count(e->var.get()))
      bad(e, "variable is used outside its loop (or is not a parameter)");
  }
  void visitLoad(const Expr &e) override {
    if (!operandsPresent(e))
      return;
    if (!buffers_.count(e->buffer.get()))
      bad(e, "buffer %" + e->buffer->name + " is not visible here");
    // indices() visits the indices once more, so problems inside them are reported twice.
    indices(*e->buffer, e->operands, e.type().lanes, "load " + printExpr(e));
  }
  void visitNot(const Expr &e) override {
    if (!operandsPresent(e))
      return;
    Type t0 = operandType(e, 0);
    if (t0.dtype != DType::Bool)
      bad(e, "operand of '!' must be bool, not " + typeName(t0));
  }
  void visitSelect(const Expr &e) override {
    if (!operandsPresent(e))
      return;
    Type t0 = operandType(e, 0), t1 = operandType(e, 1), t2 = operandType(e, 2);
    if (t0.dtype != DType::Bool || (t0.lanes != 1 && t0.lanes != t1.lanes))
      bad(e, "condition must be bool with 1 lane or the value's lanes, not " + typeName(t0));
    if (t1 != t2)
      bad(e, "select arms differ in type: " + typeName(t1) + " vs " + typeName(t2));
  }
  void visitCast(const Expr &e) override { operandsPresent(e); }
  void visitCall(const Expr &e) override {
    if (!operandsPresent(e))
      return;
    const std::vector<Expr> &ops = e->operands;
    Type t0 = ops.empty() ? Type{} : ops[0].type();
    if (static_cast<int>(ops.size()) != intrinsicArity(e->intrinsic))
      bad(e, "wrong number of arguments");
    for (const Expr &o : ops)
      if (o.type() != t0)
        bad(e, "arguments differ in type");
    if (!isFloat(t0.dtype) && e->intrinsic != Intrinsic::Abs)
      bad(e,
          std::string(intrinsicName(e->intrinsic)) + " needs float arguments, not " + typeName(t0));
  }
  void visitRamp(const Expr &e) override {
    if (!operandsPresent(e))
      return;
    Type t0 = operandType(e, 0);
    if (!isInteger(t0.dtype) || t0.lanes != 1 || operandType(e, 1) != t0)
      bad(e, "ramp base and stride must be scalar integers of one type");
    if (e.type().lanes < 2)
      bad(e, "a ramp needs at least 2 lanes");
  }
  void visitCheckIndex(const Expr &e) override {
    if (!operandsPresent(e))
      return;
    Type t = operandType(e, 0);
    if (!isInteger(t.dtype) || !isSigned(t.dtype))
      bad(e, "check_index needs a signed integer value, not " + typeName(t));
    else if (operandType(e, 1) != t.element())
      bad(e, "check_index size must be a scalar of the value's dtype");
    else if (e->site.empty())
      bad(e, "check_index needs a site");
  }
  void visitBroadcast(const Expr &e) override {
    if (!operandsPresent(e))
      return;
    if (operandType(e, 0).lanes != 1)
      bad(e, "broadcast value must be a scalar");
    if (e.type().lanes < 2)
      bad(e, "a broadcast needs at least 2 lanes");
  }
  void visitBinary(const Expr &e) override {
    if (!operandsPresent(e))
      return;
    ExprKind k = e.kind();
    Type t0 = operandType(e, 0), t1 = operandType(e, 1);
    if (t0 != t1) {
      bad(e, "operand types differ: " + typeName(t0) + " vs " + typeName(t1));
      return;
    }
    if (k == ExprKind::And || k == ExprKind::Or) {
      if (t0.dtype != DType::Bool)
        bad(e, "logical operands must be bool, not " + typeName(t0));
      return;
    }
    if (isComparison(k))
      return;
    if (t0.dtype == DType::Bool)
      bad(e, "arithmetic on bool");
    bool intOnly = k == ExprKind::FloorDiv || k == ExprKind::FloorMod || isBitwise(k);
    if (intOnly && !isInteger(t0.dtype))
      bad(e, std::string(exprKindName(k)) + " needs integer operands, not " + typeName(t0));
  }

  // --- statements, with the variables and buffers each one declares visible in its body.
  // Visits `body` with `node` (a loop variable or an allocated buffer) visible under `name`.
  template <typename Node>
  void visitDeclaring(const std::string &name, std::set<const Node *> &visible, const Node *node,
                      const Stmt &body) {
    declareName(name);
    visible.insert(node);
    visit(body);
    visible.erase(node);
    names_.pop_back();
  }
  void visitFor(const Stmt &s) override {
    const StmtNode &n = *s;
    std::string what = "for %" + n.var->name;
    visit(n.min);
    visit(n.extent);
    Type vt{n.var->dtype, 1};
    if (!isInteger(n.var->dtype))
      error(what + ": loop variable must be an integer");
    if ((n.min && n.min.type() != vt) || (n.extent && n.extent.type() != vt))
      error(what + ": min and extent must be scalars of the loop variable's type " + typeName(vt));
    visitDeclaring(n.var->name, vars_, n.var.get(), n.body);
  }
  void visitStore(const Stmt &s) override {
    const StmtNode &n = *s;
    std::string what = "store to %" + n.buffer->name;
    if (!buffers_.count(n.buffer.get()))
      error(what + ": buffer is not visible here");
    if (auto it = roles_.find(n.buffer.get()); it != roles_.end() && it->second == ParamRole::In)
      error(what + ": buffer is an input");
    visit(n.value);
    int lanes = n.value ? n.value.type().lanes : 1;
    indices(*n.buffer, n.indices, lanes, what);
    if (n.value && n.value.type().dtype != n.buffer->dtype)
      error(what + ": value " + printExpr(n.value) + " has type " + typeName(n.value.type()) +
            " but the buffer holds " + std::string(dtypeName(n.buffer->dtype)));
  }
  void visitAllocate(const Stmt &s) override {
    const StmtNode &n = *s;
    bufferShape(*n.buffer);
    visitDeclaring(n.buffer->name, buffers_, n.buffer.get(), n.body);
  }
  void visitIfThenElse(const Stmt &s) override {
    const StmtNode &n = *s;
    visit(n.value);
    if (n.value && n.value.type() != Type{DType::Bool, 1})
      error("if " + printExpr(n.value) + ": condition must be a scalar bool, not " +
            typeName(n.value.type()));
    visit(n.body);
    if (n.elseBody) // an absent else branch is no error
      visit(n.elseBody);
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
