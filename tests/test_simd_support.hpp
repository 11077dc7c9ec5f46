// Shared by the tests of the host SIMD kernels (test_simd_*.cpp): each fast path runs on one
// copy of a poisoned batch and `sequential_policy<kernels::reference>` on another, and the two
// buffers are compared element by element, padding and untouched triangles included.
#pragma once

#include "support.hpp"

#include <tinybatch/host/simd/arch.hpp>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

namespace tbt::simd {

inline constexpr tb::sequential_policy<tb::kernels::reference> reference{};
/// The SIMD kernels even where `kernels::automatic` prefers the reference.
inline constexpr tb::sequential_policy<tb::kernels::simd> simd_seq{};
inline constexpr tb::parallel_policy<tb::kernels::simd> simd_par{};

#if TINYBATCH_HOST_SIMD
namespace ts = tinybatch::detail::simd;

/// The instruction sets this CPU runs; each test runs once per set, forced through the cap.
inline std::vector<ts::isa> isas() {
  std::vector<ts::isa> v;
  if (ts::best_isa() >= ts::isa::avx2) v.push_back(ts::isa::avx2);
  if (ts::best_isa() >= ts::isa::avx512) v.push_back(ts::isa::avx512);
  return v;
}
inline const char* name(ts::isa s) { return s == ts::isa::avx512 ? "avx512" : "avx2"; }

/// Restores the automatic choice when a test ends.
struct isa_scope {
  explicit isa_scope(ts::isa s) { ts::limit_isa(s); }
  ~isa_scope() { ts::limit_isa(ts::isa::avx512); }
};

/// With `on`, every call in the scope takes the streaming paths (gemm: prefetch, streaming
/// stores where C is aligned for them and beta == 0; direct solves: one matrix at a time,
/// the next prefetched); without, none does (the default threshold is the last-level cache,
/// which no test batch reaches).
struct streaming_scope {
  std::size_t saved = ts::tuning::streaming_min_bytes().load();
  explicit streaming_scope(bool on) { ts::tuning::streaming_min_bytes() = on ? 0 : ~std::size_t(0); }
  ~streaming_scope() { ts::tuning::streaming_min_bytes() = saved; }
};
#endif

/// How the matrices sit in memory: `padded` has ld = m + 3, gaps between matrices and starts
/// one element past an aligned address; `packed` has ld = m, no gaps and no slack after the
/// last matrix (a read past it is a heap overflow under AddressSanitizer); `aligned` is
/// packed with the first matrix on a 64-byte boundary (where gemm's streaming stores apply)
/// and poisoned slack before it and after the last one (compare() checks it stays poison).
enum class shape { padded, packed, aligned };
inline const char* name(shape s) { return s == shape::padded ? "padded" : s == shape::packed ? "packed" : "aligned"; }

template <class T>
struct poisoned {
  int m, n, ld, offset;
  index_t count, stride;
  std::vector<T> buf;
  std::vector<T*> ptrs;  // the pointer layout lists the matrices in reverse order

  poisoned(int m_, int n_, index_t count_, shape s)
      : m(m_), n(n_), ld(s == shape::padded ? m_ + 3 : m_), offset(s == shape::padded ? 1 : 0),
        count(count_), stride(s == shape::padded ? index_t(m_ + 3) * n_ + 2 : index_t(m_) * n_),
        buf(std::size_t(offset + stride * count_) + (s == shape::aligned ? 64 / sizeof(T) : 0), poison<T>()),
        ptrs(std::size_t(count_)) {
    if (s == shape::aligned) {  // poisoned slack before the first matrix and after the last
      const auto miss = reinterpret_cast<std::uintptr_t>(buf.data()) % 64;
      offset = int((64 - miss) % 64 / sizeof(T));
    }
    point();
  }
  // A copy holds the same values in its own buffer, and points into that one.
  poisoned(const poisoned& o)
      : m(o.m), n(o.n), ld(o.ld), offset(o.offset), count(o.count), stride(o.stride), buf(o.buf),
        ptrs(o.ptrs.size()) {
    point();
  }
  poisoned& operator=(const poisoned&) = delete;
  void point() {
    for (index_t k = 0; k < count; ++k) ptrs[std::size_t(count - 1 - k)] = start(k);
  }
  T* start(index_t k) { return buf.data() + offset + k * stride; }
  T& at(index_t k, int i, int j) { return start(k)[i + index_t(j) * ld]; }
  void set(index_t k, const mat<T>& a) {
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) at(k, i, j) = a(i, j);
  }
  template <class F>
  void fill(F&& f) {
    for (index_t k = 0; k < count; ++k) set(k, f(k));
  }

  template <int M, int N, class E = T>
  tb::strided_view<E, M, N> strided() {
    return tb::strided_view<E, M, N>(buf.data() + offset, count, ld, stride);
  }
  template <int M, int N, class E = T>
  tb::pointer_view<E, M, N> pointers() {
    return tb::pointer_view<E, M, N>(reinterpret_cast<E* const*>(ptrs.data()), count, ld);
  }
};

/// Compares the whole buffers: where the reference left poison (padding, an untouched
/// triangle, a matrix skipped) the fast path must have left the same bits; where it wrote a
/// NaN the fast path must have written a NaN; elsewhere |got - want| <= tol * (1 + |want|).
/// Returns an empty string or the first difference.
template <class T>
std::string compare(const std::vector<T>& got, const std::vector<T>& want, double tol) {
  for (std::size_t e = 0; e < want.size(); ++e) {
    const T g = got[e], w = want[e];
    bool ok;
    if (is_poison(w))
      ok = is_poison(g);
    else if (std::isnan(w))
      ok = std::isnan(g) && !is_poison(g);
    else
      ok = std::abs(double(g) - double(w)) <= tol * (1 + std::abs(double(w)));
    if (!ok) {
      std::ostringstream s;
      s.precision(17);
      s << "element " << e << ": got " << g << (is_poison(g) ? " (poison)" : "") << ", want " << w
        << (is_poison(w) ? " (poison)" : "");
      return s.str();
    }
  }
  return {};
}

/// Matrix k of a test batch: random, or one of the special cases, in turn.
template <class T>
mat<T> getrf_case(int m, int n, index_t k, int variant) {
  mat<T> a(m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) a(i, j) = uniform<T>();
  const int j0 = int(k % n), i0 = int((k / 2) % m);
  switch ((k + variant) % 6) {
    case 1:  // small integers: many exact ties in |a|, in every column
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) a(i, j) = T(int(std::floor(uniform<T>(-2.5, 2.5))));
      break;
    case 2:  // an exactly zero column: info, and the factorization goes on
      a.col(j0).setZero();
      break;
    case 3:  // a NaN
      a(i0, j0) = std::numeric_limits<T>::quiet_NaN();
      break;
    case 4:  // the largest magnitude twice in column 0, opposite signs
      a(i0, 0) = T(-3);
      a(m - 1, 0) = T(3);
      break;
    case 5:  // rank one: zero pivots after the first step
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) a(i, j) = T(i + 1) * T(j % 3 + 1);
      break;
    default:
      break;
  }
  return a;
}

/// Matrix k of a Cholesky test batch: SPD, or not positive definite in one of three ways.
template <class T>
mat<T> spd_case(int n, index_t k, int variant) {
  mat<T> b(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) b(i, j) = uniform<T>();
  mat<T> a = b * b.transpose() + T(n) * mat<T>::Identity(n, n);
  const int j0 = int(k % n);
  switch ((k + variant) % 4) {
    case 1:  // not positive definite from the leading minor j0 + 1 on
      a(j0, j0) = T(-1);
      break;
    case 2:  // a NaN on the diagonal
      a(j0, j0) = std::numeric_limits<T>::quiet_NaN();
      break;
    case 3:  // a zero diagonal
      a(j0, j0) = T(0);
      break;
    default:
      break;
  }
  return a;
}

/// Factors with a diagonal entry below the smallest normal number: getrf keeps such a pivot
/// (info 0), potrs accepts any factor, and 1 / F(j, j) overflows where LAPACK's trsm divides.
/// Every other matrix that the checks compare (random, factored: `cases` is the period of the
/// special cases) gets one: row and column j of its factor F zeroed but F(j, j) = +-min / 16,
/// so that with the right-hand sides' rows that reach row j zeroed, x_j = 0 / F(j, j) = 0 and
/// no other row sees it, as the reference computes; a solve multiplying by the reciprocal
/// (inf) writes NaN over the column. Returns j, or -1 for the matrices left alone.
template <class T>
int subnormal_diagonal(poisoned<T>& F, index_t k, int variant, int cases, const std::vector<int>& info_buf) {
  if ((k + variant) % cases != 0 || (k + variant) / cases % 2 != 0 || info_buf[std::size_t(k)] != 0) return -1;
  const int j = int((k / 2 + variant) % F.m);
  for (int i = 0; i < F.m; ++i) F.at(k, i, j) = F.at(k, j, i) = T(0);
  F.at(k, j, j) = T(k % 4 < 2 ? 1 : -1) * std::numeric_limits<T>::min() / T(16);
  return j;
}

/// The row of b that getrs' forward interchanges (1-based ipiv) bring to row j.
inline int row_brought_to(int n, const int* ipiv, int j) {
  std::vector<int> idx(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) idx[i] = i;
  for (int i = 0; i < n; ++i) std::swap(idx[i], idx[ipiv[i] - 1]);
  return idx[j];
}

template <class T>
mat<T> random_of(int m, int n) {
  mat<T> a(m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) a(i, j) = uniform<T>();
  return a;
}

/// Zeroes matrix k in both buffers wherever info[k] != 0: solves with a singular or
/// unfinished factor hold infinities and are not compared (the factors themselves are).
template <class T>
void only_factored(poisoned<T>& a, poisoned<T>& b, const std::vector<int>& info) {
  for (index_t k = 0; k < a.count; ++k)
    if (info[std::size_t(k)] != 0)
      for (int j = 0; j < a.n; ++j)
        for (int i = 0; i < a.m; ++i) a.at(k, i, j) = b.at(k, i, j) = T(0);
}

/// Zeroes, in both buffers, the matrices built as special cases by getrf_case (exact ties,
/// zero columns, rank one, NaNs): a near-singular factor makes a solve or an inverse differ
/// wildly between two legitimate roundings (the lane kernels fuse multiply-adds in the
/// solves, the reference may not). The factors of those matrices are compared exactly.
/// With `info`, singular matrices stay (an inverse leaves their LU factors, exactly).
template <class T>
void only_random(poisoned<T>& a, poisoned<T>& b, int variant, const std::vector<int>* info = nullptr) {
  for (index_t k = 0; k < a.count; ++k)
    if ((k + variant) % 6 != 0 && !(info && (*info)[std::size_t(k)] != 0))
      for (int j = 0; j < a.n; ++j)
        for (int i = 0; i < a.m; ++i) a.at(k, i, j) = b.at(k, i, j) = T(0);
}

/// For the matrices k where `got` (M x R solutions of op(A_k) X = B) differs from `want` by
/// more than `tol` elementwise: whether both are still solutions to working accuracy, by
/// LAPACK's residual test applied to their difference, ||op(A_k) (got - want)||_inf <=
/// 60 n eps ||A_k||_inf ||want||_inf (each of two backward-stable solves leaves a residual
/// below 30 n eps ||A|| ||X||; their solutions differ by up to cond(A) times that, which
/// made an elementwise check fail on the rare ill-conditioned random matrix). Such a matrix
/// of `got` is then set to `want`, so that `compare` judges the rest (poison, NaNs, the
/// other matrices). `a0` holds the unfactored A_k (n x n); matrices with poison or NaNs in
/// `want` are left to `compare`.
template <class T>
void accept_solutions(poisoned<T>& got, poisoned<T>& want, poisoned<T>& a0, bool trans, double tol) {
  const int n = a0.m, r = want.n;
  for (index_t k = 0; k < want.count; ++k) {
    bool close = true, plain = true;
    double xmax = 0;
    for (int j = 0; j < r; ++j)
      for (int i = 0; i < n; ++i) {
        const T g = got.at(k, i, j), w = want.at(k, i, j);
        if (is_poison(w) || std::isnan(w) || is_poison(g) || std::isnan(g)) plain = false;
        if (!(std::abs(double(g) - double(w)) <= tol * (1 + std::abs(double(w))))) close = false;
        xmax = std::max(xmax, std::abs(double(w)));
      }
    if (close || !plain) continue;
    double anorm = 0, worst = 0;
    for (int i = 0; i < n; ++i) {
      double row = 0;
      for (int l = 0; l < n; ++l) row += std::abs(double(trans ? a0.at(k, l, i) : a0.at(k, i, l)));
      anorm = std::max(anorm, row);
    }
    for (int j = 0; j < r; ++j)
      for (int i = 0; i < n; ++i) {
        double y = 0;
        for (int l = 0; l < n; ++l)
          y += double(trans ? a0.at(k, l, i) : a0.at(k, i, l)) * (double(got.at(k, l, j)) - double(want.at(k, l, j)));
        worst = std::max(worst, std::abs(y));
      }
    if (worst <= 60.0 * n * eps<T>() * anorm * xmax)
      for (int j = 0; j < r; ++j)
        for (int i = 0; i < n; ++i) got.at(k, i, j) = want.at(k, i, j);
  }
}

template <class T>
double tol(int n) {
  return 8.0 * (n + 2) * eps<T>();
}

/// Whether this build's set holds size n for scalar type T. By default every n in 1..32, both
/// types. The sets below are for builds where compile time is short (CI: two cores, 90
/// minutes, for everything; tests/run.sh).
template <class T>
constexpr bool size_tested(int n) {
  [[maybe_unused]] constexpr bool dbl = sizeof(T) == 8;  // unused in the sets of both types
#if defined(TB_SIMD_ENDS)
  // The sanitizer build of the compact test (-Dcompact_test_sizes=ends): one unrolled size
  // and the largest, one in each type (the compact layout needs no staging, so the staging
  // paths of the other sets do not apply, and its kernels are the same template in both
  // types, across matrices, whatever n). Both sizes in both types took 466 CPU s of
  // sanitized compile on the 2-core EPYC VM, this set 93 s (float 32 was most of it).
  return dbl ? n == 32 : n == 2;
#elif defined(TB_SIMD_FEW)
  // The AddressSanitizer + UBSan build of tests/run.sh (-Dsimd_test_sizes=few; the compact
  // test's release build too, -Dcompact_test_sizes=few): the staging paths once each.
  // Element by element (double 2, float 7: n * n is no multiple of the lanes), whole packs
  // through in-register transposes (double 8), and double n = 32: half-width lanes (the
  // solves), runs that end at the end of the allocation. Float n = 32 was in this set until
  // the twenty-fourth session: on the AVX2-only Zen 3 VM the CI run went past its 90 minutes,
  // test_simd_solve_2 alone compiling for over 41 of them under the sanitizers, mostly float
  // 32's direct potrs (the release build still runs float 32 in every test_simd_* program).
  return dbl ? n == 2 || n == 8 || n == 32 : n == 7;
#else
  // Sizes where the kernels change shape: one pack and a remainder, whole packs, either
  // side of 8 and 16, the ends.
  bool sparse = false;
  for (int s : {1, 2, 3, 5, 7, 8, 9, 16, 17, 31, 32}) sparse = sparse || n == s;
#if defined(TB_SIMD_SPARSE)
  return sparse;  // -Dsimd_test_sizes=sparse
#elif defined(TB_SIMD_SPLIT)
  // -Dsimd_test_sizes=split (tests/run.sh's release build): the sparse sizes in both types,
  // every other n in one, double where n / 2 is even and float where it is odd (each type
  // gets odd and even n). Every n in 1..32 runs, in 43 of the 64 (type, n) pairs and about
  // two thirds of the compile time of all 64 (which had taken half of CI's 90 minutes).
  return sparse || ((n / 2) % 2 == 0) == dbl;
#else
  return true;
#endif
#endif
}

// -Dsimd_test_shards=K (the full grid, tests/full-grid.sh) builds each SIMD test program K
// times, shard i taking the sizes n with n % K == i: the full grid's longest programs (the
// compact test at every n, 28 minutes of compile as one translation unit) then spread over
// the cores instead of leaving one of them compiling long after the others are done.
#if !defined(TB_SIMD_SHARDS)
#define TB_SIMD_SHARDS 1
#define TB_SIMD_SHARD 0
#endif
static_assert(TB_SIMD_SHARDS >= 1 && TB_SIMD_SHARD >= 0 && TB_SIMD_SHARD < TB_SIMD_SHARDS);
/// Whether this program holds the size-independent checks (the first shard).
inline constexpr bool first_shard = TB_SIMD_SHARD == 0;

/// Calls f(integral_constant<int, n>) for the n in 1..32 of this build's set (size_tested)
/// and this program's shard.
template <class T, int N, class F>
void for_size(F& f) {
  if constexpr (size_tested<T>(N) && N % TB_SIMD_SHARDS == TB_SIMD_SHARD) f(std::integral_constant<int, N>{});
}
template <class T, class F, int... I>
void for_sizes_impl(F& f, std::integer_sequence<int, I...>) {
  (for_size<T, I + 1>(f), ...);
}
template <class T, class F>
void for_sizes(F&& f) {
  for_sizes_impl<T>(f, std::make_integer_sequence<int, 32>{});
}

/// Sizes at which the tests also run the default policy (kernels::automatic): one of the
/// lane-blocked sizes of every build's set, and the largest.
constexpr bool automatic_size(int n) { return n == 8 || n == 32; }

inline constexpr index_t small_counts[] = {1, 3, 7};
inline constexpr index_t big_count = 1003;  // uneven split over threads

}  // namespace tbt::simd
