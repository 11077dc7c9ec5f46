// Shared test machinery: random data with a fresh, printed seed; batches laid out with padding
// (leading dimension and stride larger than packed) and poisoned so that unwritten outputs and
// writes outside the matrices are caught; the size/count/layout grid; LAPACK's test ratios.
#pragma once

#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tinybatch/eigen.hpp>
#include "random_poison.hpp"
#include <tinybatch/tinybatch.hpp>

namespace tbt {
namespace tb = tinybatch;
using tb::index_t;

using tinybatch_tests::is_poison;
using tinybatch_tests::poison;
using tinybatch_tests::rng;
using tinybatch_tests::seed;
using tinybatch_tests::uniform;

template <class T>
using mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

enum class layout { strided, pointers };
inline const char* name(layout l) { return l == layout::strided ? "strided" : "pointers"; }
template <layout L>
using layout_c = std::integral_constant<layout, L>;

/// `count` m x n matrices in one buffer with ld = m + 3 and two spare elements between
/// matrices, so writes past a column or a matrix land on poison and are caught. The pointer
/// layout lists the same matrices through a pointer array (in that order).
template <class T>
struct test_batch {
  int m, n, ld;
  index_t count, stride;
  std::vector<T> buf;
  std::vector<T*> ptrs;

  test_batch(int m_, int n_, index_t count_)
      : m(m_), n(n_), ld(m_ + 3), count(count_), stride(index_t(m_ + 3) * n_ + 2),
        buf(std::size_t(stride * count_ + 1), poison<T>()), ptrs(std::size_t(count_)) {
    for (index_t k = 0; k < count; ++k) ptrs[k] = buf.data() + k * stride;
  }
  T& at(index_t k, int i, int j) { return buf[std::size_t(k * stride + i + index_t(j) * ld)]; }
  mat<T> get(index_t k) {
    mat<T> a(m, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) a(i, j) = at(k, i, j);
    return a;
  }
  void set(index_t k, const mat<T>& a) {
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) at(k, i, j) = a(i, j);
  }
  void fill_random() {
    for (index_t k = 0; k < count; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) at(k, i, j) = uniform<T>();
  }
  void fill_poison() {
    for (index_t k = 0; k < count; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) at(k, i, j) = poison<T>();
  }
  /// Every element outside the matrices (ld padding, gaps between matrices) still poison.
  bool padding_intact() const {
    for (std::size_t e = 0; e < buf.size(); ++e) {
      const index_t off = index_t(e) % stride, k = index_t(e) / stride;
      const bool inside = k < count && off < index_t(ld) * n && int(off % ld) < m;
      if (!inside && !is_poison(buf[e])) return false;
    }
    return true;
  }
  /// Number of elements of the matrices that are still poison (= never written).
  index_t unwritten() {
    index_t c = 0;
    for (index_t k = 0; k < count; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) c += is_poison(at(k, i, j));
    return c;
  }

  template <int M, int N, class E, layout L>
  auto view_as(layout_c<L>) {
    if constexpr (L == layout::strided) {
      if constexpr (M == tb::dynamic || N == tb::dynamic)
        return tb::strided_view<E, M, N>(buf.data(), m, n, count, ld, stride);
      else
        return tb::strided_view<E, M, N>(buf.data(), count, ld, stride);
    } else {
      auto p = reinterpret_cast<E* const*>(ptrs.data());
      if constexpr (M == tb::dynamic || N == tb::dynamic)
        return tb::pointer_view<E, M, N>(p, m, n, count, ld);
      else
        return tb::pointer_view<E, M, N>(p, count, ld);
    }
  }
  template <int M, int N, class L>
  auto view(L l) { return view_as<M, N, T>(l); }
  template <int M, int N, class L>
  auto cview(L l) { return view_as<M, N, const T>(l); }
};

/// The grid of the foundation issue: sizes, batch counts, both layouts. Sizes up to 32 run
/// both as compile-time and as run-time extents.
inline constexpr int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 13, 16, 17, 31, 32, 33, 64};
inline constexpr index_t counts[] = {0, 1, 3, 1000};
#if defined(TB_GRID_FEW)
// -Dgrid_sizes=few (both builds of tests/run.sh): three compile-time extents (the smallest, a
// whole AVX-512 double pack, the largest), every size still as a run-time one. Each fixed size
// instantiates the operation again: at 13 of them each sanitized grid program took 80 - 100 s
// to compile, 15 minutes of CI's 90 in all; five (1, 3, 8, 17, 32) until the twenty-fourth
// session, whose CI run on an AVX2-only Zen 3 VM was stopped at 106 minutes, unfinished.
using fixed_sizes = std::integer_sequence<int, 1, 8, 32>;
#else
using fixed_sizes = std::integer_sequence<int, 1, 2, 3, 4, 5, 6, 7, 8, 13, 16, 17, 31, 32>;
#endif

/// Calls f(n, N) for every size n, with N = integral_constant<int, n> where n is a fixed
/// size and integral_constant<int, dynamic> for every n.
template <class F, int... I>
void for_each_size_impl(F& f, std::integer_sequence<int, I...>) {
  (f(I, std::integral_constant<int, I>{}), ...);
  for (int n : sizes) f(n, std::integral_constant<int, tb::dynamic>{});
}
template <class F>
void for_each_size(F&& f) {
  for_each_size_impl(f, fixed_sizes{});
}
template <class F>
void for_each_layout(F&& f) {
  f(layout_c<layout::strided>{});
  f(layout_c<layout::pointers>{});
}

template <class T>
constexpr double eps() {
  return double(std::numeric_limits<T>::epsilon());
}
template <class T>
double norm1(const mat<T>& a) {  // max column sum, LAPACK's '1' norm
  return a.size() == 0 ? 0.0 : double(a.cwiseAbs().colwise().sum().maxCoeff());
}

/// LAPACK's threshold for its test ratios.
inline constexpr double ratio_threshold = 30;

/// The permutation matrix P of LAPACK's ipiv (rows interchanged in order), as P A = L U.
template <class T>
mat<T> perm_from_ipiv(const int* ipiv, int m, int mn) {
  mat<T> p = mat<T>::Identity(m, m);
  for (int j = 0; j < mn; ++j) p.row(j).swap(p.row(ipiv[j] - 1));
  return p;
}

/// A random SPD matrix: B B^T + n I (condition number modest, never a zero entry).
template <class T>
mat<T> random_spd(int n) {
  mat<T> b(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) b(i, j) = uniform<T>();
  return b * b.transpose() + T(n) * mat<T>::Identity(n, n);
}

template <class T>
mat<T> random_mat(int m, int n) {
  mat<T> b(m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) b(i, j) = uniform<T>();
  return b;
}

/// A random m x n matrix of full rank in working precision: redrawn while its 1-norm
/// condition number, estimated in double, exceeds 1 / (100 eps) (square; for m != n that of
/// the Gram matrix against its square). A plain random float matrix now and then reaches
/// cond ~ 1 / eps and can then factor to an exactly zero pivot (CI run of 8664753:
/// a 3 x 3 with cond 3.5e8 gave sgetrf's info = 3 and getrs's test, expecting info = 0,
/// failed); such a matrix tests nothing a solve test is about, so it is never drawn. The
/// singular matrices the tests want are built on purpose (zero columns, rows, ranks).
template <class T>
mat<T> random_full_rank(int m, int n) {
  const double bound = m == n ? 100 * eps<T>() : (100 * eps<T>()) * (100 * eps<T>());
  for (;;) {
    mat<T> a = random_mat<T>(m, n);
    if (std::min(m, n) == 0) return a;
    Eigen::MatrixXd d = a.template cast<double>();
    if (m > n) d = Eigen::MatrixXd(d.transpose() * d);
    if (m < n) d = Eigen::MatrixXd(d * d.transpose());
    if (Eigen::PartialPivLU<Eigen::MatrixXd>(d).rcond() >= bound) return a;
  }
}

/// Solve residual ratio, LAPACK's dget02: ||B - A X|| / (||A|| ||X|| n eps).
template <class T>
double solve_ratio(const mat<T>& a, const mat<T>& x, const mat<T>& b) {
  if (!x.allFinite()) return 1e300;
  const double den = norm1(a) * norm1(x) * std::max<Eigen::Index>(a.rows(), 1) * eps<T>();
  return norm1(mat<T>(b - a * x)) / (den > 0 ? den : 1e-300);
}

/// Calls f(n, N, count, L) over the whole grid, with the case in Catch2's context.
template <class F>
void for_each_case(F&& f) {
  for_each_size([&](int n, auto N) {
    for (index_t count : counts)
      for_each_layout([&](auto L) {
        INFO("n = " << n << ", count = " << count << ", layout = " << name(L.value)
                    << ", extents = " << (N.value == tb::dynamic ? "run-time" : "compile-time"));
        f(n, N, count, L);
      });
  });
}

/// Tracks the worst value of a per-matrix quantity and which matrix gave it.
struct worst {
  double value = 0;
  index_t where = -1;
  void operator()(double v, index_t k) {
    if (!(v <= value)) value = v, where = k;  // NaN counts as worst
  }
};

#define TBT_CONTEXT(n, count, l, N)                                                     \
  INFO("n = " << (n) << ", count = " << (count) << ", layout = " << tbt::name(l)       \
              << ", extents = " << ((N) == tinybatch::dynamic ? "run-time" : "compile-time"))

}  // namespace tbt

#if defined(TINYBATCH_TEST_LAPACK)
// Reference LAPACK, to compare pivots and info exactly.
extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, std::size_t);
}
namespace tbt {
template <class T>
int lapack_getrf(mat<T>& a, std::vector<int>& ipiv) {  // a: overwritten with LAPACK's factors
  int m = int(a.rows()), n = int(a.cols()), lda = std::max(1, m), info = 0;
  ipiv.assign(std::size_t(std::min(m, n)), 0);
  if constexpr (std::is_same_v<T, double>)
    dgetrf_(&m, &n, a.data(), &lda, ipiv.data(), &info);
  else
    sgetrf_(&m, &n, a.data(), &lda, ipiv.data(), &info);
  return info;
}
template <class T>
int lapack_potrf(char uplo, mat<T> a) {
  int n = int(a.rows()), lda = std::max(1, n), info = 0;
  if constexpr (std::is_same_v<T, double>)
    dpotrf_(&uplo, &n, a.data(), &lda, &info, 1);
  else
    spotrf_(&uplo, &n, a.data(), &lda, &info, 1);
  return info;
}
/// Pivots equal LAPACK's, except where LAPACK's blocked-recursive factorization and ours
/// round a near-tie differently: at the first difference both chosen pivots must have the
/// same magnitude to rounding (then the two orders legitimately diverge). Exact ties are
/// tested apart, with integer data.
template <class T>
bool same_pivots_as_lapack(const mat<T>& a0, const mat<T>& lu, const int* ipiv, int& info_lapack) {
  mat<T> f = a0;
  std::vector<int> lp;
  info_lapack = lapack_getrf<T>(f, lp);
  for (std::size_t j = 0; j < lp.size(); ++j) {
    if (lp[j] == ipiv[j]) continue;
    const double ours = std::abs(double(lu(j, j))), theirs = std::abs(double(f(j, j)));
    return std::abs(ours - theirs) <= 64 * double(a0.rows()) * eps<T>() * std::max(ours, theirs);
  }
  return true;
}
}  // namespace tbt
#endif
