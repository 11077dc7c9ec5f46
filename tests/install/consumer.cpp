// An outside program: built only against the installed headers (pkg-config or CMake).
#include <tinybatch/tinybatch.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  namespace tb = tinybatch;
  tb::batch<double, 2, 2> A(2);
  tb::batch<double, 2, 1> B(2);
  const double a[2][4] = {{4, 1, 2, 3}, {2, 0, 0, 2}};  // column-major 2x2 each
  const double b[2][2] = {{1, 2}, {2, 4}};
  for (int k = 0; k < 2; ++k) {
    for (int e = 0; e < 4; ++e) A.data()[k * 4 + e] = a[k][e];
    for (int e = 0; e < 2; ++e) B.data()[k * 2 + e] = b[k][e];
  }
  std::vector<int> ipiv(4), info(2);
  tb::gesv(tb::par, A, ipiv, B, info);
  // [[4 2] [1 3]] x = [1 2] -> x = (-0.1, 0.7);  2 I x = [2 4] -> x = (1, 2)
  const bool ok = info[0] == 0 && info[1] == 0 && std::abs(B[0](0, 0) + 0.1) < 1e-14 &&
                  std::abs(B[0](1, 0) - 0.7) < 1e-14 && B[1](0, 0) == 1 && B[1](1, 0) == 2;
  std::printf("consumer: %s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
