// trsm: B := alpha op(A)^{-1} B or alpha B op(A)^{-1}; residual ratio as LAPACK's dtrt02 and
// the triangle of A that must not be read is NaN.
#include "support.hpp"

using namespace tbt;

namespace {

/// A = a well-conditioned triangle (|diag| >= 1) with NaN in the other triangle and, for a
/// unit diagonal, NaN on the diagonal: reading either poisons the result.
template <class T>
void make_triangular(test_batch<T>& A, tb::uplo u, tb::diag d) {
  const int n = A.m;
  for (index_t k = 0; k < A.count; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const bool in = u == tb::uplo::lower ? i >= j : i <= j;
        T v = in ? uniform<T>() / T(n) : std::numeric_limits<T>::quiet_NaN();
        if (i == j) v = d == tb::diag::unit ? std::numeric_limits<T>::quiet_NaN() : (uniform<T>() < 0 ? -1 : 1) * (1 + uniform<T>(0, 1));
        A.at(k, i, j) = v;
      }
}

template <class T>
mat<T> clean_op(mat<T> a, tb::uplo u, tb::op t, tb::diag d) {
  const int n = int(a.rows());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const bool in = u == tb::uplo::lower ? i >= j : i <= j;
      if (!in) a(i, j) = 0;
      if (i == j && d == tb::diag::unit) a(i, j) = 1;
    }
  return t == tb::op::no_trans ? a : mat<T>(a.transpose());
}

}  // namespace

namespace {
template <class T>
struct trsm_data {
  static constexpr int rhs = 3;
  tb::side s;
  tb::uplo u;
  tb::op t;
  tb::diag d;
  int n;
  bool left;
  T alpha;
  test_batch<T> A, B;
  std::vector<mat<T>> B0;
  trsm_data(int n_, index_t count, tb::side s_, tb::uplo u_, tb::op t_, tb::diag d_)
      : s(s_), u(u_), t(t_), d(d_), n(n_), left(s_ == tb::side::left), alpha(uniform<T>(0.5, 2)),
        A(n_, n_, count), B(left ? n_ : rhs, left ? rhs : n_, count) {
    make_triangular(A, u, d);
    B.fill_random();
    for (index_t k = 0; k < count; ++k) B0.push_back(B.get(k));
  }
  void check() {
    INFO("side " << int(s) << " uplo " << int(u) << " trans " << int(t) << " diag " << int(d));
    worst w;
    for (index_t k = 0; k < B.count; ++k) {
      const mat<T> opA = clean_op(A.get(k), u, t, d), X = B.get(k);
      const mat<T> R = left ? mat<T>(opA * X - alpha * B0[k]) : mat<T>(X * opA - alpha * B0[k]);
      const double ratio = norm1(R) / (norm1(opA) * norm1(X) * n * eps<T>() + 1e-300);
      w(X.allFinite() ? ratio : 1e300, k);
    }
    INFO("worst matrix " << w.where);
    CHECK(w.value < ratio_threshold);
    CHECK(B.padding_intact());
    CHECK(A.padding_intact());
  }
};
}  // namespace

TEMPLATE_TEST_CASE("trsm solves every side, triangle, transpose and diagonal", "[trsm]", float, double) {
  using T = TestType;
  for_each_case([&](int n, auto N, index_t count, auto L) {
    constexpr int n_ = decltype(N)::value;
    constexpr int r_ = n_ == tb::dynamic ? tb::dynamic : trsm_data<T>::rhs;
    int combo = 0;
    for (tb::side s : {tb::side::left, tb::side::right})
      for (tb::uplo u : {tb::uplo::lower, tb::uplo::upper})
        for (tb::op t : {tb::op::no_trans, tb::op::trans})
          for (tb::diag d : {tb::diag::non_unit, tb::diag::unit}) {
            if (count > 3 && combo++ % 7 != 0) continue;  // large batches: a spread of 3 of 16
            trsm_data<T> c(n, count, s, u, t, d);
            auto a = c.A.template cview<n_, n_>(L);
            if (c.left)
              tb::trsm(tb::seq, s, u, t, d, c.alpha, a, c.B.template view<n_, r_>(L));
            else
              tb::trsm(tb::seq, s, u, t, d, c.alpha, a, c.B.template view<r_, n_>(L));
            c.check();
          }
  });
}

TEST_CASE("trsm with compile-time arguments, alpha == 0 and bad input", "[trsm][bad-input]") {
  constexpr int n = 4;
  test_batch<double> A(n, n, 2), B(n, 2, 2);
  make_triangular(A, tb::uplo::upper, tb::diag::non_unit);
  B.fill_random();
  auto L = layout_c<layout::strided>{};
  tb::trsm(tb::par, tb::left, tb::upper, tb::no_trans, tb::non_unit, 0.0, A.cview<n, n>(L), B.view<n, 2>(L));
  for (index_t k = 0; k < 2; ++k) CHECK(B.get(k).isZero(0));
  tb::batch<double> Ad(4, 4, 2), Bd(3, 2, 2);
  CHECK_THROWS_WITH(tb::trsm(tb::seq, tb::side::left, tb::uplo::lower, tb::op::no_trans, tb::diag::unit, 1.0, Ad, Bd),
                    Catch::Contains("trsm") && Catch::Contains("rows of B"));
  tb::batch<double> An(4, 3, 2), Bn(4, 2, 2);
  CHECK_THROWS_WITH(tb::trsm(tb::seq, tb::left, tb::lower, tb::trans, tb::unit, 1.0, An, Bn),
                    Catch::Contains("not square"));
}
