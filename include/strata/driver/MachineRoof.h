// This machine's roofline, measured: the f32 FMA peak at a SIMD width and the memory bandwidth
// from DRAM, on a number of threads. What `strata explain` compares each kernel's GFLOP/s and GB/s
// against.
#pragma once

namespace strata::driver {

struct MachineRoof {
  double peakGflops = 0;   // f32 multiply-adds on every thread, counted as 2 flops each
  double bandwidthGBs = 0; // streaming reads of a buffer far larger than the caches
  unsigned threads = 1;
  int lanes = 8; // the f32 SIMD width measured (8: AVX2, 16: AVX-512)
};

// Runs the two probes (about half a second in all) on `threads` threads (0: one per core), with
// vectors of `lanes` f32 (16 only where the CPU has AVX-512, else 8).
MachineRoof measureMachineRoof(unsigned threads, int lanes);

} // namespace strata::driver
