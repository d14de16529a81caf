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

  // While it lives, `b` builds at the end of `g`; then where it built before (the importer
  // builds an ONNX branch or loop body into a region this way).
  class Into {
  public:
    Into(Builder &b, Graph &g) : b_(b), graph_(b.g_), before_(b.before_) {
      b.g_ = &g;
      b.before_ = nullptr;
    }
    ~Into() {
      b_.g_ = graph_;
      b_.before_ = before_;
    }
    Into(const Into &) = delete;
    Into &operator=(const Into &) = delete;

  private:
    Builder &b_;
    Graph *graph_;
    Op *before_;
  };
  Op *insertBefore() const { return before_; }

private:
  Graph *g_;
  Op *before_ = nullptr;
  std::string loc_;
};

} // namespace strata
