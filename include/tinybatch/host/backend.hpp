// Host backend: runs each operation on one thread (seq) or OpenMP threads (par). With
// `kernels::automatic` and fixed sizes up to 32, the SIMD kernels run where tuning.hpp says
// they win (simd::op returns false where not: run-time sizes, no AVX2, the table): gemm's
// register-blocked kernel, and the compact lane kernels on staged groups for the rest.
// Everything else runs the reference, matrix by matrix.
#pragma once

#include <algorithm>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../core/pivots.hpp"
#include "../policy.hpp"
#include "../reference/blas.hpp"
#include "../reference/cholesky.hpp"
#include "../reference/lu.hpp"
#include "../core/dispatch.hpp"
#include "blocked/cholesky.hpp"
#include "simd/dispatch.hpp"

namespace tinybatch::detail {

/// Calls f(state, k) for k in [0, count), `state` made by init() once per thread (scratch
/// space, say): in order on one thread (seq), or spread over OpenMP threads (par). Matrices
/// are independent, so a static schedule gives each thread one contiguous block.
template <class Policy, class Init, class F>
void for_each_matrix(const Policy& policy, index_t count, Init&& init, F&& f) {
  if constexpr (std::is_same_v<Policy, parallel_policy<typename Policy::kernels>>) {
#if defined(_OPENMP)
    const int threads = team_size(policy);
    if (threads > 1 && count > 1) {  // a team of one costs about 0.3 us for nothing
#pragma omp parallel num_threads(threads)
      {
        auto state = init();
#pragma omp for schedule(static)
        for (index_t k = 0; k < count; ++k) f(state, k);
      }
      return;
    }
#endif
  }
  (void)policy;
  auto state = init();
  for (index_t k = 0; k < count; ++k) f(state, k);
}

template <class Policy, class F>
void for_each_matrix(const Policy& policy, index_t count, F&& f) {
  for_each_matrix(policy, count, [] { return 0; }, [&](int, index_t k) { f(k); });
}

/// Per-thread scratch for the kernels that need it (pivots and a work column of inverse,
/// getri). Allocated once per call and thread, not once per matrix.
template <class T>
struct scratch {
  std::vector<int> ipiv;
  std::vector<T> work;
  void reserve(int n) {
    if (int(ipiv.size()) < n) ipiv.resize(n), work.resize(n);
  }
};

template <class P>
inline constexpr bool reference_kernels = std::is_same_v<typename P::kernels, kernels::reference>;

/// f(k) for the listed matrices, spread over the team with a dynamic schedule in chunks of 8
/// (the matrices of a variable-size batch differ in cost). The list stays in the batch's
/// order: sorted largest first with chunks of 1, 100000 matrices of orders up to 64 (half of
/// them above 32) ran 1.16x (uniform) and 1.22x (Gaussian) the time of the same matrices as
/// per-order batches on the 2-core VM, in memory order with chunks of 8 1.11x and 1.15x
/// (bench_potrf_var, medians of three alternating rounds,
/// bench/results/epyc-vm/potrf-var-unsorted-ab.txt); 3000 matrices up to 64 - 256 moved
/// within the VM's noise (0.96 - 1.14x before, 0.99 - 1.17x after).
template <class Policy, class F>
void for_each_listed(const Policy& policy, const std::vector<index_t>& list, F&& f) {
  const index_t count = index_t(list.size());
  if constexpr (std::is_same_v<Policy, parallel_policy<typename Policy::kernels>>) {
#if defined(_OPENMP)
    const int threads = team_size(policy);
    if (threads > 1 && count > 1) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8)
      for (index_t i = 0; i < count; ++i) f(list[std::size_t(i)]);
      return;
    }
#endif
  }
  (void)policy;
  for (index_t i = 0; i < count; ++i) f(list[std::size_t(i)]);
}

/// The matrices of [k0, k1) of a variable-size batch with order 1..32 (n[k] = 0: info[k] = 0;
/// larger orders skipped) into `order`, sorted by order, largest first, and within one order
/// by ld where they differ: runs of one (order, ld) are the groups.
template <class T>
void sort_small_by_order(const vbatch_view<T>& A, index_t k0, index_t k1, int* info, std::vector<index_t>& order) {
  const int* n = A.rows_array();
  const int* ld = A.ld_array();
  constexpr int buckets = max_fixed_size + 1;  // orders 32 .. 1, then 0
  std::size_t start[buckets + 1] = {};
  int ld0[buckets] = {};
  bool mixed[buckets] = {};
  for (index_t k = k0; k < k1; ++k) {
    if (n[k] > max_fixed_size) continue;
    const int b = max_fixed_size - n[k];
    if (start[b + 1]++ == 0) ld0[b] = ld[k];
    mixed[b] |= ld[k] != ld0[b];
  }
  for (int b = 0; b < buckets; ++b) start[b + 1] += start[b];
  order.resize(start[buckets - 1]);
  std::size_t at[buckets];
  std::copy(start, start + buckets, at);
  for (index_t k = k0; k < k1; ++k) {
    if (n[k] > max_fixed_size) continue;
    if (n[k] == 0)
      info[k] = 0;
    else
      order[at[max_fixed_size - n[k]]++] = k;
  }
  for (int b = 0; b + 1 < buckets; ++b)
    if (mixed[b])
      std::stable_sort(order.begin() + std::ptrdiff_t(start[b]), order.begin() + std::ptrdiff_t(start[b + 1]),
                       [&](index_t a, index_t c) { return ld[a] < ld[c]; });
}

/// A variable-size batch by order: matrices of order 1..32 with a common leading dimension
/// go together through the fixed-size kernels (a pointer-array view each group), larger ones
/// one by one through the blocked Cholesky, in the batch's order.
///
/// The small ones: the batch is cut into one range of consecutive matrices per thread, of
/// about equal work (a model, `weight` below); each thread takes its range in chunks of about
/// 256 KiB, sorts a chunk by order and runs its groups on its own (small(policy, n, ld,
/// pointers, info) with a sequential policy), all in one parallel region. Consecutive ranges
/// rather than orders per thread: with each thread on a set of orders (neighbouring matrices
/// then written by different threads at once, sharing cache lines) the kernels of 3000
/// matrices of orders up to 16 ran about half as fast. Chunks: one pass per order over a
/// whole range read its memory once per order. Measured against the same matrices called as
/// one fixed-size batch per order (bench_potrf_var, 2-core EPYC VM, double, median of three
/// runs, time over the fixed-size calls' time), this against one parallel region per order
/// over the whole batch, sorted and gathered on the calling thread: 100000 matrices of orders
/// up to 16 1.36 -> 1.26x (uniform), 1.46 -> 1.27x (Gaussian), up to 32 1.21 -> 1.14x, 1.27
/// -> 1.11x; 3000 matrices up to 16 1.42 -> 1.38x, 1.44 -> 1.39x, up to 32 1.34 -> 1.10x,
/// 1.12 -> 1.16x.
template <class P, class T, class Small, class Large>
void by_order(const P& p, const vbatch_view<T>& A, int* info, Small&& small, Large&& large) {
  const index_t count = A.count();
  const int* n = A.rows_array();
  // The work of one matrix of order n <= 32, in units of about 0.3 ns on one Zen 4 core: its
  // bookkeeping and staging (256), its memory (n^2), its arithmetic (n^3 / 24); potrf at n = 5
  // .. 8 took 14 - 28 ns per matrix in cache, n = 32 about 0.6 us.
  auto weight = [](int nk) { return nk > max_fixed_size ? 0.0 : 256.0 + double(nk) * nk * (nk + 24) / 24; };
  std::vector<index_t> big;
  double total = 0, elems = 0;
  for (index_t k = 0; k < count; ++k) {
    if (n[k] > max_fixed_size) big.push_back(k);
    total += weight(n[k]);
    elems += n[k] > max_fixed_size ? 0.0 : double(n[k]) * n[k];
  }
  large(big);
  using seq_of_p = sequential_policy<typename P::kernels>;
  // One thread's range, in chunks of about chunk_bytes of matrices (in L2 while the chunk's
  // groups run: by order over a whole range, each order's pass read the range's memory
  // again). A group runs a multiple of `lanes` matrices; the rest of an order waits for the
  // next chunk, so that chunks cost no partly filled lane groups.
  constexpr double chunk_bytes = 256 * 1024;
  constexpr std::size_t lanes = 16;  // a multiple of every SIMD width
  auto run = [&](index_t k0, index_t k1) {
    const int* ld = A.ld_array();
    std::vector<index_t> order;
    std::vector<T*> ptrs;
    std::vector<int> sub;
    std::vector<index_t> wait[max_fixed_size + 1];
    int wait_ld[max_fixed_size + 1] = {};
    auto go = [&](int nk, std::size_t m) {  // the first m waiting matrices of order nk
      auto& w = wait[nk];
      ptrs.clear();
      for (std::size_t q = 0; q < m; ++q) ptrs.push_back(A.pointers()[w[q]]);
      sub.assign(m, 0);
      small(seq_of_p{}, nk, wait_ld[nk], ptrs, sub);
      for (std::size_t q = 0; q < m; ++q) info[w[q]] = sub[q];
      w.erase(w.begin(), w.begin() + std::ptrdiff_t(m));
    };
    for (index_t c0 = k0; c0 < k1;) {
      index_t c1 = c0;
      for (double bytes = 0; c1 < k1 && bytes < chunk_bytes; ++c1)
        bytes += n[c1] > max_fixed_size ? 0.0 : double(n[c1]) * n[c1] * sizeof(T);
      sort_small_by_order(A, c0, c1, info, order);
      for (std::size_t i = 0; i < order.size();) {
        std::size_t e = i;
        const int nk = n[order[i]], lk = ld[order[i]];
        while (e < order.size() && n[order[e]] == nk && ld[order[e]] == lk) ++e;
        auto& w = wait[nk];
        if (!w.empty() && wait_ld[nk] != lk) go(nk, w.size());
        wait_ld[nk] = lk;
        w.insert(w.end(), order.begin() + std::ptrdiff_t(i), order.begin() + std::ptrdiff_t(e));
        if (w.size() >= lanes) go(nk, w.size() / lanes * lanes);
        i = e;
      }
      c0 = c1;
    }
    for (int nk = max_fixed_size; nk >= 1; --nk)
      if (!wait[nk].empty()) go(nk, wait[nk].size());
  };
  int threads = 1;
  if constexpr (std::is_same_v<P, parallel_policy<typename P::kernels>>)  // a small batch: no team
    threads = team_size(fit_threads(p, simd::tuning::op::potrf, 1, elems * sizeof(T)));
  if (threads <= 1 || count < 2) {
    run(0, count);
    return;
  }
  // The first matrix of each thread's range: where the work before it reaches t / threads.
  std::vector<index_t> cuts(std::size_t(threads) + 1, count);
  cuts[0] = 0;
  {
    double w = 0;
    int t = 1;
    for (index_t k = 0; k < count && t < threads; ++k) {
      while (t < threads && w >= total * t / threads) cuts[std::size_t(t++)] = k;
      w += weight(n[k]);
    }
  }
#if defined(_OPENMP)
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) run(cuts[std::size_t(t)], cuts[std::size_t(t) + 1]);
#else
  run(0, count);
#endif
}

struct host_backend {
  template <class P, class T, class VA, class VB, class VC>
  static void gemm(const P& p0, op ta, op tb, T alpha, const VA& A, const VB& B, T beta, const VC& C) {
    const auto& p = fit_threads(p0, simd::tuning::op::gemm, C.count(), matrix_bytes(A, B, C));
    if (simd::gemm(p, ta, tb, alpha, A, B, beta, C)) return;
    for_each_matrix(p, C.count(), [&](index_t k) { reference::gemm(ta, tb, alpha, A[k], B[k], beta, C[k]); });
  }

  template <class P, class T, class VA, class VB>
  static void trsm(const P& p0, side s, uplo u, op t, diag d, T alpha, const VA& A, const VB& B) {
    const auto& p = fit_threads(p0, simd::tuning::op::trsm, B.count(), matrix_bytes(A, B));
    if (simd::trsm(p, s, u, t, d, alpha, A, B)) return;
    for_each_matrix(p, B.count(), [&](index_t k) { reference::trsm(s, u, t, d, alpha, A[k], B[k]); });
  }

  template <class P, class VA>
  static void potrf(const P& p0, uplo u, const VA& A, int* info, int max_n = -1) {
    (void)max_n;
    const auto& p = fit_threads(p0, simd::tuning::op::potrf, A.count(), matrix_bytes(A));
    if (simd::potrf(p, u, A, info)) return;
    using T = typename VA::value_type;
    if constexpr (!reference_kernels<P>) {
      if constexpr (!VA::uniform) {
        // Variable sizes: groups of one order through the fixed-size kernels, n > 32 blocked.
        by_order(p, A, info,
                 [&](const auto& sp, int nk, int lk, const std::vector<T*>& ptrs, std::vector<int>& sub) {
                   dispatch_size(nk, [&](auto N) {
                     constexpr int n = decltype(N)::value;
                     if constexpr (n != dynamic)
                       potrf(sp, u, pointer_view<T, n, n>(ptrs.data(), index_t(ptrs.size()), lk), sub.data());
                   });
                 },
                 [&](const std::vector<index_t>& big) {
                   // Without a large matrix OpenBLAS's thread count is left alone. (Seen beside
                   // this, not cured by it: with OMP_WAIT_POLICY=active, and at times by default,
                   // 3000 matrices up to order 16 took 5 - 7 ms instead of 0.13 on two cores
                   // unless OPENBLAS_NUM_THREADS=1: OpenBLAS's threads spinning beside the team.)
                   if (big.empty()) return;
                   const host::blocked::blas_single_threaded one;
                   for_each_listed(p, big, [&](index_t k) {
                     info[k] = host::blocked::available ? host::blocked::potrf(u, A[k]) : reference::potrf(u, A[k]);
                   });
                 });
        return;
      } else if constexpr (host::blocked::available && (VA::static_rows == dynamic || VA::static_rows > max_fixed_size)) {
        if (A.shape().rows() > max_fixed_size) {
          const host::blocked::blas_single_threaded one;
          for_each_matrix(p, A.count(), [&](index_t k) {
            const auto a = A[k];
            info[k] = host::blocked::potrf(u, matrix_ref<T>(a.data, a.ld, a.rows(), a.cols()));
          });
          return;
        }
      }
    }
    for_each_matrix(p, A.count(), [&](index_t k) { info[k] = reference::potrf(u, A[k]); });
  }

  template <class P, class VA, class VB>
  static void potrs(const P& p0, uplo u, const VA& A, const VB& B, const int* info) {
    const auto& p = fit_threads(p0, simd::tuning::op::potrs, B.count(), matrix_bytes(A, B));
    if (simd::potrs(p, u, A, B, info)) return;
    if constexpr (!reference_kernels<P> && host::blocked::available) {
      // Orders beyond the SIMD kernels: two BLAS triangular solves per matrix.
      using T = typename VB::value_type;
      const host::blocked::blas_single_threaded one;
      for_each_matrix(p, B.count(), [&](index_t k) {
        if (info && info[k] != 0) return;
        const auto a = A[k];
        if (a.rows() > max_fixed_size)
          {
          const auto b = B[k];
          host::blocked::potrs(u, matrix_ref<const T>(a.data, a.ld, a.rows(), a.cols()),
                               matrix_ref<T>(b.data, b.ld, b.rows(), b.cols()));
        }
        else
          reference::potrs(u, a, B[k]);
      });
      return;
    }
    for_each_matrix(p, B.count(), [&](index_t k) {
      if (!info || info[k] == 0) reference::potrs(u, A[k], B[k]);
    });
  }

  template <class P, class VA>
  static void getrf(const P& p0, const VA& A, const pivot_view& ipiv, int* info) {
    const auto& p = fit_threads(p0, simd::tuning::op::getrf, A.count(), matrix_bytes(A));
    if (simd::getrf(p, A, ipiv, info)) return;
    for_each_matrix(p, A.count(), [&](index_t k) { info[k] = reference::getrf(A[k], ipiv[k]); });
  }

  template <class P, class VA, class VB>
  static void getrs(const P& p0, op t, const VA& A, const pivot_view& ipiv, const VB& B, const int* info) {
    const auto& p = fit_threads(p0, simd::tuning::op::getrs, B.count(), matrix_bytes(A, B));
    if (simd::getrs(p, t, A, ipiv, B, info)) return;
    for_each_matrix(p, B.count(), [&](index_t k) {
      if (!info || info[k] == 0) reference::getrs(t, A[k], ipiv[k], B[k]);
    });
  }

  template <class P, class VA>
  static void getri(const P& p0, const VA& A, const pivot_view& ipiv, int* info) {
    const auto& p = fit_threads(p0, simd::tuning::op::getri, A.count(), matrix_bytes(A));
    if (simd::getri(p, A, ipiv, info)) return;
    using T = typename VA::value_type;
    for_each_matrix(p, A.count(), [] { return scratch<T>{}; }, [&](scratch<T>& s, index_t k) {
      s.reserve(A[k].rows());
      info[k] = reference::getri(A[k], ipiv[k], s.work.data());
    });
  }

  template <class P, class VA, class VX>
  static void inverse(const P& p0, const VA& A, const VX& X, int* info) {
    const auto& p = fit_threads(p0, simd::tuning::op::inverse, A.count(), matrix_bytes(A, X));
    if (simd::inverse(p, A, X, info)) return;
    using T = typename VX::value_type;
    for_each_matrix(p, A.count(), [] { return scratch<T>{}; }, [&](scratch<T>& s, index_t k) {
      s.reserve(A[k].rows());
      info[k] = reference::inverse(A[k], X[k], s.ipiv.data(), s.work.data());
    });
  }
};

template <class K>
struct backend<sequential_policy<K>> : host_backend {};
template <class K>
struct backend<parallel_policy<K>> : host_backend {};

}  // namespace tinybatch::detail
