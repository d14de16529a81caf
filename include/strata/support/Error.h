// The compiler libraries' error path: an llvm::Error carrying a Diagnostic (Diagnostic.h).
// Every public function of a compiler rung that can fail returns llvm::Error or llvm::Expected
// built here; exceptions used inside a rung are caught at its boundary. llvm::toString(err)
// renders the diagnostic. Header-only, so support itself stays LLVM-free (the runtime never
// includes this file).
#pragma once
#include "strata/support/Diagnostic.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace strata {

class DiagnosticError : public llvm::ErrorInfo<DiagnosticError> {
public:
  static inline char ID = 0;
  explicit DiagnosticError(Diagnostic d) : diag_(std::move(d)) {}
  const Diagnostic &diagnostic() const { return diag_; }
  Diagnostic &diagnostic() { return diag_; }
  void log(llvm::raw_ostream &os) const override { os << diag_.str(); }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  Diagnostic diag_;
};

inline llvm::Error makeError(Diagnostic d) {
  return llvm::make_error<DiagnosticError>(std::move(d));
}

inline llvm::Error makeError(std::string message) {
  return makeError(Diagnostic::error(std::move(message)));
}

// Adds what `context` knows (file, phase, op and node) to every diagnostic in `err` that lacks
// it; other errors become diagnostics with their text as the message. Success stays success.
inline llvm::Error withContext(llvm::Error err, const Diagnostic &context) {
  if (!err)
    return err;
  llvm::Error out = llvm::Error::success();
  llvm::handleAllErrors(
      std::move(err),
      [&](DiagnosticError &e) {
        Diagnostic d = e.diagnostic();
        d.addContext(context);
        out = llvm::joinErrors(std::move(out), makeError(std::move(d)));
      },
      [&](const llvm::ErrorInfoBase &e) {
        Diagnostic d = Diagnostic::error(e.message());
        d.addContext(context);
        out = llvm::joinErrors(std::move(out), makeError(std::move(d)));
      });
  return out;
}

template <typename T>
llvm::Expected<T> withContext(llvm::Expected<T> value, const Diagnostic &context) {
  if (value)
    return value;
  return withContext(value.takeError(), context);
}

// The diagnostic of a failed runtime Status as an llvm::Error.
inline llvm::Error toError(const Status &s) {
  return s ? makeError(s.diagnostic()) : llvm::Error::success();
}

// Contexts for withContext.
inline Diagnostic inFile(std::string file) { return Diagnostic().inFile(std::move(file)); }
inline Diagnostic inPhase(std::string phase) { return Diagnostic().inPhase(std::move(phase)); }
inline Diagnostic atOp(std::string op, std::string node) {
  return Diagnostic().at(std::move(op), std::move(node));
}

} // namespace strata
