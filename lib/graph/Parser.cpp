// Recursive-descent parser for the graph IR text form (grammar in docs/graph-ir.md).
//
// Ops are built with the result types written in the text, not inferred: the verifier compares
// them with inference afterwards. Errors are thrown internally as TextError (byte offset + message)
// and become one `file:line:col: error: ...` line at the public boundary.
#include "strata/graph/Parser.h"
#include "strata/support/Error.h"
#include "strata/support/Limits.h"
#include "strata/support/SourceLocation.h"

#include "Lexer.h"

#include "llvm/Support/MemoryBuffer.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>

namespace strata {

namespace {

using text::Lexer;
using text::TextError;
using text::Tok;
using text::Token;

std::string spellValue(const std::string &name) {
  std::string s = "%";
  if (text::isBareIdentifier(name) || text::isDecimalNumber(name))
    s += name;
  else
    text::appendQuoted(s, name);
  return s;
}

std::string describe(const Token &t) {
  switch (t.kind) {
  case Tok::Ident: return "identifier '" + t.text + "'";
  case Tok::ValueName: return "value " + spellValue(t.text);
  case Tok::Symbol: return "symbol @" + t.text;
  case Tok::Integer:
  case Tok::Float: return "number " + t.text;
  case Tok::String: {
    std::string s = "string ";
    text::appendQuoted(s, t.text.size() > 40 ? t.text.substr(0, 40) + "..." : t.text);
    return s;
  }
  default: return std::string(text::tokName(t.kind));
  }
}

// A `blob<"HASH">` attribute waiting for the blob section.
struct BlobRef {
  Op *op;
  std::string attrName;
  std::string hash;
  size_t offset;
};

struct PendingBlob {
  std::string attrName;
  std::string hash;
  size_t offset;
};

class Parser {
public:
  explicit Parser(std::string_view src) : src_(src), lex_(src) {}

  std::unique_ptr<Graph> parseFile() {
    advance();
    auto g = std::make_unique<Graph>();
    parseGraph(*g, 0);
    if (isKeyword("blobs"))
      parseBlobSection();
    if (tok_.kind != Tok::Eof)
      fail("expected 'blobs' section or end of input after the graph, found " + describe(tok_));
    resolveBlobs();
    return g;
  }

  std::pair<size_t, size_t> lineCol(size_t offset) const { return lineColumn(src_, offset); }

private:
  struct Binding {
    Value *value; // null while the defining op's regions are parsed
    size_t offset;
  };
  using Scope = std::unordered_map<std::string, Binding>;

  // --- token helpers ----------------------------------------------------------------------------
  void advance() { tok_ = lex_.next(); }
  [[noreturn]] void fail(const std::string &msg) const { throw TextError(tok_.offset, msg); }
  [[noreturn]] void failAt(size_t offset, const std::string &msg) const {
    throw TextError(offset, msg);
  }
  bool isKeyword(std::string_view k) const { return tok_.kind == Tok::Ident && tok_.text == k; }
  bool consumeIf(Tok k) {
    if (tok_.kind != k)
      return false;
    advance();
    return true;
  }
  void expect(Tok k, const std::string &context) {
    if (tok_.kind != k)
      fail("expected " + std::string(text::tokName(k)) + " " + context + ", found " +
           describe(tok_));
    advance();
  }
  void expectKeyword(std::string_view k, const std::string &context) {
    if (!isKeyword(k))
      fail("expected '" + std::string(k) + "' " + context + ", found " + describe(tok_));
    advance();
  }
  std::string location(size_t offset) const {
    auto [line, col] = lineCol(offset);
    return std::to_string(line) + ":" + std::to_string(col);
  }

  // --- values and scopes ------------------------------------------------------------------------
  const Binding *find(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto b = it->find(name);
      if (b != it->end())
        return &b->second;
    }
    return nullptr;
  }
  void define(const std::string &name, Value *v, size_t offset) {
    if (const Binding *prev = find(name))
      failAt(offset, "redefinition of value " + spellValue(name) + " (first defined at " +
                         location(prev->offset) + ")");
    scopes_.back()[name] = {v, offset};
  }
  Value *use() {
    if (tok_.kind != Tok::ValueName)
      fail("expected a value name like %x, found " + describe(tok_));
    const Binding *b = find(tok_.text);
    if (!b)
      fail("use of undefined value " + spellValue(tok_.text));
    if (!b->value)
      fail("value " + spellValue(tok_.text) + " is used inside a region of the op that defines it");
    advance();
    return b->value;
  }
  // Printer-assigned numbers (unquoted %12) are not name hints; everything else is kept.
  static std::string nameHint(const Token &t) {
    return !t.quoted && text::isDecimalNumber(t.text) ? std::string() : t.text;
  }

  // --- types ------------------------------------------------------------------------------------
  TensorType parseType(const std::string &context) {
    if (!isKeyword("tensor"))
      fail("expected a tensor type " + context + ", found " + describe(tok_));
    TensorType t = lex_.scanTensorTypeBody();
    advance();
    return t;
  }

  // --- graphs -----------------------------------------------------------------------------------
  void parseGraph(Graph &g, int depth) {
    expectKeyword("graph", "to start a graph");
    if (tok_.kind != Tok::Symbol)
      fail("expected a graph name like @main after 'graph', found " + describe(tok_));
    g.setName(tok_.text);
    advance();
    expect(Tok::LParen, "after the graph name");
    scopes_.emplace_back();
    if (tok_.kind != Tok::RParen) {
      while (true) {
        if (tok_.kind != Tok::ValueName)
          fail("expected a graph input like %x: tensor<...>, found " + describe(tok_));
        Token name = tok_;
        advance();
        expect(Tok::Colon, "after graph input name");
        TensorType type = parseType("for graph input " + spellValue(name.text));
        define(name.text, g.addInput(std::move(type), nameHint(name)), name.offset);
        if (!consumeIf(Tok::Comma))
          break;
      }
    }
    expect(Tok::RParen, "after graph inputs");
    expect(Tok::Arrow, "after graph inputs");
    expect(Tok::LParen, "to open the graph output list");
    struct Output {
      std::string name;
      TensorType type;
      size_t offset;
    };
    std::vector<Output> outputs;
    if (tok_.kind != Tok::RParen) {
      while (true) {
        if (tok_.kind != Tok::Ident && tok_.kind != Tok::String)
          fail("expected an output name (identifier or string), found " + describe(tok_));
        Output out{tok_.text, {}, tok_.offset};
        advance();
        expect(Tok::Colon, "after output name");
        out.type = parseType("for graph output '" + out.name + "'");
        outputs.push_back(std::move(out));
        if (!consumeIf(Tok::Comma))
          break;
      }
    }
    expect(Tok::RParen, "after graph outputs");
    expect(Tok::LBrace, "to open the graph body");
    while (!isKeyword("return"))
      parseOp(g, depth);
    size_t returnOffset = tok_.offset;
    advance();
    std::vector<std::pair<Value *, size_t>> returned;
    if (tok_.kind == Tok::ValueName) {
      while (true) {
        size_t at = tok_.offset;
        returned.push_back({use(), at});
        if (!consumeIf(Tok::Comma))
          break;
      }
    }
    if (returned.size() != outputs.size())
      failAt(returnOffset, "graph @" + g.name() + " returns " + std::to_string(returned.size()) +
                               " values but its signature declares " +
                               std::to_string(outputs.size()) + " outputs");
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (returned[i].first->type() != outputs[i].type)
        failAt(returned[i].second, "returned value has type " + returned[i].first->type().str() +
                                       " but output '" + outputs[i].name + "' is declared " +
                                       outputs[i].type.str());
      g.addOutput(returned[i].first, outputs[i].name);
    }
    expect(Tok::RBrace, "to close the graph body after 'return'");
    scopes_.pop_back();
  }

  // --- ops --------------------------------------------------------------------------------------
  void parseOp(Graph &g, int depth) {
    std::vector<Token> resultNames;
    if (tok_.kind == Tok::ValueName) {
      while (true) {
        if (tok_.kind != Tok::ValueName)
          fail("expected a result name after ',', found " + describe(tok_));
        resultNames.push_back(tok_);
        advance();
        if (!consumeIf(Tok::Comma))
          break;
      }
      expect(Tok::Equal, "after result names");
    }
    if (tok_.kind != Tok::Ident)
      fail("expected an op name or 'return', found " + describe(tok_));
    const OpInfo *info = lookupOp(tok_.text);
    if (!info)
      fail("unknown op '" + tok_.text + "'");
    std::string opName(info->name);
    size_t opOffset = tok_.offset;
    advance();

    std::vector<Value *> operands;
    if (consumeIf(Tok::LParen)) {
      if (tok_.kind != Tok::RParen) {
        while (true) {
          operands.push_back(use());
          if (!consumeIf(Tok::Comma))
            break;
        }
      }
      expect(Tok::RParen, "after operand list");
    }
    int n = static_cast<int>(operands.size());
    if (n < info->minOperands || (info->maxOperands >= 0 && n > info->maxOperands)) {
      std::string want = info->minOperands == info->maxOperands
                             ? std::to_string(info->minOperands)
                         : info->maxOperands < 0
                             ? "at least " + std::to_string(info->minOperands)
                             : std::to_string(info->minOperands) + " to " +
                                   std::to_string(info->maxOperands);
      failAt(opOffset, "op '" + opName + "' takes " + want + " operands, got " + std::to_string(n));
    }

    AttrMap attrs;
    std::vector<PendingBlob> blobs;
    if (tok_.kind == Tok::LBrace)
      parseAttributes(*info, attrs, blobs);

    expect(Tok::Colon, "before the result types of '" + opName + "'");
    std::vector<TensorType> types;
    if (consumeIf(Tok::LParen)) {
      expect(Tok::RParen, "after '(' of an empty result type list");
    } else {
      while (true) {
        types.push_back(parseType("for a result of '" + opName + "'"));
        if (!consumeIf(Tok::Comma))
          break;
      }
    }
    if (types.size() != resultNames.size())
      failAt(opOffset, "op '" + opName + "' names " + std::to_string(resultNames.size()) +
                           " results but lists " + std::to_string(types.size()) + " result types");
    // numResults -1 (kernel): any count, the region's outputs decide (checked by the verifier).
    if (info->numResults >= 0 && static_cast<int>(types.size()) != info->numResults)
      failAt(opOffset, "op '" + opName + "' has " + std::to_string(info->numResults) +
                           " results, got " + std::to_string(types.size()));

    std::string loc;
    if (isKeyword("loc")) {
      advance();
      expect(Tok::LParen, "after 'loc'");
      if (tok_.kind != Tok::String)
        fail("expected a string in loc(...), found " + describe(tok_));
      loc = tok_.text;
      advance();
      expect(Tok::RParen, "after the location string");
    }

    if (++numOps_ > limits_.maxOps) // before a huge file has built a huge graph
      fail("more than " + std::to_string(limits_.maxOps) + " ops, " +
           overLimit(&Limits::maxOps, limits_.maxOps));
    Op *op = g.createOp(info->kind, operands, types, std::move(attrs));
    op->setLocation(std::move(loc));
    for (PendingBlob &b : blobs)
      blobRefs_.push_back({op, std::move(b.attrName), std::move(b.hash), b.offset});
    for (unsigned i = 0; i < resultNames.size(); ++i) {
      op->result(i)->setName(nameHint(resultNames[i]));
      define(resultNames[i].text, nullptr, resultNames[i].offset); // reserved during regions
    }

    if (tok_.kind == Tok::LBrace) {
      if (depth + 1 > limits_.maxRegionDepth) // bounds the recursion on hostile input
        fail("regions nested " + std::to_string(depth + 1) + " deep, " +
             overLimit(&Limits::maxRegionDepth, limits_.maxRegionDepth));
      advance();
      while (isKeyword("graph"))
        parseGraph(op->addRegion(), depth + 1);
      expect(Tok::RBrace, "to close the region list of '" + opName + "' (regions start with 'graph')");
    }
    for (unsigned i = 0; i < resultNames.size(); ++i)
      scopes_.back()[resultNames[i].text].value = op->result(i);
  }

  // --- attributes -------------------------------------------------------------------------------
  void parseAttributes(const OpInfo &info, AttrMap &attrs, std::vector<PendingBlob> &blobs) {
    advance(); // '{'
    if (consumeIf(Tok::RBrace))
      return;
    while (true) {
      if (tok_.kind != Tok::Ident)
        fail("expected an attribute name, found " + describe(tok_));
      std::string name = tok_.text;
      const AttrSpec *spec = info.findAttr(name);
      if (!spec)
        fail("unknown attribute '" + name + "' for op '" + std::string(info.name) + "'");
      if (attrs.count(name))
        fail("duplicate attribute '" + name + "'");
      advance();
      expect(Tok::Equal, "after attribute name '" + name + "'");
      std::string what = "attribute '" + name + "' of '" + std::string(info.name) + "' expects " +
                         std::string(attrKindName(spec->kind));
      attrs[name] = parseAttrValue(spec->kind, name, what, blobs, spec->form == AttrForm::Dim);
      if (!consumeIf(Tok::Comma))
        break;
    }
    expect(Tok::RBrace, "after attributes");
  }

  [[noreturn]] void wrongKind(const std::string &what) { fail(what + ", found " + describe(tok_)); }

  int64_t parseInt(const std::string &what) {
    if (tok_.kind != Tok::Integer)
      wrongKind(what);
    int64_t v = 0;
    const std::string &s = tok_.text;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size())
      fail("integer " + s + " does not fit in 64 bits");
    advance();
    return v;
  }

  // A float literal: number, inf, -inf or nan. Returned as text for the caller's precision.
  std::string floatText(const std::string &what) {
    std::string s;
    if (tok_.kind == Tok::Minus) {
      advance();
      if (!isKeyword("inf"))
        fail("expected 'inf' after '-', found " + describe(tok_));
      s = "-inf";
    } else if (tok_.kind == Tok::Integer || tok_.kind == Tok::Float || isKeyword("inf") ||
               isKeyword("nan")) {
      s = tok_.text;
    } else {
      wrongKind(what);
    }
    return s; // the caller converts, then advances
  }

  template <typename F> F convertFloat(const std::string &s, std::string_view dtype) {
    F v{};
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size())
      fail("value " + s + " is out of range for " + std::string(dtype));
    advance();
    return v;
  }

  double parseDouble(const std::string &what) { return convertFloat<double>(floatText(what), "f64"); }

  Attribute parseAttrValue(AttrKind kind, const std::string &name, const std::string &what,
                           std::vector<PendingBlob> &blobs, bool oneDim = false) {
    switch (kind) {
    case AttrKind::Int: return parseInt(what);
    case AttrKind::Float: return parseDouble(what);
    case AttrKind::String: {
      if (tok_.kind != Tok::String)
        wrongKind(what);
      std::string s = tok_.text;
      advance();
      return s;
    }
    case AttrKind::DType: {
      if (tok_.kind != Tok::Ident)
        wrongKind(what);
      auto dt = parseDType(tok_.text);
      if (!dt)
        fail("unknown element type '" + tok_.text + "'");
      advance();
      return *dt;
    }
    case AttrKind::Ints:
    case AttrKind::Floats: {
      if (tok_.kind != Tok::LBracket)
        wrongKind(what);
      advance();
      std::vector<int64_t> ints;
      std::vector<double> floats;
      if (tok_.kind != Tok::RBracket) {
        while (true) {
          if (kind == AttrKind::Ints)
            ints.push_back(parseInt(what + " (list of integers)"));
          else
            floats.push_back(parseDouble(what + " (list of floats)"));
          if (!consumeIf(Tok::Comma))
            break;
        }
      }
      expect(Tok::RBracket, "to close the list");
      if (kind == AttrKind::Ints)
        return ints;
      return floats;
    }
    case AttrKind::Tensor: return parseTensorLiteral(name, what, blobs);
    case AttrKind::Dims: {
      if (tok_.kind != Tok::LBracket && oneDim)
        return parseInt(what); // a single dim's static normal form
      if (tok_.kind != Tok::LBracket)
        wrongKind(what);
      std::vector<Dim> dims = lex_.scanDimListBody();
      advance();
      return Attribute::dims(dims);
    }
    }
    wrongKind(what);
  }

  TensorType parseLiteralType(size_t *typeOffset = nullptr) {
    expect(Tok::Colon, "and a type after the tensor literal");
    size_t at = tok_.offset;
    if (typeOffset)
      *typeOffset = at;
    TensorType t = parseType("after the tensor literal");
    if (!t.isStatic())
      failAt(at, "tensor literal type " + t.str() + " must have static dimensions");
    if (t.device != Device::CPU)
      failAt(at, "tensor literal type " + t.str() + " cannot name a device");
    return t;
  }

  Tensor parseTensorLiteral(const std::string &name, const std::string &what,
                            std::vector<PendingBlob> &blobs) {
    if (isKeyword("blob")) {
      advance();
      expect(Tok::Less, "after 'blob'");
      if (tok_.kind != Tok::String || tok_.text.empty())
        fail("expected a content hash string in blob<...>, found " + describe(tok_));
      PendingBlob ref{name, tok_.text, tok_.offset};
      advance();
      expect(Tok::Greater, "after the blob hash");
      TensorType t = parseLiteralType();
      blobs.push_back(ref);
      return Tensor::elided(t.dtype, t.staticShape(), ref.hash);
    }
    if (!isKeyword("dense"))
      wrongKind(what + " (dense<[...]> : tensor<...> or blob<\"hash\"> : tensor<...>)");
    advance();
    expect(Tok::Less, "after 'dense'");
    expect(Tok::LBracket, "to open the element list of dense<...>");
    // Elements are kept as tokens until the type (which follows the literal) is known.
    std::vector<Token> elems;
    if (tok_.kind != Tok::RBracket) {
      while (true) {
        if (tok_.kind == Tok::Minus) {
          Token minus = tok_;
          advance();
          if (!isKeyword("inf"))
            fail("expected 'inf' after '-', found " + describe(tok_));
          minus.kind = Tok::Float;
          minus.text = "-inf";
          elems.push_back(minus);
        } else if (tok_.kind == Tok::Integer || tok_.kind == Tok::Float || tok_.kind == Tok::Ident) {
          elems.push_back(tok_);
        } else {
          fail("expected a number, true/false, inf or nan in dense<[...]>, found " + describe(tok_));
        }
        advance();
        if (!consumeIf(Tok::Comma))
          break;
      }
    }
    expect(Tok::RBracket, "to close the element list of dense<...>");
    expect(Tok::Greater, "after the element list of dense<...>");
    size_t typeAt = 0;
    TensorType type = parseLiteralType(&typeAt);
    Shape shape = type.staticShape();
    if (static_cast<uint64_t>(numElements(shape)) != elems.size())
      failAt(typeAt, "dense literal has " + std::to_string(elems.size()) + " elements but " +
                         type.str() + " needs " + std::to_string(numElements(shape)));
    Tensor t(type.dtype, shape);
    for (size_t i = 0; i < elems.size(); ++i)
      storeElement(t, static_cast<int64_t>(i), elems[i]);
    return t;
  }

  template <typename T> static void store(Tensor &t, int64_t i, T v) {
    std::memcpy(static_cast<uint8_t *>(t.rawData()) + i * sizeof(T), &v, sizeof(T));
  }

  template <typename T> void storeInt(Tensor &t, int64_t i, const Token &e) {
    std::string_view dt = dtypeName(t.dtype());
    if (e.kind != Tok::Integer)
      failAt(e.offset, "expected an integer element (dtype " + std::string(dt) + "), found " +
                           describe(e));
    T v{};
    auto r = std::from_chars(e.text.data(), e.text.data() + e.text.size(), v);
    if (r.ec != std::errc() || r.ptr != e.text.data() + e.text.size())
      failAt(e.offset, "value " + e.text + " is out of range for " + std::string(dt));
    store(t, i, v);
  }

  void storeElement(Tensor &t, int64_t i, const Token &e) {
    DType dt = t.dtype();
    if (dt == DType::Bool) {
      if (e.kind != Tok::Ident || (e.text != "true" && e.text != "false"))
        failAt(e.offset, "expected true or false element (dtype bool), found " + describe(e));
      store<uint8_t>(t, i, e.text == "true");
      return;
    }
    if (isFloat(dt)) {
      bool word = e.kind == Tok::Ident && (e.text == "inf" || e.text == "nan");
      if (e.kind != Tok::Integer && e.kind != Tok::Float && !word)
        failAt(e.offset, "expected a number, inf or nan element (dtype " +
                             std::string(dtypeName(dt)) + "), found " + describe(e));
      // convertFloat reports at and advances past the current token; elements are already
      // consumed, so convert here directly.
      auto conv = [&](auto &out) {
        auto r = std::from_chars(e.text.data(), e.text.data() + e.text.size(), out);
        if (r.ec != std::errc() || r.ptr != e.text.data() + e.text.size())
          failAt(e.offset, "value " + e.text + " is out of range for " + std::string(dtypeName(dt)));
      };
      if (dt == DType::F64) {
        double v;
        conv(v);
        store(t, i, v);
      } else {
        float v;
        conv(v);
        if (dt == DType::F32)
          store(t, i, v);
        else
          store<uint16_t>(t, i, dt == DType::F16 ? floatToHalf(v) : floatToBf16(v));
      }
      return;
    }
    switch (dt) {
    case DType::I8: storeInt<int8_t>(t, i, e); return;
    case DType::I16: storeInt<int16_t>(t, i, e); return;
    case DType::I32: storeInt<int32_t>(t, i, e); return;
    case DType::I64: storeInt<int64_t>(t, i, e); return;
    case DType::U8: storeInt<uint8_t>(t, i, e); return;
    case DType::U16: storeInt<uint16_t>(t, i, e); return;
    case DType::U32: storeInt<uint32_t>(t, i, e); return;
    case DType::U64: storeInt<uint64_t>(t, i, e); return;
    default: return; // floats and bool handled above
    }
  }

  // --- blob section -----------------------------------------------------------------------------
  struct BlobData {
    std::shared_ptr<Buffer> bytes;
    size_t offset;
  };

  void parseBlobSection() {
    advance();
    expect(Tok::LBrace, "after 'blobs'");
    if (tok_.kind != Tok::RBrace) {
      while (true) {
        if (tok_.kind != Tok::String)
          fail("expected a blob hash string, found " + describe(tok_));
        std::string hash = tok_.text;
        size_t at = tok_.offset;
        if (blobData_.count(hash))
          fail("duplicate blob \"" + hash + "\"");
        advance();
        expect(Tok::Colon, "after the blob hash");
        if (tok_.kind != Tok::String)
          fail("expected blob data as a \"0x...\" hex string, found " + describe(tok_));
        blobData_[hash] = {decodeHex(tok_.text), at};
        advance();
        if (!consumeIf(Tok::Comma))
          break;
      }
    }
    expect(Tok::RBrace, "to close the blobs section");
  }

  std::shared_ptr<Buffer> decodeHex(const std::string &s) {
    if (s.size() < 2 || s[0] != '0' || s[1] != 'x' || s.size() % 2 != 0)
      fail("blob data must be \"0x\" followed by an even number of hex digits");
    auto buf = std::make_shared<Buffer>((s.size() - 2) / 2);
    auto hexValue = [](char c) {
      return c >= '0' && c <= '9' ? c - '0'
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                    : -1;
    };
    for (size_t i = 0; i < buf->size(); ++i) {
      int hi = hexValue(s[2 + 2 * i]), lo = hexValue(s[3 + 2 * i]);
      if (hi < 0 || lo < 0)
        fail("blob data contains a non-hex character");
      buf->data()[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    return buf;
  }

  // Fills every blob reference that has data; the others stay elided (no bytes).
  void resolveBlobs() {
    for (const BlobRef &ref : blobRefs_) {
      auto it = blobData_.find(ref.hash);
      if (it == blobData_.end())
        continue;
      const Tensor &elided = ref.op->attr(ref.attrName).getTensor();
      int64_t elems = elided.numElements();
      size_t need = 0;
      if (elems < 0 || __builtin_mul_overflow(static_cast<uint64_t>(elems),
                                              dtypeSize(elided.dtype()), &need) ||
          need != it->second.bytes->size())
        failAt(it->second.offset, "blob \"" + ref.hash + "\" holds " +
                                      std::to_string(it->second.bytes->size()) +
                                      " bytes but its use at " + location(ref.offset) +
                                      " needs " + std::to_string(need) + " bytes");
      Tensor t(elided.dtype(), elided.shape(), it->second.bytes);
      if (t.contentHash() != ref.hash)
        failAt(it->second.offset, "blob data does not match its hash \"" + ref.hash +
                                      "\" (content hash is " + t.contentHash() + ")");
      ref.op->setAttr(ref.attrName, std::move(t));
    }
  }

  std::string_view src_;
  Lexer lex_;
  Token tok_;
  std::vector<Scope> scopes_;
  std::vector<BlobRef> blobRefs_;
  std::map<std::string, BlobData> blobData_;
  const Limits limits_ = processLimits();
  int64_t numOps_ = 0;
};

} // namespace

llvm::Expected<std::unique_ptr<Graph>> parseGraph(llvm::StringRef text, llvm::StringRef filename) {
  Parser parser(std::string_view(text.data(), text.size()));
  try {
    return parser.parseFile();
  } catch (const TextError &e) {
    auto [line, col] = parser.lineCol(e.offset);
    return makeError(filename.str() + ":" + std::to_string(line) + ":" + std::to_string(col) +
                     ": error: " + e.what());
  } catch (const std::exception &e) { // e.g. allocation failure for an absurd dense literal
    return makeError(filename.str() + ": error: " + e.what());
  }
}

llvm::Expected<std::unique_ptr<Graph>> parseGraphFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer)
    return makeError(path.str() + ": error: cannot read file: " + buffer.getError().message());
  return parseGraph((*buffer)->getBuffer(), path == "-" ? "<stdin>" : path);
}

} // namespace strata
