// The fast kernels of issue #4 (cuda/kernels/) on fixed-size views, every n in 1..32,
// against the host reference. Built once per operation (TB_FAST_OP, see meson.build) so the
// many instantiations compile in parallel.
//
// getrf, potrf and gemm evaluate every element with the operations and the order of the
// reference kernels, so with -fmad=false (as every GPU test is built) they must agree with
// the host exactly as the generic path does: same pivots, same info, same values (the shared
// comparison of support.cuh). gemm on strided batches from the cuBLAS crossover on goes to
// cuBLAS (its own order; the shared tolerance). The fast inverse (Gauss-Jordan) computes
// inv(A) along another path than getrf + getri: info must match exactly, a singular matrix
// must leave the same LU factors, and an invertible one must pass LAPACK's dget03 ratio
// ||I - A X|| / (n ||A|| ||X|| eps) < 30. Each case also runs the generic kernels on the same fixed-size views
// (cuda::policy<kernels::reference>) for a few n: fixed-size views as kernel arguments.
#include <utility>

#include "support.cuh"

#ifndef TB_FAST_OP
#define TB_FAST_OP 1
#endif
#ifndef TB_FAST_NMAX  // smaller for quick compile checks
#define TB_FAST_NMAX 32
#endif

namespace {
using namespace tbc;

constexpr tb::cuda::policy<> gpu_fast{};
constexpr tb::cuda::policy<tb::kernels::reference> gpu_generic{};
template <class P>
constexpr bool is_fast = std::is_same_v<P, tb::cuda::policy<>>;

inline bool fast_size(int n) {
  if (!small_grid()) return true;
  return n == 1 || n == 2 || n == 3 || n == 5 || n == 8 || n == 17 || n == 32;
}
/// Batches: single, remainders of every matrices-per-block count, 1000, and (full grid,
/// a few sizes) a million and a few.
inline std::vector<index_t> fast_counts(int n) {
  if (small_grid()) return {1, 37};
  std::vector<index_t> c{1, 3, 1000, 1003};
  if (n == 3 || n == 8) c.push_back((index_t(1) << 20) + 7);
  return c;
}
template <int N>
constexpr bool with_generic = N == 3 || N == 8 || N == 32;

/// The device batch as a fixed-size M x N view.
template <int M, int N, layout L, class T>
auto dfix(tbatch<T>& b, layout_c<L>) {
  if constexpr (L == layout::strided)
    return tb::strided_view<T, M, N>(b.first(), b.count, b.ld, b.stride);
  else
    return tb::pointer_view<T, M, N>(b.dp.data(), b.count, b.ld);
}

template <class F>
void each_policy(F&& f, bool generic) {
  f(gpu_fast);
  if (generic) f(gpu_generic);
}

// ---- getrf --------------------------------------------------------------------------------

template <class T, int N, layout L, class P>
void run_getrf(layout_c<L> l, index_t count, const P& pol) {
  INFO("getrf " << name(L) << " n=" << N << " count=" << count << " fast=" << is_fast<P>);
  tbatch<T> A(N, N, count);
  fill_general(A);
  tpivots ipiv(N, count);
  auto info = tints::info(count);
  A.upload(), ipiv.upload(), info.upload();
  tb::getrf(host_ref, A.hview(l), ipiv.hview(l), info.hspan());
  tb::getrf(pol, dfix<N, N>(A, l), ipiv.dview(l), info.dspan());
  check_all(arg(A, "A"), arg(ipiv, "ipiv"), arg(info, "info"));
}

// ---- potrf --------------------------------------------------------------------------------

template <class T, int N, layout L, class P>
void run_potrf(layout_c<L> l, tb::uplo ul, index_t count, const P& pol) {
  INFO("potrf " << name(L) << " " << name(ul) << " n=" << N << " count=" << count);
  tbatch<T> A(N, N, count);
  fill_spd(A, ul);
  auto info = tints::info(count);
  A.upload(), info.upload();
  tb::potrf(host_ref, ul, A.hview(l), info.hspan());
  tb::potrf(pol, ul, dfix<N, N>(A, l), info.dspan());
  check_all(arg(A, "A"), arg(info, "info"));
}

// ---- gemm ---------------------------------------------------------------------------------

template <class T, int N, layout L, class P>
void run_gemm(layout_c<L> l, tb::op ta, tb::op tb_, T beta, index_t count, const P& pol,
              pack pk = pack::padded) {
  INFO("gemm " << name(L) << " " << name(ta) << name(tb_) << " beta=" << beta << " n=" << N
               << " count=" << count << " " << name(pk));
  tbatch<T> A(N, N, count, pk), B(N, N, count, pk), C(N, N, count, pk);
  A.fill_random(), B.fill_random(), fill_rhs(C);
  A.upload(), B.upload(), C.upload();
  const T alpha = T(1.5);
  tb::gemm(host_ref, ta, tb_, alpha, A.hview(l), B.hview(l), beta, C.hview(l));
  tb::gemm(pol, ta, tb_, alpha, dfix<N, N>(A, l), dfix<N, N>(B, l), beta, dfix<N, N>(C, l));
  check_all(arg(A, "A"), arg(B, "B"), arg(C, "C"));
}

/// gemm on strided batches whose sizes reach the cuBLAS crossover (tuning.hpp's
/// gemm_vendor_min_n): the backend calls cublas<t>gemmStridedBatched, which sums in its own
/// order (checked as every gemm is, to the shared tolerance). The BLAS rules hold there too:
/// with beta == 0 the poisoned C is never read, with alpha == 0 the poisoned A and B are not.
/// And the fast kernel, which still takes pointer arrays at these sizes, is exact on strided
/// views too (called directly).
template <class T, int N>
void run_gemm_vendor(index_t count) {
  INFO("gemm from the cuBLAS crossover, n=" << N << " count=" << count);
  constexpr layout_c<layout::strided> l{};
  for (int rule = 0; rule < 3; ++rule) {
    INFO("case " << rule << " (0: beta == 0, C poison; 1: alpha == 0, A and B poison; 2: fast kernel)");
    tbatch<T> A(N, N, count), B(N, N, count), C(N, N, count);
    const T alpha = rule == 1 ? T(0) : T(1.5), beta = rule == 0 ? T(0) : T(-0.5);
    if (rule != 1) A.fill_random(), B.fill_random();
    if (rule != 0) fill_rhs(C);
    A.upload(), B.upload(), C.upload();
    tb::gemm(host_ref, tb::op::no_trans, tb::op::trans, alpha, A.hview(l), B.hview(l), beta, C.hview(l));
    if (rule == 2)
      CHECK(tb::cuda::fast::gemm(cudaStream_t{}, tb::op::no_trans, tb::op::trans, alpha, dfix<N, N>(A, l),
                                 dfix<N, N>(B, l), beta, dfix<N, N>(C, l)));
    else
      tb::gemm(gpu_fast, tb::op::no_trans, tb::op::trans, alpha, dfix<N, N>(A, l), dfix<N, N>(B, l), beta,
               dfix<N, N>(C, l));
    check_all(arg(A, "A"), arg(B, "B"), arg(C, "C"));
  }
}

// ---- inverse ------------------------------------------------------------------------------

template <class T, int N, layout L, class P>
void run_inverse(layout_c<L> l, index_t count, const P& pol) {
  INFO("inverse " << name(L) << " n=" << N << " count=" << count);
  tbatch<T> A(N, N, count), X(N, N, count);
  fill_general(A);
  auto info = tints::info(count);
  const std::vector<T> a0 = A.h;
  A.upload(), X.upload(), info.upload();
  tb::inverse(host_ref, A.hview(l), X.hview(l), info.hspan());
  tb::inverse(pol, dfix<N, N>(A, l), dfix<N, N>(X, l), info.dspan());
  A.download(), X.download(), info.download();
  {
    const std::string r = compare(A, "A");  // untouched
    INFO(r);
    CHECK(r.empty());
    const std::string ri = compare(info, "info");
    INFO(ri);
    CHECK(ri.empty());
  }
  if (!is_fast<P>) {
    const std::string r = compare(X, "X");
    INFO(r);
    CHECK(r.empty());
    return;
  }
  const double eps = std::numeric_limits<T>::epsilon();
  double worst = 0;
  std::string bad;
  for (index_t k = 0; k < count && bad.empty(); ++k) {
    const std::size_t o = std::size_t(k * X.stride);
    auto x = [&](int i, int j) { return double(X.got[o + i + std::size_t(j) * X.ld]); };
    auto a = [&](int i, int j) { return double(a0[o + i + std::size_t(j) * A.ld]); };
    if (info.h[k] != 0 || nan_k(k)) {  // LU factors, or NaN somewhere: as the host left it
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < N; ++i) {
          const double h = X.h[o + i + std::size_t(j) * X.ld], g = x(i, j);
          if (info.h[k] != 0 && !(h == g || (std::isnan(h) && std::isnan(g)) ||
                                  std::abs(h - g) <= 32 * N * eps * std::max(1.0, std::abs(h))))
            bad = "matrix " + std::to_string(k) + ": LU factors differ";
        }
      continue;
    }
    bool finite = true;  // the host's inverse overflowed (matrices scaled to subnormals)
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i) finite = finite && std::isfinite(X.h[o + i + std::size_t(j) * X.ld]);
    if (!finite) {
      bool gpu_finite = true;
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < N; ++i) gpu_finite = gpu_finite && std::isfinite(x(i, j));
      if (gpu_finite) bad = "matrix " + std::to_string(k) + ": host inverse overflows, GPU's does not";
      continue;
    }
    double na = 0, nx = 0, nr = 0;  // 1-norms
    for (int j = 0; j < N; ++j) {
      double ca = 0, cx = 0, cr = 0;
      for (int i = 0; i < N; ++i) {
        ca += std::abs(a(i, j)), cx += std::abs(x(i, j));
        double s = i == j ? 1.0 : 0.0;
        for (int p = 0; p < N; ++p) s -= a(i, p) * x(p, j);
        cr += std::abs(s);
      }
      na = std::max(na, ca), nx = std::max(nx, cx), nr = std::max(nr, cr);
    }
    const double ratio = nr / (N * na * nx * eps);
    if (!(ratio < 30)) bad = "matrix " + std::to_string(k) + ": ratio " + std::to_string(ratio);
    worst = std::max(worst, ratio);
  }
  // Padding and gaps: poison stays poison.
  for (std::size_t e = 0; e < X.h.size() && bad.empty(); ++e)
    if (is_poison(X.h[e]) != is_poison(X.got[e])) bad = "X offset " + std::to_string(e) + ": poison";
  INFO(bad << " (largest ratio " << worst << ")");
  CHECK(bad.empty());
}

// ---- getrs, potrs, gesv, posv ----------------------------------------------------------------
//
// The fast solves are not bit-identical to the reference (solve.cuh: reciprocal pivots, the
// backward substitution in another order), so B is checked as LAPACK's dget02 / dpot02 check
// it: ||b - op(A) x||_1 / (||op(A)||_1 ||x||_1 eps) < 30 for every column, on the original
// A and B, where the host's solution is finite; or no worse than twice the host's own ratio
// (matrices scaled into the subnormal range, whose factors have lost precision). Matrices a
// call must skip (info != 0 given) must be untouched, bit for bit; padding and gaps stay
// poison; A, ipiv and info (from the host's factorization, or the fast getrf / potrf for
// gesv / posv, which agree with the host exactly) must match the host.

/// Element (i, j) of op(A) for matrix k from its original entries.
template <class T>
struct orig_a {
  const std::vector<T>* a;
  const tbatch<T>* b;  // layout
  bool trans, sym_lower, sym_upper;
  double operator()(index_t k, int i, int j) const {
    if (trans) std::swap(i, j);
    if ((sym_lower && i < j) || (sym_upper && i > j)) std::swap(i, j);
    return double((*a)[std::size_t(k * b->stride + i + index_t(j) * b->ld)]);
  }
};

template <class T>
double solve_ratio(const tbatch<T>& X, const std::vector<T>& xs, const std::vector<T>& b0,
                   const orig_a<T>& a, index_t k) {
  const int n = X.m;
  const double eps = std::numeric_limits<T>::epsilon();
  double na = 0;
  for (int j = 0; j < n; ++j) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += std::abs(a(k, i, j));
    na = std::max(na, s);
  }
  double worst = 0;
  for (int c = 0; c < X.n; ++c) {
    const std::size_t o = std::size_t(k * X.stride + index_t(c) * X.ld);
    double nx = 0, nr = 0;
    for (int i = 0; i < n; ++i) {
      nx += std::abs(double(xs[o + i]));
      double r = double(b0[o + i]);
      for (int l = 0; l < n; ++l) r -= a(k, i, l) * double(xs[o + l]);
      nr += std::abs(r);
    }
    if (!std::isfinite(nr) || !std::isfinite(nx)) return INFINITY;
    if (nr == 0) continue;
    worst = std::max(worst, nx > 0 && na > 0 ? nr / (na * nx * eps) : 1 / eps);
  }
  return worst;
}

/// Checks the solved B (downloaded) against the original b0 and A; `skipped(k)`: must be
/// untouched; `failed(k)`: the factorization failed (info != 0), any values (as LAPACK).
template <class T, class Skip, class Failed>
void check_solution(const tbatch<T>& X, const std::vector<T>& b0, const orig_a<T>& a, Skip skipped,
                    Failed failed) {
  std::string bad;
  double worst = 0;
  for (index_t k = 0; k < X.count && bad.empty(); ++k) {
    const std::size_t o = std::size_t(k * X.stride);
    if (skipped(k)) {
      for (int c = 0; c < X.n; ++c)
        for (int i = 0; i < X.m; ++i) {
          const std::size_t e = o + i + std::size_t(c) * X.ld;
          if (std::memcmp(&X.got[e], &b0[e], sizeof(T)) != 0)
            bad = "matrix " + std::to_string(k) + ": skipped, but B changed";
        }
      continue;
    }
    if (failed(k)) continue;
    bool finite = true;
    for (int c = 0; c < X.n; ++c)
      for (int i = 0; i < X.m; ++i) finite = finite && std::isfinite(X.h[o + i + std::size_t(c) * X.ld]);
    if (!finite) continue;  // NaN in the data, or overflow: no promise
    const double g = solve_ratio(X, X.got, b0, a, k), h = solve_ratio(X, X.h, b0, a, k);
    if (!(g < 30 || g <= 2 * h))
      bad = "matrix " + std::to_string(k) + ": ratio " + std::to_string(g) + " (host " +
            std::to_string(h) + ")";
    if (std::isfinite(g)) worst = std::max(worst, g);
  }
  for (std::size_t e = 0; e < X.h.size() && bad.empty(); ++e)
    if (is_poison(X.h[e]) != is_poison(X.got[e])) bad = "B offset " + std::to_string(e) + ": poison";
  INFO(bad << " (largest ratio " << worst << ")");
  CHECK(bad.empty());
}

template <class... B>
void check_exact(std::pair<B*, const char*>... b) {
  (
      [&] {
        const std::string r = compare(*b.first, b.second);
        INFO(r);
        CHECK(r.empty());
      }(),
      ...);
}

template <class T, int N, int NRHS, layout L, class P>
void run_getrs(layout_c<L> l, tb::op t, bool with_info, index_t count, const P& pol) {
  INFO("getrs " << name(L) << " " << name(t) << (with_info ? " with info" : "") << " n=" << N
                << " nrhs=" << NRHS << " count=" << count << " fast=" << is_fast<P>);
  tbatch<T> A(N, N, count), B(N, NRHS, count);
  fill_general(A);
  fill_rhs(B);
  const std::vector<T> a0 = A.h, b0 = B.h;
  tpivots ipiv(N, count);
  auto info = tints::info(count);
  tb::getrf(host_ref, A.hview(l), ipiv.hview(l), info.hspan());
  A.upload(), B.upload(), ipiv.upload(), info.upload();
  if (with_info) {
    tb::getrs(host_ref, t, A.hview(l), ipiv.hview(l), B.hview(l), std::span<const int>(info.hspan()));
    tb::getrs(pol, t, dfix<N, N>(A, l), ipiv.dview(l), dfix<N, NRHS>(B, l),
              std::span<const int>(info.dspan()));
  } else {
    tb::getrs(host_ref, t, A.hview(l), ipiv.hview(l), B.hview(l));
    tb::getrs(pol, t, dfix<N, N>(A, l), ipiv.dview(l), dfix<N, NRHS>(B, l));
  }
  A.download(), B.download(), ipiv.download(), info.download();
  check_exact(arg(A, "A"), arg(ipiv, "ipiv"), arg(info, "info"));
  check_solution(B, b0, orig_a<T>{&a0, &A, t != tb::op::no_trans, false, false},
                 [&](index_t k) { return with_info && info.h[k] != 0; },
                 [&](index_t k) { return info.h[k] != 0; });
}

template <class T, int N, int NRHS, layout L, class P>
void run_gesv(layout_c<L> l, index_t count, const P& pol) {
  INFO("gesv " << name(L) << " n=" << N << " nrhs=" << NRHS << " count=" << count);
  tbatch<T> A(N, N, count), B(N, NRHS, count);
  fill_general(A);
  fill_rhs(B);
  const std::vector<T> a0 = A.h, b0 = B.h;
  tpivots ipiv(N, count);
  auto info = tints::info(count);
  A.upload(), B.upload(), ipiv.upload(), info.upload();
  tb::gesv(host_ref, A.hview(l), ipiv.hview(l), B.hview(l), info.hspan());
  tb::gesv(pol, dfix<N, N>(A, l), ipiv.dview(l), dfix<N, NRHS>(B, l), info.dspan());
  A.download(), B.download(), ipiv.download(), info.download();
  check_exact(arg(A, "A"), arg(ipiv, "ipiv"), arg(info, "info"));
  check_solution(B, b0, orig_a<T>{&a0, &A, false, false, false},
                 [&](index_t k) { return info.h[k] != 0; },
                 [&](index_t k) { return info.h[k] != 0; });
}

template <class T, int N, int NRHS, layout L, class P>
void run_potrs(layout_c<L> l, tb::uplo ul, bool with_info, index_t count, const P& pol) {
  INFO("potrs " << name(L) << " " << name(ul) << (with_info ? " with info" : "") << " n=" << N
                << " nrhs=" << NRHS << " count=" << count << " fast=" << is_fast<P>);
  tbatch<T> A(N, N, count), B(N, NRHS, count);
  fill_spd(A, ul);
  fill_rhs(B);
  const std::vector<T> a0 = A.h, b0 = B.h;
  auto info = tints::info(count);
  tb::potrf(host_ref, ul, A.hview(l), info.hspan());
  A.upload(), B.upload(), info.upload();
  if (with_info) {
    tb::potrs(host_ref, ul, A.hview(l), B.hview(l), std::span<const int>(info.hspan()));
    tb::potrs(pol, ul, dfix<N, N>(A, l), dfix<N, NRHS>(B, l), std::span<const int>(info.dspan()));
  } else {
    tb::potrs(host_ref, ul, A.hview(l), B.hview(l));
    tb::potrs(pol, ul, dfix<N, N>(A, l), dfix<N, NRHS>(B, l));
  }
  A.download(), B.download(), info.download();
  check_exact(arg(A, "A"), arg(info, "info"));
  const bool lo = ul == tb::uplo::lower;
  check_solution(B, b0, orig_a<T>{&a0, &A, false, lo, !lo},
                 [&](index_t k) { return with_info && info.h[k] != 0; },
                 [&](index_t k) { return info.h[k] != 0; });
}

template <class T, int N, int NRHS, layout L, class P>
void run_posv(layout_c<L> l, tb::uplo ul, index_t count, const P& pol) {
  INFO("posv " << name(L) << " " << name(ul) << " n=" << N << " nrhs=" << NRHS << " count=" << count);
  tbatch<T> A(N, N, count), B(N, NRHS, count);
  fill_spd(A, ul);
  fill_rhs(B);
  const std::vector<T> a0 = A.h, b0 = B.h;
  auto info = tints::info(count);
  A.upload(), B.upload(), info.upload();
  tb::posv(host_ref, ul, A.hview(l), B.hview(l), info.hspan());
  tb::posv(pol, ul, dfix<N, N>(A, l), dfix<N, NRHS>(B, l), info.dspan());
  A.download(), B.download(), info.download();
  check_exact(arg(A, "A"), arg(info, "info"));
  const bool lo = ul == tb::uplo::lower;
  check_solution(B, b0, orig_a<T>{&a0, &A, false, lo, !lo},
                 [&](index_t k) { return info.h[k] != 0; },
                 [&](index_t k) { return info.h[k] != 0; });
}

/// Right-hand sides per n: one, and a few (2..4) for the second kind of each operation.
template <int N>
constexpr int few_rhs = N % 3 + 2;

#ifndef TB_FAST_PART  // -1: every size and type in one program; 0..3: see meson.build
#define TB_FAST_PART -1
#endif
/// This translation unit's share of the sizes: all, or the even or odd ones.
constexpr bool part_size(int n) { return TB_FAST_PART < 0 || n % 2 == TB_FAST_PART % 2; }

template <int... I, class F>
void for_sizes(std::integer_sequence<int, I...>, F&& f) {
  (
      [&] {
        if constexpr (part_size(I + 1))
          if (fast_size(I + 1)) f(std::integral_constant<int, I + 1>{});
      }(),
      ...);
}
template <class F>
void each_size(F&& f) {
#if defined(TB_FAST_SPARSE)
  // Machines without a GPU (CI) only compile these programs, which then report SKIP:
  // representative sizes compile every code path of the kernels (one thread per matrix at
  // 1 and 2, the same templates as float 4; 16-byte packed tiles and two rows per thread at
  // 12; an odd n; whole-warp pivot searches, the transposed solves and cuBLAS's gemm at 32)
  // in a sixth of the time. The GPU runs build all of 1..32.
  for_sizes(std::integer_sequence<int, 0, 1, 6, 11, 31>{}, f);
#else
  for_sizes(std::make_integer_sequence<int, TB_FAST_NMAX>{}, f);
#endif
}

}  // namespace

// The types of this translation unit's share (TB_FAST_PART 0, 1: float; 2, 3: double).
#if TB_FAST_PART < 0
#define TB_FAST_TYPES float, double
#define TB_FAST_SUFFIX ""
#elif TB_FAST_PART == 0
#define TB_FAST_TYPES float
#define TB_FAST_SUFFIX " (float, even n)"
#elif TB_FAST_PART == 1
#define TB_FAST_TYPES float
#define TB_FAST_SUFFIX " (float, odd n)"
#elif TB_FAST_PART == 2
#define TB_FAST_TYPES double
#define TB_FAST_SUFFIX " (double, even n)"
#else
#define TB_FAST_TYPES double
#define TB_FAST_SUFFIX " (double, odd n)"
#endif

#if TB_FAST_OP == 1
TEMPLATE_TEST_CASE("cuda fast getrf, n = 1..32", "[fast][getrf]", float, double) {
  for_layouts([](auto l) {
    each_size([&](auto n) {
      constexpr int N = decltype(n)::value;
      for (index_t count : fast_counts(N))
        each_policy([&](const auto& p) { run_getrf<TestType, N>(l, count, p); },
                    with_generic<N> && count < 5000);
    });
  });
}
#elif TB_FAST_OP == 2
TEMPLATE_TEST_CASE("cuda fast inverse, n = 1..32" TB_FAST_SUFFIX, "[fast][inverse]", TB_FAST_TYPES) {
  for_layouts([](auto l) {
    each_size([&](auto n) {
      constexpr int N = decltype(n)::value;
      for (index_t count : fast_counts(N))
        if (count < 5000)
          each_policy([&](const auto& p) { run_inverse<TestType, N>(l, count, p); }, with_generic<N>);
    });
  });
}
#elif TB_FAST_OP == 3
TEMPLATE_TEST_CASE("cuda fast potrf, n = 1..32", "[fast][potrf]", float, double) {
  for_layouts([](auto l) {
    each_size([&](auto n) {
      constexpr int N = decltype(n)::value;
      for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper})
        for (index_t count : fast_counts(N))
          each_policy([&](const auto& p) { run_potrf<TestType, N>(l, ul, count, p); },
                      with_generic<N> && count < 5000);
    });
  });
}
#elif TB_FAST_OP == 4
TEMPLATE_TEST_CASE("cuda fast gemm, n = 1..32" TB_FAST_SUFFIX, "[fast][gemm]", TB_FAST_TYPES) {
  for_layouts([](auto l) {
    each_size([&](auto n) {
      constexpr int N = decltype(n)::value;
      for (index_t count : fast_counts(N)) {
        if (count > 5000) continue;
        for (tb::op ta : {tb::op::no_trans, tb::op::trans})
          for (tb::op tb_ : {tb::op::no_trans, tb::op::trans})
            for (TestType beta : {TestType(0), TestType(-0.5)})
              each_policy([&](const auto& p) { run_gemm<TestType, N>(l, ta, tb_, beta, count, p); },
                          with_generic<N> && ta == tb_);
        // Packed strided batches: the 16-byte loads of tuning.hpp's `packed` sizes, aligned
        // and (first matrix one element in) misaligned, whole blocks and the last partial one.
        if constexpr (decltype(l)::value == layout::strided)
          for (pack pk : {pack::packed, pack::packed_off1})
            for (tb::op t : {tb::op::no_trans, tb::op::trans})
              run_gemm<TestType, N>(l, t, t, TestType(-0.5), count, gpu_fast, pk);
      }
    });
  });
}
#if TB_FAST_PART < 0 || TB_FAST_PART % 2 == 0  // its sizes are even: with the even parts
TEMPLATE_TEST_CASE("cuda gemm on strided batches from the cuBLAS crossover" TB_FAST_SUFFIX, "[fast][gemm][cublas]",
                   TB_FAST_TYPES) {
  // Fixed sizes cross over only in double (float's fast kernel wins up to 32); run-time
  // sizes cross over in both types (test_blas covers those).
  constexpr int from = tb::cuda::fast_kernels::gemm_vendor_min_n(int(sizeof(TestType)));
  if constexpr (from <= 32) {
    for (index_t count : small_grid() ? std::vector<index_t>{1, 37} : std::vector<index_t>{1, 3, 1003}) {
      run_gemm_vendor<TestType, from>(count);
      run_gemm_vendor<TestType, 32>(count);
    }
  } else {
    SUCCEED("no crossover on fixed sizes for this type");
  }
}
#endif
#elif TB_FAST_OP == 5
TEMPLATE_TEST_CASE("cuda fast getrs, n = 1..32" TB_FAST_SUFFIX, "[fast][getrs]", TB_FAST_TYPES) {
  for_layouts([](auto l) {
    each_size([&](auto n) {
      constexpr int N = decltype(n)::value;
      for (index_t count : fast_counts(N)) {
        if (count > 5000) continue;
        for (bool with_info : {false, true}) {
          each_policy([&](const auto& p) { run_getrs<TestType, N, 1>(l, tb::op::no_trans, with_info, count, p); },
                      with_generic<N> && !with_info);
          run_getrs<TestType, N, few_rhs<N>>(l, with_info ? tb::op::trans : tb::op::conj_trans, with_info,
                                             count, gpu_fast);
        }
      }
      if constexpr (N == 5 || N == 32)  // the most right-hand sides the fast kernel takes
        for (index_t count : fast_counts(N))
          if (count < 5000) run_getrs<TestType, N, 32>(l, tb::op::trans, true, count, gpu_fast);
    });
  });
}
#elif TB_FAST_OP == 6
TEMPLATE_TEST_CASE("cuda fast gesv, n = 1..32" TB_FAST_SUFFIX, "[fast][gesv]", TB_FAST_TYPES) {
  for_layouts([](auto l) {
    each_size([&](auto n) {
      constexpr int N = decltype(n)::value;
      for (index_t count : fast_counts(N))
        if (count < 5000) run_gesv<TestType, N, N % 2 == 0 ? 1 : few_rhs<N>>(l, count, gpu_fast);
    });
  });
}
#elif TB_FAST_OP == 7
TEMPLATE_TEST_CASE("cuda fast potrs, n = 1..32" TB_FAST_SUFFIX, "[fast][potrs]", TB_FAST_TYPES) {
  for_layouts([](auto l) {
    each_size([&](auto n) {
      constexpr int N = decltype(n)::value;
      for (index_t count : fast_counts(N)) {
        if (count > 5000) continue;
        for (bool with_info : {false, true}) {
          each_policy([&](const auto& p) { run_potrs<TestType, N, 1>(l, tb::uplo::lower, with_info, count, p); },
                      with_generic<N> && !with_info);
          run_potrs<TestType, N, few_rhs<N>>(l, tb::uplo::upper, with_info, count, gpu_fast);
        }
      }
    });
  });
}
#elif TB_FAST_OP == 8
TEMPLATE_TEST_CASE("cuda fast posv, n = 1..32" TB_FAST_SUFFIX, "[fast][posv]", TB_FAST_TYPES) {
  for_layouts([](auto l) {
    each_size([&](auto n) {
      constexpr int N = decltype(n)::value;
      for (index_t count : fast_counts(N))
        if (count < 5000)
          for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper})
            run_posv<TestType, N, N % 2 == 0 ? few_rhs<N> : 1>(l, ul, count, gpu_fast);
    });
  });
}
#endif
