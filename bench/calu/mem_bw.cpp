// bench_mem_bw: the host's memory bandwidth as the CALU benchmarks see it: a STREAM-like
// triad (a = b + s c) and copy over arrays of 2^25 doubles (256 MiB each, far beyond any
// cache), first touched by the threads that use them, on 1 and on all OpenMP threads, best
// of 5, bytes counted as STREAM does (read + write, no write-allocate). The bound of a
// bandwidth-bound factorization is its traffic over this rate. Usage: bench_mem_bw
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

int main() {
  const std::size_t n = std::size_t(1) << 25;
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  for (int threads : {1, omp_get_max_threads()}) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = 0, b[i] = 1, c[i] = 2;
    double triad = 1e30, copy = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(threads) schedule(static)
      for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
      auto t1 = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(threads) schedule(static)
      for (std::size_t i = 0; i < n; ++i) c[i] = a[i];
      auto t2 = std::chrono::steady_clock::now();
      triad = std::min(triad, std::chrono::duration<double>(t1 - t0).count());
      copy = std::min(copy, std::chrono::duration<double>(t2 - t1).count());
    }
    std::printf("threads %3d  triad %7.1f GB/s  copy %7.1f GB/s  (check %g)\n", threads, 3.0 * 8 * n / triad * 1e-9,
                2.0 * 8 * n / copy * 1e-9, a[n / 2] + c[n / 3]);
  }
}
