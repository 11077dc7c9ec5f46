// posv: factor and solve; non-SPD matrices get LAPACK's info and keep their B; the rest solve.
#include "support.hpp"

using namespace tbt;

namespace {
template <class T>
struct posv_case {
  static constexpr int rhs = 3;
  test_batch<T> A, B;
  std::vector<mat<T>> A0, B0;
  std::vector<int> want, info;
  posv_case(int n, index_t count) : A(n, n, count), B(n, rhs, count), want(std::size_t(count), 0) {
    for (index_t k = 0; k < count; ++k) {
      mat<T> a = random_spd<T>(n);
      if (k % 3 == 1) a(n - 1, n - 1) = -a(n - 1, n - 1), want[k] = n;  // last minor fails
      A0.push_back(a), A.set(k, a);
      B0.push_back(random_mat<T>(n, rhs)), B.set(k, B0.back());
    }
    info.assign(std::size_t(count), -999);
  }
  void check() {
    worst w;
    index_t info_bad = -1;
    for (index_t k = 0; k < A.count; ++k) {
      if (info[k] != want[k]) info_bad = k;
      if (want[k] != 0)
        w(B.get(k) == B0[k] ? 0.0 : 1e300, k);  // LAPACK: B untouched when info > 0
      else
        w(solve_ratio(A0[k], B.get(k), B0[k]), k);
    }
    INFO("worst " << w.where << ", wrong info at " << info_bad);
    CHECK(w.value < ratio_threshold);
    CHECK(info_bad == -1);
    CHECK(A.padding_intact());
    CHECK(B.padding_intact());
  }
};
}  // namespace

TEMPLATE_TEST_CASE("posv solves SPD systems and skips the failed ones", "[posv]", float, double) {
  for_each_case([&](int n, auto N, index_t count, auto L) {
    constexpr int n_ = decltype(N)::value;
    constexpr int r_ = n_ == tb::dynamic ? tb::dynamic : posv_case<TestType>::rhs;
    for (tb::uplo u : {tb::uplo::lower, tb::uplo::upper}) {
      INFO("uplo " << int(u));
      posv_case<TestType> c(n, count);
      tb::posv(tb::seq, u, c.A.template view<n_, n_>(L), c.B.template view<n_, r_>(L), c.info);
      c.check();
    }
  });
}

TEST_CASE("posv: bad arguments are rejected before anything is written", "[posv][bad-input]") {
  tb::batch<double> A(3, 3, 2), B(3, 1, 2);
  std::fill(A.data(), A.data() + A.size(), 1.0);
  std::vector<int> info(1);
  CHECK_THROWS_WITH(tb::posv(tb::seq, tb::lower, A, B, info), Catch::Contains("info"));
  for (index_t i = 0; i < A.size(); ++i) CHECK(A.data()[i] == 1.0);
}
