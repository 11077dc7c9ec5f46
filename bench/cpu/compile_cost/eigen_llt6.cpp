// fixed_posv6.cpp with Eigen only: Matrix<double, 6, 6> and LLT, an OpenMP loop.
#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  using M = Eigen::Matrix<double, 6, 6>;
  using V = Eigen::Matrix<double, 6, 1>;
  const long count = argc > 1 ? std::atol(argv[1]) : 100000;
  std::vector<M, Eigen::aligned_allocator<M>> A(static_cast<std::size_t>(count));
  std::vector<V, Eigen::aligned_allocator<V>> B(static_cast<std::size_t>(count));
  std::mt19937_64 g(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (long k = 0; k < count; ++k) {
    for (int j = 0; j < 6; ++j)
      for (int i = j; i < 6; ++i) A[k](i, j) = A[k](j, i) = (i == j ? 7.0 : 0.0) + u(g);
    for (int i = 0; i < 6; ++i) B[k](i) = u(g);
  }
  std::vector<int> info(static_cast<std::size_t>(count));
#pragma omp parallel for schedule(static)
  for (long k = 0; k < count; ++k) {
    Eigen::LLT<M> llt(A[k]);
    info[k] = llt.info() == Eigen::Success ? 0 : 1;
    if (info[k] == 0) B[k] = llt.solve(B[k]);
  }
  double sum = 0;
  for (long k = 0; k < count; ++k) sum += B[k].sum();
  std::printf("%ld systems, sum of solutions %g\n", count, sum);
  return 0;
}
