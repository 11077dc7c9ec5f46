// Compile cost of one fixed-size call: posv on 6x6 double matrices, one right-hand side
// (eigen_llt6.cpp is the same program with Eigen's fixed-size types).
#include <tinybatch/tinybatch.hpp>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  namespace tb = tinybatch;
  const tb::index_t count = argc > 1 ? std::atol(argv[1]) : 100000;
  tb::batch<double, 6, 6> A(count);
  tb::batch<double, 6, 1> B(count);
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (tb::index_t k = 0; k < count; ++k) {
    for (int j = 0; j < 6; ++j)
      for (int i = j; i < 6; ++i) A[k](i, j) = A[k](j, i) = (i == j ? 7.0 : 0.0) + u(g);
    for (int i = 0; i < 6; ++i) B[k](i, 0) = u(g);
  }
  std::vector<int> info(static_cast<std::size_t>(count));
  tb::posv(tb::par, tb::lower, A, B, info);
  double sum = 0;
  for (tb::index_t k = 0; k < count; ++k)
    for (int i = 0; i < 6; ++i) sum += B[k](i, 0);
  std::printf("%ld systems, sum of solutions %g\n", long(count), sum);
  return 0;
}
