// Resource limits (Limits.h).
#include "strata/support/Limits.h"

#include <atomic>
#include <cctype>
#include <limits>

namespace strata {

namespace {

constexpr LimitInfo kLimits[] = {
    {"max-rank", &Limits::maxRank, "dims of any tensor", false},
    {"max-tensor-elements", &Limits::maxTensorElements, "elements of any one tensor", true},
    {"max-constant-bytes", &Limits::maxConstantBytes, "bytes of all constants together", false},
    {"max-arena-bytes", &Limits::maxArenaBytes, "bytes of one run's intermediate memory", true},
    {"max-ops", &Limits::maxOps, "ops of a graph, nested regions included", false},
    {"max-region-depth", &Limits::maxRegionDepth, "regions nested in regions", false},
};
constexpr size_t kNumLimits = sizeof(kLimits) / sizeof(kLimits[0]);

// The process-wide set, one atomic per field so readers on any thread see whole values;
// constant-initialized, so it holds the defaults before any static constructor runs.
constexpr Limits kDefaults{};
static_assert(kNumLimits == 6, "one initializer per limit below");
std::atomic<int64_t> gValues[kNumLimits] = {
    kDefaults.*kLimits[0].field, kDefaults.*kLimits[1].field, kDefaults.*kLimits[2].field,
    kDefaults.*kLimits[3].field, kDefaults.*kLimits[4].field, kDefaults.*kLimits[5].field};

} // namespace

std::span<const LimitInfo> limitTable() { return {kLimits, kNumLimits}; }

const LimitInfo *findLimit(const std::string &name) {
  for (const LimitInfo &l : kLimits)
    if (name == l.name)
      return &l;
  return nullptr;
}

std::optional<std::string> parseLimitAssignment(const std::string &text, Limits &limits) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return "expected NAME=VALUE, got '" + text + "'";
  std::string name = text.substr(0, eq), digits = text.substr(eq + 1);
  const LimitInfo *info = findLimit(name);
  if (!info) {
    std::string known;
    for (const LimitInfo &l : kLimits)
      known += (known.empty() ? "" : ", ") + std::string(l.name);
    return "unknown limit '" + name + "' (known: " + known + ")";
  }
  int shift = 0;
  if (!digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    default:
      break;
    }
    if (shift)
      digits.pop_back();
  }
  if (digits.empty())
    return "limit " + name + " needs a non-negative integer, got '" + text.substr(eq + 1) + "'";
  int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return "limit " + name + " needs a non-negative integer, got '" + text.substr(eq + 1) + "'";
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, c - '0', &value))
      return "limit " + name + " value '" + text.substr(eq + 1) + "' is too large";
  }
  if (shift && value > (std::numeric_limits<int64_t>::max() >> shift))
    return "limit " + name + " value '" + text.substr(eq + 1) + "' is too large";
  limits.*info->field = value << shift;
  return std::nullopt;
}

Limits processLimits() {
  Limits l;
  for (size_t i = 0; i < kNumLimits; ++i)
    l.*kLimits[i].field = gValues[i].load(std::memory_order_relaxed);
  return l;
}

void setProcessLimits(const Limits &limits) {
  for (size_t i = 0; i < kNumLimits; ++i)
    gValues[i].store(limits.*kLimits[i].field, std::memory_order_relaxed);
}

std::string overLimit(int64_t Limits::*field, int64_t limitValue) {
  for (const LimitInfo &l : kLimits)
    if (l.field == field)
      return "over the " + std::string(l.name) + " limit of " + std::to_string(limitValue);
  return "over a limit of " + std::to_string(limitValue);
}

std::string saturatedCountText(int64_t n) {
  return n == std::numeric_limits<int64_t>::max() ? "2^63 or more" : std::to_string(n);
}

std::string tooManyElements(int64_t n, int64_t limitValue) {
  return "has " + saturatedCountText(n) + " elements, " +
         overLimit(&Limits::maxTensorElements, limitValue);
}

} // namespace strata
