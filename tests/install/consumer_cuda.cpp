// An outside CUDA user's link line: built with g++ only against the installed package's
// CUDA flags (pkg-config tinybatch-cuda, CMake tinybatch::cuda), it must find cuBLAS, which
// tinybatch's CUDA backend calls (gemm on large strided batches). Linked, not run: the
// machine may have no GPU.
#include <cublas_v2.h>

#include <cstdio>

int main() {
  cublasHandle_t h = nullptr;
  const cublasStatus_t s = cublasCreate(&h);
  if (s == CUBLAS_STATUS_SUCCESS) cublasDestroy(h);
  std::printf("consumer_cuda: cublasCreate status %d\n", int(s));
  return 0;
}
