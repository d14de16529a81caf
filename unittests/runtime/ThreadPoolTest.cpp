// ThreadPool::parallelFor: every index exactly once, for any extent and pool size; nesting runs
// inline; the current pool follows ScopedPool.
#include "strata/support/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <set>
#include <thread>

using namespace strata;

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (unsigned threads : {1u, 2u, 4u, 7u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int64_t extent : {-3, 0, 1, 2, 3, 6, 7, 100, 1001}) {
      std::vector<std::atomic<int>> hits(std::max<int64_t>(extent, 0));
      pool.parallelFor(extent, [&](int64_t b, int64_t e) {
        ASSERT_LT(b, e);
        for (int64_t i = b; i < e; ++i)
          hits[i].fetch_add(1);
      });
      for (auto &h : hits)
        ASSERT_EQ(h.load(), 1) << threads << " threads, extent " << extent;
    }
  }
}

TEST(ThreadPool, UsesSeveralThreadsAndNestsInline) {
  ThreadPool pool(4);
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<int64_t> inner{0};
  pool.parallelFor(64, [&](int64_t b, int64_t e) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    {
      std::lock_guard<std::mutex> lk(m);
      ids.insert(std::this_thread::get_id());
    }
    for (int64_t i = b; i < e; ++i) // nested: runs inline on this thread, no deadlock
      pool.parallelFor(10, [&](int64_t ib, int64_t ie) {
        EXPECT_EQ(ib, 0);
        EXPECT_EQ(ie, 10);
        inner += ie - ib;
      });
  });
  EXPECT_GT(ids.size(), 1u);
  EXPECT_EQ(inner.load(), 640);
}

TEST(ThreadPool, ManyShortJobsAndConcurrentCallers) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  auto work = [&] {
    for (int r = 0; r < 500; ++r)
      pool.parallelFor(5, [&](int64_t b, int64_t e) { sum += e - b; });
  };
  std::thread a(work), b(work);
  work();
  a.join();
  b.join();
  EXPECT_EQ(sum.load(), 3 * 500 * 5);
}

TEST(ThreadPool, ScopedPoolSetsCurrent) {
  ThreadPool pool(2);
  ThreadPool *global = &ThreadPool::current();
  {
    ThreadPool::ScopedPool s(&pool);
    EXPECT_EQ(&ThreadPool::current(), &pool);
  }
  EXPECT_EQ(&ThreadPool::current(), global);
  EXPECT_GE(global->threads(), 1u);
}
