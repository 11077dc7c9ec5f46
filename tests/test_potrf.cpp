// potrf: ||L L^T - A|| / (n ||A|| eps) < 30 (LAPACK's dpot01), Eigen's LLT agrees, info as
// LAPACK's for non-SPD and NaN matrices mixed into the batch, the other triangle untouched.
#include "support.hpp"

using namespace tbt;


namespace {
/// One grid case: SPD matrices, every third one failing at a random leading minor (negative
/// or NaN pivot), the other triangle marked; checks compiled once per scalar type.
template <class T>
struct potrf_case {
  int n;
  bool lo;
  test_batch<T> A;
  std::vector<mat<T>> A0;
  std::vector<int> want, info;
  potrf_case(int n_, index_t count, tb::uplo u) : n(n_), lo(u == tb::uplo::lower), A(n_, n_, count) {
    want.assign(std::size_t(count), 0);
    for (index_t k = 0; k < count; ++k) {
      mat<T> a = random_spd<T>(n);
      if (k % 3 == 1) {
        const int c = int(rng()() % unsigned(n));
        a(c, c) = k % 2 ? T(-1) : std::numeric_limits<T>::quiet_NaN();
        want[std::size_t(k)] = c + 1;
      }
      // The triangle potrf must not read holds a marker it must not change either.
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          if (lo ? i < j : i > j) a(i, j) = T(-12345);
      A0.push_back(a);
      A.set(k, a);
    }
    info.assign(std::size_t(count) + 1, -999);
  }
  void check() {
    INFO((lo ? "lower" : "upper"));
    CHECK(info.back() == -999);  // nothing written past count
    worst w;
    index_t info_bad = -1, untouched_bad = -1;
    for (index_t k = 0; k < A.count; ++k) {
      const mat<T> got = A.get(k);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          if ((lo ? i < j : i > j) && got(i, j) != T(-12345)) untouched_bad = k;
      if (info[std::size_t(k)] != want[std::size_t(k)]) info_bad = k;
#if defined(TINYBATCH_TEST_LAPACK)
      if (info[std::size_t(k)] != lapack_potrf<T>(lo ? 'L' : 'U', A0[std::size_t(k)])) info_bad = k;
#endif
      if (want[std::size_t(k)] != 0) continue;
      mat<T> f = lo ? mat<T>(got.template triangularView<Eigen::Lower>())
                    : mat<T>(got.template triangularView<Eigen::Upper>());
      mat<T> a = lo ? mat<T>(A0[k].template selfadjointView<Eigen::Lower>())
                    : mat<T>(A0[k].template selfadjointView<Eigen::Upper>());
      const mat<T> R = lo ? mat<T>(f * f.transpose() - a) : mat<T>(f.transpose() * f - a);
      double ratio = norm1(R) / (n * norm1(a) * eps<T>());
      // Eigen's LLT as a second oracle for the factor itself.
      Eigen::LLT<mat<T>> llt(a);
      const mat<T> lref = llt.matrixL();
      const mat<T> fl = lo ? f : mat<T>(f.transpose());
      if ((fl - lref).norm() > 100 * n * eps<T>() * lref.norm()) ratio = 1e300;
      w(ratio, k);
    }
    INFO("worst " << w.where << ", wrong info at " << info_bad << ", touched triangle at " << untouched_bad);
    CHECK(w.value < ratio_threshold);
    CHECK(info_bad == -1);
    CHECK(untouched_bad == -1);
    CHECK(A.padding_intact());
  }
};
}  // namespace

TEMPLATE_TEST_CASE("potrf factors SPD batches and reports LAPACK's info", "[potrf]", float, double) {
  for_each_case([&](int n, auto N, index_t count, auto L) {
    constexpr int n_ = decltype(N)::value;
    for (tb::uplo u : {tb::uplo::lower, tb::uplo::upper}) {
      potrf_case<TestType> c(n, count, u);
      tb::potrf(tb::seq, u, c.A.template view<n_, n_>(L), c.info);
      c.check();
    }
  });
}

TEST_CASE("potrf with the parallel policy, fixed types and bad input", "[potrf][bad-input]") {
  constexpr int n = 6;
  tb::batch<double, n, n> A(5);
  for (index_t k = 0; k < 5; ++k) tb::as_eigen(A, k) = random_spd<double>(n);
  std::vector<int> info(5, -1);
  tb::potrf(tb::par, tb::lower, A, info);
  for (int i : info) CHECK(i == 0);
  std::vector<int> short_info(4);
  CHECK_THROWS_WITH(tb::potrf(tb::seq, tb::lower, A, short_info), Catch::Contains("info"));
  tb::batch<double> R(3, 4, 2);
  std::vector<int> info2(2);
  CHECK_THROWS_WITH(tb::potrf(tb::seq, tb::upper, R, info2), Catch::Contains("not square"));
  CHECK_THROWS_WITH(tb::potrf(tb::seq, tb::upper, R, std::span<int>()), Catch::Contains("info"));
}
