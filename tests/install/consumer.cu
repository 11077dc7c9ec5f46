// An outside CUDA program: built with nvcc only against the installed package (pkg-config
// tinybatch-cuda, CMake tinybatch::cuda), with no flag of tinybatch's own build
// (no --expt-relaxed-constexpr). Every operation runs once on the GPU with fixed and
// run-time sizes; gesv's answer is checked. Without a CUDA device it says so and exits 0:
// the install check then only compiles and links it.
#include <tinybatch/cuda.hpp>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace tb = tinybatch;

template <int N>
bool all_ops(int n) {
  const auto p = tb::cuda::on(nullptr);
  const tb::index_t count = 3;
  tb::batch<double, N, N> hA(n, n, count);
  tb::batch<double, N, 1> hB(n, 1, count);
  for (tb::index_t k = 0; k < count; ++k)
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) hA[k](i, j) = i == j ? n + 1.0 + k : 1.0 / (1 + i + j);
      hB[k](i, 0) = 1.0 + i;
    }
  tb::cuda::device_batch<double, N, N> A(n, n, count), X(n, n, count), S(n, n, count);
  tb::cuda::device_batch<double, N, 1> B(n, 1, count);
  tb::cuda::device_array<int> ipiv(std::size_t(count) * n), info(count);
  tb::cuda::copy(A, hA);
  tb::cuda::copy(B, hB);
  tb::gemm(p, A, A, X);
  tb::gemm(p, tb::trans, tb::no_trans, 1.0, A, A, 0.0, S);  // A^T A: positive definite
  tb::potrf(p, tb::lower, S, info);
  tb::potrs(p, tb::lower, S, X, info);
  tb::trsm(p, tb::left, tb::lower, tb::no_trans, tb::non_unit, 1.0, S, X);
  tb::inverse(p, A, X, info);
  tb::gesv(p, A, ipiv, B, info);  // A := L U, B := A^-1 b
  tb::getri(p, A, ipiv, info);
  tb::cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  tb::batch<double, N, 1> x(n, 1, count);
  tb::cuda::copy(x, B);
  std::vector<int> h_info(count);
  tb::cuda::check(cudaMemcpy(h_info.data(), info.data(), sizeof(int) * count, cudaMemcpyDeviceToHost),
                  "cudaMemcpy(info)");
  double worst = 0;
  for (tb::index_t k = 0; k < count; ++k) {
    if (h_info[k] != 0) return false;
    for (int i = 0; i < n; ++i) {
      double r = -hB[k](i, 0);
      for (int j = 0; j < n; ++j) r += hA[k](i, j) * x[k](j, 0);
      worst = std::fmax(worst, std::fabs(r));
    }
  }
  return worst < 1e-12;
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("consumer_cuda: no CUDA device, not run\n");
    return 0;
  }
  const bool ok = all_ops<4>(4) && all_ops<tb::dynamic>(5);
  std::printf("consumer_cuda: %s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
