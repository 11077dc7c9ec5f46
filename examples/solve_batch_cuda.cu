// The GPU half of the quick-start job: the same batch of small systems as solve_batch.cpp,
// solved with tinybatch's CUDA policy, residuals checked on the host. Without a CUDA device
// it says so and exits 0 (nothing to run, nothing failed).
//
//   solve_batch_cuda [count] [n]      defaults: 200000 systems of order 8
#include <tinybatch/cuda.hpp>
#include <tinybatch/eigen.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace tb = tinybatch;

template <int N>
int solve(tb::index_t count, int n) {
  tb::batch<double, N, N> A(n, n, count);
  tb::batch<double, N, 1> B(n, 1, count), X(n, 1, count);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1, 1);
  std::generate(A.data(), A.data() + A.size(), [&] { return u(rng); });
  std::generate(B.data(), B.data() + B.size(), [&] { return u(rng); });

  tb::cuda::device_batch<double, N, N> dA(n, n, count);
  tb::cuda::device_batch<double, N, 1> dB(n, 1, count);
  tb::cuda::device_array<int> ipiv(static_cast<std::size_t>(count) * n), info(static_cast<std::size_t>(count));
  tb::cuda::copy(dA, A);
  tb::cuda::copy(dB, B);

  cudaEvent_t start, stop;
  cudaEventCreate(&start), cudaEventCreate(&stop);
  cudaEventRecord(start);
  tb::gesv(tb::cuda::on(nullptr), dA, ipiv, dB, info);  // getrf + getrs on the GPU
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);

  std::vector<int> h_info(static_cast<std::size_t>(count));
  tb::cuda::copy(X, dB);
  tb::cuda::check(cudaMemcpy(h_info.data(), info.data(), h_info.size() * sizeof(int), cudaMemcpyDeviceToHost),
                  "cudaMemcpy(info)");

  // LAPACK's residual ratio ||b - A x|| / (||A|| ||x|| n eps): below 30 means solved correctly.
  double worst = 0;
  tb::index_t singular = 0;
  for (tb::index_t k = 0; k < count; ++k) {
    if (h_info[k] != 0) {
      ++singular;
      continue;
    }
    const auto a = tb::as_eigen(A, k);
    const auto x = tb::as_eigen(X, k);
    const auto b = tb::as_eigen(B, k);
    const double r = (b - a * x).template lpNorm<1>() /
                     (a.cwiseAbs().colwise().sum().maxCoeff() * x.template lpNorm<1>() * n * 2.22e-16);
    worst = std::max(worst, r);
  }
  const double flops = double(count) * (2.0 / 3 * n * n * n + 2.0 * n * n);
  std::printf("gpu: %lld systems of order %d solved in %.3f ms (%.2f GFLOP/s); %lld singular; "
              "worst residual ratio %.2f: %s\n",
              static_cast<long long>(count), n, ms, flops / (ms * 1e-3) * 1e-9,
              static_cast<long long>(singular), worst, worst < 30 ? "ok" : "FAILED");
  return worst < 30 ? 0 : 1;
}

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("gpu: skipped: no CUDA device\n");
    return 0;
  }
  const tb::index_t count = argc > 1 ? std::atoll(argv[1]) : 200000;
  const int n = argc > 2 ? std::atoi(argv[2]) : 8;
  return tb::dispatch_size(n, [&](auto N) { return solve<decltype(N)::value>(count, n); });
}
