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

/// f(k) for the listed matrices, spread over the team with a dynamic schedule (the matrices
/// of a variable-size batch differ in cost; the list is sorted largest first).
template <class Policy, class F>
void for_each_listed(const Policy& policy, const std::vector<index_t>& list, F&& f) {
  const index_t count = index_t(list.size());
  if constexpr (std::is_same_v<Policy, parallel_policy<typename Policy::kernels>>) {
#if defined(_OPENMP)
    const int threads = team_size(policy);
    if (threads > 1 && count > 1) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
      for (index_t i = 0; i < count; ++i) f(list[std::size_t(i)]);
      return;
    }
#endif
  }
  (void)policy;
  for (index_t i = 0; i < count; ++i) f(list[std::size_t(i)]);
}

/// A variable-size batch by order: matrices of order 1..32 with a common leading dimension
/// go together through the fixed-size kernels (a pointer-array view each group), larger ones
/// one by one through the blocked Cholesky, largest first.
template <class P, class T, class Small, class Large>
void by_order(const P& p, const vbatch_view<T>& A, int* info, Small&& small, Large&& large) {
  const index_t count = A.count();
  const int* n = A.rows_array();
  const int* ld = A.ld_array();
  // By order, largest first (a counting sort: orders above 32 in one bucket, sorted
  // apart), then within one order by ld where they differ: runs of one (order, ld) are the
  // groups.
  constexpr int buckets = max_fixed_size + 2;  // orders 0 .. 32, then all larger ones
  auto bucket = [&](index_t k) { return n[k] > max_fixed_size ? 0 : buckets - 1 - n[k]; };
  std::size_t start[buckets + 1] = {};
  for (index_t k = 0; k < count; ++k) ++start[bucket(k) + 1];
  for (int b = 0; b < buckets; ++b) start[b + 1] += start[b];
  std::vector<index_t> order(static_cast<std::size_t>(count));
  {
    std::size_t at[buckets];
    std::copy(start, start + buckets, at);
    for (index_t k = 0; k < count; ++k) order[at[bucket(k)]++] = k;
  }
  std::sort(order.begin(), order.begin() + std::ptrdiff_t(start[1]), [&](index_t a, index_t b) { return n[a] > n[b]; });
  for (int b = 1; b < buckets; ++b) {
    const auto b0 = order.begin() + std::ptrdiff_t(start[b]), b1 = order.begin() + std::ptrdiff_t(start[b + 1]);
    if (b1 - b0 > 1 && std::any_of(b0, b1, [&](index_t k) { return ld[k] != ld[*b0]; }))
      std::stable_sort(b0, b1, [&](index_t a, index_t c) { return ld[a] < ld[c]; });
  }
  std::size_t i = 0;
  std::vector<index_t> big;
  while (i < order.size() && n[order[i]] > max_fixed_size) big.push_back(order[i++]);
  large(big);
  std::vector<T*> ptrs;
  std::vector<int> sub;
  while (i < order.size()) {
    std::size_t e = i;
    const int nk = n[order[i]], lk = ld[order[i]];
    while (e < order.size() && n[order[e]] == nk && ld[order[e]] == lk) ++e;
    if (nk == 0) {
      for (std::size_t q = i; q < e; ++q) info[order[q]] = 0;
    } else {
      ptrs.clear();
      for (std::size_t q = i; q < e; ++q) ptrs.push_back(A.pointers()[order[q]]);
      sub.assign(e - i, 0);
      small(nk, lk, ptrs, sub);
      for (std::size_t q = i; q < e; ++q) info[order[q]] = sub[q - i];
    }
    i = e;
  }
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
                 [&](int nk, int lk, const std::vector<T*>& ptrs, std::vector<int>& sub) {
                   dispatch_size(nk, [&](auto N) {
                     constexpr int n = decltype(N)::value;
                     if constexpr (n != dynamic)
                       potrf(p, u, pointer_view<T, n, n>(ptrs.data(), index_t(ptrs.size()), lk), sub.data());
                   });
                 },
                 [&](const std::vector<index_t>& big) {
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
