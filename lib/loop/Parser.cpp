// Recursive-descent parser for the loop IR text form (grammar in docs/loop-ir.md).
//
// Names resolve to the Var/Buffer nodes they were declared with, through a stack of visible
// bindings; shadowing a visible name is an error so the printed form is unambiguous. Scalar
// parameters may be used in buffer shapes before they are declared (`%a: f32[%n] in, %n: i64`).
// Errors are thrown internally as ParseError (byte offset + message) and become one
// `file:line:col: error: ...` at the public boundary; recursion depth is bounded.
#include "strata/loop/Parser.h"
#include "Precedence.h"
#include "strata/support/Error.h"
#include "strata/support/SourceLocation.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace strata::loop {

namespace {

struct ParseError : std::runtime_error {
  ParseError(size_t offset, const std::string &msg) : std::runtime_error(msg), offset(offset) {}
  size_t offset;
};

enum class Tok { Eof, Ident, Name, Symbol, Number, Punct, String };

struct Token {
  Tok kind = Tok::Eof;
  std::string text;   // identifier, name (without sigil), number body, punctuation, or the
                      // decoded contents of a string
  std::string suffix; // Number: dtype suffix such as "i32" (may be empty)
  bool isFloat = false;
  size_t offset = 0;
};

bool identStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
bool digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Token next() {
    skipSpace();
    Token t;
    t.offset = pos_;
    if (pos_ >= src_.size())
      return t;
    char c = src_[pos_];
    if (identStart(c)) {
      t.kind = Tok::Ident;
      t.text = scanWhile(identChar);
    } else if ((c == '%' || c == '@') &&
               (c == '@' || (pos_ + 1 < src_.size() && identChar(src_[pos_ + 1])))) {
      // `%` before a name character is a sigil; otherwise it is the remainder operator.
      ++pos_;
      t.kind = c == '%' ? Tok::Name : Tok::Symbol;
      t.text = scanWhile(identChar);
      if (t.text.empty())
        throw ParseError(t.offset, std::string("expected a name after '") + c + "'");
    } else if (digit(c)) {
      scanNumber(t);
    } else if (c == '"') {
      scanString(t);
    } else {
      static constexpr std::string_view two[] = {"==", "!=", "<=", ">=", "&&", "||"};
      t.kind = Tok::Punct;
      for (std::string_view p : two)
        if (src_.substr(pos_, 2) == p) {
          t.text = p;
          pos_ += 2;
          return t;
        }
      if (std::string_view("(){}[]<>,:=+-*/%!").find(c) == std::string_view::npos)
        throw ParseError(pos_, "unexpected character '" + std::string(1, c) + "'");
      t.text = std::string(1, c);
      ++pos_;
    }
    return t;
  }

private:
  void skipSpace() {
    while (pos_ < src_.size()) {
      if (std::isspace(static_cast<unsigned char>(src_[pos_])))
        ++pos_;
      else if (src_.substr(pos_, 2) == "//")
        while (pos_ < src_.size() && src_[pos_] != '\n')
          ++pos_;
      else
        break;
    }
  }
  template <typename F> std::string scanWhile(F pred) {
    size_t start = pos_;
    while (pos_ < src_.size() && pred(src_[pos_]))
      ++pos_;
    return std::string(src_.substr(start, pos_ - start));
  }
  // "..." with \", \\ and \xHH escapes (what the printer writes), on one line.
  void scanString(Token &t) {
    t.kind = Tok::String;
    ++pos_;
    while (true) {
      if (pos_ >= src_.size() || src_[pos_] == '\n')
        throw ParseError(t.offset, "unterminated string");
      char c = src_[pos_++];
      if (c == '"')
        return;
      if (c != '\\') {
        t.text += c;
        continue;
      }
      if (pos_ >= src_.size())
        throw ParseError(t.offset, "unterminated string");
      char e = src_[pos_++];
      if (e == '"' || e == '\\') {
        t.text += e;
      } else if (e == 'x' && pos_ + 2 <= src_.size() &&
                 std::isxdigit(static_cast<unsigned char>(src_[pos_])) &&
                 std::isxdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
        t.text += static_cast<char>(std::stoi(std::string(src_.substr(pos_, 2)), nullptr, 16));
        pos_ += 2;
      } else {
        throw ParseError(pos_ - 2, "unknown escape in a string");
      }
    }
  }
  void scanNumber(Token &t) {
    t.kind = Tok::Number;
    size_t start = pos_;
    scanWhile(digit);
    if (pos_ < src_.size() && src_[pos_] == '.') {
      t.isFloat = true;
      ++pos_;
      scanWhile(digit);
    }
    // An exponent only when digits follow, so `2e` reads as 2 with a (bad) suffix `e`.
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-'))
        ++p;
      if (p < src_.size() && digit(src_[p])) {
        t.isFloat = true;
        pos_ = p;
        scanWhile(digit);
      }
    }
    t.text = std::string(src_.substr(start, pos_ - start));
    t.suffix = scanWhile([](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
  }

  std::string_view src_;
  size_t pos_ = 0;
};

constexpr int kMaxDepth = 200;

using namespace text; // Prec

std::optional<ExprKind> binaryOp(const Token &t, int prec) {
  if (t.kind != Tok::Punct)
    return std::nullopt;
  static const std::map<std::string, std::pair<ExprKind, int>> ops = {
      {"||", {ExprKind::Or, POr}},  {"&&", {ExprKind::And, PAnd}}, {"==", {ExprKind::EQ, PCmp}},
      {"!=", {ExprKind::NE, PCmp}}, {"<", {ExprKind::LT, PCmp}},   {"<=", {ExprKind::LE, PCmp}},
      {">", {ExprKind::GT, PCmp}},  {">=", {ExprKind::GE, PCmp}},  {"+", {ExprKind::Add, PAdd}},
      {"-", {ExprKind::Sub, PAdd}}, {"*", {ExprKind::Mul, PMul}},  {"/", {ExprKind::Div, PMul}},
      {"%", {ExprKind::Mod, PMul}}};
  auto it = ops.find(t.text);
  if (it == ops.end() || it->second.second != prec)
    return std::nullopt;
  return it->second.first;
}

std::string describe(const Token &t) {
  switch (t.kind) {
  case Tok::Eof: return "end of input";
  case Tok::Ident: return "identifier '" + t.text + "'";
  case Tok::Name: return "%" + t.text;
  case Tok::Symbol: return "@" + t.text;
  case Tok::Number: return "number " + t.text + t.suffix;
  case Tok::Punct: return "'" + t.text + "'";
  case Tok::String:
    return "a string";
  }
  return "?";
}

class Parser {
public:
  explicit Parser(std::string_view src) : src_(src), lex_(src) {}

  LoopFunction parseFile() {
    advance();
    LoopFunction f;
    expectKeyword("func", "at the start of a function");
    if (tok_.kind != Tok::Symbol)
      fail("expected a function name like @kernel, found " + describe(tok_));
    f.name = tok_.text;
    advance();
    expectPunct("(", "after the function name");
    inParams_ = true;
    if (!isPunct(")")) {
      do
        f.params.push_back(parseParam());
      while (consumePunct(","));
    }
    inParams_ = false;
    for (const auto &[name, fwd] : pending_)
      failAt(fwd.second, "use of undeclared scalar parameter %" + name);
    expectPunct(")", "after the parameter list");
    f.body = parseBlock();
    f.notes = std::move(notes_);
    if (tok_.kind != Tok::Eof)
      fail("expected end of input after the function, found " + describe(tok_));
    return f;
  }

  std::pair<size_t, size_t> lineCol(size_t offset) const { return lineColumn(src_, offset); }

private:
  LoopAnnotations notes_; // of the loops parsed so far
  struct Binding {
    std::string name;
    Var var;
    Buffer buffer;
  };

  struct DepthGuard {
    explicit DepthGuard(Parser &p) : p(p) {
      if (++p.depth_ > kMaxDepth)
        p.fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    ~DepthGuard() { --p.depth_; }
    Parser &p;
  };

  // --- token helpers ----------------------------------------------------------------------------
  void advance() { tok_ = lex_.next(); }
  [[noreturn]] void fail(const std::string &msg) const { throw ParseError(tok_.offset, msg); }
  [[noreturn]] void failAt(size_t off, const std::string &msg) const { throw ParseError(off, msg); }
  bool isPunct(std::string_view p) const { return tok_.kind == Tok::Punct && tok_.text == p; }
  bool isKeyword(std::string_view k) const { return tok_.kind == Tok::Ident && tok_.text == k; }
  bool consumePunct(std::string_view p) {
    if (!isPunct(p))
      return false;
    advance();
    return true;
  }
  void expectPunct(std::string_view p, const std::string &context) {
    if (!consumePunct(p))
      fail("expected '" + std::string(p) + "' " + context + ", found " + describe(tok_));
  }
  void expectKeyword(std::string_view k, const std::string &context) {
    if (!isKeyword(k))
      fail("expected '" + std::string(k) + "' " + context + ", found " + describe(tok_));
    advance();
  }
  DType parseDType(const std::string &context) {
    std::optional<DType> d = tok_.kind == Tok::Ident ? strata::parseDType(tok_.text) : std::nullopt;
    if (!d)
      fail("expected an element type " + context + ", found " + describe(tok_));
    advance();
    return *d;
  }
  int64_t parseLanes() {
    if (tok_.kind != Tok::Number || tok_.isFloat || !tok_.suffix.empty())
      fail("expected a lane count, found " + describe(tok_));
    int64_t v = 0;
    auto r = std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), v);
    if (r.ec != std::errc() || v < 2 || v > 1024)
      fail("lane count must be between 2 and 1024, found " + tok_.text);
    advance();
    return v;
  }

  // --- names ------------------------------------------------------------------------------------
  const Binding *lookup(const std::string &name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (it->name == name)
        return &*it;
    return nullptr;
  }
  void declare(Binding b, size_t offset) {
    if (lookup(b.name))
      failAt(offset, "redefinition of %" + b.name);
    scope_.push_back(std::move(b));
  }

  // --- declarations -----------------------------------------------------------------------------
  Param parseParam() {
    if (tok_.kind != Tok::Name)
      fail("expected a parameter like %x: f32[4] in, found " + describe(tok_));
    std::string name = tok_.text;
    size_t at = tok_.offset;
    advance();
    expectPunct(":", "after parameter %" + name);
    DType dtype = parseDType("for parameter %" + name);
    if (!isPunct("[")) {
      Var v;
      if (auto it = pending_.find(name); it != pending_.end()) {
        if (dtype != DType::I64)
          failAt(at, "scalar parameter %" + name + " is used in a shape, so it must be i64");
        v = it->second.first;
        pending_.erase(it);
      } else {
        v = makeVar(name, dtype);
      }
      declare({name, v, nullptr}, at);
      return {ParamRole::Scalar, v, nullptr};
    }
    auto [shape, strides] = parseShape();
    ParamRole role;
    if (isKeyword("in"))
      role = ParamRole::In;
    else if (isKeyword("out"))
      role = ParamRole::Out;
    else if (isKeyword("inout"))
      role = ParamRole::InOut;
    else
      fail("expected 'in', 'out' or 'inout' after buffer parameter %" + name + ", found " +
           describe(tok_));
    advance();
    Buffer b = makeBuffer(name, dtype, std::move(shape), std::move(strides));
    declare({name, nullptr, b}, at);
    return {role, nullptr, b};
  }

  std::pair<std::vector<Expr>, std::vector<Expr>> parseShape() {
    std::vector<Expr> shape = parseExprList("[", "]", "in a buffer shape"), strides;
    if (isKeyword("strides")) {
      advance();
      size_t at = tok_.offset;
      strides = parseExprList("[", "]", "in buffer strides");
      if (strides.size() != shape.size())
        failAt(at, "buffer has " + std::to_string(shape.size()) + " dimensions but " +
                       std::to_string(strides.size()) + " strides");
    }
    return {std::move(shape), std::move(strides)};
  }

  std::vector<Expr> parseExprList(const char *open, const char *close, const std::string &ctx) {
    expectPunct(open, ctx);
    std::vector<Expr> es;
    if (!isPunct(close)) {
      do
        es.push_back(parseExpr());
      while (consumePunct(","));
    }
    expectPunct(close, "to close the list " + ctx);
    return es;
  }

  // --- statements -------------------------------------------------------------------------------
  Stmt parseBlock() {
    DepthGuard guard(*this);
    expectPunct("{", "to open a block");
    std::vector<Stmt> stmts;
    while (!isPunct("}")) {
      if (tok_.kind == Tok::Eof)
        fail("expected '}' to close the block, found end of input");
      stmts.push_back(parseStmt());
    }
    advance();
    return seq(std::move(stmts));
  }

  // Parses `block` with `b` visible only inside it.
  Stmt parseScopedBlock(Binding b, size_t at) {
    declare(std::move(b), at);
    Stmt body = parseBlock();
    scope_.pop_back();
    return body;
  }

  Stmt parseStmt() {
    if (isKeyword("for"))
      return parseFor();
    if (isKeyword("if"))
      return parseIf();
    if (isKeyword("allocate")) {
      advance();
      if (tok_.kind != Tok::Name)
        fail("expected a buffer name after 'allocate', found " + describe(tok_));
      std::string name = tok_.text;
      size_t at = tok_.offset;
      advance();
      expectPunct(":", "after allocated buffer %" + name);
      DType dtype = parseDType("for buffer %" + name);
      auto [shape, strides] = parseShape();
      MemoryScope scope;
      if (isKeyword("global"))
        scope = MemoryScope::Global;
      else if (isKeyword("local"))
        scope = MemoryScope::Local;
      else if (isKeyword("shared"))
        scope = MemoryScope::Shared;
      else
        fail("expected a memory scope (global, local, shared), found " + describe(tok_));
      advance();
      Buffer b = makeBuffer(name, dtype, std::move(shape), std::move(strides), scope);
      return allocate(b, parseScopedBlock({name, nullptr, b}, at));
    }
    if (tok_.kind == Tok::Name) {
      Buffer b = lookupBuffer();
      std::vector<Expr> idx = parseExprList("[", "]", "after stored buffer %" + b->name);
      expectPunct("=", "in a store");
      return store(b, std::move(idx), parseExpr());
    }
    fail("expected a statement (for, if, allocate or a store), found " + describe(tok_));
  }

  Stmt parseFor() {
    advance();
    if (tok_.kind != Tok::Name)
      fail("expected a loop variable after 'for', found " + describe(tok_));
    std::string name = tok_.text;
    size_t at = tok_.offset;
    advance();
    Expr min, extent;
    if (isKeyword("in")) {
      advance();
      expectPunct("[", "to open the loop range [0, extent)");
      size_t zeroAt = tok_.offset;
      Expr zero = parseExpr();
      if (zero.asInt() != 0)
        failAt(zeroAt, "a range [a, b) must start at 0; write 'from MIN extent EXTENT'");
      expectPunct(",", "in the loop range");
      extent = parseExpr();
      expectPunct(")", "to close the loop range [0, extent)");
      min = intImm(0, extent.type().dtype);
    } else if (isKeyword("from")) {
      advance();
      min = parseExpr();
      expectKeyword("extent", "after the loop minimum");
      extent = parseExpr();
    } else {
      fail("expected 'in [0, extent)' or 'from MIN extent EXTENT', found " + describe(tok_));
    }
    std::optional<ForKind> kind = tok_.kind == Tok::Ident ? lookupForKind(tok_.text) : std::nullopt;
    if (!kind)
      fail("expected a loop kind (serial, parallel, vectorized, unrolled, gpu_block, gpu_thread), "
           "found " + describe(tok_));
    advance();
    if (isPunct("["))
      parseAnnotations(name);
    Var v = makeVar(name, extent.type().dtype);
    return forLoop(v, min, extent, *kind, parseScopedBlock({name, v, nullptr}, at));
  }

  // `[role, nest OP, work N, register_tiled]` after a loop kind (see LoopAnnotations).
  void parseAnnotations(const std::string &loop) {
    advance();
    NestInfo nest;
    bool isNest = false;
    size_t at = tok_.offset;
    do {
      if (tok_.kind != Tok::Ident)
        fail(
            "expected a loop annotation (parallel, reduction, nest, work, register_tiled), found " +
            describe(tok_));
      std::string key = tok_.text;
      size_t keyAt = tok_.offset;
      advance();
      if (std::optional<LoopRole> r = lookupLoopRole(key)) {
        notes_.roles[loop] = *r;
      } else if (key == "nest") {
        if (tok_.kind != Tok::Ident)
          fail("expected an op name after 'nest', found " + describe(tok_));
        nest.op = tok_.text;
        isNest = true;
        advance();
      } else if (key == "work") {
        if (tok_.kind != Tok::Number || tok_.isFloat || !tok_.suffix.empty())
          fail("expected a count after 'work', found " + describe(tok_));
        auto r = std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), nest.work);
        if (r.ec != std::errc() || nest.work < 0)
          fail("work must be a non-negative 64-bit count, found " + tok_.text);
        advance();
      } else if (key == "register_tiled") {
        nest.registerTiled = true;
      } else {
        failAt(keyAt, "unknown loop annotation '" + key + "'");
      }
    } while (consumePunct(","));
    expectPunct("]", "to close the loop annotations");
    if (!isNest && (nest.work >= 0 || nest.registerTiled))
      failAt(at, "'work' and 'register_tiled' describe a nest: they need 'nest OP'");
    if (isNest)
      notes_.nests[loop] = nest;
  }

  Stmt parseIf() {
    advance();
    Expr cond = parseExpr();
    Stmt thenBody = parseBlock();
    Stmt elseBody;
    if (isKeyword("else")) {
      advance();
      if (isKeyword("if")) {
        DepthGuard guard(*this);
        elseBody = parseIf();
      } else {
        elseBody = parseBlock();
      }
    }
    return ifThenElse(cond, thenBody, elseBody);
  }

  Buffer lookupBuffer() {
    const Binding *b = lookup(tok_.text);
    if (!b)
      fail("use of undeclared buffer %" + tok_.text);
    if (!b->buffer)
      fail("%" + tok_.text + " is a scalar, not a buffer");
    advance();
    return b->buffer;
  }

  // --- expressions ------------------------------------------------------------------------------
  Expr parseExpr() { return parseBinary(POr); }

  Expr parseBinary(int prec) {
    if (prec > PMul)
      return parseUnary();
    DepthGuard guard(*this);
    Expr lhs = parseBinary(prec + 1);
    while (std::optional<ExprKind> k = binaryOp(tok_, prec)) {
      advance();
      lhs = binary(*k, lhs, parseBinary(prec + 1));
      if (prec == PCmp && binaryOp(tok_, PCmp))
        fail("comparisons do not chain; add parentheses");
    }
    return lhs;
  }

  Expr parseUnary() {
    DepthGuard guard(*this);
    if (consumePunct("!"))
      return logicalNot(parseUnary());
    if (isPunct("-")) {
      advance();
      if (tok_.kind == Tok::Number || isInfOrNan())
        return parseLiteral(true);
      fail("unary '-' applies only to number literals (write 0 - x), found " + describe(tok_));
    }
    return parsePrimary();
  }

  bool isInfOrNan() const {
    return tok_.kind == Tok::Ident && (tok_.text.starts_with("inf") || tok_.text.starts_with("nan"));
  }

  Expr parseLiteral(bool negative) {
    Token t = tok_;
    advance();
    std::string body = t.text, suffix = t.suffix;
    bool isFloat = t.isFloat;
    if (t.kind == Tok::Ident) { // inf / nan with an optional dtype suffix
      body = t.text.substr(0, 3);
      suffix = t.text.substr(3);
      isFloat = true;
    }
    DType d = isFloat ? DType::F32 : DType::I64;
    if (!suffix.empty()) {
      std::optional<DType> s = strata::parseDType(suffix);
      if (!s || *s == DType::Bool)
        failAt(t.offset, "unknown literal type suffix '" + suffix + "'");
      d = *s;
    }
    if (strata::isFloat(d)) {
      double v;
      if (body == "inf" || body == "nan") {
        v = body == "inf" ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
      } else {
        std::from_chars_result r;
        if (d == DType::F64) {
          r = std::from_chars(body.data(), body.data() + body.size(), v);
        } else { // read at float precision so shortest float text maps back exactly
          float fv;
          r = std::from_chars(body.data(), body.data() + body.size(), fv);
          v = fv;
        }
        if (r.ec != std::errc() || r.ptr != body.data() + body.size())
          failAt(t.offset, "number " + body + " is out of range for " +
                               std::string(dtypeName(d)));
      }
      return floatImm(negative ? -v : v, d);
    }
    if (isFloat)
      failAt(t.offset, "float literal " + body + " cannot have integer type " +
                           std::string(dtypeName(d)));
    std::string digits = (negative ? "-" : "") + body;
    int64_t v;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    bool fits = r.ec == std::errc() && r.ptr == digits.data() + digits.size();
    if (fits && dtypeSize(d) < 8) {
      int bits = static_cast<int>(dtypeSize(d)) * 8;
      int64_t lo = isSigned(d) ? -(int64_t(1) << (bits - 1)) : 0;
      int64_t hi = isSigned(d) ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
      fits = v >= lo && v <= hi;
    }
    if (fits && !isSigned(d) && v < 0)
      fits = false;
    if (!fits)
      failAt(t.offset, "integer " + digits + " does not fit in " + std::string(dtypeName(d)));
    return intImm(v, d);
  }

  std::vector<Expr> parseArgs(const std::string &fn, size_t count) {
    size_t at = tok_.offset;
    std::vector<Expr> args = parseExprList("(", ")", "for the arguments of " + fn);
    if (args.size() != count)
      failAt(at, fn + " takes " + std::to_string(count) + " arguments, found " +
                     std::to_string(args.size()));
    return args;
  }

  Expr parsePrimary() {
    if (tok_.kind == Tok::Number || isInfOrNan())
      return parseLiteral(false);
    if (consumePunct("(")) {
      Expr e = parseExpr();
      expectPunct(")", "to close the parenthesized expression");
      return e;
    }
    if (tok_.kind == Tok::Name) {
      const Binding *b = lookup(tok_.text);
      if (!b && inParams_) { // forward reference to a scalar parameter from a buffer shape
        auto &fwd = pending_[tok_.text];
        if (!fwd.first)
          fwd = {makeVar(tok_.text, DType::I64), tok_.offset};
        advance();
        return var(fwd.first);
      }
      if (!b)
        fail("use of undeclared %" + tok_.text);
      if (b->var) {
        advance();
        return var(b->var);
      }
      Buffer buf = lookupBuffer();
      return load(buf, parseExprList("[", "]", "after loaded buffer %" + buf->name));
    }
    if (tok_.kind != Tok::Ident)
      fail("expected an expression, found " + describe(tok_));
    std::string fn = tok_.text;
    advance();
    if (fn == "true" || fn == "false")
      return boolImm(fn == "true");
    if (fn == "cast") {
      expectPunct("<", "after 'cast'");
      DType d = parseDType("in cast<...>");
      expectPunct(">", "after the cast type");
      return cast(d, parseArgs("cast", 1)[0]);
    }
    if (fn == "ramp" || fn == "broadcast") {
      expectPunct("(", "after '" + fn + "'");
      Expr a = parseExpr();
      expectPunct(",", "in " + fn);
      Expr b = fn == "ramp" ? parseExpr() : Expr();
      if (fn == "ramp")
        expectPunct(",", "in ramp");
      int lanes = static_cast<int>(parseLanes());
      expectPunct(")", "to close " + fn);
      return fn == "ramp" ? ramp(a, b, lanes) : broadcast(a, lanes);
    }
    if (fn == "check_index") { // check_index(value, size, "site")
      expectPunct("(", "after 'check_index'");
      Expr v = parseExpr();
      expectPunct(",", "in check_index");
      Expr size = parseExpr();
      expectPunct(",", "in check_index");
      if (tok_.kind != Tok::String)
        fail("expected the site of check_index as a string, found " + describe(tok_));
      std::string site = tok_.text;
      advance();
      expectPunct(")", "to close check_index");
      return checkIndex(v, size, std::move(site));
    }
    static const std::map<std::string, ExprKind> calls = {
        {"min", ExprKind::Min},           {"max", ExprKind::Max},
        {"floordiv", ExprKind::FloorDiv}, {"floormod", ExprKind::FloorMod},
        {"bitand", ExprKind::BitAnd},     {"bitor", ExprKind::BitOr},
        {"bitxor", ExprKind::BitXor},     {"shl", ExprKind::Shl},
        {"shr", ExprKind::Shr},           {"select", ExprKind::Select}};
    if (auto it = calls.find(fn); it != calls.end()) {
      if (it->second == ExprKind::Select) {
        auto a = parseArgs(fn, 3);
        return select(a[0], a[1], a[2]);
      }
      auto a = parseArgs(fn, 2);
      return binary(it->second, a[0], a[1]);
    }
    if (std::optional<Intrinsic> in = lookupIntrinsic(fn))
      return call(*in, parseArgs(fn, static_cast<size_t>(intrinsicArity(*in))));
    fail("unknown function '" + fn + "'");
  }

  std::string_view src_;
  Lexer lex_;
  Token tok_;
  std::vector<Binding> scope_;
  std::map<std::string, std::pair<Var, size_t>> pending_;
  bool inParams_ = false;
  int depth_ = 0;
};

} // namespace

llvm::Expected<LoopFunction> parseFunction(llvm::StringRef text, llvm::StringRef filename) {
  std::string_view src(text.data(), text.size());
  Parser p(src);
  try {
    return p.parseFile();
  } catch (const ParseError &e) {
    auto [line, col] = p.lineCol(e.offset);
    return makeError(filename.str() + ":" + std::to_string(line) + ":" + std::to_string(col) +
                     ": error: " + e.what());
  }
}

llvm::Expected<LoopFunction> parseFunctionFile(llvm::StringRef path) {
  auto buf = path == "-" ? llvm::MemoryBuffer::getSTDIN() : llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return makeError(path.str() + ": error: cannot read file: " + buf.getError().message());
  return parseFunction((*buf)->getBuffer(), path == "-" ? "<stdin>" : path);
}

} // namespace strata::loop
