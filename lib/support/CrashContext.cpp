// The process-wide activity record the crash handler prints (CrashContext.h).
#include "strata/support/CrashContext.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace strata {

namespace {
// Two buffers: a writer fills the one not published, then publishes it, so a reader (the signal
// handler) sees a whole record. Concurrent writers may interleave; the record stays terminated.
char buffers[2][320];
std::atomic<int> published{0};
} // namespace

void setCrashContext(std::string_view what) {
  int next = 1 - published.load(std::memory_order_relaxed);
  size_t n = std::min(what.size(), sizeof buffers[0] - 1);
  std::memcpy(buffers[next], what.data(), n);
  buffers[next][n] = '\0';
  published.store(next, std::memory_order_release);
}

const char *crashContext() { return buffers[published.load(std::memory_order_acquire)]; }

} // namespace strata
