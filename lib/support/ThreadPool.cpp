// Thread pool and parallel-for (see ThreadPool.h).
#include "strata/support/ThreadPool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace strata {

namespace {
thread_local bool tlsInParallel = false;        // inside a parallelFor chunk: nest serially
thread_local ThreadPool *tlsCurrent = nullptr;  // set by ScopedPool

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long an idle worker spins before it sleeps. A model's kernels follow each other within
// microseconds, and waking a sleeping thread costs a futex call and, in a VM whose idle vCPU
// halted, tens of microseconds more: per parallel loop, not per model run.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(500);
} // namespace

struct ThreadPool::Job {
  RangeFn fn;
  void *ctx;
  int64_t extent, chunks;
  std::atomic<int64_t> next{0};
};

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

// Chunks are claimed dynamically, so uneven iterations still balance; chunk c covers
// [c * extent / chunks, (c + 1) * extent / chunks).
void ThreadPool::runChunks(Job &j) {
  bool saved = tlsInParallel;
  tlsInParallel = true;
  for (int64_t c; (c = j.next.fetch_add(1, std::memory_order_relaxed)) < j.chunks;)
    j.fn(j.ctx, c * j.extent / j.chunks, (c + 1) * j.extent / j.chunks);
  tlsInParallel = saved;
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    // Spin for the next job, then sleep until one is published.
    auto until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
    for (unsigned i = 1; generation_.load() == seen && !stop_.load(); ++i) {
      cpuRelax();
      if (i % 256 == 0 && std::chrono::steady_clock::now() > until) {
        std::unique_lock<std::mutex> lk(m_);
        sleepers_.fetch_add(1);
        wake_.wait(lk, [&] { return stop_.load() || generation_.load() != seen; });
        sleepers_.fetch_sub(1);
        break;
      }
    }
    if (stop_.load())
      return;
    seen = generation_.load();
    // Joining: count ourselves busy before reading job_. The caller clears job_ before it waits
    // for busy_ == 0 (all sequentially consistent), so either it waits for us or we read null;
    // a job read here stays alive until we leave.
    busy_.fetch_add(1);
    if (Job *j = job_.load())
      runChunks(*j);
    busy_.fetch_sub(1);
  }
}

void ThreadPool::parallelFor(int64_t extent, RangeFn fn, void *ctx) {
  if (extent <= 0)
    return;
  if (extent == 1 || workers_.empty() || tlsInParallel) {
    fn(ctx, 0, extent);
    return;
  }
  // One loop at a time owns the workers. A caller that finds them busy (another thread's run on
  // this pool) runs its loop on its own thread instead of waiting: concurrent runs each keep
  // one thread busy and never block on each other.
  std::unique_lock<std::mutex> call(callMutex_, std::try_to_lock);
  if (!call.owns_lock()) {
    bool saved = tlsInParallel;
    tlsInParallel = true;
    fn(ctx, 0, extent);
    tlsInParallel = saved;
    return;
  }
  // A few chunks per thread balance uneven work without much claiming overhead.
  Job j{fn, ctx, extent, std::min<int64_t>(extent, 4 * static_cast<int64_t>(threads()))};
  job_.store(&j);
  generation_.fetch_add(1);
  if (sleepers_.load() > 0) {
    // Taking the mutex orders this notify after a sleeper's predicate check.
    std::lock_guard<std::mutex> lk(m_);
    wake_.notify_all();
  }
  runChunks(j);
  // Every chunk is claimed; wait for workers still running theirs (they are computing, so this
  // is short). Clearing job_ first keeps late joiners off a finished job.
  job_.store(nullptr);
  for (unsigned i = 1; busy_.load() != 0; ++i)
    if (i % 1024 == 0)
      std::this_thread::yield();
    else
      cpuRelax();
}

ThreadPool &ThreadPool::current() {
  if (tlsCurrent)
    return *tlsCurrent;
  static ThreadPool global(0);
  return global;
}

ThreadPool::ScopedPool::ScopedPool(ThreadPool *p) : prev_(tlsCurrent) { tlsCurrent = p; }
ThreadPool::ScopedPool::~ScopedPool() { tlsCurrent = prev_; }

} // namespace strata

extern "C" void strata_parallel_for(int64_t extent, void (*body)(void *, int64_t, int64_t),
                                    void *closure) {
  strata::ThreadPool::current().parallelFor(extent, body, closure);
}
