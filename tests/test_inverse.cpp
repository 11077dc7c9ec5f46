// inverse: out of place; A unchanged, every element of X written, LAPACK's dget03 ratio < 30,
// Eigen's inverse agrees, singular matrices get info without disturbing the others.
#include "support.hpp"

using namespace tbt;

namespace {
template <class T>
struct inverse_case {
  int n;
  test_batch<T> A, X;
  std::vector<mat<T>> A0;
  std::vector<int> want, info;
  inverse_case(int n_, index_t count) : n(n_), A(n_, n_, count), X(n_, n_, count), want(std::size_t(count), 0) {
    for (index_t k = 0; k < count; ++k) {
      mat<T> a = random_full_rank<T>(n, n);
      if (k % 3 == 2) a.row(0).setZero(), want[k] = n;  // zero row: the last pivot is zero
      A0.push_back(a), A.set(k, a);
    }
    X.fill_poison();
    info.assign(std::size_t(count), -999);
  }
  void check() {
    worst w;
    index_t info_bad = -1, a_changed = -1;
    for (index_t k = 0; k < A.count; ++k) {
      if (A.get(k) != A0[k]) a_changed = k;
      if (want[k] != 0) {
        if (info[k] <= 0) info_bad = k;
        continue;
      }
      if (info[k] != 0) info_bad = k;
      const mat<T> x = X.get(k);
      double r = x.allFinite() ? norm1(mat<T>(mat<T>::Identity(n, n) - A0[k] * x)) /
                                     (n * norm1(A0[k]) * norm1(x) * eps<T>())
                               : 1e300;
      const mat<T> e = A0[k].inverse();
      const double cond = norm1(A0[k]) * norm1(e);
      if (norm1(mat<T>(x - e)) > 100 * n * cond * eps<T>() * norm1(e)) r = 1e300;
      w(r, k);
    }
    INFO("worst " << w.where << ", wrong info at " << info_bad << ", A changed at " << a_changed);
    CHECK(w.value < ratio_threshold);
    CHECK(info_bad == -1);
    CHECK(a_changed == -1);
    CHECK(X.unwritten() == 0);
    CHECK(X.padding_intact());
    CHECK(A.padding_intact());
  }
};
}  // namespace

TEMPLATE_TEST_CASE("inverse writes inv(A) out of place", "[inverse]", float, double) {
  for_each_case([&](int n, auto N, index_t count, auto L) {
    constexpr int n_ = decltype(N)::value;
    inverse_case<TestType> c(n, count);
    tb::inverse(tb::seq, c.A.template cview<n_, n_>(L), c.X.template view<n_, n_>(L), c.info);
    c.check();
  });
}

TEST_CASE("inverse: bad input and variable-size batches", "[inverse][bad-input]") {
  tb::batch<double> A(3, 3, 2), X(4, 4, 2);
  std::vector<int> info(2);
  CHECK_THROWS_WITH(tb::inverse(tb::seq, A, X, info), Catch::Contains("inverse") && Catch::Contains("differs"));
  std::vector<int> sz{1, 5, 2, 9};
  tb::vbatch<double> V(sz, sz), W(sz, sz);
  for (index_t k = 0; k < 4; ++k) tb::as_eigen(V, k) = random_full_rank<double>(sz[k], sz[k]);
  std::vector<int> vinfo(4, -1);
  tb::inverse(tb::par, V, W, vinfo);
  for (index_t k = 0; k < 4; ++k) {
    CHECK(vinfo[k] == 0);
    const mat<double> r = tb::as_eigen(V, k) * tb::as_eigen(W, k) - mat<double>::Identity(sz[k], sz[k]);
    CHECK(r.norm() < 1e-10);
  }
}
