// The run status of generated code's checks (KernelStatus.h).
#include "strata/support/KernelStatus.h"

namespace strata {

std::string indexErrorMessage(const std::string &site, int64_t value, int64_t lo, int64_t hi) {
  return site + ": index " + std::to_string(value) + " is out of range [" + std::to_string(lo) +
         ", " + std::to_string(hi) + ")";
}

std::string KernelStatus::message() const {
  if (failed.load(std::memory_order_acquire) != 2)
    return "an index check failed";
  if (outOfMemory)
    return std::string(site ? site : "?") + ": out of memory allocating " +
           std::to_string(value) + " bytes of scratch";
  return indexErrorMessage(site ? site : "?", value, lo, hi);
}

} // namespace strata

extern "C" void strata_index_error(strata::KernelStatus *status, const char *site, int64_t value,
                                   int64_t lo, int64_t hi) {
  int64_t expected = 0;
  if (!status->failed.compare_exchange_strong(expected, 1, std::memory_order_acq_rel))
    return; // an earlier failure is the one reported
  status->site = site;
  status->value = value;
  status->lo = lo;
  status->hi = hi;
  status->failed.store(2, std::memory_order_release);
}

extern "C" void strata_alloc_error(strata::KernelStatus *status, const char *site, int64_t bytes) {
  int64_t expected = 0;
  if (!status->failed.compare_exchange_strong(expected, 1, std::memory_order_acq_rel))
    return;
  status->site = site;
  status->value = bytes;
  status->outOfMemory = true;
  status->failed.store(2, std::memory_order_release);
}
