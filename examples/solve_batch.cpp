// Solves a batch of small dense systems A_k x_k = b_k (as a block-Jacobi preconditioner or an
// FEM element loop would) with tinybatch on the CPU, then checks every residual.
//
//   solve_batch [count] [n]      defaults: 200000 systems of order 8
#include <tinybatch/eigen.hpp>
#include <tinybatch/tinybatch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace tb = tinybatch;

// N is the compile-time order (or tb::dynamic): every kernel below is instantiated for it.
template <int N>
int solve(tb::index_t count, int n) {
  tb::batch<double, N, N> A(n, n, count), A0(n, n, count);
  tb::batch<double, N, 1> B(n, 1, count), B0(n, 1, count);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1, 1);
  std::generate(A.data(), A.data() + A.size(), [&] { return u(rng); });
  std::generate(B.data(), B.data() + B.size(), [&] { return u(rng); });
  std::copy(A.data(), A.data() + A.size(), A0.data());
  std::copy(B.data(), B.data() + B.size(), B0.data());

  std::vector<int> ipiv(static_cast<std::size_t>(count) * n), info(static_cast<std::size_t>(count));
  const auto t0 = std::chrono::steady_clock::now();
  tb::gesv(tb::par, A, ipiv, B, info);  // LU with partial pivoting, then the solve, per matrix
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // LAPACK's residual ratio ||b - A x|| / (||A|| ||x|| n eps): below 30 means solved correctly.
  double worst = 0;
  tb::index_t singular = 0;
  for (tb::index_t k = 0; k < count; ++k) {
    if (info[k] != 0) {
      ++singular;
      continue;
    }
    const auto a = tb::as_eigen(A0, k);
    const auto x = tb::as_eigen(B, k);
    const auto b = tb::as_eigen(B0, k);
    const double r = (b - a * x).template lpNorm<1>() /
                     (a.cwiseAbs().colwise().sum().maxCoeff() * x.template lpNorm<1>() * n * 2.22e-16);
    worst = std::max(worst, r);
  }
  const double flops = double(count) * (2.0 / 3 * n * n * n + 2.0 * n * n);
  std::printf("cpu: %lld systems of order %d solved in %.3f s (%.2f GFLOP/s); %lld singular; "
              "worst residual ratio %.2f: %s\n",
              static_cast<long long>(count), n, secs, flops / secs * 1e-9, static_cast<long long>(singular),
              worst, worst < 30 ? "ok" : "FAILED");
  return worst < 30 ? 0 : 1;
}

int main(int argc, char** argv) {
  const tb::index_t count = argc > 1 ? std::atoll(argv[1]) : 200000;
  const int n = argc > 2 ? std::atoi(argv[2]) : 8;
  // n known only at run time: the dispatcher picks the compile-time instantiation (1..32).
  return tb::dispatch_size(n, [&](auto N) { return solve<decltype(N)::value>(count, n); });
}
