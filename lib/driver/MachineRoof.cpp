// The roofline probes (MachineRoof.h): independent FMA chains in registers for the compute peak,
// vector loads over a large buffer for the bandwidth. Each runs on every thread at once and the
// best timing counts (of five for the peak, three for the bandwidth), as STREAM and peak-FLOPS
// microbenchmarks do.
#include "strata/driver/MachineRoof.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <immintrin.h>
#include <thread>
#include <vector>

namespace strata::driver {

namespace {

// Enough independent chains to cover the FMA latency on two pipes (4 cycles x 2 on Zen and
// recent Intel cores), so the loop is throughput-bound; written out so that every accumulator
// stays in a register.
constexpr int kChains = 12;
#define STRATA_FMA_CHAINS(FMA)                                                                     \
  for (int64_t it = 0; it < iters; ++it) {                                                         \
    a0 = FMA(a0, b, c);                                                                            \
    a1 = FMA(a1, b, c);                                                                            \
    a2 = FMA(a2, b, c);                                                                            \
    a3 = FMA(a3, b, c);                                                                            \
    a4 = FMA(a4, b, c);                                                                            \
    a5 = FMA(a5, b, c);                                                                            \
    a6 = FMA(a6, b, c);                                                                            \
    a7 = FMA(a7, b, c);                                                                            \
    a8 = FMA(a8, b, c);                                                                            \
    a9 = FMA(a9, b, c);                                                                            \
    a10 = FMA(a10, b, c);                                                                          \
    a11 = FMA(a11, b, c);                                                                          \
  }

__attribute__((target("avx2,fma"))) float fmaLoop8(int64_t iters) {
  __m256 a0 = _mm256_set1_ps(0.0f), a1 = _mm256_set1_ps(0.1f), a2 = _mm256_set1_ps(0.2f),
         a3 = _mm256_set1_ps(0.3f), a4 = _mm256_set1_ps(0.4f), a5 = _mm256_set1_ps(0.5f),
         a6 = _mm256_set1_ps(0.6f), a7 = _mm256_set1_ps(0.7f), a8 = _mm256_set1_ps(0.8f),
         a9 = _mm256_set1_ps(0.9f), a10 = _mm256_set1_ps(1.0f), a11 = _mm256_set1_ps(1.1f);
  const __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  STRATA_FMA_CHAINS(_mm256_fmadd_ps)
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f"))) float fmaLoop16(int64_t iters) {
  __m512 a0 = _mm512_set1_ps(0.0f), a1 = _mm512_set1_ps(0.1f), a2 = _mm512_set1_ps(0.2f),
         a3 = _mm512_set1_ps(0.3f), a4 = _mm512_set1_ps(0.4f), a5 = _mm512_set1_ps(0.5f),
         a6 = _mm512_set1_ps(0.6f), a7 = _mm512_set1_ps(0.7f), a8 = _mm512_set1_ps(0.8f),
         a9 = _mm512_set1_ps(0.9f), a10 = _mm512_set1_ps(1.0f), a11 = _mm512_set1_ps(1.1f);
  const __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  STRATA_FMA_CHAINS(_mm512_fmadd_ps)
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                           _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  return _mm512_reduce_add_ps(s);
}
#undef STRATA_FMA_CHAINS

__attribute__((target("avx2"))) float sumFloats(const float *p, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
    a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
  }
  float out[8];
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  float s = out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
  for (; i < n; ++i)
    s += p[i];
  return s;
}

using Clock = std::chrono::steady_clock;

// Seconds for `work(t)` on threads t = 0..n-1 started together.
double timeOnThreads(unsigned n, const std::function<void(unsigned)> &work) {
  std::vector<std::thread> pool;
  auto start = Clock::now();
  for (unsigned t = 1; t < n; ++t)
    pool.emplace_back(work, t);
  work(0);
  for (std::thread &th : pool)
    th.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

volatile float sink; // keeps the probes' results alive

} // namespace

MachineRoof measureMachineRoof(unsigned threads, int lanes) {
  MachineRoof roof;
  roof.threads = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  roof.lanes = lanes >= 16 && __builtin_cpu_supports("avx512f") ? 16 : 8;
  auto fmaLoop = roof.lanes == 16 ? fmaLoop16 : fmaLoop8;

  // Compute: calibrate to about 60 ms per timing.
  int64_t iters = 1 << 16;
  double seconds = 0;
  while ((seconds = timeOnThreads(1, [&](unsigned) { sink = fmaLoop(iters); })) < 0.01)
    iters *= 4;
  iters = std::max<int64_t>(iters, static_cast<int64_t>(iters * 0.06 / seconds));
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) // neighbours on a shared machine steal cycles: the best run
    best = std::min(best, timeOnThreads(roof.threads, [&](unsigned) { sink = fmaLoop(iters); }));
  roof.peakGflops =
      2.0 * kChains * roof.lanes * static_cast<double>(iters) * roof.threads / best / 1e9;

  // Bandwidth: 256 MiB, far past any last-level cache, one contiguous slice per thread.
  const int64_t n = int64_t(64) << 20;
  auto *buf = static_cast<float *>(std::aligned_alloc(64, n * sizeof(float)));
  if (!buf)
    return roof;
  const int64_t slice = (n / roof.threads) / 32 * 32;
  timeOnThreads(roof.threads, [&](unsigned t) { // first touch on the thread that reads it
    std::memset(buf + t * slice, 0, slice * sizeof(float));
  });
  best = 1e30;
  for (int rep = 0; rep < 3; ++rep)
    best = std::min(best, timeOnThreads(roof.threads, [&](unsigned t) {
                      sink = sumFloats(buf + t * slice, slice);
                    }));
  roof.bandwidthGBs = static_cast<double>(slice) * roof.threads * sizeof(float) / best / 1e9;
  std::free(buf);
  return roof;
}

} // namespace strata::driver
