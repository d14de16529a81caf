// Tokenizer for the graph IR text format (grammar in docs/graph-ir.md). Private to the parser.
//
// Errors are thrown as TextError carrying the byte offset; the parser turns them into
// `file:line:col: error: ...` at its public boundary.
#pragma once
#include "strata/graph/Type.h"

#include <stdexcept>
#include <string>
#include <string_view>

namespace strata::text {

struct TextError : std::runtime_error {
  TextError(size_t offset, const std::string &msg) : std::runtime_error(msg), offset(offset) {}
  size_t offset;
};

enum class Tok {
  Eof,
  Ident,     // bare word: keywords, op names, attribute names, dtypes
  ValueName, // %name or %"quoted"
  Symbol,    // @name or @"quoted"
  Integer,   // -?[0-9]+            (text kept; converted by the parser for the target type)
  Float,     // -?[0-9]+(.[0-9]*)?([eE][+-]?[0-9]+)?  with a '.' or an exponent
  String,    // "..." (text holds the decoded bytes)
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Less, Greater,
  Comma, Colon, Equal, Arrow, Minus,
};

std::string_view tokName(Tok t);

struct Token {
  Tok kind = Tok::Eof;
  std::string text;   // identifier / name / number text / decoded string
  bool quoted = false; // ValueName and Symbol: written as a quoted string
  size_t offset = 0;
};

// True if `s` matches [A-Za-z_][A-Za-z0-9_.$-]*, i.e. prints without quotes.
bool isBareIdentifier(std::string_view s);
// True if `s` is a non-empty run of decimal digits.
bool isDecimalNumber(std::string_view s);
// Appends `s` as a quoted string literal with escapes.
void appendQuoted(std::string &out, std::string_view s);

class Lexer {
public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Token next();
  // Reads `<dims dtype (, device)?>` of a tensor type directly from the characters after the
  // `tensor` keyword: dims are not ordinary tokens (`3x?batch xf32`).
  TensorType scanTensorTypeBody();
  // Reads `d, d, ...]` after the '[' of a dims attribute (a size, possibly negative, ?name or
  // ?(formula) each), through the closing ']'.
  std::vector<Dim> scanDimListBody();
  size_t offset() const { return pos_; }

private:
  [[noreturn]] void fail(size_t at, const std::string &msg) const { throw TextError(at, msg); }
  void skipSpaceAndComments();
  std::string scanStringBody(size_t start); // after the opening quote
  std::string scanNameAfterSigil(size_t start, bool &quoted, const char *what);
  Token scanNumber(size_t start);
  Dim scanSymbolicDim(const char *where); // at the '?'
  int64_t scanDimSize(size_t dimStart);    // the digits of a size

  std::string_view src_;
  size_t pos_ = 0;
};

} // namespace strata::text
