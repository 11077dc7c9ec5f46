// The compiled kernel library (include/tinybatch/host/compiled.hpp): the front end's SIMD
// kernels at every square order 1..32, reached from run-time sizes. Built once per scalar
// type and family (TINYBATCH_KERNELS_T: float or double; TINYBATCH_KERNELS_PART: lu or
// cholesky), four translation units that compile in parallel (src/meson.build).
#include <tinybatch/tinybatch.hpp>

#include <atomic>
#include <vector>

#if !TINYBATCH_HOST_SIMD
#error "the kernel library holds the host SIMD kernels: build it for x86-64 with g++ or clang"
#endif

#define TINYBATCH_KERNELS_LU 1
#define TINYBATCH_KERNELS_CHOLESKY 2

namespace tinybatch::detail::compiled {
namespace {

using T = TINYBATCH_KERNELS_T;

/// The orders this library holds: all of 1..32, or (-Dkernel_library_sizes=few, the release
/// test build's check of the path) one unrolled, one looped and one lane-blocked order, or
/// (one, the sanitized test build: the glue here is the same for every order, and the kernels
/// themselves are sanitized by the SIMD tests) order 7.
constexpr bool built(int n) {
#if defined(TINYBATCH_KERNELS_FEW)
  return n == 2 || n == 7 || n == 8;
#elif defined(TINYBATCH_KERNELS_ONE)
  return n == 7;
#else
  return n >= 1 && n <= max_fixed_size;
#endif
}

/// f(integral_constant<int, n>) where n is an order of this library; false elsewhere.
template <class F>
bool at_order(int n, F&& f) {
  if (n < 1 || n > max_fixed_size) return false;
  return dispatch_size(n, [&](auto N) -> bool {
    constexpr int k = decltype(N)::value;
    if constexpr (k == dynamic || !built(k)) {
      return false;
    } else {
      const bool ran = f(N);
      if (ran) count_call();
      return ran;
    }
  });
}

/// f(view) with the M x N fixed-size view of the matrices at s: a pointer-array or strided one.
template <int M, int N, class F>
bool with_view(const matrix_starts<T>& s, index_t count, F&& f) {
  if (s.ptrs) return f(pointer_view<T, M, N>::make(s.ptrs, count, s.ld, M, N));
  return f(strided_view<T, M, N>::make(s.base, count, s.ld, s.stride, M, N));
}

/// Column j of every right-hand side at b (pointer arrays: a list of their own in `keep`).
matrix_starts<T> column(const matrix_starts<T>& b, int j, index_t count, std::vector<T*>& keep) {
  matrix_starts<T> c = b;
  if (b.ptrs) {
    keep.resize(std::size_t(count));
    for (index_t k = 0; k < count; ++k) keep[std::size_t(k)] = b.ptrs[k] + index_t(j) * b.ld;
    c.ptrs = keep.data();
  } else {
    c.base = b.base + index_t(j) * b.ld;
  }
  return c;
}

/// The policy of the fixed-size calls: `threads` as the caller's team (fit_threads already
/// applied there), the kernels the tuning table picks.
parallel_policy<kernels::automatic> policy(int threads) { return {threads}; }

/// The right-hand sides of B in blocks: solve(starts of column j, integral_constant<int, w>)
/// for w = 4 columns at a time, then the last nrhs % 4 one by one. The library holds the
/// solves at NRHS 1 and 4 only: each right-hand-side count is one more kernel per order, and
/// one column at a time reads the factors once per column (1.4 - 1.9x the time of a
/// four-column kernel at nrhs = 4). Whether a kernel runs depends on the order only, so a
/// false comes from the first block, before anything is written.
template <class F>
bool by_blocks(const matrix_starts<T>& b, int nrhs, index_t count, F&& solve) {
  std::vector<T*> keep;
  int j = 0;
  for (; j + 4 <= nrhs; j += 4)
    if (!solve(column(b, j, count, keep), std::integral_constant<int, 4>{})) return false;
  for (; j < nrhs; ++j)
    if (!solve(column(b, j, count, keep), std::integral_constant<int, 1>{})) return false;
  return true;
}

}  // namespace

#if TINYBATCH_KERNELS_PART == TINYBATCH_KERNELS_LU && TINYBATCH_KERNELS_DOUBLE
namespace {
std::atomic<std::uint64_t> calls{0};
}
std::uint64_t kernel_calls() { return calls.load(std::memory_order_relaxed); }
void count_call() { calls.fetch_add(1, std::memory_order_relaxed); }
#endif

#if TINYBATCH_KERNELS_PART == TINYBATCH_KERNELS_LU
bool getrf(int threads, const matrix_starts<T>& a, int m, int n, index_t count, const pivot_view& ipiv, int* info) {
  if (m != n) return false;
  return at_order(n, [&](auto N) {
    constexpr int k = decltype(N)::value;
    return with_view<k, k>(a, count, [&](const auto& A) { return simd::getrf(policy(threads), A, ipiv, info); });
  });
}

bool getrs(int threads, bool trans, const matrix_starts<T>& a, const pivot_view& ipiv, const matrix_starts<T>& b,
           int n, int nrhs, index_t count, const int* info) {
  return at_order(n, [&](auto N) {
    constexpr int k = decltype(N)::value;
    return by_blocks(b, nrhs, count, [&](const matrix_starts<T>& bj, auto W) {
      return with_view<k, k>(a, count, [&](const auto& A) {
        return with_view<k, decltype(W)::value>(bj, count, [&](const auto& B) {
          return simd::getrs(policy(threads), trans ? op::trans : op::no_trans, A, ipiv, B, info);
        });
      });
    });
  });
}
#endif

#if TINYBATCH_KERNELS_PART == TINYBATCH_KERNELS_CHOLESKY
bool potrf(int threads, bool lower, const matrix_starts<T>& a, int n, index_t count, int* info) {
  return at_order(n, [&](auto N) {
    constexpr int k = decltype(N)::value;
    return with_view<k, k>(a, count, [&](const auto& A) {
      return simd::potrf(policy(threads), lower ? uplo::lower : uplo::upper, A, info);
    });
  });
}

bool potrs(int threads, bool lower, const matrix_starts<T>& a, const matrix_starts<T>& b, int n, int nrhs,
           index_t count, const int* info) {
  return at_order(n, [&](auto N) {
    constexpr int k = decltype(N)::value;
    return by_blocks(b, nrhs, count, [&](const matrix_starts<T>& bj, auto W) {
      return with_view<k, k>(a, count, [&](const auto& A) {
        return with_view<k, decltype(W)::value>(bj, count, [&](const auto& B) {
          return simd::potrs(policy(threads), lower ? uplo::lower : uplo::upper, A, B, info);
        });
      });
    });
  });
}
#endif

}  // namespace tinybatch::detail::compiled
