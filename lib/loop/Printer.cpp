// Prints loop IR as text. Binary operators print infix with the fewest parentheses the grammar's
// precedence allows; everything else prints as a call, so the parser has one production per node
// kind and the round trip is exact.
#include "strata/loop/Printer.h"
#include "Precedence.h"
#include "strata/loop/Visitor.h"

#include <charconv>
#include <cmath>

namespace strata::loop {

namespace {

using namespace text; // Prec

const char *infixOp(ExprKind k) {
  switch (k) {
  case ExprKind::Add: return "+";
  case ExprKind::Sub: return "-";
  case ExprKind::Mul: return "*";
  case ExprKind::Div: return "/";
  case ExprKind::Mod: return "%";
  case ExprKind::EQ: return "==";
  case ExprKind::NE: return "!=";
  case ExprKind::LT: return "<";
  case ExprKind::LE: return "<=";
  case ExprKind::GT: return ">";
  case ExprKind::GE: return ">=";
  case ExprKind::And: return "&&";
  case ExprKind::Or: return "||";
  default: return nullptr;
  }
}

int precOf(const Expr &e) {
  switch (e.kind()) {
  case ExprKind::Or: return POr;
  case ExprKind::And: return PAnd;
  case ExprKind::Add:
  case ExprKind::Sub: return PAdd;
  case ExprKind::Mul:
  case ExprKind::Div:
  case ExprKind::Mod: return PMul;
  case ExprKind::Not: return PUnary;
  default: return isComparison(e.kind()) ? PCmp : PPrimary;
  }
}

std::string floatText(double v, DType t) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  // Shortest text that reads back to the same value of the constant's precision.
  auto res = t == DType::F64 ? std::to_chars(buf, buf + sizeof buf, v)
                             : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

class Printer : public ExprFunctor<void(const Expr &)>,
                public StmtFunctor<void(const Stmt &, int level)> {
public:
  std::string out;

  void expr(const Expr &e) {
    if (!e)
      out += "<null>";
    else
      visit(e);
  }

  void operand(const Expr &e, int minPrec) {
    // A negative literal reads as unary minus applied to a literal, which binds tightest.
    bool paren = e && precOf(e) < minPrec;
    if (paren)
      out += '(';
    expr(e);
    if (paren)
      out += ')';
  }

  void list(const char *open, const std::vector<Expr> &es, const char *close) {
    out += open;
    for (size_t i = 0; i < es.size(); ++i) {
      if (i)
        out += ", ";
      expr(es[i]);
    }
    out += close;
  }

  void indent(int n) { out.append(2 * static_cast<size_t>(n), ' '); }

  void block(const Stmt &s, int level) {
    out += "{\n";
    if (s && s->kind == StmtKind::Seq)
      for (const Stmt &c : s->stmts)
        stmt(c, level + 1);
    else if (s)
      stmt(s, level + 1);
    indent(level);
    out += "}";
  }

  void bufferType(const BufferNode &b) {
    out += dtypeName(b.dtype);
    list("[", b.shape, "]");
    if (!hasContiguousStrides(b))
      list(" strides [", b.strides, "]");
  }

  void stmt(const Stmt &s, int level) {
    indent(level);
    ifChain(s, level);
    out += '\n';
  }

  // Prints one statement without leading indentation or trailing newline.
  void ifChain(const Stmt &s, int level) {
    if (!s)
      out += "<null>";
    else
      visit(s, level);
  }

  void function(const LoopFunction &f) {
    notes_ = &f.notes;
    out += "func @" + f.name + "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Param &p = f.params[i];
      if (i)
        out += ", ";
      out += "%" + p.name() + ": ";
      if (!p.isBuffer()) {
        out += dtypeName(p.scalar->dtype);
        continue;
      }
      bufferType(*p.buffer);
      out += p.role == ParamRole::In ? " in" : p.role == ParamRole::Out ? " out" : " inout";
    }
    out += ") ";
    block(f.body, 0);
    out += '\n';
  }

private:
  using ExprFunctor::visit;
  using StmtFunctor::visit;
  const LoopAnnotations *notes_ = nullptr; // of the function printed, if any

  // `[parallel, nest conv, work 1024, register_tiled] `: the loop's role and the nest it roots.
  void annotations(const std::string &loop) {
    if (!notes_)
      return;
    std::vector<std::string> items;
    if (const LoopRole *r = notes_->roleOf(loop))
      items.emplace_back(loopRoleName(*r));
    if (const NestInfo *n = notes_->nestAt(loop)) {
      items.push_back("nest " + n->op);
      if (n->work >= 0)
        items.push_back("work " + std::to_string(n->work));
      if (n->registerTiled)
        items.emplace_back("register_tiled");
    }
    if (items.empty())
      return;
    out += '[';
    for (size_t i = 0; i < items.size(); ++i)
      out += (i ? ", " : "") + items[i];
    out += "] ";
  }

  void visitBinary(const Expr &e) override {
    const char *op = infixOp(e.kind());
    if (!op) // min, max, floordiv, floormod, bitand, bitor, bitxor, shl, shr
      return callForm(e);
    int p = precOf(e);
    // Left-associative: the right operand needs strictly tighter precedence; comparisons do not
    // chain, so both of their operands must be tighter.
    operand(e->operands[0], p == PCmp ? p + 1 : p);
    out += ' ';
    out += op;
    out += ' ';
    operand(e->operands[1], p + 1);
  }
  void visitIntImm(const Expr &e) override {
    const ExprNode &n = *e;
    if (n.type.dtype == DType::Bool) {
      out += n.intValue ? "true" : "false";
    } else {
      out += std::to_string(n.intValue);
      if (n.type.dtype != DType::I64)
        out += dtypeName(n.type.dtype);
    }
  }
  void visitFloatImm(const Expr &e) override {
    out += floatText(e->floatValue, e.type().dtype);
    if (e.type().dtype != DType::F32)
      out += dtypeName(e.type().dtype);
  }
  void visitVar(const Expr &e) override { out += "%" + e->var->name; }
  void visitLoad(const Expr &e) override {
    out += "%" + e->buffer->name;
    list("[", e->operands, "]");
  }
  void visitNot(const Expr &e) override {
    out += '!';
    operand(e->operands[0], PUnary);
  }
  void visitCast(const Expr &e) override {
    out += "cast<";
    out += dtypeName(e.type().dtype);
    out += ">";
    list("(", e->operands, ")");
  }
  void visitCall(const Expr &e) override {
    out += intrinsicName(e->intrinsic);
    list("(", e->operands, ")");
  }
  // check_index(value, size, "site"), the site quoted: \", \\ and \xHH escapes.
  void visitCheckIndex(const Expr &e) override {
    out += exprKindName(e.kind());
    list("(", e->operands, "");
    out += ", \"";
    for (char c : e->site) {
      if (static_cast<unsigned char>(c) < 0x20) { // control characters as \xHH
        static constexpr char hex[] = "0123456789abcdef";
        out += "\\x";
        out += hex[(c >> 4) & 15];
        out += hex[c & 15];
        continue;
      }
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    out += "\")";
  }
  void visitRamp(const Expr &e) override { lanesForm(e); }
  void visitBroadcast(const Expr &e) override { lanesForm(e); }
  void visitSelect(const Expr &e) override { callForm(e); }

  // kind(operands...)
  void callForm(const Expr &e) {
    out += exprKindName(e.kind());
    list("(", e->operands, ")");
  }
  // kind(operands..., lanes)
  void lanesForm(const Expr &e) {
    out += exprKindName(e.kind());
    list("(", e->operands, "");
    out += ", " + std::to_string(e.type().lanes) + ")";
  }

  void visitFor(const Stmt &s, int level) override {
    const StmtNode &n = *s;
    out += "for %" + n.var->name;
    if (n.min.asInt() == 0 && n.min.type() == n.extent.type()) {
      out += " in [0, ";
      expr(n.extent);
      out += ") ";
    } else {
      out += " from ";
      expr(n.min);
      out += " extent ";
      expr(n.extent);
      out += ' ';
    }
    out += forKindName(n.forKind);
    out += ' ';
    annotations(n.var->name);
    block(n.body, level);
  }
  void visitStore(const Stmt &s, int) override {
    out += "%" + s->buffer->name;
    list("[", s->indices, "]");
    out += " = ";
    expr(s->value);
  }
  void visitAllocate(const Stmt &s, int level) override {
    out += "allocate %" + s->buffer->name + ": ";
    bufferType(*s->buffer);
    out += ' ';
    out += memoryScopeName(s->buffer->scope);
    out += ' ';
    block(s->body, level);
  }
  void visitIfThenElse(const Stmt &s, int level) override {
    out += "if ";
    expr(s->value);
    out += ' ';
    block(s->body, level);
    if (s->elseBody) {
      out += " else ";
      if (s->elseBody->kind == StmtKind::IfThenElse)
        ifChain(s->elseBody, level);
      else
        block(s->elseBody, level);
    }
  }
  // Only reached for a sequence nested where a single statement goes.
  void visitSeq(const Stmt &s, int level) override { block(s, level); }
};

} // namespace

std::string printFunction(const LoopFunction &f) {
  Printer p;
  p.function(f);
  return std::move(p.out);
}

std::string printStmt(const Stmt &s, int indent) {
  Printer p;
  p.stmt(s, indent);
  return std::move(p.out);
}

std::string printExpr(const Expr &e) {
  Printer p;
  p.expr(e);
  return std::move(p.out);
}

} // namespace strata::loop
