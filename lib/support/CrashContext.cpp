// The activity record the crash handler prints (CrashContext.h).
#include "strata/support/CrashContext.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace strata {

namespace {
// Each thread writes only its own record, so writers never race; `latest` points at the record
// of the thread that wrote last. The handler prefers the crashing thread's own record.
thread_local char ownRecord[320];
std::atomic<const char *> latest{""};
} // namespace

void setCrashContext(std::string_view what) {
  size_t n = std::min(what.size(), sizeof ownRecord - 1);
  std::memcpy(ownRecord, what.data(), n);
  ownRecord[n] = '\0';
  latest.store(ownRecord, std::memory_order_release);
}

const char *crashContext() {
  return ownRecord[0] ? ownRecord : latest.load(std::memory_order_acquire);
}

} // namespace strata
