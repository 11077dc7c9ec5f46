// Types: views and owning batches, the run-time -> compile-time dispatcher, Eigen maps, and
// the compile-time size rules (checked through concepts here; compile_fail.cpp checks that
// the same calls really are compile errors).
#include "support.hpp"

using namespace tbt;

namespace {
template <class A, class B, class C>
concept can_gemm = requires(A& a, B& b, C& c) { tb::gemm(tb::seq, a, b, c); };
template <class OA, class OB, class A, class B, class C>
concept can_gemm_op = requires(OA oa, OB ob, A& a, B& b, C& c) { tb::gemm(tb::seq, oa, ob, 1.0, a, b, 0.0, c); };
template <class S, class A, class B>
concept can_trsm = requires(S s, A& a, B& b) { tb::trsm(tb::seq, s, tb::lower, tb::no_trans, tb::unit, 1.0, a, b); };
template <class A, class B>
concept can_gesv = requires(A& a, B& b, std::vector<int>& v) { tb::gesv(tb::seq, a, v, b, v); };
template <class A>
concept can_potrf = requires(A& a, std::vector<int>& v) { tb::potrf(tb::seq, tb::lower, a, v); };
template <class A, class X>
concept can_inverse = requires(A& a, X& x, std::vector<int>& v) { tb::inverse(tb::seq, a, x, v); };

template <int M, int N>
using bd = tb::batch<double, M, N>;
using dyn = tb::batch<double>;
}  // namespace

TEST_CASE("size mismatches of fixed-size batches do not compile", "[types][compile-time]") {
  STATIC_REQUIRE(can_gemm<bd<3, 4>, bd<4, 5>, bd<3, 5>>);
  STATIC_REQUIRE_FALSE(can_gemm<bd<3, 4>, bd<3, 5>, bd<3, 5>>);
  STATIC_REQUIRE_FALSE(can_gemm<bd<3, 4>, bd<4, 5>, bd<4, 5>>);
  STATIC_REQUIRE(can_gemm_op<decltype(tb::trans), decltype(tb::no_trans), bd<4, 3>, bd<4, 5>, bd<3, 5>>);
  STATIC_REQUIRE_FALSE(can_gemm_op<decltype(tb::no_trans), decltype(tb::no_trans), bd<4, 3>, bd<4, 5>, bd<3, 5>>);
  STATIC_REQUIRE_FALSE(can_gemm_op<decltype(tb::trans), decltype(tb::trans), bd<4, 3>, bd<4, 5>, bd<3, 5>>);
  // A run-time op leaves non-square fixed shapes to the run-time check; square ones are known.
  STATIC_REQUIRE(can_gemm_op<tb::op, tb::op, bd<4, 3>, bd<4, 5>, bd<3, 5>>);
  STATIC_REQUIRE_FALSE(can_gemm_op<tb::op, tb::op, bd<4, 4>, bd<4, 4>, bd<3, 3>>);
  // Run-time sizes always compile; the check happens at run time.
  STATIC_REQUIRE(can_gemm<dyn, dyn, dyn>);
  STATIC_REQUIRE(can_gemm<bd<3, 4>, dyn, bd<3, 5>>);
  // Outputs must be writable, scalars must agree.
  STATIC_REQUIRE_FALSE(can_gemm<bd<3, 3>, bd<3, 3>, const bd<3, 3>>);
  STATIC_REQUIRE_FALSE(can_gemm<bd<3, 3>, tb::batch<float, 3, 3>, bd<3, 3>>);

  STATIC_REQUIRE(can_trsm<decltype(tb::left), bd<4, 4>, bd<4, 2>>);
  STATIC_REQUIRE_FALSE(can_trsm<decltype(tb::right), bd<4, 4>, bd<4, 2>>);
  STATIC_REQUIRE(can_trsm<decltype(tb::right), bd<4, 4>, bd<2, 4>>);
  STATIC_REQUIRE(can_trsm<tb::side, bd<4, 4>, bd<4, 2>>);  // run-time side: run-time check
  STATIC_REQUIRE_FALSE(can_trsm<decltype(tb::left), bd<4, 3>, bd<4, 2>>);

  STATIC_REQUIRE(can_gesv<bd<5, 5>, bd<5, 2>>);
  STATIC_REQUIRE_FALSE(can_gesv<bd<5, 5>, bd<4, 2>>);
  STATIC_REQUIRE_FALSE(can_gesv<bd<5, 4>, bd<5, 2>>);
  STATIC_REQUIRE(can_potrf<bd<6, 6>>);
  STATIC_REQUIRE_FALSE(can_potrf<bd<6, 5>>);
  STATIC_REQUIRE_FALSE(can_potrf<const bd<6, 6>>);
  STATIC_REQUIRE(can_inverse<const bd<3, 3>, bd<3, 3>>);
  STATIC_REQUIRE_FALSE(can_inverse<bd<3, 3>, bd<4, 4>>);
}

TEST_CASE("views address the matrices users already have", "[types]") {
  // Strided, packed: matrix k at data + k * M * N.
  std::vector<double> buf(2 * 3 * 4);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = double(i);
  tb::strided_view<double, 3, 4> v(buf.data(), 2);
  CHECK(v.count() == 2);
  CHECK(v.ld() == 3);
  CHECK(v.stride() == 12);
  CHECK(v[1](2, 3) == 12 + 2 + 3 * 3);
  // Run-time sizes with ld and stride.
  tb::strided_view<double> w(buf.data(), 2, 2, 3, 4, 8);
  CHECK(w.rows() == 2);
  CHECK(w[2](1, 1) == 16 + 1 + 4);
  // Pointer arrays.
  std::vector<double*> ptrs{buf.data() + 12, buf.data()};
  tb::pointer_view<double, 3, 4> p(ptrs.data(), 2);
  CHECK(p[0](0, 0) == 12);
  CHECK(p[1](1, 0) == 1);
  tb::pointer_view<const double, 3, 4> pc = p;
  CHECK(pc[0](0, 1) == 15);
  // Owning batches are 64-byte aligned and convert to views.
  tb::batch<float, 5, 5> b(3);
  CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % 64 == 0);
  CHECK(b.view().count() == 3);
  tb::strided_view<const float, 5, 5> bc = std::as_const(b).view();
  CHECK(bc.stride() == 25);
  CHECK_THROWS_AS(tb::batch<float>(-1, 2, 3), tb::invalid_argument);
  CHECK_THROWS_WITH((tb::vbatch<double>({1, 2}, {1})), Catch::Contains("different lengths"));
  // The empty batch is legal everywhere.
  tb::batch<double, 4, 4> e(0);
  std::vector<int> none;
  tb::getrf(tb::seq, e, none, none);
  tb::gemm(tb::par, e, e, e);
}

TEST_CASE("dispatch_size maps a run-time n to its compile-time instantiation", "[types]") {
  for (int n = 0; n <= 40; ++n) {
    const int got = tb::dispatch_size(n, [](auto N) { return int(decltype(N)::value); });
    CHECK(got == (n >= 1 && n <= 32 ? n : tb::dynamic));
  }
  // The intended use: a run-time batch solved through fixed-size kernels.
  const int n = 7;
  tb::batch<double> A(n, n, 3), B(n, 1, 3);
  std::vector<mat<double>> A0, B0;
  for (index_t k = 0; k < 3; ++k) {
    A0.push_back(random_full_rank<double>(n, n)), tb::as_eigen(A, k) = A0.back();
    B0.push_back(random_mat<double>(n, 1)), tb::as_eigen(B, k) = B0.back();
  }
  std::vector<int> ipiv(3 * n), info(3);
  bool fixed = false;
  tb::dispatch_size(n, [&](auto N) {
    constexpr int n_ = decltype(N)::value;
    if constexpr (n_ != tb::dynamic) {
      fixed = true;
      tb::gesv(tb::seq, tb::fixed_extents<n_, n_>(A.view()), ipiv, tb::fixed_extents<n_, 1>(B.view()), info);
    }
  });
  CHECK(fixed);
  for (index_t k = 0; k < 3; ++k) CHECK(solve_ratio<double>(A0[k], tb::as_eigen(B, k), B0[k]) < ratio_threshold);
  CHECK_THROWS_AS((tb::fixed_extents<3, 3>(A.view())), tb::invalid_argument);
}

TEST_CASE("as_eigen maps matrix k without copying", "[types][eigen]") {
  tb::batch<double, 3, 2> b(4);
  tb::as_eigen(b, 2) << 1, 2, 3, 4, 5, 6;
  CHECK(b[2](0, 1) == 2);
  CHECK(tb::as_eigen(b, 2).data() == b.data() + 12);
  static_assert(decltype(tb::as_eigen(b, 0))::RowsAtCompileTime == 3);
  const auto& cb = b;
  Eigen::Matrix<double, 3, 2> copy = tb::as_eigen(cb, 2);
  CHECK(copy(2, 1) == 6);
  std::vector<double> raw(2 * 5 * 2, 0.0);
  tb::strided_view<double> v(raw.data(), 3, 2, 2, 5, 10);  // ld 5
  tb::as_eigen(v, 1).setOnes();
  CHECK(raw[10] == 1);
  CHECK(raw[13] == 0);  // row 3 is padding
  CHECK(raw[15] == 1);
}
