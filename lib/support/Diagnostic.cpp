// Rendering of diagnostics.
#include "strata/support/Diagnostic.h"

namespace strata {

std::string Diagnostic::str() const {
  std::string s;
  auto part = [&](const std::string &p) {
    if (!p.empty())
      s += p + ": ";
  };
  if (severity == Severity::Warning)
    s += "warning: ";
  else if (severity == Severity::Note)
    s += "note: ";
  part(file);
  part(phase);
  std::string where;
  if (!op.empty())
    where = "op '" + op + "'";
  if (!node.empty())
    where += (where.empty() ? "node \"" : " (node \"") + node + (op.empty() ? "\"" : "\")");
  else if (!value.empty())
    where += (where.empty() ? "%" : " (result %") + value + (op.empty() ? "" : ")");
  part(where);
  return s + message;
}

void Diagnostic::addContext(const Diagnostic &c) {
  auto fill = [](std::string &mine, const std::string &theirs) {
    if (mine.empty())
      mine = theirs;
  };
  fill(file, c.file);
  fill(phase, c.phase);
  // Op and location go together: an inner report naming an op keeps its own node.
  if (op.empty() && node.empty() && value.empty()) {
    op = c.op;
    node = c.node;
    value = c.value;
  }
}

} // namespace strata
