#include "Lexer.h"

#include <charconv>
#include <limits>

namespace strata::text {

namespace {

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) {
  return isIdentStart(c) || isDigit(c) || c == '.' || c == '$' || c == '-';
}
int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}
std::string printable(char c) {
  if (c >= 0x20 && c < 0x7f)
    return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned char>(c));
  return buf;
}

} // namespace

std::string_view tokName(Tok t) {
  switch (t) {
  case Tok::Eof: return "end of input";
  case Tok::Ident: return "identifier";
  case Tok::ValueName: return "value name";
  case Tok::Symbol: return "symbol";
  case Tok::Integer: return "integer";
  case Tok::Float: return "float";
  case Tok::String: return "string";
  case Tok::LParen: return "'('";
  case Tok::RParen: return "')'";
  case Tok::LBrace: return "'{'";
  case Tok::RBrace: return "'}'";
  case Tok::LBracket: return "'['";
  case Tok::RBracket: return "']'";
  case Tok::Less: return "'<'";
  case Tok::Greater: return "'>'";
  case Tok::Comma: return "','";
  case Tok::Colon: return "':'";
  case Tok::Equal: return "'='";
  case Tok::Arrow: return "'->'";
  case Tok::Minus: return "'-'";
  }
  return "token";
}

bool isBareIdentifier(std::string_view s) {
  if (s.empty() || !isIdentStart(s[0]))
    return false;
  for (char c : s)
    if (!isIdentChar(c))
      return false;
  return true;
}

bool isDecimalNumber(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (!isDigit(c))
      return false;
  return true;
}

void appendQuoted(std::string &out, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c; // printable ASCII and UTF-8 bytes pass through
    }
  }
  out += '"';
}

void Lexer::skipSpaceAndComments() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
      while (pos_ < src_.size() && src_[pos_] != '\n')
        ++pos_;
    } else {
      return;
    }
  }
}

std::string Lexer::scanStringBody(size_t start) {
  std::string out;
  while (true) {
    if (pos_ >= src_.size() || src_[pos_] == '\n')
      fail(start, "unterminated string literal");
    char c = src_[pos_++];
    if (c == '"')
      return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos_ >= src_.size())
      fail(start, "unterminated string literal");
    char e = src_[pos_++];
    switch (e) {
    case '"': out += '"'; break;
    case '\\': out += '\\'; break;
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'x': {
      int hi = pos_ < src_.size() ? hexValue(src_[pos_]) : -1;
      int lo = pos_ + 1 < src_.size() ? hexValue(src_[pos_ + 1]) : -1;
      if (hi < 0 || lo < 0)
        fail(pos_ - 2, "expected two hex digits after '\\x' in string literal");
      out += static_cast<char>(hi * 16 + lo);
      pos_ += 2;
      break;
    }
    default:
      fail(pos_ - 2, "unknown escape sequence '\\" + std::string(1, e) + "' in string literal");
    }
  }
}

std::string Lexer::scanNameAfterSigil(size_t start, bool &quoted, const char *what) {
  quoted = false;
  if (pos_ < src_.size() && src_[pos_] == '"') {
    ++pos_;
    quoted = true;
    return scanStringBody(pos_ - 1);
  }
  size_t begin = pos_;
  while (pos_ < src_.size() && isIdentChar(src_[pos_]))
    ++pos_;
  if (pos_ == begin)
    fail(start, std::string("expected a name or a quoted string after '") + what + "'");
  return std::string(src_.substr(begin, pos_ - begin));
}

Token Lexer::scanNumber(size_t start) {
  Token t;
  t.offset = start;
  t.kind = Tok::Integer;
  if (src_[pos_] == '-')
    ++pos_;
  while (pos_ < src_.size() && isDigit(src_[pos_]))
    ++pos_;
  if (pos_ < src_.size() && src_[pos_] == '.') {
    t.kind = Tok::Float;
    ++pos_;
    while (pos_ < src_.size() && isDigit(src_[pos_]))
      ++pos_;
  }
  if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
    size_t save = pos_++;
    if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-'))
      ++pos_;
    if (pos_ < src_.size() && isDigit(src_[pos_])) {
      t.kind = Tok::Float;
      while (pos_ < src_.size() && isDigit(src_[pos_]))
        ++pos_;
    } else {
      pos_ = save; // not an exponent; leave the 'e' for the next token (and an error later)
    }
  }
  if (pos_ < src_.size() && isIdentStart(src_[pos_]))
    fail(start, "malformed number '" + std::string(src_.substr(start, pos_ + 1 - start)) + "'");
  t.text = std::string(src_.substr(start, pos_ - start));
  return t;
}

Token Lexer::next() {
  skipSpaceAndComments();
  Token t;
  t.offset = pos_;
  if (pos_ >= src_.size())
    return t;
  size_t start = pos_;
  char c = src_[pos_];
  auto single = [&](Tok k) {
    ++pos_;
    t.kind = k;
    return t;
  };
  switch (c) {
  case '(': return single(Tok::LParen);
  case ')': return single(Tok::RParen);
  case '{': return single(Tok::LBrace);
  case '}': return single(Tok::RBrace);
  case '[': return single(Tok::LBracket);
  case ']': return single(Tok::RBracket);
  case '<': return single(Tok::Less);
  case '>': return single(Tok::Greater);
  case ',': return single(Tok::Comma);
  case ':': return single(Tok::Colon);
  case '=': return single(Tok::Equal);
  case '"':
    ++pos_;
    t.kind = Tok::String;
    t.text = scanStringBody(start);
    return t;
  case '%':
  case '@':
    ++pos_;
    t.kind = c == '%' ? Tok::ValueName : Tok::Symbol;
    t.text = scanNameAfterSigil(start, t.quoted, c == '%' ? "%" : "@");
    return t;
  case '-':
    if (pos_ + 1 < src_.size() && src_[pos_ + 1] == '>') {
      pos_ += 2;
      t.kind = Tok::Arrow;
      return t;
    }
    if (pos_ + 1 < src_.size() && isDigit(src_[pos_ + 1]))
      return scanNumber(start);
    return single(Tok::Minus);
  default:
    break;
  }
  if (isDigit(c))
    return scanNumber(start);
  if (isIdentStart(c)) {
    while (pos_ < src_.size() && isIdentChar(src_[pos_]))
      ++pos_;
    t.kind = Tok::Ident;
    t.text = std::string(src_.substr(start, pos_ - start));
    return t;
  }
  fail(start, "unexpected character " + printable(c));
}

int64_t Lexer::scanDimSize(size_t dimStart) {
  int64_t size = 0;
  while (pos_ < src_.size() && isDigit(src_[pos_])) {
    int digit = src_[pos_++] - '0';
    if (size > (std::numeric_limits<int64_t>::max() - digit) / 10)
      fail(dimStart, "dimension size is too large");
    size = size * 10 + digit;
  }
  return size;
}

Dim Lexer::scanSymbolicDim(const char *where) {
  auto peek = [&]() -> char { return pos_ < src_.size() ? src_[pos_] : '\0'; };
  const size_t dimStart = pos_;
  ++pos_; // the '?'
  const size_t symStart = pos_;
  if (peek() == '(') { // ?(formula): parentheses balanced, the formula parsed by SymExpr
    int depth = 0;
    do {
      if (peek() == '(')
        ++depth;
      else if (peek() == ')')
        --depth;
      else if (peek() == '\0' || peek() == '\n' || peek() == '>' || peek() == ']')
        fail(dimStart, std::string("unterminated '?(' formula in ") + where);
      ++pos_;
    } while (depth > 0);
    std::string error;
    std::optional<SymExpr> e = SymExpr::parse(src_.substr(symStart + 1, pos_ - symStart - 2), error);
    if (!e)
      fail(dimStart, "malformed symbolic dim: " + error);
    return Dim::of(*e);
  }
  if (!isIdentStart(peek()))
    fail(dimStart, std::string("expected a symbol name or '(' after '?' in ") + where);
  while (isIdentChar(peek()))
    ++pos_;
  return Dim::sym(std::string(src_.substr(symStart, pos_ - symStart)));
}

std::vector<Dim> Lexer::scanDimListBody() {
  auto peek = [&]() -> char { return pos_ < src_.size() ? src_[pos_] : '\0'; };
  auto skipBlanks = [&] {
    while (pos_ < src_.size() && (src_[pos_] == ' ' || src_[pos_] == '\t'))
      ++pos_;
  };
  std::vector<Dim> dims;
  skipBlanks();
  if (peek() == ']') {
    ++pos_;
    return dims;
  }
  while (true) {
    skipBlanks();
    const size_t dimStart = pos_;
    if (peek() == '?') {
      dims.push_back(scanSymbolicDim("a list of dims"));
    } else {
      bool negative = peek() == '-';
      if (negative)
        ++pos_;
      if (!isDigit(peek()))
        fail(dimStart, "expected a size, ?name or ?(formula) in a list of dims");
      const int64_t size = scanDimSize(dimStart);
      dims.emplace_back(negative ? -size : size);
    }
    skipBlanks();
    if (peek() == ']') {
      ++pos_;
      return dims;
    }
    if (peek() != ',')
      fail(pos_, "expected ',' or ']' in a list of dims");
    ++pos_;
  }
}

TensorType Lexer::scanTensorTypeBody() {
  auto skipBlanks = [&] {
    while (pos_ < src_.size() && (src_[pos_] == ' ' || src_[pos_] == '\t'))
      ++pos_;
  };
  auto peek = [&]() -> char { return pos_ < src_.size() ? src_[pos_] : '\0'; };
  skipBlanks();
  if (peek() != '<')
    fail(pos_, "expected '<' after 'tensor'");
  ++pos_;
  TensorType type;
  while (true) {
    skipBlanks();
    size_t dimStart = pos_;
    if (isDigit(peek())) {
      type.dims.emplace_back(scanDimSize(dimStart));
    } else if (peek() == '?') {
      type.dims.push_back(scanSymbolicDim("tensor type"));
    } else {
      break; // the element type
    }
    skipBlanks();
    if (peek() != 'x')
      fail(pos_, "expected 'x' after dimension '" + type.dims.back().str() + "' in tensor type" +
                     (type.dims.back().isStatic() ? ""
                                                  : " (a symbolic dimension is followed by a space)"));
    ++pos_;
  }
  size_t dtypeStart = pos_;
  while (isIdentChar(peek()))
    ++pos_;
  std::string_view dtypeText = src_.substr(dtypeStart, pos_ - dtypeStart);
  if (dtypeText.empty())
    fail(dtypeStart, "expected a dimension or an element type in tensor type");
  auto dtype = parseDType(dtypeText);
  if (!dtype)
    fail(dtypeStart, "unknown element type '" + std::string(dtypeText) + "'");
  type.dtype = *dtype;
  skipBlanks();
  if (peek() == ',') {
    ++pos_;
    skipBlanks();
    size_t devStart = pos_;
    while (isIdentChar(peek()))
      ++pos_;
    std::string_view dev = src_.substr(devStart, pos_ - devStart);
    if (dev == "gpu")
      type.device = Device::GPU;
    else if (dev == "cpu")
      type.device = Device::CPU;
    else
      fail(devStart, "unknown device '" + std::string(dev) + "' (expected cpu or gpu)");
    skipBlanks();
  }
  if (peek() != '>')
    fail(pos_, "expected '>' to close tensor type");
  ++pos_;
  return type;
}

} // namespace strata::text
