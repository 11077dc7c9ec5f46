// getri: inv(A) in place from getrf; ||I - A inv(A)|| / (n ||A|| ||inv(A)|| eps) < 30
// (LAPACK's dget03); singular matrices get info and are left as getrf left them.
#include "support.hpp"

using namespace tbt;

template <class T>
double inverse_ratio(const mat<T>& a, const mat<T>& x) {
  if (!x.allFinite()) return 1e300;
  const int n = int(a.rows());
  const mat<T> r = mat<T>::Identity(n, n) - a * x;
  return norm1(r) / (n * norm1(a) * norm1(x) * eps<T>());
}

namespace {
template <class T>
struct getri_case {
  int n;
  test_batch<T> A;
  std::vector<mat<T>> A0, LU;
  std::vector<int> want, ipiv, info;
  getri_case(int n_, index_t count) : n(n_), A(n_, n_, count), want(std::size_t(count), 0) {
    for (index_t k = 0; k < count; ++k) {
      mat<T> a = random_full_rank<T>(n, n);
      if (k % 3 == 2) a.col(n - 1).setZero(), want[k] = n;
      A0.push_back(a), A.set(k, a);
    }
    ipiv.assign(std::size_t(count * n), 0);
    info.assign(std::size_t(count), -999);
  }
  void factored() {  // after getrf: remember the factors, poison info again
    for (index_t k = 0; k < A.count; ++k) LU.push_back(A.get(k));
    std::fill(info.begin(), info.end(), -999);
  }
  void check() {
    worst w;
    index_t info_bad = -1;
    for (index_t k = 0; k < A.count; ++k) {
      if (info[k] != want[k]) info_bad = k;
      if (want[k])
        w(A.get(k) == LU[k] ? 0.0 : 1e300, k);  // untouched, as LAPACK's dgetri leaves it
      else
        w(inverse_ratio(A0[k], A.get(k)), k);
    }
    INFO("worst " << w.where << ", wrong info at " << info_bad);
    CHECK(w.value < ratio_threshold);
    CHECK(info_bad == -1);
    CHECK(A.padding_intact());
  }
};
}  // namespace

TEMPLATE_TEST_CASE("getri inverts in place and reports singular matrices", "[getri]", float, double) {
  for_each_case([&](int n, auto N, index_t count, auto L) {
    constexpr int n_ = decltype(N)::value;
    getri_case<TestType> c(n, count);
    tb::getrf(tb::seq, c.A.template view<n_, n_>(L), c.ipiv, c.info);
    c.factored();
    tb::getri(tb::seq, c.A.template view<n_, n_>(L), c.ipiv, c.info);
    c.check();
  });
}

TEST_CASE("getri: bad input", "[getri][bad-input]") {
  tb::batch<double> A(3, 2, 2);
  std::vector<int> ipiv(4), info(2);
  CHECK_THROWS_WITH(tb::getri(tb::seq, A, ipiv, info), Catch::Contains("getri") && Catch::Contains("square"));
}
