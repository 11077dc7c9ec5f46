// The front end's argument rules, one small case each: messages that name the sizes, shared
// factors (stride-0 A and ipiv), aliasing between outputs and inputs, views that know their
// buffer. Outputs are poisoned where a call must throw before writing anything.
#include "support.hpp"

#include <span>

using namespace tbt;
using Catch::Matchers::Contains;

TEST_CASE("size errors name the sizes", "[api][messages]") {
  CHECK_THROWS_WITH((tb::batch<double, 4, 4>(3, 4, 2)), Contains("rows 3") && Contains("M = 4"));
  CHECK_THROWS_WITH((tb::batch<double, 4, 4>(4, 5, 2)), Contains("cols 5") && Contains("N = 4"));
  std::vector<double> buf(3 * 5 * 2);
  tb::strided_view<double> v(buf.data(), 3, 5, 2);
  CHECK_THROWS_WITH((tb::fixed_extents<4, 4>(v)), Contains("3 x 5") && Contains("4 x 4"));
  tb::batch<double> A(3, 4, 2), B(5, 5, 2), C(3, 5, 2);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, A, B, C), Contains("3 x 4, 5 x 5, 3 x 5"));
  tb::batch<double> S(4, 4, 2), R(3, 1, 2);
  std::vector<int> ipiv(8), info(2);
  CHECK_THROWS_WITH(tb::gesv(tb::seq, S, ipiv, R, info), Contains("4 x 4, 3 x 1"));
  CHECK_THROWS_WITH(tb::getrf(tb::seq, S, tb::pivot_view(ipiv.data(), 8, 3), info),
                      Contains("stride 3") && Contains("= 4"));
  CHECK_THROWS_WITH(tb::vbatch<double>({1, 2}, {1}), Contains("different lengths (2 and 1)"));
}

namespace {
/// One factor (A at stride 0, ipiv at stride 0) solved against `count` right-hand sides.
template <int N>
void shared_factor(int n, index_t count) {
  test_batch<double> a(n, n, 1), b(n, 2, count);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) a.at(0, i, j) = (i == j ? n : 0) + uniform<double>(-1, 1);
  for (index_t k = 0; k < count; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < 2; ++j) b.at(k, i, j) = uniform<double>(-1, 1);
  const mat<double> a0 = a.get(0);
  std::vector<mat<double>> b0;
  for (index_t k = 0; k < count; ++k) b0.push_back(b.get(k));
  std::vector<int> ipiv(std::size_t(n), -7), info(1, -7);
  auto A1 = tb::strided_view<double, N, N>::make(a.buf.data(), 1, a.ld, a.stride, n, n);
  tb::getrf(tb::seq, A1, ipiv, info);
  REQUIRE(info[0] == 0);
  auto A = tb::strided_view<const double, N, N>::make(a.buf.data(), count, a.ld, 0, n, n);
  auto B = tb::strided_view<double, N, tb::dynamic>::make(b.buf.data(), count, b.ld, b.stride, n, 2);
  tb::getrs(tb::par, tb::no_trans, A, tb::pivot_view(ipiv.data(), n, 0), B);
  const Eigen::PartialPivLU<mat<double>> lu(a0);
  for (index_t k = 0; k < count; ++k) REQUIRE((b.get(k) - lu.solve(b0[k])).norm() < 1e-12 * (1 + b0[k].norm()));
  // Outputs keep their rule: getrf's pivots at stride 0 would overlap.
  tb::batch<double> F(n, n, 2);
  std::vector<int> info2(2);
  CHECK_THROWS_WITH(tb::getrf(tb::seq, F, tb::pivot_view(ipiv.data(), n, 0), info2), Contains("ipiv stride 0"));
}
}  // namespace

TEST_CASE("getrs: one factor and its pivots shared by a batch of right-hand sides (stride 0)", "[api][getrs]") {
  shared_factor<tb::dynamic>(5, 37);
  shared_factor<4>(4, 37);
}
