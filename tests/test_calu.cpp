// calu::getrf (CPU task graph, tournament pivoting): backward error ||P A - L U||_1 /
// (max(m, n) ||A||_1 eps) < 30 (LAPACK's dget01 ratio), pivots valid LAPACK interchanges,
// info as getrf's on singular matrices, growth factor max|U| / max|A| against partial
// pivoting's (LAPACKE getrf) on random, pivot-needing, ill-conditioned and adversarial
// matrices (Wilkinson's GEPP growth matrix, Foster's and Wright's), tall-skinny and wide
// shapes, sizes not multiples of b; getrs and gesv residuals. Outputs are poisoned: ipiv
// prefilled with junk, padding rows (lda > m) filled with a NaN payload checked bit for bit.
// Small sizes: the whole program runs in seconds on two cores.
#include <catch2/catch.hpp>

#include <tinybatch/tasks/calu.hpp>
#include <tinybatch/tasks/hybrid.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "random_poison.hpp"

// Under LeakSanitizer: libgomp reports allocations of its own (136 bytes each, allocated
// within libgomp.so) after the random-matrix case below, whose parallel regions ask for 1, 2
// and 3 threads in turn; none is this library's, so only those are suppressed.
extern "C" const char* __lsan_default_suppressions() { return "leak:libgomp.so\n"; }

namespace {

namespace calu = tinybatch::calu;
using tinybatch_tests::is_poison;
using tinybatch_tests::poison;
using tinybatch_tests::rng;
using tinybatch_tests::seed;

/// A column-major m x n matrix with leading dimension ld (>= m), padding rows poisoned.
template <class T>
struct matrix {
  int m = 0, n = 0, ld = 1;
  std::vector<T> v;
  matrix(int m_, int n_, int pad = 0) : m(m_), n(n_), ld(std::max(1, m_ + pad)), v(std::size_t(ld) * n_, poison<T>()) {
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) (*this)(i, j) = T(0);
  }
  T& operator()(int i, int j) { return v[i + std::size_t(j) * ld]; }
  T operator()(int i, int j) const { return v[i + std::size_t(j) * ld]; }
  T* data() { return v.data(); }
  bool padding_intact() const {
    for (int j = 0; j < n; ++j)
      for (int i = m; i < ld; ++i)
        if (!is_poison(v[i + std::size_t(j) * ld])) return false;
    return true;
  }
};

template <class T>
double eps() {
  return std::numeric_limits<T>::epsilon();
}

template <class T>
matrix<T> random_matrix(int m, int n, int pad = 0) {
  matrix<T> a(m, n, pad);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) a(i, j) = tinybatch_tests::uniform<T>();
  return a;
}

template <class T>
double norm1(const matrix<T>& a) {
  double best = 0;
  for (int j = 0; j < a.n; ++j) {
    double s = 0;
    for (int i = 0; i < a.m; ++i) s += std::fabs(double(a(i, j)));
    best = std::max(best, s);
  }
  return best;
}

template <class T>
double max_abs(const matrix<T>& a, bool upper_only = false) {
  double best = 0;
  for (int j = 0; j < a.n; ++j)
    for (int i = 0; i < (upper_only ? std::min(a.m, j + 1) : a.m); ++i) best = std::max(best, std::fabs(double(a(i, j))));
  return best;
}

/// Every ipiv[i] a valid 1-based interchange: i + 1 <= ipiv[i] <= m.
bool pivots_valid(const std::vector<int>& ipiv, int m) {
  for (int i = 0; i < int(ipiv.size()); ++i)
    if (ipiv[i] < i + 1 || ipiv[i] > m) return false;
  return true;
}

/// ||P A - L U||_1 / (max(m, n) ||A||_1 eps), in double whatever T.
template <class T>
double lu_ratio(const matrix<T>& a0, const matrix<T>& lu, const std::vector<int>& ipiv) {
  const int m = a0.m, n = a0.n, mn = std::min(m, n);
  std::vector<double> pa(std::size_t(m) * n), l(std::size_t(m) * mn, 0.0), u(std::size_t(mn) * n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) pa[i + std::size_t(j) * m] = double(a0(i, j));
  LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, n, pa.data(), m, 1, mn, ipiv.data(), 1);
  for (int j = 0; j < mn; ++j) {
    l[j + std::size_t(j) * m] = 1;
    for (int i = j + 1; i < m; ++i) l[i + std::size_t(j) * m] = double(lu(i, j));
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= std::min(j, mn - 1); ++i) u[i + std::size_t(j) * mn] = double(lu(i, j));
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, mn, -1.0, l.data(), m, u.data(), mn, 1.0,
              pa.data(), m);
  double r = 0;
  for (int j = 0; j < n; ++j) {
    double s = 0;
    for (int i = 0; i < m; ++i) s += std::fabs(pa[i + std::size_t(j) * m]);
    if (!(s <= r)) r = s;  // NaN sticks (std::max would drop it)
  }
  const double an = norm1(a0);
  return an == 0 ? r : r / (std::max(m, n) * an * eps<T>());
}

/// Partial pivoting's result (LAPACKE getrf) for the growth comparison and info.
template <class T>
struct gepp {
  matrix<T> lu;
  std::vector<int> ipiv;
  int info;
  explicit gepp(const matrix<T>& a) : lu(a), ipiv(std::max(1, std::min(a.m, a.n))) {
    info = calu::detail::lapack<T>::getrf(a.m, a.n, lu.data(), lu.ld, ipiv.data());
  }
};

struct result {
  double ratio, growth, gepp_growth, gepp_ratio;
  int info, gepp_info;
  bool pivots_ok, padding_ok, finite;
  std::vector<int> ipiv;
};

/// Factors a copy of a with CALU (ipiv poisoned with junk) and partial pivoting; measures.
template <class T>
result factor(const matrix<T>& a, calu::options o) {
  matrix<T> lu = a;
  const int mn = std::min(a.m, a.n);
  std::vector<int> ipiv(std::size_t(mn) + 1, -7777);
  result r{};
  r.info = calu::getrf(a.m, a.n, lu.data(), lu.ld, ipiv.data(), o);
  const bool tail_ok = ipiv.back() == -7777;  // nothing past min(m, n) entries written
  ipiv.pop_back();
  r.pivots_ok = tail_ok && pivots_valid(ipiv, a.m);
  r.padding_ok = lu.padding_intact();
  r.finite = true;
  for (int j = 0; j < a.n; ++j)
    for (int i = 0; i < a.m; ++i) r.finite = r.finite && std::isfinite(lu(i, j));
  r.ratio = r.pivots_ok ? lu_ratio(a, lu, ipiv) : 1e300;
  const double amax = max_abs(a);
  r.growth = max_abs(lu, true) / amax;
  gepp<T> g(a);
  r.gepp_growth = max_abs(g.lu, true) / amax;
  r.gepp_info = g.info;
  r.gepp_ratio = lu_ratio(a, g.lu, g.ipiv);
  r.ipiv = std::move(ipiv);
  return r;
}

calu::options opts(int b, int row_blocks, int threads = 2, bool lookahead = true, int leaf_rows = 0, int wide = 0,
                   int inverse = 0) {
  calu::options o;
  o.b = b, o.row_blocks = row_blocks, o.threads = threads, o.lookahead = lookahead, o.leaf_rows = leaf_rows;
  o.wide_update = wide, o.panel_inverse = inverse;
  return o;
}

// Per matrix the growth may be up to 4x partial pivoting's (one small matrix varies more
// than the mean, which the mean-growth test holds to 2x). bound: the backward error ratio allowed (30, or partial pivoting's own where its growth
// makes that larger).
#define CHECK_FACTOR_BOUND(res, growth_factor, bound)                                          \
  do {                                                                                         \
    const result& r_ = (res);                                                                  \
    INFO("ratio " << r_.ratio << " vs GEPP " << r_.gepp_ratio << ", growth " << r_.growth        \
                  << " vs GEPP " << r_.gepp_growth << ", info " << r_.info << " vs GEPP "        \
                  << r_.gepp_info);                                                            \
    CHECK(r_.pivots_ok);                                                                       \
    CHECK(r_.padding_ok);                                                                      \
    CHECK(r_.finite);                                                                          \
    CHECK(r_.ratio < (bound));                                                                 \
    CHECK(r_.growth <= (growth_factor) * r_.gepp_growth);                                     \
  } while (0)
#define CHECK_FACTOR(r, growth_factor) CHECK_FACTOR_BOUND(r, growth_factor, 30.0)

// ---- structured matrices -----------------------------------------------------------------

/// Wilkinson's GEPP growth matrix: 1 on the diagonal and in the last column, -1 below the
/// diagonal; partial pivoting's growth is 2^(n-1).
template <class T>
matrix<T> wilkinson(int n) {
  matrix<T> a(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) a(i, j) = i == j || j == n - 1 ? T(1) : i > j ? T(-1) : T(0);
  return a;
}

/// Foster's matrix (a Newton-Cotes discretisation of a Volterra integral equation), k h = 2/3,
/// c = 1: partial pivoting's growth is exponential in n.
template <class T>
matrix<T> foster(int n, double kh = 2.0 / 3.0, double c = 1.0) {
  matrix<T> a(n, n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < i; ++j) a(i, j) = T(j == 0 ? -kh / 2 : -kh);
    a(i, i) = T(i == 0 ? 1.0 : 1.0 - kh / 2);
    a(i, n - 1) += T(-1.0 / c);
  }
  a(0, 0) = T(1);
  return a;
}

/// Wright's matrix (multiple shooting for a two-point boundary value problem): identity
/// blocks on the diagonal and in the top right corner, -exp(M h) below the diagonal, with
/// M = [-1/6 1; 1 -1/6]; partial pivoting's growth is exponential in n.
template <class T>
matrix<T> wright(int blocks, double h = 0.3) {
  const int n = 2 * blocks;
  matrix<T> a(n, n);
  const double e1 = std::exp(5.0 / 6.0 * h), e2 = std::exp(-7.0 / 6.0 * h);
  const double p = 0.5 * (e1 + e2), q = 0.5 * (e1 - e2);  // exp(M h) = [p q; q p]
  for (int k = 0; k < blocks; ++k) {
    a(2 * k, 2 * k) = a(2 * k + 1, 2 * k + 1) = T(1);
    if (k > 0) {
      a(2 * k, 2 * k - 2) = a(2 * k + 1, 2 * k - 1) = T(-p);
      a(2 * k, 2 * k - 1) = a(2 * k + 1, 2 * k - 2) = T(-q);
    }
  }
  a(0, n - 2) = a(1, n - 1) = T(1);
  return a;
}

/// A random orthogonal n x n matrix (Q of the QR of a random matrix), in double.
std::vector<double> random_orthogonal(int n) {
  std::vector<double> q(std::size_t(n) * n), tau(n);
  for (auto& x : q) x = tinybatch_tests::uniform<double>();
  LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, q.data(), n, tau.data());
  LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, n, n, q.data(), n, tau.data());
  return q;
}

/// U diag(s) V^T with singular values from 1 down to 1 / cond, geometrically.
template <class T>
matrix<T> ill_conditioned(int n, double cond) {
  const std::vector<double> u = random_orthogonal(n), v = random_orthogonal(n);
  std::vector<double> us(u);
  for (int j = 0; j < n; ++j) {
    const double s = std::pow(cond, -double(j) / std::max(1, n - 1));
    for (int i = 0; i < n; ++i) us[i + std::size_t(j) * n] *= s;
  }
  std::vector<double> a(std::size_t(n) * n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, us.data(), n, v.data(), n, 0.0, a.data(), n);
  matrix<T> r(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) r(i, j) = T(a[i + std::size_t(j) * n]);
  return r;
}

}  // namespace

TEMPLATE_TEST_CASE("calu::getrf on random matrices: backward error, pivots, growth", "[calu]", float, double) {
  using T = TestType;
  (void)seed();
  struct shape { int m, n, b, pr; };
  // Square and tall-skinny, multiples of b and not, one panel and many, P_r 1 (partial
  // pivoting in the panel), 2, 4, 7 (not a power of two: an odd tree), wide m < n.
  const shape shapes[] = {{1, 1, 8, 2},     {5, 5, 8, 2},     {64, 64, 16, 4},  {100, 100, 16, 4},
                          {127, 127, 32, 2}, {200, 200, 24, 7}, {257, 257, 32, 4}, {1000, 40, 16, 4},
                          {3000, 64, 32, 8}, {1500, 100, 32, 5}, {513, 96, 96, 4}, {60, 200, 16, 2},
                          {33, 97, 8, 3},    {300, 300, 16, 1}};
  // With look-ahead, the rest of each step per block column and as one wide update; the
  // recursive halving with leaves of one panel and of two (and a bit).
  for (const shape& s : shapes)
    for (int threads : {1, 2, 3})
      // look-ahead, + wide update, none, + the panel by U11^-1, recursive (leaves of one panel),
      // recursive without look-ahead in its leaves (leaves of two panels and a bit)
      for (int mode : {0, 1, 2, 3, 4, 5}) {
        const bool lookahead = mode != 2 && mode != 5;
        if (!lookahead && threads != 2) continue;
        INFO("m " << s.m << " n " << s.n << " b " << s.b << " P_r " << s.pr << " threads " << threads
                  << " lookahead " << lookahead << " wide update " << (mode == 1) << " panel inverse " << (mode == 3)
                  << " recursive " << (mode >= 4));
        const matrix<T> a = random_matrix<T>(s.m, s.n, 3);
        calu::options o = opts(s.b, s.pr, threads, lookahead, 0, mode == 1, mode == 3);
        if (mode >= 4) o.recursive = 1, o.leaf_width = mode == 4 ? s.b : 2 * s.b + 1;
        const result r = factor(a, o);
        CHECK(r.info == 0);
        // One small matrix's growth varies more than the mean's (below): 4x per matrix.
        CHECK_FACTOR(r, 4.0);
      }
}

TEMPLATE_TEST_CASE("calu::getrf's mean growth on random matrices within 2x of partial pivoting's", "[calu]", float,
                   double) {
  using T = TestType;
  double g = 0, gp = 0;
  for (int k = 0; k < 8; ++k) {
    const result r = factor(random_matrix<T>(256, 256), opts(16, 8));
    CHECK_FACTOR(r, 4.0);
    g += r.growth, gp += r.gepp_growth;
  }
  INFO("mean growth " << g / 8 << ", partial pivoting's " << gp / 8);
  CHECK(g <= 2 * gp);
}

TEST_CASE("calu::getrf with default options", "[calu]") {
  const matrix<double> a = random_matrix<double>(300, 300);
  const result r = factor(a, calu::options{});
  CHECK(r.info == 0);
  CHECK_FACTOR(r, 4.0);
}

TEST_CASE("calu::getrf's tournament chooses other pivots than partial pivoting", "[calu]") {
  // With P_r > 1 the pivot rows are the tournament's: on random matrices some differ from
  // partial pivoting's (a panel that only did partial pivoting would pass every other test).
  int differ = 0;
  for (int k = 0; k < 4; ++k) {
    const matrix<double> a = random_matrix<double>(400, 64);
    const result r = factor(a, opts(32, 4));
    gepp<double> g(a);
    differ += r.ipiv != g.ipiv;
    CHECK_FACTOR(r, 4.0);
  }
  CHECK(differ > 0);
  // The tournament finds the largest entry of the first column whatever the leaves: every
  // leaf's first candidate is its own largest, and every merge keeps the larger. So U(1, 1)
  // is max |A(:, 1)| and ipiv[0] its row.
  for (int k = 0; k < 6; ++k) {
    const matrix<double> a = random_matrix<double>(500 + 37 * k, 40);
    const result r = factor(a, opts(8, 2 + k));
    int arg = 0;
    for (int i = 1; i < a.m; ++i)
      if (std::fabs(a(i, 0)) > std::fabs(a(arg, 0))) arg = i;
    CHECK(r.ipiv[0] == arg + 1);
  }
  // With one row block the panel is partial pivoting; one panel: exactly LAPACK's getrf.
  const matrix<double> a = random_matrix<double>(150, 40);
  const result r = factor(a, opts(40, 1));
  gepp<double> g(a);
  CHECK(r.ipiv == g.ipiv);
}

TEMPLATE_TEST_CASE("calu::getrf on matrices that need pivoting", "[calu]", float, double) {
  using T = TestType;
  for (int n : {64, 100})
  for (int inv : {0, 1})  // TSLU's rows below by TRSM, by U11^-1
  for (int rec : {0, 1}) {  // blocked, recursive halving
    INFO("n " << n << " panel inverse " << inv << " recursive " << rec);
    calu::options o = opts(16, 4, 2, true, 0, 0, inv);
    o.recursive = rec, o.leaf_width = 16;
    // Tiny leading rows: every pivot must come from below.
    matrix<T> a = random_matrix<T>(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n / 2; ++i) a(i, j) *= T(1e-6);
    CHECK_FACTOR(factor(a, o), 4.0);
    // A permuted identity plus a small perturbation: zero diagonal without pivoting.
    matrix<T> p(n, n);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) p(i, j) = T(1e-3) * tinybatch_tests::uniform<T>();
      p((j * 7 + 3) % n, j) = T(1);
    }
    CHECK_FACTOR(factor(p, o), 4.0);
    // The rows reversed of an upper triangular matrix: each panel's pivots sit at its bottom.
    matrix<T> r(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i <= j; ++i) r(n - 1 - i, j) = T(1) + tinybatch_tests::uniform<T>(0, 1);
    const result rr = factor(r, o);
    CHECK(rr.info == 0);
    CHECK_FACTOR(rr, 4.0);
  }
}

TEMPLATE_TEST_CASE("calu::getrf on ill-conditioned matrices", "[calu]", float, double) {
  using T = TestType;
  for (double cond : {1e4, 1e12})
    for (int inv : {0, 1}) {
      INFO("cond " << cond << " panel inverse " << inv);
      const matrix<T> a = ill_conditioned<T>(120, cond);
      CHECK_FACTOR(factor(a, opts(16, 4, 2, true, 0, 0, inv)), 4.0);
    }
}

TEMPLATE_TEST_CASE("calu::getrf on Wilkinson's, Foster's and Wright's matrices", "[calu]", float, double) {
  using T = TestType;
  // Their growth under partial pivoting is exponential; CALU's may differ from it but must
  // stay within 4x, and the backward error small.
  for (int n : {24, 40})
  for (int inv : {0, 1})  // TSLU's rows below by TRSM, by U11^-1
  for (int rec : {0, 1}) {  // blocked, recursive halving
    INFO("n " << n << " panel inverse " << inv << " recursive " << rec);
    calu::options o = opts(8, 2, 2, true, 0, 0, inv);
    o.recursive = rec, o.leaf_width = 8;
    {
      INFO("Wilkinson");
      CHECK_FACTOR(factor(wilkinson<T>(n), o), 4.0);
    }
    {
      // Its growth under partial pivoting (1e6 at n = 24, 4e11 at 40) is in partial
      // pivoting's backward error too: CALU's within 4x of it (or < 30).
      INFO("Foster");
      const result r = factor(foster<T>(n), o);
      CHECK_FACTOR_BOUND(r, 4.0, std::max(30.0, 4 * r.gepp_ratio));
    }
    {
      INFO("Wright");
      CHECK_FACTOR(factor(wright<T>(n / 2), o), 4.0);
    }
  }
  // Partial pivoting's growth on the Wilkinson matrix really is 2^(n-1): the check above
  // compares with something that grows.
  CHECK(factor(wilkinson<double>(40), opts(8, 2)).gepp_growth == std::ldexp(1.0, 39));
}

TEMPLATE_TEST_CASE("calu::getrf on singular matrices: info as getrf's, factorization completed", "[calu]", float,
                   double) {
  using T = TestType;
  for (int n : {50, 97}) {
    for (int c : {0, 7, 16, n / 2, n - 1}) {
      INFO("n " << n << ", zero column " << c);
      matrix<T> a = random_matrix<T>(n, n, 2);
      for (int i = 0; i < n; ++i) a(i, c) = T(0);
      const result r = factor(a, opts(16, 4, 2, true, 0, c % 2, 1 - c % 2));  // wide update, panel inverse
      CHECK(r.info == c + 1);
      CHECK(r.info == r.gepp_info);
      CHECK_FACTOR(r, 4.0);
    }
    {
      INFO("n " << n << ", zero row: U(n, n) = 0");
      matrix<T> a = random_matrix<T>(n, n);
      for (int j = 0; j < n; ++j) a(5, j) = T(0);
      const result r = factor(a, opts(16, 4));
      CHECK(r.info == n);
      CHECK(r.gepp_info == n);
      CHECK_FACTOR(r, 4.0);
    }
    {
      INFO("n " << n << ", zero matrix");
      const matrix<T> a(n, n, 1);
      const result r = factor(a, opts(16, 4));
      CHECK(r.info == 1);
      CHECK(r.pivots_ok);
      CHECK(r.padding_ok);
      CHECK(r.finite);
    }
  }
  // Tall-skinny with a zero column inside the second panel.
  matrix<T> a = random_matrix<T>(900, 48);
  for (int i = 0; i < 900; ++i) a(i, 20) = T(0);
  const result r = factor(a, opts(16, 4));
  CHECK(r.info == 21);
  CHECK_FACTOR(r, 4.0);
  // The recursive halving: zero columns in the left half, the right half, a leaf's second
  // panel, the last column, and two of them (the first is info); square, tall and wide.
  struct zcase { int m, n, z1, z2; };
  for (const zcase z : {zcase{97, 97, 7, -1}, zcase{97, 97, 60, -1}, zcase{97, 97, 96, -1}, zcase{97, 97, 70, 20},
                        zcase{700, 90, 40, 80}, zcase{60, 130, 50, 100}}) {
    for (int leaf : {16, 33}) {
      INFO("recursive, m " << z.m << " n " << z.n << " zero columns " << z.z1 << ", " << z.z2 << " leaf width " << leaf);
      matrix<T> s = random_matrix<T>(z.m, z.n, 2);
      for (int i = 0; i < z.m; ++i) {
        s(i, z.z1) = T(0);
        if (z.z2 >= 0) s(i, z.z2) = T(0);
      }
      calu::options o = opts(16, 4);
      o.recursive = 1, o.leaf_width = leaf;
      const result rs = factor(s, o);
      CHECK(rs.info == rs.gepp_info);
      CHECK(rs.info == (z.z1 < z.m ? std::min(z.z1, z.z2 < 0 ? z.z1 : z.z2) + 1 : 0));
      CHECK_FACTOR(rs, 4.0);
    }
  }
}

TEST_CASE("calu::getrf's recursive halving takes the blocked graph's pivots", "[calu]") {
  // The same tournaments on the same updated panels: the same ipiv (the updates' rounding
  // differs, far below the gaps between these random candidates), the same factors to
  // rounding.
  struct shape { int m, n, b, pr, leaf; };
  for (const shape s : {shape{300, 300, 16, 4, 16}, shape{300, 300, 16, 4, 64}, shape{3000, 200, 32, 8, 32},
                        shape{2001, 333, 32, 3, 100}, shape{150, 400, 16, 2, 16}}) {
    INFO("m " << s.m << " n " << s.n << " b " << s.b << " leaf width " << s.leaf);
    const matrix<double> a = random_matrix<double>(s.m, s.n, 3);
    calu::options o = opts(s.b, s.pr, 2);
    const result blocked = factor(a, o);
    o.recursive = 1, o.leaf_width = s.leaf;
    const result rec = factor(a, o);
    REQUIRE(rec.info == 0);
    CHECK(rec.ipiv == blocked.ipiv);
    CHECK_FACTOR(rec, 4.0);
    CHECK(rec.growth == Approx(blocked.growth).epsilon(1e-6));
  }
}

TEMPLATE_TEST_CASE("calu::getrf with TSLU's leaves split into runs (a flat tree inside each leaf)", "[calu]", float,
                   double) {
  using T = TestType;
  // The default runs are about 2 MiB of the panel, more rows than these matrices have per
  // leaf: leaf_rows forces runs of 2 b rows (1) and uneven ones (3 b + 5), so every leaf of
  // at least 3 b rows is a chain of LUs, each on the candidates so far over the next run.
  struct shape { int m, n, b, pr; };
  const shape shapes[] = {{3000, 64, 32, 2}, {1000, 40, 16, 4}, {257, 257, 32, 2}, {200, 200, 8, 7},
                          {1500, 100, 32, 1}, {4000, 24, 8, 3}};
  for (const shape& s : shapes)
    for (int lr : {1, 3 * s.b + 5}) {
      INFO("m " << s.m << " n " << s.n << " b " << s.b << " P_r " << s.pr << " leaf_rows " << lr);
      const result r = factor(random_matrix<T>(s.m, s.n, 3), opts(s.b, s.pr, 2, true, lr));
      CHECK(r.info == 0);
      CHECK_FACTOR(r, 4.0);
    }
  // The runs change the pivots (so the chain ran), and the first pivot is still the largest
  // entry of the first column: each run keeps its largest, each merge the larger.
  int differ = 0;
  for (int k = 0; k < 4; ++k) {
    const matrix<double> a = random_matrix<double>(2000 + 31 * k, 32);
    const result whole = factor(a, opts(16, 2)), runs = factor(a, opts(16, 2, 2, true, 1));
    differ += whole.ipiv != runs.ipiv;
    int arg = 0;
    for (int i = 1; i < a.m; ++i)
      if (std::fabs(a(i, 0)) > std::fabs(a(arg, 0))) arg = i;
    CHECK(runs.ipiv[0] == arg + 1);
  }
  CHECK(differ > 0);
  // Matrices that need pivoting, the growth matrices and singular ones, in runs.
  const int n = 100;
  matrix<T> tiny = random_matrix<T>(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n / 2; ++i) tiny(i, j) *= T(1e-6);
  CHECK_FACTOR(factor(tiny, opts(8, 2, 2, true, 1)), 4.0);
  CHECK_FACTOR(factor(wilkinson<T>(40), opts(8, 2, 2, true, 1)), 4.0);
  CHECK_FACTOR(factor(wright<T>(20), opts(8, 2, 2, true, 1)), 4.0);
  {
    const result r = factor(foster<T>(40), opts(8, 2, 2, true, 1));
    CHECK_FACTOR_BOUND(r, 4.0, std::max(30.0, 4 * r.gepp_ratio));
  }
  for (int c : {0, 9, 50}) {
    INFO("zero column " << c);
    matrix<T> a = random_matrix<T>(n, n, 2);
    for (int i = 0; i < n; ++i) a(i, c) = T(0);
    const result r = factor(a, opts(8, 2, 2, true, 1));
    CHECK(r.info == c + 1);
    CHECK_FACTOR(r, 4.0);
  }
  {
    const matrix<T> zero(n, n, 1);
    const result r = factor(zero, opts(8, 2, 2, true, 1));
    CHECK(r.info == 1);
    CHECK(r.finite);
    CHECK(r.padding_ok);
  }
  matrix<T> tall = random_matrix<T>(2400, 48);
  for (int i = 0; i < 2400; ++i) tall(i, 20) = T(0);
  const result r = factor(tall, opts(16, 3, 2, true, 1));
  CHECK(r.info == 21);
  CHECK_FACTOR(r, 4.0);
}

TEMPLATE_TEST_CASE("calu::getrs and calu::gesv solve with the factorization", "[calu]", float, double) {
  using T = TestType;
  for (int n : {1, 37, 130}) {
    for (int nrhs : {1, 3}) {
      INFO("n " << n << " nrhs " << nrhs);
      const matrix<T> a = random_matrix<T>(n, n, 1);
      const matrix<T> b = random_matrix<T>(n, nrhs, 2);
      matrix<T> lu = a, x = b;
      std::vector<int> ipiv(n, -7777);
      const int info = calu::gesv(n, nrhs, lu.data(), lu.ld, ipiv.data(), x.data(), x.ld, opts(16, 4));
      CHECK(info == 0);
      CHECK(x.padding_intact());
      // ||A X - B||_1 / (n ||A||_1 ||X||_1 eps) < 30, in double.
      double res = 0, xn = 0;
      for (int j = 0; j < nrhs; ++j) {
        double s = 0, sx = 0;
        for (int i = 0; i < n; ++i) {
          double ax = 0;
          for (int k = 0; k < n; ++k) ax += double(a(i, k)) * double(x(k, j));
          s += std::fabs(ax - double(b(i, j)));
          sx += std::fabs(double(x(i, j)));
        }
        res = std::max(res, s), xn = std::max(xn, sx);
      }
      const double ratio = res / (n * norm1(a) * xn * eps<T>());
      INFO("solve ratio " << ratio);
      CHECK(ratio < 30);
      // The transposed solve with the same factors: A^T y = b.
      matrix<T> y = b;
      calu::getrs('T', n, nrhs, lu.data(), lu.ld, ipiv.data(), y.data(), y.ld);
      double rest = 0;
      for (int j = 0; j < nrhs; ++j) {
        double s = 0;
        for (int i = 0; i < n; ++i) {
          double aty = 0;
          for (int k = 0; k < n; ++k) aty += double(a(k, i)) * double(y(k, j));
          s += std::fabs(aty - double(b(i, j)));
        }
        rest = std::max(rest, s);
      }
      CHECK(rest / (n * norm1(a) * std::max(max_abs(y) * n, 1e-300) * eps<T>()) < 30);
    }
  }
  // Singular: info reported, B untouched (bit for bit), as LAPACK's gesv.
  matrix<T> a = random_matrix<T>(40, 40);
  for (int i = 0; i < 40; ++i) a(i, 3) = T(0);
  matrix<T> b = random_matrix<T>(40, 2);
  const matrix<T> b0 = b;
  std::vector<int> ipiv(40);
  CHECK(calu::gesv(40, 2, a.data(), a.ld, ipiv.data(), b.data(), b.ld, opts(8, 2)) == 4);
  CHECK(b.v == b0.v);
}

TEST_CASE("calu::getrf's report and trace", "[calu]") {
  const matrix<double> a0 = random_matrix<double>(3000, 96);
  for (int rec : {0, 1})
  for (bool trace : {false, true}) {
    INFO("trace " << trace << " recursive " << rec);
    matrix<double> a = a0;
    std::vector<int> ipiv(96);
    calu::options o = opts(16, 2, 2);
    o.trace = trace;
    o.recursive = rec, o.leaf_width = 32;
    calu::report rep;
    rep.events.push_back({"stale", 0, 0, 0, 0, 0});  // the call starts it afresh
    REQUIRE(calu::getrf(a.m, a.n, a.data(), a.ld, ipiv.data(), o, &rep) == 0);
    CHECK(rep.seconds > 0);
    if (!trace) {
      CHECK(rep.events.empty());
      continue;
    }
    // Every kind of task is there, each interval inside the run, on one of the threads, and
    // one thread's intervals never overlap (none is nested in another).
    std::vector<std::string> kinds;
    for (const auto& e : rep.events) {
      kinds.push_back(e.what);
      CHECK(e.thread >= 0);
      CHECK(e.thread < 2);
      CHECK(e.t0 >= 0);
      CHECK(e.t0 <= e.t1);
      CHECK(e.t1 <= rep.seconds);
    }
    for (const char* k : {"leaf", "tree", "panel_lu", "panel_trsm", "update", "gemm", "laswp"})
      CHECK(std::count(kinds.begin(), kinds.end(), std::string(k)) > 0);
    CHECK(std::count(kinds.begin(), kinds.end(), std::string("leaf")) == 2 * 6);  // 2 leaves, 6 panels
    // Panels numbered 0 .. 5 whether the leaves' graphs or the halving made them.
    for (const auto& e : rep.events) CHECK((e.K >= 0 && e.K < 6));
    auto ev = rep.events;
    std::sort(ev.begin(), ev.end(), [](const auto& x, const auto& y) { return std::pair(x.thread, x.t0) < std::pair(y.thread, y.t0); });
    for (std::size_t i = 1; i < ev.size(); ++i)
      if (ev[i].thread == ev[i - 1].thread) CHECK(ev[i].t0 >= ev[i - 1].t1);
  }
}

TEST_CASE("calu::getrf rejects bad arguments", "[calu]") {
  std::vector<double> a(100);
  std::vector<int> ipiv(10);
  CHECK_THROWS_AS(calu::getrf(-1, 5, a.data(), 10, ipiv.data()), tinybatch::invalid_argument);
  CHECK_THROWS_AS(calu::getrf(10, 10, a.data(), 9, ipiv.data()), tinybatch::invalid_argument);
  CHECK_THROWS_AS(calu::getrf(10, 10, (double*)nullptr, 10, ipiv.data()), tinybatch::invalid_argument);
  CHECK_THROWS_AS(calu::getrf(10, 10, a.data(), 10, nullptr), tinybatch::invalid_argument);
  CHECK_THROWS_AS(calu::getrs('X', 10, 1, a.data(), 10, ipiv.data(), a.data(), 10), tinybatch::invalid_argument);
  CHECK_THROWS_AS(calu::getrf(10, 10, a.data(), 10, ipiv.data(), opts(4, 2, 2, true, -1)), tinybatch::invalid_argument);
  calu::options bad_leaf;
  bad_leaf.leaf_width = -1;
  CHECK_THROWS_AS(calu::getrf(10, 10, a.data(), 10, ipiv.data(), bad_leaf), tinybatch::invalid_argument);
  CHECK(calu::getrf(0, 0, (double*)nullptr, 1, nullptr) == 0);
}

// ---- the hybrid schedule (hybrid.hpp) on an emulated device ----------------------------
// The schedule calu_cuda.cuh runs on a GPU, here with host threads as the device's queues
// (calu_emulated_device.hpp) and random delays in them: the columns' travels, offsets and
// event order are checked where there is no GPU (the CUDA device itself: tests/cuda).

#include "calu_emulated_device.hpp"

TEMPLATE_TEST_CASE("the hybrid schedule on an emulated device: backward error, pivots, info", "[calu][hybrid]",
                   float, double) {
  using T = TestType;
  struct shape { int m, n, b; };
  const shape shapes[] = {{1, 1, 4}, {64, 64, 16}, {150, 150, 16}, {203, 203, 32}, {1200, 96, 16}, {700, 129, 32}};
  int run = 0;
  for (const shape& s : shapes) {
    const int nb = (s.n + s.b - 1) / s.b;
    for (int d : {1, 2, 3, nb}) {
      if (d > nb) continue;
      for (bool on_device : {false, true})
        for (bool lookahead : {true, false}) {
          if (!lookahead && d != 2) continue;
          ++run;
          INFO("m " << s.m << " n " << s.n << " b " << s.b << " d " << d << (on_device ? " device" : " host")
                    << " lookahead " << lookahead);
          const matrix<T> a = random_matrix<T>(s.m, s.n, 2);
          matrix<T> lu = a;
          std::vector<int> ipiv(std::size_t(s.n) + 1, -7777);
          calu::hybrid_options o;
          o.b = s.b, o.row_blocks = 3, o.threads = 2, o.lookahead = lookahead;
          const int info = tinybatch_tests::emulated_hybrid_getrf(s.m, s.n, lu.data(), lu.ld, ipiv.data(), o, d,
                                                                  on_device, 200, seed() + run);
          CHECK(ipiv.back() == -7777);
          ipiv.pop_back();
          CHECK(info == 0);
          CHECK(pivots_valid(ipiv, s.m));
          CHECK(lu.padding_intact());
          const double ratio = pivots_valid(ipiv, s.m) ? lu_ratio(a, lu, ipiv) : 1e300;
          INFO("ratio " << ratio);
          CHECK(ratio < 30);
        }
    }
  }
  // Singular: a zero column in a panel on the CPU and in one that starts on the device.
  for (int c : {3, 70}) {
    matrix<T> a = random_matrix<T>(100, 100);
    for (int i = 0; i < 100; ++i) a(i, c) = T(0);
    std::vector<int> ipiv(100);
    calu::hybrid_options o;
    o.b = 16, o.threads = 2;
    matrix<T> lu = a;
    const int info = tinybatch_tests::emulated_hybrid_getrf(100, 100, lu.data(), lu.ld, ipiv.data(), o, 2, c == 70, 100,
                                                            seed() + 1000 + c);
    CHECK(info == c + 1);
    CHECK(lu_ratio(a, lu, ipiv) < 30);
  }
}

TEST_CASE("the hybrid schedule's trace and the d model", "[calu][hybrid]") {
  const matrix<double> a = random_matrix<double>(300, 300);
  matrix<double> lu = a;
  std::vector<int> ipiv(300);
  calu::hybrid_options o;
  o.b = 32, o.threads = 2, o.trace = true;
  calu::hybrid_report rep;
  CHECK(tinybatch_tests::emulated_hybrid_getrf(300, 300, lu.data(), lu.ld, ipiv.data(), o, 3, false, 50, seed(), &rep) ==
        0);
  CHECK(lu_ratio(a, lu, ipiv) < 30);
  int panels = 0, updates = 0, gpu = 0;
  for (const auto& e : rep.events) {
    panels += std::string(e.what) == "panel";
    updates += std::string(e.what) == "update";
    gpu += std::string(e.what) == "gpu_update";
    CHECK(e.t1 >= e.t0);
  }
  CHECK(rep.nb == 10);
  CHECK(panels == 10);
  CHECK(gpu == 10 - 3);  // the device updates at the steps where it holds columns
  // CPU updates: step K updates the CPU's columns K + 1 .. min(K + d, nb) - 1.
  int want = 0;
  for (int K = 0; K < 10; ++K) want += std::max(0, std::min(K + 3, 10) - (K + 1));
  CHECK(updates == want);
  // The model: a device 100x the cores together gets nearly all columns, an even match about
  // half, a slow device none; d stays in [1, nb].
  CHECK(calu::model_d(32768, 32768, 128, 16, 15e9, 60e12) == 1);
  CHECK(std::abs(calu::model_d(32768, 32768, 128, 16, 1e9, 16e9) - 128) <= 2);
  CHECK(calu::model_d(1000, 1000, 128, 16, 1e12, 1e9) == 8);
  // With the panel at its own rate: a panel as slow as the H200 machine's TSLU (25 GFLOP/s
  // on 16 cores) outlasts the device's step, d = 1 where the seed's model says 6. Two block
  // columns by hand: d = 1 takes max(t_p0, u0 / g2) + t_p1, d = 2 takes t_p0 + u0 / (P g1) +
  // t_p1, so a device 1000x slower than the core gets the second column and one 1000x faster
  // does not. An infinitely fast panel and cores as fast as the device together: the first
  // step alone balances at (N + 1) / 2 = 128, but the device's share shrinks step by step, so
  // the sum of the steps is least below that (98 by the same sum written out in Python; here
  // between N / 4 and N / 2). A slower panel never raises d; gp <= 0 is the seed's model.
  CHECK(calu::model_d(32768, 32768, 128, 16, 50e9, 34e12) == 6);
  CHECK(calu::model_d(32768, 32768, 128, 16, 50e9, 34e12, 25e9) == 1);
  CHECK(calu::model_d(256, 256, 128, 1, 1e9, 1e6, 1e30) == 2);
  CHECK(calu::model_d(256, 256, 128, 1, 1e9, 1e12, 1e9) == 1);
  const int even = calu::model_d(32768, 32768, 128, 16, 1e9, 16e9, 1e30);
  CHECK(even > 64);
  CHECK(even < 128);
  CHECK(calu::model_d(32768, 32768, 128, 16, 1e9, 16e9, -1) == calu::model_d(32768, 32768, 128, 16, 1e9, 16e9));
  int last = 1 << 30;
  for (double gp : {1e12, 1e11, 3e10, 1e10, 3e9, 1e9}) {
    const int d = calu::model_d(8192, 8192, 64, 4, 1e9, 16e9, gp);
    CHECK(d <= last);
    CHECK(d >= 1);
    last = d;
  }
  CHECK(last < calu::model_d(8192, 8192, 64, 4, 1e9, 16e9, 1e12));
  // The calibration of the panel rate: positive and finite on this machine's threads.
  const double gp = calu::detail::cpu_panel_rate<double>(4000, 32, 2, 2);
  CHECK(gp > 1e6);
  CHECK(std::isfinite(gp));
}
