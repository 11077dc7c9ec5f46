// gesv: factor and solve; singular matrices get LAPACK's info and keep their B.
#include "support.hpp"

using namespace tbt;

namespace {
template <class T>
struct gesv_case {
  static constexpr int rhs = 3;
  test_batch<T> A, B;
  std::vector<mat<T>> A0, B0;
  std::vector<int> want, ipiv, info;
  gesv_case(int n, index_t count) : A(n, n, count), B(n, rhs, count), want(std::size_t(count), 0) {
    for (index_t k = 0; k < count; ++k) {
      mat<T> a = random_full_rank<T>(n, n);
      if (k % 3 == 1) a.col(0).setZero(), want[k] = 1;
      A0.push_back(a), A.set(k, a);
      B0.push_back(random_mat<T>(n, rhs)), B.set(k, B0.back());
    }
    ipiv.assign(std::size_t(count * n), -1);
    info.assign(std::size_t(count), -999);
  }
  void check() {
    worst w;
    index_t info_bad = -1;
    for (index_t k = 0; k < A.count; ++k) {
      if (info[k] != want[k]) info_bad = k;
      w(want[k] ? (B.get(k) == B0[k] ? 0.0 : 1e300) : solve_ratio(A0[k], B.get(k), B0[k]), k);
    }
    INFO("worst " << w.where << ", wrong info at " << info_bad);
    CHECK(w.value < ratio_threshold);
    CHECK(info_bad == -1);
    CHECK(A.padding_intact());
    CHECK(B.padding_intact());
  }
};
}  // namespace

TEMPLATE_TEST_CASE("gesv solves and skips the singular matrices", "[gesv]", float, double) {
  for_each_case([&](int n, auto N, index_t count, auto L) {
    constexpr int n_ = decltype(N)::value;
    constexpr int r_ = n_ == tb::dynamic ? tb::dynamic : gesv_case<TestType>::rhs;
    gesv_case<TestType> c(n, count);
    tb::gesv(tb::seq, c.A.template view<n_, n_>(L), c.ipiv, c.B.template view<n_, r_>(L), c.info);
    c.check();
  });
}

TEST_CASE("gesv with owning fixed-size batches and the parallel policy", "[gesv]") {
  constexpr int n = 8;
  tb::batch<float, n, n> A(1001);
  tb::batch<float, n, 1> B(1001);
  std::vector<mat<float>> A0, B0;
  for (index_t k = 0; k < A.count(); ++k) {
    A0.push_back(random_full_rank<float>(n, n)), tb::as_eigen(A, k) = A0.back();
    B0.push_back(random_mat<float>(n, 1)), tb::as_eigen(B, k) = B0.back();
  }
  std::vector<int> ipiv(A.count() * n), info(A.count());
  tb::gesv(tb::par, A, ipiv, B, info);
  worst w;
  for (index_t k = 0; k < A.count(); ++k) w(solve_ratio<float>(A0[k], tb::as_eigen(B, k), B0[k]), k);
  CHECK(w.value < ratio_threshold);
}
