// getrs: solves op(A) X = B with getrf's factors; residual ratio < 30 (LAPACK's dget02).
#include "support.hpp"

using namespace tbt;

namespace {
template <class T>
struct getrs_case {
  static constexpr int rhs = 2;
  test_batch<T> A, B;
  std::vector<mat<T>> A0, B0;
  std::vector<int> ipiv, info;
  getrs_case(int n, index_t count)
      : A(n, n, count), B(n, rhs, count), ipiv(std::size_t(count * n)), info(std::size_t(count)) {
    for (index_t k = 0; k < count; ++k) A0.push_back(random_full_rank<T>(n, n)), A.set(k, A0.back());
  }
  void new_rhs() {
    B0.clear();
    for (index_t k = 0; k < B.count; ++k) B0.push_back(random_mat<T>(B.m, rhs)), B.set(k, B0.back());
  }
  void check(tb::op t) {
    worst w;
    for (index_t k = 0; k < B.count; ++k) {
      const mat<T> a = t == tb::op::no_trans ? A0[k] : mat<T>(A0[k].transpose());
      w(solve_ratio(a, B.get(k), B0[k]), k);
    }
    INFO("trans " << int(t) << ", worst " << w.where);
    CHECK(w.value < ratio_threshold);
    CHECK(B.padding_intact());
    CHECK(A.padding_intact());
  }
};
}  // namespace

TEMPLATE_TEST_CASE("getrs solves with and without transpose", "[getrs]", float, double) {
  for_each_case([&](int n, auto N, index_t count, auto L) {
    constexpr int n_ = decltype(N)::value;
    constexpr int r_ = n_ == tb::dynamic ? tb::dynamic : getrs_case<TestType>::rhs;
    getrs_case<TestType> c(n, count);
    tb::getrf(tb::seq, c.A.template view<n_, n_>(L), c.ipiv, c.info);
    for (tb::op t : {tb::op::no_trans, tb::op::trans, tb::op::conj_trans}) {
      c.new_rhs();
      tb::getrs(tb::seq, t, c.A.template cview<n_, n_>(L), c.ipiv, c.B.template view<n_, r_>(L));
      c.check(t);
    }
  });
}

TEST_CASE("getrs honours info: failed matrices keep their right-hand side", "[getrs][bad-input]") {
  const int n = 5, count = 4;
  tb::batch<double> A(n, n, count), B(n, 1, count);
  std::vector<mat<double>> A0, B0;
  for (index_t k = 0; k < count; ++k) {
    A0.push_back(random_full_rank<double>(n, n));
    if (k == 2) A0.back().col(3).setZero();
    tb::as_eigen(A, k) = A0.back();
    B0.push_back(random_mat<double>(n, 1)), tb::as_eigen(B, k) = B0.back();
  }
  std::vector<int> ipiv(count * n), info(count);
  tb::getrf(tb::par, A, ipiv, info);
  CHECK(info == std::vector<int>{0, 0, 4, 0});
  tb::getrs(tb::par, tb::no_trans, A, ipiv, B, std::span<const int>(info));
  for (index_t k = 0; k < count; ++k) {
    if (k == 2)
      CHECK(mat<double>(tb::as_eigen(B, k)) == B0[2]);
    else
      CHECK(solve_ratio<double>(A0[k], tb::as_eigen(B, k), B0[k]) < ratio_threshold);
  }
  tb::batch<double> Bbad(n + 1, 1, count);
  CHECK_THROWS_WITH(tb::getrs(tb::seq, tb::no_trans, A, ipiv, Bbad), Catch::Contains("getrs"));
}
