// bench_calu_leaf_rate: the single-thread rate of the LU of a TSLU leaf's run (2176 or 6250
// rows, 64 or 128 columns, the block hot in cache): OpenBLAS's getrf, LAPACK's recursive
// getrf2, and a recursive LU with 8-column leaves by hand ("rec8"), in 1 or P concurrent
// copies (one a thread, as TSLU's leaves run), best of 10. What a leaf could reach against
// what it reaches inside TSLU (the trace's leaf intervals). Usage: bench_calu_leaf_rate [P]
#include <cblas.h>
#include <lapacke.h>
#include <omp.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>
#include <random>
static int rgetf(int m, int n, double* a, int lda, int* ipiv) {
  if (n <= 8) {
    int info = 0;
    for (int j = 0; j < n; ++j) {
      double* c = a + (size_t)j * lda;
      int p = j; double best = std::fabs(c[j]);
      for (int i = j + 1; i < m; ++i) { double v = std::fabs(c[i]); if (v > best) best = v, p = i; }
      ipiv[j] = p + 1;
      if (p != j) for (int k = 0; k < n; ++k) std::swap(a[j + (size_t)k * lda], a[p + (size_t)k * lda]);
      if (c[j] == 0) { if (!info) info = j + 1; continue; }
      const double r = 1.0 / c[j];
      for (int i = j + 1; i < m; ++i) c[i] *= r;
      for (int k = j + 1; k < n; ++k) {
        double* d = a + (size_t)k * lda; const double u = d[j];
        for (int i = j + 1; i < m; ++i) d[i] -= c[i] * u;
      }
    }
    return info;
  }
  const int n1 = n / 2, n2 = n - n1;
  int info = rgetf(m, n1, a, lda, ipiv);
  double* a12 = a + (size_t)n1 * lda;
  LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, n2, a12, lda, 1, n1, ipiv, 1);
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n1, n2, 1.0, a, lda, a12, lda);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m - n1, n2, n1, -1.0, a + n1, lda, a12, lda, 1.0, a12 + n1, lda);
  int i2 = rgetf(m - n1, n2, a12 + n1, lda, ipiv + n1);
  for (int i = n1; i < n; ++i) ipiv[i] += n1;
  LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, n1, a, lda, n1 + 1, n, ipiv, 1);
  if (!info && i2) info = i2 + n1;
  return info;
}
int main(int argc, char** argv) {
  openblas_set_num_threads(1);
  const int threads = argc > 1 ? atoi(argv[1]) : 1;  // concurrent copies, as TSLU's leaves run
  for (int m : {2176, 6250}) for (int n : {64, 128}) {
    const double flops = double(m) * n * n - double(n) * n * n / 3;
    for (int v = 0; v < 3; ++v) {
      double best = 1e9;
      #pragma omp parallel num_threads(threads) reduction(min:best)
      {
        std::vector<double> a0((size_t)m * n), a(a0.size()); std::mt19937 g(1 + omp_get_thread_num()); std::uniform_real_distribution<double> u(-1, 1);
        for (auto& x : a0) x = u(g);
        std::vector<int> ip(n), ip2(n);
        for (int r = 0; r < 10; ++r) { a = a0;
          #pragma omp barrier
          auto t0 = std::chrono::steady_clock::now();
          if (v == 0) LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a.data(), m, ip.data());
          else if (v == 1) LAPACKE_dgetrf2_work(LAPACK_COL_MAJOR, m, n, a.data(), m, ip.data());
          else rgetf(m, n, a.data(), m, ip.data());
          double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); if (dt < best) best = dt; }
        if (v == 2 && omp_get_thread_num() == 0) { a = a0; LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a.data(), m, ip.data()); std::vector<double> b = a0; rgetf(m, n, b.data(), m, ip2.data());
          double d = 0; for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i])); bool same = ip == ip2;
          printf("   (recursive vs getrf: same ipiv %d, max diff %.2g)\n", same, d); }
      }
      printf("threads %d m %d n %d %-8s %.3f ms %.1f GFLOP/s a core\n", threads, m, n, v == 0 ? "getrf" : v == 1 ? "getrf2" : "rec8", best * 1e3, flops / best * 1e-9);
    }
  }
}
