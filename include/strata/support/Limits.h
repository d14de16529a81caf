// Resource limits, checked before anything is allocated or built: a hostile model or input is
// refused with an error naming the limit, not an out-of-memory kill or an hour of compiling.
// The defaults (docs/cli.md, "Limits") are far beyond any real model; `strata --limit NAME=N`
// and setProcessLimits change them for the compiler, strata_model_set_limit for one loaded
// library. Plain C++: the runtime and the AOT libraries' C API use it too.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace strata {

struct Limits {
  int64_t maxRank = 32;                         // dims of any tensor
  int64_t maxTensorElements = int64_t(1) << 32; // elements of any one tensor
  int64_t maxConstantBytes = int64_t(16) << 30; // all constants (weights) of a model together
  int64_t maxArenaBytes = int64_t(16) << 30;    // one run's intermediate memory
  int64_t maxOps = 1'000'000;                   // ops of a graph, nested regions included
  int64_t maxRegionDepth = 64;                  // regions nested in regions

  bool operator==(const Limits &) const = default;
};

// One entry per Limits field: its name on the command line and in the C API, what it bounds,
// and whether a compiled model checks it at run time (the others are fixed at compile time).
struct LimitInfo {
  const char *name;
  int64_t Limits::*field;
  const char *description;
  bool runTime;
};
std::span<const LimitInfo> limitTable();
const LimitInfo *findLimit(const std::string &name);

// Parses NAME=VALUE (VALUE a non-negative integer, optionally with a K/M/G/T suffix meaning
// powers of 1024) into `limits`; returns the reason on bad text.
std::optional<std::string> parseLimitAssignment(const std::string &text, Limits &limits);

// The compiler's limits, one set per process (like LLVM's command-line options): the importer,
// parsers, type inference, the verifier and the interpreter read them. Set before compiling;
// changing them while another thread compiles is allowed but that compile may see either set.
Limits processLimits();
void setProcessLimits(const Limits &limits);

// "over the max-ops limit of 1000000": the tail every limit error ends with, so each names the
// limit the user can raise.
std::string overLimit(int64_t Limits::*field, int64_t limitValue);

// A count that saturates at INT64_MAX (numElements, byte totals) as text: "2^63 or more" there.
std::string saturatedCountText(int64_t n);
// "has N elements, over the max-tensor-elements limit of L": how every oversized tensor is
// refused, after what names the tensor.
std::string tooManyElements(int64_t n, int64_t limitValue);

} // namespace strata
