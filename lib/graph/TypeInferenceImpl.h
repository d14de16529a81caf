// Private helpers shared by the TypeInference*.cpp files (one per op family) and the verifier.
//
// Inference code throws InferError internally; the public entry points in TypeInference.cpp turn
// it into an llvm::Error at the boundary.
#pragma once
#include "strata/graph/TypeInference.h"

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::infer {

struct InferError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string &msg) { throw InferError(msg); }

// Result of inference plus the symbols it had to invent (e.g. reshape's "-1" absorbing a
// symbolic dim with a ratio). The verifier accepts any symbolic dim in place of a fresh one.
struct Inferred {
  std::vector<TensorType> types;
  std::set<std::string> freshSymbols;
};

// What one family's inference function sees.
struct InferContext {
  OpKind kind;
  const std::vector<TensorType> &operands;
  const AttrMap &attrs;
  std::set<std::string> *freshSymbols;

  const TensorType &operand(unsigned i) const { return operands[i]; }
  size_t numOperands() const { return operands.size(); }
  int64_t rank(unsigned i) const { return operands[i].rank(); }

  // Attribute getters; attributes were already checked for presence and kind, so a missing one
  // is an optional attribute and gets `dflt`.
  int64_t intAttr(const char *name, int64_t dflt = 0) const;
  double floatAttr(const char *name, double dflt = 0) const;
  const std::string &stringAttr(const char *name) const;
  std::vector<int64_t> intsAttr(const char *name) const;
  std::vector<double> floatsAttr(const char *name) const;

  // A 0/1 flag attribute.
  bool flagAttr(const char *name) const;
  // String attribute that must be one of `allowed`.
  const std::string &enumAttr(const char *name, std::initializer_list<const char *> allowed) const;
  // Normalizes an axis attribute against `rank` (allowing [-rank, rank)).
  int64_t axisAttr(const char *name, int64_t rank) const;
};

// Normalizes `axis` into [0, rank); `what` names it in the error.
int64_t normalizeAxis(int64_t axis, int64_t rank, const std::string &what);
// "[1, 2, 3]"
std::string intsToString(const std::vector<int64_t> &v);
std::string dimsToString(const std::vector<Dim> &dims);

// Shared operand checks.
void requireSameDType(const InferContext &c, unsigned a, unsigned b);
void requireDType(const InferContext &c, unsigned i, bool ok, const char *expected);
void requireIndexDType(const InferContext &c, unsigned i);
void requireRankAtLeast(const InferContext &c, unsigned i, int64_t rank);
// Static size of dim `d` of operand `i`; errors naming `what` when symbolic.
int64_t staticDim(const InferContext &c, unsigned i, int64_t d, const char *what);

// Families (one .cpp each). Each returns the result types for its ops.
std::vector<TensorType> inferElementwise(const InferContext &c);
std::vector<TensorType> inferDataMovement(const InferContext &c);
std::vector<TensorType> inferStructured(const InferContext &c);
std::vector<TensorType> inferEinsum(const InferContext &c);
// TypeInferenceLayout.cpp: relayout and conv in a blocked layout (layout = "NCHW<c>c").
bool usesBlockedLayout(OpKind kind, const AttrMap &attrs);
std::vector<TensorType> inferLayout(const InferContext &c);

// Full inference including arity and attribute checks; throws InferError.
Inferred inferDetailed(OpKind kind, const std::vector<TensorType> &operands, const AttrMap &attrs);

} // namespace strata::infer
