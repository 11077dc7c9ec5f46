// potrs: solves with potrf's factor; residual ratio < 30 (LAPACK's dpot02); info honoured.
#include "support.hpp"

using namespace tbt;

namespace {
template <class T>
struct potrs_case {
  static constexpr int rhs = 2;
  test_batch<T> A, B;
  std::vector<mat<T>> A0, B0;
  std::vector<int> info;
  potrs_case(int n, index_t count) : A(n, n, count), B(n, rhs, count), info(std::size_t(count), -1) {
    for (index_t k = 0; k < count; ++k) {
      A0.push_back(random_spd<T>(n)), A.set(k, A0.back());
      B0.push_back(random_mat<T>(n, rhs)), B.set(k, B0.back());
    }
  }
  void reset_b() {
    for (index_t k = 0; k < B.count; ++k) B.set(k, B0[k]);
  }
  /// skip: the matrix marked failed in info, whose B must be untouched (-1: none).
  void check(index_t skip) {
    worst w;
    for (index_t k = 0; k < B.count; ++k)
      w(k == skip ? (B.get(k) == B0[k] ? 0.0 : 1e300) : solve_ratio(A0[k], B.get(k), B0[k]), k);
    INFO("worst " << w.where);
    CHECK(w.value < ratio_threshold);
    CHECK(B.padding_intact());
    CHECK(A.padding_intact());
  }
};
}  // namespace

TEMPLATE_TEST_CASE("potrs solves with the Cholesky factor", "[potrs]", float, double) {
  for_each_case([&](int n, auto N, index_t count, auto L) {
    constexpr int n_ = decltype(N)::value;
    constexpr int r_ = n_ == tb::dynamic ? tb::dynamic : potrs_case<TestType>::rhs;
    for (tb::uplo u : {tb::uplo::lower, tb::uplo::upper}) {
      INFO("uplo " << int(u));
      potrs_case<TestType> c(n, count);
      tb::potrf(tb::seq, u, c.A.template view<n_, n_>(L), c.info);
      // Matrix 1 is marked failed: potrs with info must leave its B alone.
      if (count > 1) c.info[1] = 3;
      tb::potrs(tb::seq, u, c.A.template cview<n_, n_>(L), c.B.template view<n_, r_>(L),
                std::span<const int>(c.info));
      c.check(count > 1 ? 1 : -1);
      // Without info every matrix is solved.
      c.reset_b();
      tb::potrs(tb::par, u, c.A.template cview<n_, n_>(L), c.B.template view<n_, r_>(L));
      c.check(-1);
    }
  });
}

TEST_CASE("potrs: size mismatches throw", "[potrs][bad-input]") {
  tb::batch<double> A(4, 4, 2), B(5, 1, 2), B3(4, 1, 3);
  CHECK_THROWS_WITH(tb::potrs(tb::seq, tb::lower, A, B), Catch::Contains("potrs") && Catch::Contains("rows of B"));
  CHECK_THROWS_WITH(tb::potrs(tb::seq, tb::lower, A, B3), Catch::Contains("matrices"));
}
