// The status a run's kernels report failed checks through (docs/codegen.md, "Checked indices").
// An index read from data (Gather, GatherElements, GatherND, ScatterElements, ScatterND) is
// compared with its range by a loop IR `check_index`; generated code that finds one out of range
// calls strata_index_error with the status it was given (the last kernel argument), uses an
// in-range index instead so nothing outside a buffer is touched, and the executor fails the run
// after that kernel with the first failure recorded. LLVM-free: part of every AOT library.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

namespace strata {

// One per run. The first failing check (across all threads) claims `failed` and fills the rest.
struct KernelStatus {
  std::atomic<int64_t> failed{0}; // 0: no check failed; 1: claimed; 2: details written
  const char *site = nullptr;     // static text of the check: op, node and what was indexed
  int64_t value = 0, lo = 0, hi = 0;
  // The failure was a kernel's scratch buffer that could not be allocated (`value` bytes; `site`
  // names the kernel and the buffer), not an index.
  bool outOfMemory = false;

  bool ok() const { return failed.load(std::memory_order_acquire) == 0; }
  void reset() {
    failed.store(0, std::memory_order_relaxed);
    outOfMemory = false;
  }
  // "<site>: index 5 is out of range [-3, 3)"
  std::string message() const;
};

// The one message of a failed index check, also used by the interpreters.
std::string indexErrorMessage(const std::string &site, int64_t value, int64_t lo, int64_t hi);

} // namespace strata

// Called by generated code whose local buffer too large for the stack could not be allocated
// (the kernel then skips what would have used it and the run fails).
extern "C" void strata_alloc_error(strata::KernelStatus *status, const char *site, int64_t bytes);
// Called by generated code on a failed check_index (never when all indices are in range).
extern "C" void strata_index_error(strata::KernelStatus *status, const char *site, int64_t value,
                                   int64_t lo, int64_t hi);
