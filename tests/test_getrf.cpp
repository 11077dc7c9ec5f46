// getrf: ||P A - L U|| / (n ||A|| eps) < 30 (LAPACK's dget01), pivots and info exactly as
// LAPACK's (compared with reference LAPACK where it is installed), singular and NaN
// matrices mixed into the batch without disturbing the others.
#include "support.hpp"

using namespace tbt;

namespace {

/// Checks one factored matrix: ratio of P A - L U, pivots in range; returns the ratio.
template <class T>
double lu_ratio(const mat<T>& a0, const mat<T>& lu, const int* ipiv) {
  const int m = int(a0.rows()), n = int(a0.cols()), mn = std::min(m, n);
  for (int j = 0; j < mn; ++j)
    if (ipiv[j] < j + 1 || ipiv[j] > m) return 1e300;
  mat<T> l = mat<T>::Identity(m, mn), u = mat<T>::Zero(mn, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      if (i > j && j < mn) l(i, j) = lu(i, j);
      if (i <= j && i < mn) u(i, j) = lu(i, j);
    }
  const mat<T> r = perm_from_ipiv<T>(ipiv, m, mn) * a0 - l * u;
  const double a = norm1(a0);
  return a == 0 ? norm1(r) : norm1(r) / (std::max(m, n) * a * eps<T>());
}

/// One grid case: data, pivots and info poisoned, the oracle. Only the call depends on the
/// extents and the layout, so the checks are compiled once per scalar type.
template <class T>
struct getrf_case {
  int m, n, mn;
  test_batch<T> A;
  std::vector<mat<T>> A0;
  std::vector<int> want, ipiv, info;
  getrf_case(int m_, int n_, index_t count) : m(m_), n(n_), mn(std::min(m_, n_)), A(m_, n_, count) {
    want.assign(std::size_t(count), 0);
    for (index_t k = 0; k < count; ++k) {
      mat<T> a = random_full_rank<T>(m, n);
      if (k % 3 == 2) {  // a zero column gives an exactly zero pivot there: info = c + 1
        const int c = int(rng()() % unsigned(mn));
        a.col(c).setZero();
        want[k] = c + 1;
      }
      A0.push_back(a), A.set(k, a);
    }
    ipiv.assign(std::size_t(count * mn) + 1, -999);
    info.assign(std::size_t(count) + 1, -999);
  }
  void check() {
    CHECK(ipiv.back() == -999);
    CHECK(info.back() == -999);
    worst w;
    index_t info_bad = -1, piv_bad = -1;
    for (index_t k = 0; k < A.count; ++k) {
      const int* p = ipiv.data() + k * mn;
      if (info[k] != want[k]) info_bad = k;
#if defined(TINYBATCH_TEST_LAPACK)
      int lapack_info = 0;
      if (!same_pivots_as_lapack<T>(A0[k], A.get(k), p, lapack_info)) piv_bad = k;
      if (lapack_info != info[k]) info_bad = k;
#endif
      double r = lu_ratio<T>(A0[k], A.get(k), p);
      if (m == n && want[k] == 0) {  // Eigen's PartialPivLU agrees on the factors...
        Eigen::PartialPivLU<mat<T>> lu(A0[k]);
        const bool same_rows =
            perm_from_ipiv<T>(p, m, mn) == mat<T>(lu.permutationP().toDenseMatrix().template cast<T>());
        // ...when it chose the same rows: its blocked order may round a near-tie the other way
        // (float, n = 33 did once), and then the pivots are checked against LAPACK's above.
        if (same_rows && (lu.matrixLU() - A.get(k)).norm() > 1000 * n * eps<T>() * lu.matrixLU().norm())
          r = 1e300;
      }
      w(r, k);
    }
    INFO("m = " << m << ", worst " << w.where << ", wrong info at " << info_bad << ", LAPACK pivots differ at "
                << piv_bad);
    CHECK(w.value < ratio_threshold);
    CHECK(info_bad == -1);
    CHECK(piv_bad == -1);
    CHECK(A.padding_intact());
  }
};

template <class T, int M, int N, class Lay>
void run_getrf(int m, int n, index_t count, Lay L) {
  getrf_case<T> c(m, n, count);
  tb::getrf(tb::seq, c.A.template view<M, N>(L), c.ipiv, c.info);
  c.check();
}

}  // namespace

TEMPLATE_TEST_CASE("getrf factors square batches with LAPACK's pivots and info", "[getrf]", float, double) {
  for_each_case([&](int n, auto N, index_t count, auto L) {
    constexpr int n_ = decltype(N)::value;
    run_getrf<TestType, n_, n_>(n, n, count, L);
  });
}

TEMPLATE_TEST_CASE("getrf factors rectangular batches", "[getrf]", float, double) {
  for_each_layout([&](auto L) {
    for (index_t count : counts) {
      INFO("count " << count);
      run_getrf<TestType, 7, 3>(7, 3, count, L);
      run_getrf<TestType, 3, 7>(3, 7, count, L);
      run_getrf<TestType, tb::dynamic, tb::dynamic>(40, 9, count, L);
      run_getrf<TestType, tb::dynamic, tb::dynamic>(9, 40, count, L);
    }
  });
}

TEST_CASE("getrf picks the first largest magnitude, as LAPACK's idamax", "[getrf]") {
  // Column 0 has |-3| = |3| = 3: the first (row 2, 1-based) wins; then exact ties again.
  mat<double> a(4, 4);
  a << 1, 2, 0, 1,  //
      -3, 1, 1, 0,  //
      3, 1, 2, 2,   //
      -3, 5, 1, 1;
  tb::batch<double, 4, 4> A(1);
  tb::as_eigen(A, 0) = a;
  std::vector<int> ipiv(4), info(1);
  tb::getrf(tb::seq, A, ipiv, info);
  CHECK(ipiv[0] == 2);
  CHECK(info[0] == 0);
#if defined(TINYBATCH_TEST_LAPACK)
  std::vector<int> lp;
  mat<double> f = a;
  lapack_getrf<double>(f, lp);
  CHECK(std::equal(lp.begin(), lp.end(), ipiv.begin()));
#endif
  // All-zero matrix: every pivot is the diagonal, info = 1, factorization runs to the end.
  tb::as_eigen(A, 0).setZero();
  tb::getrf(tb::seq, A, ipiv, info);
  CHECK(info[0] == 1);
  CHECK(ipiv == std::vector<int>{1, 2, 3, 4});
}

TEST_CASE("getrf: NaN and Inf stay in their own matrix", "[getrf][bad-input]") {
  const int n = 6, count = 9;
  test_batch<double> A(n, n, count);
  A.fill_random();
  std::vector<mat<double>> A0;
  A.at(3, 2, 1) = std::numeric_limits<double>::quiet_NaN();
  A.at(5, 0, 0) = std::numeric_limits<double>::infinity();
  for (index_t k = 0; k < count; ++k) A0.push_back(A.get(k));
  std::vector<int> ipiv(count * n, -999), info(count, -999);
  tb::getrf(tb::par, A.view<tb::dynamic, tb::dynamic>(layout_c<layout::pointers>{}), ipiv, info);
  for (index_t k = 0; k < count; ++k) {
    for (int j = 0; j < n; ++j) CHECK((ipiv[k * n + j] >= j + 1 && ipiv[k * n + j] <= n));
    if (k == 3 || k == 5) {
      CHECK_FALSE(A.get(k).allFinite());
    } else {
      CHECK(info[k] == 0);
      CHECK(lu_ratio<double>(A0[k], A.get(k), ipiv.data() + k * n) < ratio_threshold);
    }
  }
}

TEST_CASE("getrf: bad pivot and info arrays throw before anything is written", "[getrf][bad-input]") {
  tb::batch<double, 3, 3> A(4);
  std::fill(A.data(), A.data() + A.size(), 2.0);
  std::vector<int> ipiv(11), info(4);
  CHECK_THROWS_WITH(tb::getrf(tb::seq, A, ipiv, info), Catch::Contains("ipiv has 11 entries"));
  std::vector<int> ipiv_ok(12), info_short(3);
  CHECK_THROWS_WITH(tb::getrf(tb::seq, A, ipiv_ok, info_short), Catch::Contains("info has 3 entries"));
  for (index_t i = 0; i < A.size(); ++i) CHECK(A.data()[i] == 2.0);
  // Pivots through a pointer array and with an explicit stride.
  std::vector<int> p0(3), p1(3), p2(3), p3(3);
  std::vector<int*> pp{p0.data(), p1.data(), p2.data(), p3.data()};
  for (index_t k = 0; k < 4; ++k) tb::as_eigen(A, k) = random_mat<double>(3, 3);
  tb::getrf(tb::seq, A, tb::pivot_view(pp.data(), 4), info_short = std::vector<int>(4));
  std::vector<int> strided(4 * 5, -7);
  tb::getrf(tb::seq, A, tb::pivot_view(strided.data(), 20, 5), info_short);
  CHECK(strided[3] == -7);
  CHECK(strided[4] == -7);
}
