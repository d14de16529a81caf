// Creates ops with result types inferred from the op table, so callers (the importer, passes)
// never spell types by hand. Inference failures are reported as errors naming the op.
#pragma once
#include "strata/graph/Graph.h"
#include "strata/graph/TypeInference.h"

#include <stdexcept>

namespace strata {

// Thrown by Builder when an op cannot be built (bad operands or attributes).
struct BuildError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Builder {
public:
  explicit Builder(Graph &g) : g_(&g) {}
  // Ops are inserted at the end of the graph, or before `insertBefore` when set.
  void setInsertBefore(Op *op) { before_ = op; }
  // Location stamped on every op created from now on (e.g. the ONNX node being imported).
  void setLocation(std::string loc) { loc_ = std::move(loc); }
  const std::string &location() const { return loc_; }

  // Creates `kind` with inferred result types, its axis attributes brought into their normal form
  // (NormalForm.h). Throws BuildError on failure.
  Op *create(OpKind kind, const std::vector<Value *> &operands, AttrMap attrs = {});
  // Single-result convenience.
  Value *value(OpKind kind, const std::vector<Value *> &operands, AttrMap attrs = {}) {
    return create(kind, operands, std::move(attrs))->result(0);
  }
  Value *constant(Tensor t);
  Value *scalar(DType dt, double v) { return constant(Tensor::scalar(dt, v)); }

  Graph &graph() { return *g_; }
  // Builds into `g` from now on (at its end); returns the graph it built into. The importer
  // builds an ONNX branch into a region this way.
  Graph &setGraph(Graph &g) {
    Graph &old = *g_;
    g_ = &g;
    before_ = nullptr;
    return old;
  }
  Op *insertBefore() const { return before_; }

private:
  Graph *g_;
  Op *before_ = nullptr;
  std::string loc_;
};

} // namespace strata
