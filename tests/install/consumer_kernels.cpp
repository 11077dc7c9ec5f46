// An outside program with a run-time order, built against the installed compiled kernel
// library (pkg-config tinybatch-kernels): its call must reach the library.
#include <tinybatch/host/compiled.hpp>
#include <tinybatch/tinybatch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char**) {
  namespace tb = tinybatch;
  const int n = argc > 5 ? 3 : 2;  // an order the library holds in every build of it, known at run time
  std::vector<double> a{4, 1, 2, 3, 2, 0, 0, 2}, b{1, 2, 2, 4};  // two 2x2 systems, column-major
  std::vector<int> ipiv(4), info(2);
  const auto before = tb::detail::compiled::kernel_calls();
  tb::gesv(tb::par, tb::strided_view<double>(a.data(), n, n, 2), ipiv, tb::strided_view<double>(b.data(), n, 1, 2), info);
  const bool reached = tb::detail::compiled::kernel_calls() > before;
  const bool ok = info[0] == 0 && info[1] == 0 && std::abs(b[0] + 0.1) < 1e-14 && std::abs(b[1] - 0.7) < 1e-14 &&
                  b[2] == 1 && b[3] == 2;
  std::printf("consumer_kernels: %s, %s the kernel library\n", ok ? "ok" : "WRONG", reached ? "through" : "NOT through");
  return ok && reached ? 0 : 1;
}
