// Catch2 runner of the GPU tests. Without a usable CUDA device it prints why and exits with
// 77, which Meson reports as SKIP (never as a pass): CI builds these tests but has no GPU.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
    return 77;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    std::printf("GPU tests on %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  return Catch::Session().run(argc, argv);
}
