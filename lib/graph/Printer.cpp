// Printer for the graph IR text form. The grammar is documented in docs/graph-ir.md; Parser.cpp
// reads exactly what this writes, and print(parse(print(g))) == print(g).
#include "strata/graph/Printer.h"

#include "Lexer.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

namespace strata {

namespace {

using text::appendQuoted;
using text::isBareIdentifier;
using text::isDecimalNumber;

// Makes sure a number printed for a float-kind literal reads back as a float.
void appendFloatText(std::string &out, const char *begin, const char *end) {
  std::string_view s(begin, static_cast<size_t>(end - begin));
  out.append(s);
  if (s.find_first_of(".e") == std::string_view::npos)
    out += ".0";
}

bool appendNonFinite(std::string &out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return true;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return true;
  }
  return false;
}

// Shortest text that parses back (std::from_chars) to exactly `v`.
void appendDouble(std::string &out, double v) {
  if (appendNonFinite(out, v))
    return;
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  appendFloatText(out, buf, r.ptr);
}

void appendFloat(std::string &out, float v) {
  if (appendNonFinite(out, v))
    return;
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  appendFloatText(out, buf, r.ptr);
}

// Shortest decimal that the parser (float, then rounded to half precision) maps to the same bits.
void appendHalfLike(std::string &out, uint16_t bits, bool isBf16) {
  float v = isBf16 ? bf16ToFloat(bits) : halfToFloat(bits);
  if (appendNonFinite(out, v))
    return;
  char buf[64];
  for (int precision = 1; precision <= 9; ++precision) {
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, precision);
    float back = 0;
    std::from_chars(buf, r.ptr, back);
    if ((isBf16 ? floatToBf16(back) : floatToHalf(back)) == bits || precision == 9) {
      // Respell the float those digits denote in its shortest form ("65500", not "6.55e+04").
      appendFloat(out, back);
      return;
    }
  }
}

template <typename T> T load(const Tensor &t, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t *>(t.rawData()) + i * sizeof(T), sizeof(T));
  return v;
}

void appendElement(std::string &out, const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::F32: appendFloat(out, load<float>(t, i)); return;
  case DType::F64: appendDouble(out, load<double>(t, i)); return;
  case DType::F16: appendHalfLike(out, load<uint16_t>(t, i), false); return;
  case DType::BF16: appendHalfLike(out, load<uint16_t>(t, i), true); return;
  case DType::Bool: out += load<uint8_t>(t, i) ? "true" : "false"; return;
  case DType::I8: out += std::to_string(load<int8_t>(t, i)); return;
  case DType::I16: out += std::to_string(load<int16_t>(t, i)); return;
  case DType::I32: out += std::to_string(load<int32_t>(t, i)); return;
  case DType::I64: out += std::to_string(load<int64_t>(t, i)); return;
  case DType::U8: out += std::to_string(load<uint8_t>(t, i)); return;
  case DType::U16: out += std::to_string(load<uint16_t>(t, i)); return;
  case DType::U32: out += std::to_string(load<uint32_t>(t, i)); return;
  case DType::U64: out += std::to_string(load<uint64_t>(t, i)); return;
  }
}

// Assigns every value of a graph tree its printed name. Names live in one namespace for the
// whole tree (regions included), so a reader never has to think about shadowing.
class Namer {
public:
  explicit Namer(const Graph &root) {
    std::vector<const Value *> order;
    collect(root, order);
    // Pass 1: hinted names, first occurrence wins.
    std::set<std::string> taken;
    for (const Value *v : order)
      if (!v->name().empty() && taken.insert(v->name()).second)
        names_[v] = spell(v->name());
    // Pass 2: the rest get the next free number, skipping numbers used as names.
    int64_t counter = 0;
    for (const Value *v : order) {
      if (names_.count(v))
        continue;
      std::string n;
      do
        n = std::to_string(counter++);
      while (taken.count(n));
      names_[v] = "%" + n;
    }
  }

  const std::string &name(const Value *v) const {
    static const std::string unknown = "%<<unknown value>>";
    auto it = names_.find(v);
    return it == names_.end() ? unknown : it->second; // a value outside the tree (malformed IR)
  }

private:
  // A hinted name prints bare when it is an identifier; numbers and everything else are quoted
  // so they cannot be confused with the printer's own numbering.
  static std::string spell(const std::string &hint) {
    std::string s = "%";
    if (isBareIdentifier(hint))
      s += hint;
    else
      appendQuoted(s, hint);
    return s;
  }

  static void collect(const Graph &g, std::vector<const Value *> &order) {
    for (unsigned i = 0; i < g.numInputs(); ++i)
      order.push_back(g.input(i));
    for (const Op &op : g.ops()) {
      for (unsigned r = 0; r < op.numResults(); ++r)
        order.push_back(op.result(r));
      for (unsigned r = 0; r < op.numRegions(); ++r)
        collect(op.region(r), order);
    }
  }

  std::unordered_map<const Value *, std::string> names_;
};

class Printer {
public:
  Printer(const Namer &namer, const PrintOptions &opts) : namer_(namer), opts_(opts) {}

  void graph(const Graph &g, int indent) {
    pad(indent);
    out_ += "graph @";
    appendName(g.name());
    out_ += '(';
    for (unsigned i = 0; i < g.numInputs(); ++i) {
      if (i)
        out_ += ", ";
      out_ += namer_.name(g.input(i));
      out_ += ": ";
      out_ += g.input(i)->type().str();
    }
    out_ += ") -> (";
    for (unsigned i = 0; i < g.numOutputs(); ++i) {
      if (i)
        out_ += ", ";
      appendName(g.outputName(i));
      out_ += ": ";
      out_ += g.output(i)->type().str();
    }
    out_ += ") {\n";
    for (const Op &op : g.ops()) {
      this->op(op, indent + 2);
      out_ += '\n';
    }
    pad(indent + 2);
    out_ += "return";
    for (unsigned i = 0; i < g.numOutputs(); ++i) {
      out_ += i ? ", " : " ";
      out_ += namer_.name(g.output(i));
    }
    out_ += '\n';
    pad(indent);
    out_ += "}\n";
  }

  // One op without a trailing newline; regions span several lines.
  void op(const Op &op, int indent) {
    pad(indent);
    for (unsigned i = 0; i < op.numResults(); ++i) {
      if (i)
        out_ += ", ";
      out_ += namer_.name(op.result(i));
    }
    if (op.numResults())
      out_ += " = ";
    out_ += op.opName();
    if (op.numOperands()) {
      out_ += '(';
      for (unsigned i = 0; i < op.numOperands(); ++i) {
        if (i)
          out_ += ", ";
        out_ += op.operand(i) ? namer_.name(op.operand(i)) : std::string("%<<null>>");
      }
      out_ += ')';
    }
    if (!op.attrs().empty()) {
      out_ += " {";
      bool first = true;
      for (const auto &[name, attr] : op.attrs()) {
        out_ += first ? "" : ", ";
        first = false;
        out_ += name;
        out_ += " = ";
        attribute(attr);
      }
      out_ += '}';
    }
    out_ += " : ";
    if (op.numResults() == 0)
      out_ += "()";
    for (unsigned i = 0; i < op.numResults(); ++i) {
      if (i)
        out_ += ", ";
      out_ += op.result(i)->type().str();
    }
    if (opts_.printLocations && !op.location().empty()) {
      out_ += " loc(";
      appendQuoted(out_, op.location());
      out_ += ')';
    }
    if (op.numRegions()) {
      out_ += " {\n";
      for (unsigned r = 0; r < op.numRegions(); ++r)
        graph(op.region(r), indent + 2);
      pad(indent);
      out_ += '}';
    }
  }

  void blobSection() {
    if (blobs_.empty())
      return;
    static const char hex[] = "0123456789abcdef";
    out_ += "\nblobs {\n";
    bool first = true;
    for (const auto &[hash, tensor] : blobs_) {
      if (!first)
        out_ += ",\n";
      first = false;
      out_ += "  ";
      appendQuoted(out_, hash);
      out_ += ": \"0x";
      const auto *bytes = static_cast<const uint8_t *>(tensor.rawData());
      size_t n = tensor.byteSize();
      out_.reserve(out_.size() + 2 * n + 8);
      for (size_t i = 0; i < n; ++i) {
        out_ += hex[bytes[i] >> 4];
        out_ += hex[bytes[i] & 15];
      }
      out_ += '"';
    }
    out_ += "\n}\n";
  }

  std::string &text() { return out_; }

private:
  void pad(int n) { out_.append(static_cast<size_t>(n), ' '); }

  void appendName(const std::string &name) {
    if (isBareIdentifier(name))
      out_ += name;
    else
      appendQuoted(out_, name);
  }

  void attribute(const Attribute &a) {
    switch (a.kind()) {
    case AttrKind::Int: out_ += std::to_string(a.getInt()); return;
    case AttrKind::Float: appendDouble(out_, a.getFloat()); return;
    case AttrKind::String: appendQuoted(out_, a.getString()); return;
    case AttrKind::DType: out_ += dtypeName(a.getDType()); return;
    case AttrKind::Ints:
      out_ += '[';
      for (size_t i = 0; i < a.getInts().size(); ++i)
        out_ += (i ? ", " : "") + std::to_string(a.getInts()[i]);
      out_ += ']';
      return;
    case AttrKind::Floats:
      out_ += '[';
      for (size_t i = 0; i < a.getFloats().size(); ++i) {
        out_ += i ? ", " : "";
        appendDouble(out_, a.getFloats()[i]);
      }
      out_ += ']';
      return;
    case AttrKind::Tensor: tensor(a.getTensor()); return;
    case AttrKind::Dims: // as in types: ?name, ?(formula) or a size
      out_ += '[';
      for (size_t i = 0; i < a.getDims().size(); ++i)
        out_ += (i ? ", " : "") + a.getDims()[i].str();
      out_ += ']';
      return;
    }
  }

  void tensor(const Tensor &t) {
    if (t.valid() && t.numElements() <= opts_.inlineElementLimit) {
      out_ += "dense<[";
      for (int64_t i = 0, n = t.numElements(); i < n; ++i) {
        if (i)
          out_ += ", ";
        appendElement(out_, t, i);
      }
      out_ += "]>";
    } else {
      std::string hash = t.contentHash();
      out_ += "blob<";
      appendQuoted(out_, hash);
      out_ += '>';
      if (opts_.emitBlobs && t.valid())
        blobs_.emplace(hash, t);
    }
    out_ += " : ";
    out_ += TensorType::fromShape(t.dtype(), t.shape()).str();
  }

  const Namer &namer_;
  const PrintOptions &opts_;
  std::string out_;
  std::map<std::string, Tensor> blobs_; // elided constants to emit, by hash (deduplicated)
};

} // namespace

std::string printGraph(const Graph &g, const PrintOptions &opts) {
  Namer namer(g);
  Printer printer(namer, opts);
  printer.graph(g, 0);
  printer.blobSection();
  return std::move(printer.text());
}

void printGraph(const Graph &g, llvm::raw_ostream &os, const PrintOptions &opts) {
  os << printGraph(g, opts);
}

std::string printOp(const Op &op) {
  // Names depend on the whole tree, so number from the outermost graph.
  const Graph *root = op.parentGraph();
  while (root && root->parentOp() && root->parentOp()->parentGraph())
    root = root->parentOp()->parentGraph();
  PrintOptions opts;
  if (!root) {
    Graph empty;
    Namer namer(empty);
    Printer printer(namer, opts);
    printer.op(op, 0);
    return std::move(printer.text());
  }
  Namer namer(*root);
  Printer printer(namer, opts);
  printer.op(op, 0);
  return std::move(printer.text());
}

} // namespace strata
