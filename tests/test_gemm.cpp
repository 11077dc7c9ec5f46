// gemm: C := alpha op(A) op(B) + beta C against Eigen's product, on the whole grid.
#include "support.hpp"

using namespace tbt;

namespace {

template <class T>
mat<T> op_of(const mat<T>& a, tb::op o) {
  return o == tb::op::no_trans ? a : mat<T>(a.transpose());
}

/// Checks C[k] against alpha op(A) op(B) + beta C0 elementwise, within the standard error
/// bound of a length-kdim dot product (a few (kdim + 2) eps of the absolute values).
template <class T>
void check_gemm(test_batch<T>& A, test_batch<T>& B, test_batch<T>& C, const std::vector<mat<T>>& C0,
                tb::op ta, tb::op tbo, T alpha, T beta) {
  worst w;
  for (index_t k = 0; k < C.count; ++k) {
    const mat<T> a = op_of(A.get(k), ta), b = op_of(B.get(k), tbo);
    const mat<T> c0 = beta == T(0) ? mat<T>::Zero(C.m, C.n) : C0[std::size_t(k)];
    const mat<T> ref = alpha * (a * b) + beta * c0;
    const mat<T> bound = (std::abs(alpha) * (a.cwiseAbs() * b.cwiseAbs()) + std::abs(beta) * c0.cwiseAbs())
                             .array() * T(4 * (a.cols() + 2) * eps<T>()) + std::numeric_limits<T>::min();
    const mat<T> got = C.get(k);
    double r = 0;
    for (int j = 0; j < C.n; ++j)
      for (int i = 0; i < C.m; ++i) r = std::max(r, double(std::abs(got(i, j) - ref(i, j)) / bound(i, j)));
    if (!std::isfinite(r)) r = 1e300;
    w(r, k);
  }
  INFO("ta = " << int(ta) << ", tb = " << int(tbo) << ", beta = " << beta << ", worst matrix " << w.where);
  CHECK(w.value <= 1.0);
  CHECK(C.unwritten() == 0);
  CHECK(C.padding_intact());
  CHECK(A.padding_intact());
}

}  // namespace

namespace {
/// Data and oracle of one grid case; only the call itself depends on the extents and layout,
/// so the checking code is compiled once per scalar type.
template <class T>
struct gemm_case {
  test_batch<T> A, B, C;
  std::vector<mat<T>> C0;
  gemm_case(int n, index_t count) : A(n, n, count), B(n, n, count), C(n, n, count) {
    A.fill_random(), B.fill_random(), C.fill_random();
    for (index_t k = 0; k < count; ++k) C0.push_back(C.get(k));
  }
  void reset(T beta) {
    if (beta == T(0))
      C.fill_poison();  // beta == 0: C must be written without being read
    else
      for (index_t k = 0; k < C.count; ++k) C.set(k, C0[std::size_t(k)]);
  }
};
}  // namespace

TEMPLATE_TEST_CASE("gemm matches Eigen for every size, count, layout and transpose", "[gemm]", float, double) {
  using T = TestType;
  for_each_case([&](int n, auto N, index_t count, auto L) {
    constexpr int n_ = decltype(N)::value;
    gemm_case<T> c(n, count);
    const tb::op ops[] = {tb::op::no_trans, tb::op::trans, tb::op::conj_trans};
    for (tb::op ta : ops)
      for (tb::op tbo : ops)
        for (T beta : {T(0), uniform<T>()}) {
          // Large batches run two of the 18 combinations, to keep the test short.
          if (count > 3 && !(ta == tbo && (ta == tb::op::no_trans) == (beta != T(0)) && ta != tb::op::conj_trans))
            continue;
          const T alpha = uniform<T>();
          c.reset(beta);
          tb::gemm(tb::seq, ta, tbo, alpha, c.A.template cview<n_, n_>(L), c.B.template cview<n_, n_>(L), beta,
                   c.C.template view<n_, n_>(L));
          check_gemm(c.A, c.B, c.C, c.C0, ta, tbo, alpha, beta);
        }
  });
}

TEMPLATE_TEST_CASE("gemm on rectangular fixed sizes with compile-time transposes", "[gemm]", float, double) {
  using T = TestType;
  constexpr int M = 3, N = 5, K = 7;
  for_each_layout([&](auto L) {
    for (index_t count : counts) {
      test_batch<T> A(K, M, count), B(N, K, count), C(M, N, count);  // op(A) = A^T, op(B) = B^T
      A.fill_random(), B.fill_random(), C.fill_poison();
      std::vector<mat<T>> C0(std::size_t(count), mat<T>::Zero(M, N));
      tb::gemm(tb::par, tb::trans, tb::trans, T(1.5), A.template cview<K, M>(L), B.template cview<N, K>(L),
               T(0), C.template view<M, N>(L));
      check_gemm(A, B, C, C0, tb::op::trans, tb::op::trans, T(1.5), T(0));

      test_batch<T> D(M, K, count), E(K, N, count);  // C = D E
      D.fill_random(), E.fill_random(), C.fill_poison();
      tb::gemm(tb::par, D.template cview<M, K>(L), E.template cview<K, N>(L), C.template view<M, N>(L));
      check_gemm(D, E, C, C0, tb::op::no_trans, tb::op::no_trans, T(1), T(0));
    }
  });
}

TEST_CASE("gemm: alpha == 0 reads neither A nor B, beta == 0 does not read C", "[gemm][bad-input]") {
  const int n = 4, count = 3;
  test_batch<double> A(n, n, count), B(n, n, count), C(n, n, count);
  A.fill_random(), B.fill_random(), C.fill_random();
  A.at(1, 2, 2) = std::numeric_limits<double>::quiet_NaN();
  std::vector<mat<double>> C0;
  for (index_t k = 0; k < count; ++k) C0.push_back(C.get(k));
  auto L = layout_c<layout::strided>{};
  tb::gemm(tb::seq, tb::no_trans, tb::no_trans, 0.0, A.cview<n, n>(L), B.cview<n, n>(L), 2.0, C.view<n, n>(L));
  for (index_t k = 0; k < count; ++k) CHECK((C.get(k) - 2.0 * C0[std::size_t(k)]).norm() == 0.0);
  C.fill_poison();  // NaN in C and beta == 0: C is overwritten, not propagated
  tb::gemm(tb::seq, tb::no_trans, tb::no_trans, 1.0, B.cview<n, n>(L), B.cview<n, n>(L), 0.0, C.view<n, n>(L));
  for (index_t k = 0; k < count; ++k) CHECK(C.get(k).allFinite());
}

TEST_CASE("gemm: NaN and Inf stay in their own matrix", "[gemm][bad-input]") {
  const int n = 5, count = 7;
  test_batch<double> A(n, n, count), B(n, n, count), C(n, n, count);
  A.fill_random(), B.fill_random(), C.fill_poison();
  A.at(2, 1, 3) = std::numeric_limits<double>::quiet_NaN();
  B.at(4, 0, 0) = std::numeric_limits<double>::infinity();
  auto L = layout_c<layout::pointers>{};
  tb::gemm(tb::par, A.cview<n, n>(L), B.cview<n, n>(L), C.view<n, n>(L));
  for (index_t k = 0; k < count; ++k) {
    const mat<double> ref = A.get(k) * B.get(k);
    if (k == 2 || k == 4) {
      CHECK_FALSE(C.get(k).allFinite());
    } else {
      CHECK((C.get(k) - ref).norm() <= 1e-13 * (1 + ref.norm()));
    }
  }
}

TEST_CASE("gemm: run-time size mismatches throw with a message and change nothing", "[gemm][bad-input]") {
  tb::batch<double> A(3, 4, 2), B(3, 3, 2), C(3, 3, 2), C1(3, 3, 1);
  std::fill(C.data(), C.data() + C.size(), 7.0);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, A, B, C), Catch::Contains("gemm") && Catch::Contains("op(A)"));
  CHECK_THROWS_AS(tb::gemm(tb::seq, B, B, C1), tb::invalid_argument);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, B, B, C1), Catch::Contains("matrices"));
  // A run-time op against fixed sizes is checked at run time.
  tb::batch<double, 3, 4> F(2);
  tb::batch<double, 3, 3> G(2), H(2);
  CHECK_THROWS_AS(tb::gemm(tb::seq, tb::op::no_trans, tb::op::no_trans, 1.0, F, G, 0.0, H), tb::invalid_argument);
  // null data with a non-zero count
  tb::strided_view<double, 3, 3> null_view(nullptr, 2);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, null_view, G, H), Catch::Contains("null"));
  // a null matrix inside a pointer array
  std::vector<double*> ptrs{G.data(), nullptr};
  tb::pointer_view<double, 3, 3> pv(ptrs.data(), 2);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, pv, G, H), Catch::Contains("null matrix pointer"));
  // overlapping outputs
  tb::strided_view<double, 3, 3> overlap(H.data(), 2, 3, 4);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, G, G, overlap), Catch::Contains("overlap"));
  // leading dimension too small
  tb::strided_view<double, 3, 3> bad_ld(H.data(), 1, 2, 9);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, G, G, bad_ld), Catch::Contains("leading dimension"));
  for (index_t i = 0; i < C.size(); ++i) CHECK(C.data()[i] == 7.0);
}

TEST_CASE("gemm on variable-size batches", "[gemm][vbatch]") {
  std::vector<int> m{1, 4, 7, 3}, n{2, 5, 1, 3}, kk{3, 1, 6, 3};
  tb::vbatch<double> A(m, kk), B(kk, n), C(m, n);
  auto a = A.view();
  auto b = B.view();
  auto c = C.view();
  for (index_t k = 0; k < a.count(); ++k) {
    tb::as_eigen(a[k]).setRandom();
    tb::as_eigen(b[k]).setRandom();
    tb::as_eigen(c[k]).setConstant(poison<double>());
  }
  tb::gemm(tb::par, A, B, C);
  for (index_t k = 0; k < a.count(); ++k)
    CHECK((tb::as_eigen(c[k]) - tb::as_eigen(a[k]) * tb::as_eigen(b[k])).norm() < 1e-13);
  std::vector<int> bad{1, 4, 7, 4};
  tb::vbatch<double> C2(bad, n);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, A, B, C2), Catch::Contains("matrix 3"));
}
