// A fixed-size thread pool with a chunked parallel-for, and the C entry point that JIT-compiled
// `parallel` loops call (docs/runtime.md, "Threads"). It lives in strata_support rather than
// strata_runtime so strata_codegen (whose JIT resolves `strata_parallel_for`) need not depend on
// the runtime.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace strata {

class ThreadPool {
public:
  using RangeFn = void (*)(void *ctx, int64_t begin, int64_t end);

  // `threads` counts the calling thread, so the pool starts threads - 1 workers; 0 means all cores.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Calls fn(ctx, begin, end) over disjoint chunks covering [0, extent), on the workers and the
  // calling thread, and returns when all are done. Runs inline when extent <= 1, the pool has one
  // thread, the caller is already inside a parallelFor (nested loops run serially), or another
  // thread's parallelFor holds the workers (concurrent callers never wait for each other).
  void parallelFor(int64_t extent, RangeFn fn, void *ctx);

  template <typename F> void parallelFor(int64_t extent, F &&f) {
    parallelFor(
        extent, [](void *c, int64_t b, int64_t e) { (*static_cast<F *>(c))(b, e); },
        static_cast<void *>(&f));
  }

  // The pool used by strata_parallel_for on this thread: the one set by a live ScopedPool, else a
  // process-wide pool with one thread per core.
  static ThreadPool &current();

  // Makes `p` this thread's current pool for its lifetime (the runtime wraps kernel calls in it).
  class ScopedPool {
  public:
    explicit ScopedPool(ThreadPool *p);
    ~ScopedPool();
    ScopedPool(const ScopedPool &) = delete;
    ScopedPool &operator=(const ScopedPool &) = delete;

  private:
    ThreadPool *prev_;
  };

private:
  struct Job;
  void workerLoop();
  static void runChunks(Job &j);

  std::vector<std::thread> workers_;
  std::mutex callMutex_; // held by the parallelFor that owns the workers
  // Workers spin on generation_ for a while after each job (the next kernel's loop usually
  // follows within microseconds), then sleep on wake_; sleepers_ says whether a new job must
  // notify. job_ and busy_ hand a job over without the mutex (see parallelFor).
  std::mutex m_;
  std::condition_variable wake_;
  std::atomic<Job *> job_{nullptr};
  std::atomic<uint64_t> generation_{0};
  std::atomic<unsigned> busy_{0};     // workers between joining a job and leaving it
  std::atomic<unsigned> sleepers_{0}; // workers waiting on wake_
  std::atomic<bool> stop_{false};
};

} // namespace strata

// Called by generated code for each outermost `parallel` loop: body(closure, begin, end) over
// chunks of [0, extent) on ThreadPool::current().
extern "C" void strata_parallel_for(int64_t extent, void (*body)(void *, int64_t, int64_t),
                                    void *closure);
