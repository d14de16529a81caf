// Einsum equation terms, shared by type inference, the interpreter kernel and the lowering so
// that all three accept the same equations: a term is letters plus at most one "...".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct EinsumTerm {
  std::string letters;      // in order, '.' marks where the ellipsis sits
  bool hasEllipsis = false;

  // The number of letters, the ellipsis not counted.
  int64_t numLetters() const {
    return static_cast<int64_t>(letters.size()) - (hasEllipsis ? 1 : 0);
  }
};

// The comma-separated input terms of an equation's left-hand side, empty ones kept: n commas
// give n + 1 terms.
std::vector<std::string> splitEinsumInputs(std::string_view lhs);

// Parses one term (spaces already removed). On failure returns nullopt and sets `error` to a
// message naming the term ("malformed ellipsis in term '...i'"), for the caller to prefix with
// its own context and raise its own way.
std::optional<EinsumTerm> parseEinsumTerm(std::string_view text, std::string &error);

// Axis labels once a term is expanded: a letter keeps its char code, the k-th ellipsis dim
// (counted from the left of the widest ellipsis among the operands) is kEinsumEllipsisLabel + k.
constexpr int kEinsumEllipsisLabel = 1000;

// One label per axis of a term whose ellipsis covers `ellipsisDims` dims, right-aligned within
// the widest ellipsis of `globalEllipsis` dims.
std::vector<int> expandEinsumTerm(const EinsumTerm &t, int64_t ellipsisDims,
                                  int64_t globalEllipsis);

// An equation (spaces allowed) labelled for operands of `ranks`: each operand's axis labels, the
// result's (the explicit output, or numpy's implicit one: broadcast dims, then labels used
// once in ASCII order). Nullopt with `error` set when a term is malformed or does not match its
// operand's rank.
struct EinsumLabels {
  std::vector<std::vector<int>> operands;
  std::vector<int> result;
};
std::optional<EinsumLabels> labelEinsum(std::string_view equation,
                                        const std::vector<int64_t> &ranks, std::string &error);

} // namespace strata
