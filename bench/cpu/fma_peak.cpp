// The machine's double-precision arithmetic peak, for compute ceilings (bench/results/xeon-vm/cpu-203013e-xeon-fma-peak.txt):
// GFLOP/s of independent fused multiply-adds (2 flops each), and of a multiply and a subtract
// kept apart (what the factorizations of host/compact/ run where their products must round on
// their own, kernels.inc `product`: 2 flops in 2 instructions), on the widest vectors the CPU
// has, one thread and all of OMP_NUM_THREADS. Usage: fma_peak [seconds per measurement].
#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

// 12 independent chains per thread: FMA latency (4) times two pipes, with room to spare.
// Each kernel is a function compiled inside its `#pragma GCC target` region, OpenMP region
// included (a lambda inside a target function is compiled without the target).
#define TB_PEAK_KERNEL(name, V, set1, step, lanes)                                            \
  double name(int threads, long iters) {                                                    \
    double sink = 0;                                                                        \
    _Pragma("omp parallel num_threads(threads) reduction(+ : sink)") {                      \
      const V a = set1(0.999999999), b = set1(1e-9);                                        \
      /* distinct starts: identical chains were merged into one by the compiler */          \
      V x0 = set1(1.0), x1 = set1(1.01), x2 = set1(1.02), x3 = set1(1.03), x4 = set1(1.04),  \
        x5 = set1(1.05), x6 = set1(1.06), x7 = set1(1.07), x8 = set1(1.08), x9 = set1(1.09), \
        x10 = set1(1.10), x11 = set1(1.11);                                                 \
      for (long i = 0; i < iters; ++i) {                                                    \
        x0 = step(x0); x1 = step(x1); x2 = step(x2); x3 = step(x3); x4 = step(x4);          \
        x5 = step(x5); x6 = step(x6); x7 = step(x7); x8 = step(x8); x9 = step(x9);          \
        x10 = step(x10); x11 = step(x11);                                                   \
      }                                                                                     \
      const V s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11;              \
      double out[lanes];                                                                    \
      __builtin_memcpy(out, &s, sizeof out);                                                \
      sink += out[0];                                                                       \
    }                                                                                       \
    return sink;                                                                            \
  }

#pragma GCC push_options
#pragma GCC target("avx512f")
#define TB_FMA(x) _mm512_fmadd_pd(x, a, b)
#define TB_SEP(x) _mm512_sub_pd(_mm512_mul_pd(x, a), b)
TB_PEAK_KERNEL(fma512, __m512d, _mm512_set1_pd, TB_FMA, 8)
TB_PEAK_KERNEL(sep512, __m512d, _mm512_set1_pd, TB_SEP, 8)
#undef TB_FMA
#undef TB_SEP
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define TB_FMA(x) _mm256_fmadd_pd(x, a, b)
#define TB_SEP(x) _mm256_sub_pd(_mm256_mul_pd(x, a), b)
TB_PEAK_KERNEL(fma256, __m256d, _mm256_set1_pd, TB_FMA, 4)
TB_PEAK_KERNEL(sep256, __m256d, _mm256_set1_pd, TB_SEP, 4)
#undef TB_FMA
#undef TB_SEP
#pragma GCC pop_options

/// GFLOP/s of kernel(threads, iterations): 2 flops per step and lane, 12 steps per iteration.
double rate(double seconds, int threads, int lanes, double (*kernel)(int, long)) {
  for (long iters = 1 << 16;; iters *= 2) {
    const auto t0 = std::chrono::steady_clock::now();
    const double sink = kernel(threads, iters);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (sink == 42.0) std::puts("");  // keeps the chains alive
    if (dt >= seconds) return 2.0 * lanes * 12 * double(iters) * threads / dt / 1e9;
  }
}

void report(const char* isa, double s, int threads, int lanes, double (*fma)(int, long), double (*sep)(int, long)) {
  for (int t : {1, threads})
    std::printf("%-7s threads %d  fma %7.1f GFLOP/s  mul+sub %7.1f GFLOP/s\n", isa, t, rate(s, t, lanes, fma),
                rate(s, t, lanes, sep));
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
  const int threads = omp_get_max_threads();
  if (__builtin_cpu_supports("avx512f")) report("avx512", seconds, threads, 8, fma512, sep512);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) report("avx2", seconds, threads, 4, fma256, sep256);
  return 0;
}
