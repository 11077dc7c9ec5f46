// Compile cost of a run-time order through dispatch_size: the same gesv as runtime_gesv.cpp,
// each order 1..32 instantiated as a fixed-size call in this translation unit.
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
  tb::dispatch_size(n, [&](auto N) {
    constexpr int s = decltype(N)::value;
    if constexpr (s == tb::dynamic)
      tb::gesv(tb::par, tb::strided_view<double>(a.data(), n, n, count), ipiv,
               tb::strided_view<double>(b.data(), n, 1, count), info);
    else
      tb::gesv(tb::par, tb::strided_view<double, s, s>(a.data(), count), ipiv,
               tb::strided_view<double, s, 1>(b.data(), count), info);
  });
  double sum = 0;
  for (double x : b) sum += x;
  std::printf("n = %d, %ld systems, sum of solutions %g\n", n, long(count), sum);
  return 0;
}
