// Private helpers shared by the TypeInference*.cpp files (one per op family) and the verifier.
//
// Inference code throws InferError internally; the public entry points in TypeInference.cpp turn
// it into an llvm::Error at the boundary.
#pragma once
#include "strata/graph/Ops.h"
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

// What one op's shape function sees.
struct InferContext {
  OpKind kind;
  const std::vector<TensorType> &operands;
  const AttrMap &attrs;
  std::set<std::string> *freshSymbols;

  const TensorType &operand(unsigned i) const { return operands[i]; }
  size_t numOperands() const { return operands.size(); }
  int64_t rank(unsigned i) const { return operands[i].rank(); }
  // The op's typed attribute accessors (Ops.h); attributes were checked for presence, kind and
  // normal form before the shape function runs.
  template <typename View> View view() const { return View(attrs); }
};

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
// A fresh symbol named after the symbols `from` (alphanumerics of each, '_'-joined) and `suffix`,
// recorded in c.freshSymbols: a dim only known once the result is computed.
// `key` names what the size is a function of (the dims it is computed from): the same key gives
// the same symbol, different keys (almost surely) different ones, so two results of unrelated
// sizes never share a symbol. Empty for sizes the graph names itself (data-dependent counts).
Dim freshSymbol(const InferContext &c, const std::vector<std::string> &from, const char *suffix,
                const std::string &key = "");
// Numpy broadcast of `a` and `b`; errors naming `what` and both shapes.
std::vector<Dim> broadcastOrFail(const std::vector<Dim> &a, const std::vector<Dim> &b,
                                 const std::string &what);

// The shape functions named by the op definitions (OpTable.def), one .cpp per family:
// TypeInference.cpp (elementwise, constant, kernel), TypeInferenceDataMovement.cpp,
// TypeInferenceStructured.cpp, TypeInferenceLayout.cpp (relayout, blocked conv),
// TypeInferenceEinsum.cpp.
using ShapeFn = std::vector<TensorType> (*)(const InferContext &);
#define OP(e, name, lo, hi, res, traits, dtypes, shape, ...)                                       \
  std::vector<TensorType> shape(const InferContext &c);
#include "strata/graph/OpTable.def"

// Conv in a blocked layout (TypeInferenceLayout.cpp): unblock, the plain rule, block the result.
std::vector<TensorType> inferBlockedConv(const InferContext &c, int64_t block);
std::vector<TensorType> inferPlainPool(const InferContext &c);
std::vector<TensorType> inferBlockedPool(const InferContext &c, int64_t block);
std::vector<TensorType> inferPlainConv(const InferContext &c);

// Full inference including arity and attribute checks; throws InferError.
Inferred inferDetailed(OpKind kind, const std::vector<TensorType> &operands, const AttrMap &attrs);

} // namespace strata::infer
