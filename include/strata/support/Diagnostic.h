// One error report for every rung: severity, where (file, phase, op, node or value) and what.
// The compiler libraries carry it inside an llvm::Error (support/Error.h); the LLVM-free runtime
// returns it in a Status. Either way a tool prints Diagnostic::str():
//   model.onnx: jit: op 'topk' (node "TopK_3"): lowering of op 'topk' is not implemented yet
#pragma once
#include <optional>
#include <string>
#include <utility>

namespace strata {

enum class Severity : uint8_t { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string file;    // the model, IR or data file, when known
  std::string phase;   // the rung or stage: "import", "verifier", "interp", "jit", "run", ...
  std::string op;      // the op's name (graph op, or ONNX op type at import)
  std::string node;    // the op's node name (ONNX node name / op location)
  std::string value;   // a value's name, when the op has no node name
  std::string message; // what is wrong, one line

  // Builders: Diagnostic::error("bad dim").inFile(path).at("conv", "Conv_3").
  static Diagnostic error(std::string message) {
    Diagnostic d;
    d.message = std::move(message);
    return d;
  }
  Diagnostic &&inFile(std::string f) && {
    file = std::move(f);
    return std::move(*this);
  }
  Diagnostic &&inPhase(std::string p) && {
    phase = std::move(p);
    return std::move(*this);
  }
  Diagnostic &&at(std::string opName, std::string nodeName) && {
    op = std::move(opName);
    node = std::move(nodeName);
    return std::move(*this);
  }
  Diagnostic &&atValue(std::string opName, std::string valueName) && {
    op = std::move(opName);
    value = std::move(valueName);
    return std::move(*this);
  }

  // "file: phase: op 'X' (node "N"): message", leaving out what is empty.
  std::string str() const;
  // Fills every field that is empty here from `context` (inner reports keep their detail).
  void addContext(const Diagnostic &context);
};

// The LLVM-free result of an operation that can fail: the runtime's error path. Like llvm::Error
// it is true when it holds an error: `if (Status s = exec.run(...)) report(s.diagnostic());`.
class [[nodiscard]] Status {
public:
  Status() = default; // success
  static Status error(Diagnostic d) { return Status(std::move(d)); }
  static Status error(std::string message) { return Status(Diagnostic::error(std::move(message))); }
  explicit operator bool() const { return diag_.has_value(); }
  const Diagnostic &diagnostic() const { return *diag_; }
  std::string message() const { return diag_ ? diag_->str() : std::string(); }

private:
  explicit Status(Diagnostic d) : diag_(std::move(d)) {}
  std::optional<Diagnostic> diag_;
};

} // namespace strata
