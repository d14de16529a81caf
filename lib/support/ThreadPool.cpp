// Thread pool and parallel-for (see ThreadPool.h).
#include "strata/support/ThreadPool.h"

#include <algorithm>
#include <atomic>

namespace strata {

namespace {
thread_local bool tlsInParallel = false;        // inside a parallelFor chunk: nest serially
thread_local ThreadPool *tlsCurrent = nullptr;  // set by ScopedPool
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
    stop_ = true;
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
  std::unique_lock<std::mutex> lk(m_);
  for (;;) {
    wake_.wait(lk, [&] { return stop_ || (job_ && generation_ != seen); });
    if (stop_)
      return;
    seen = generation_;
    Job *j = job_;
    ++busy_; // counted under the lock, so the caller cannot free the job while we use it
    lk.unlock();
    runChunks(*j);
    lk.lock();
    if (--busy_ == 0)
      idle_.notify_all();
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
  {
    std::lock_guard<std::mutex> lk(m_);
    job_ = &j;
    ++generation_;
  }
  wake_.notify_all();
  runChunks(j);
  // All chunks are claimed; wait for workers still running theirs. Clearing job_ first keeps
  // late wakers from joining a finished job.
  std::unique_lock<std::mutex> lk(m_);
  job_ = nullptr;
  idle_.wait(lk, [&] { return busy_ == 0; });
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
