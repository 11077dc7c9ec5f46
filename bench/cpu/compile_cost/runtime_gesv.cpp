// Compile cost of a run-time order: one gesv (one right-hand side, double) on a
// strided_view<double> whose n comes from the command line. Built without and with
// -DTINYBATCH_KERNEL_LIBRARY (measure.sh): header-only, it runs the reference loops; with the
// compiled kernel library, the SIMD kernels of order n.
#include <tinybatch/tinybatch.hpp>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  namespace tb = tinybatch;
  const int n = argc > 1 ? std::atoi(argv[1]) : 12;
  const tb::index_t count = argc > 2 ? std::atol(argv[2]) : 100000;
  std::vector<double> a(std::size_t(n) * n * count), b(std::size_t(n) * count);
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& x : a) x = u(g);
  for (auto& x : b) x = u(g);
  std::vector<int> ipiv(std::size_t(n) * count), info(static_cast<std::size_t>(count));
  tb::gesv(tb::par, tb::strided_view<double>(a.data(), n, n, count), ipiv, tb::strided_view<double>(b.data(), n, 1, count),
           info);
  double sum = 0;
  for (double x : b) sum += x;
  std::printf("n = %d, %ld systems, sum of solutions %g", n, long(count), sum);
#if TINYBATCH_USES_KERNEL_LIBRARY
  std::printf(", %llu calls through the kernel library", (unsigned long long)tb::detail::compiled::kernel_calls());
#endif
  std::printf("\n");
  return 0;
}
