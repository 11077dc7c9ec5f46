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
