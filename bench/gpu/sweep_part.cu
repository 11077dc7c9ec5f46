// One (type, n) of the tuning sweep (sweep_main.cu), compiled once per part with
// -DTB_SWEEP_T=float|double -DTB_SWEEP_P=s|d -DTB_SWEEP_N=n (bench/gpu/meson.build).
//   inverse (n in 2, 3, 4, 5, 8, 12, 16, 20, 24, 32): the fast kernel at every launch shape
//     below (threads, register cap through __launch_bounds__ min blocks, staged through
//     shared memory or row by row), out of place, 1 GiB per operand, and the [A | I] kernel
//     it replaced (inverse_before.cuh) at its last tuned shape;
//   gemm (n in 16 .. 24, 28, 32): the fast kernel (cuda::fast::gemm) and
//     cublas<t>gemmStridedBatched on the same data (beta = 0): the crossover.
#include <cublas_v2.h>

#include <tinybatch/cuda.hpp>

#include "inverse_before.cuh"
#include "sweep.hpp"

#define TB_STR2(x) #x
#define TB_STR(x) TB_STR2(x)
#define TB_CAT2(a, b, c) a##_##b##_##c
#define TB_CAT(a, b, c) TB_CAT2(a, b, c)

namespace {
namespace tb = tinybatch;
namespace k = tinybatch::cuda::fast_kernels;
using tb::index_t;
using T = TB_SWEEP_T;
constexpr int N = TB_SWEEP_N;

template <class U>
__global__ void fill_kernel(U* a, index_t total, unsigned seed) {
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += index_t(gridDim.x) * blockDim.x) {
    unsigned long long h = (unsigned long long)(e * 1315423911ull) ^ seed;
    h ^= h >> 33, h *= 0xff51afd7ed558ccdull, h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ull, h ^= h >> 33;
    a[e] = U(double(h >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
  }
}

constexpr bool inverse_size = N == 2 || N == 3 || N == 4 || N == 5 || N == 8 || N == 12 || N == 16 ||
                              N == 20 || N == 24 || N == 32;
constexpr bool gemm_size = N >= 16;

template <k::launch_shape S>
void inverse_shape(const sweep::context& c, const tb::strided_view<const T, N, N>& A,
                   const tb::strided_view<T, N, N>& X, int* info, double bytes) {
  const double ms = c.time_ms([&] { tb::cuda::fast::detail_fast::inverse_with<S>(cudaStream_t{}, A, X, info); });
  const std::string impl = "t" + std::to_string(S.threads) + "_mb" + std::to_string(S.min_blocks) +
                           (S.staged ? "_staged" : "_direct");
  c.record("inverse", impl, TB_STR(TB_SWEEP_P), N, A.count(), ms, 2.0 * N * N * N, bytes);
}

/// The [A | I] kernel this sweep's kernel replaced, at its last tuned shape (before).
void inverse_before(const sweep::context& c, const tb::strided_view<const T, N, N>& A,
                    const tb::strided_view<T, N, N>& X, int* info, double bytes) {
  constexpr int w = k::seg_width(N), np = (N + k::vec_width<T> - 1) / k::vec_width<T> * k::vec_width<T>;
  constexpr int per = int(sizeof(T)) * (k::tile_stride(N * N, w) + 2 * k::vec_stride<T>(2 * np));
  constexpr k::launch_shape S = N <= 4 ? k::launch_shape{128, 6} : N <= 8 ? k::launch_shape{128, 5}
                              : N <= 16 ? k::launch_shape{128, 4} : k::launch_shape{64, 5};
  constexpr int threads = k::fit_threads(S.threads, w, per);
  const double ms = c.time_ms([&] {
    sweep_before::inverse_augmented_kernel<T, N, threads, S.min_blocks>
        <<<k::grid_for(A.count(), threads / w), threads>>>(k::at_of(A), k::at_of(X), A.count(), info);
  });
  c.record("inverse", "before_augmented", TB_STR(TB_SWEEP_P), N, A.count(), ms, 2.0 * N * N * N, bytes);
}

[[maybe_unused]] cublasStatus_t gemm_sb(cublasHandle_t h, const float* a, const float* b, float* cc, int batch) {
  const float one = 1, zero = 0;
  return cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, (long long)N * N, b, N,
                                   (long long)N * N, &zero, cc, N, (long long)N * N, batch);
}
[[maybe_unused]] cublasStatus_t gemm_sb(cublasHandle_t h, const double* a, const double* b, double* cc, int batch) {
  const double one = 1, zero = 0;
  return cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, (long long)N * N, b, N,
                                   (long long)N * N, &zero, cc, N, (long long)N * N, batch);
}

}  // namespace

namespace sweep {

void TB_CAT(sweep, TB_SWEEP_P, TB_SWEEP_N)(const context& c) {
  const index_t mat = index_t(N) * N;
  const index_t batch = std::min<index_t>(index_t(c.o.gib * double(1ull << 30) / double(mat * sizeof(T))),
                                          2147483647 / 4);
  const double mb = double(mat * sizeof(T)) * double(batch);
  T *A, *B, *C;
  int* info;
  TINYBATCH_CUDA_CHECK(cudaMalloc(&A, mat * sizeof(T) * batch));
  TINYBATCH_CUDA_CHECK(cudaMalloc(&B, mat * sizeof(T) * batch));
  TINYBATCH_CUDA_CHECK(cudaMalloc(&C, mat * sizeof(T) * batch));
  TINYBATCH_CUDA_CHECK(cudaMalloc(&info, sizeof(int) * batch));
  fill_kernel<<<4096, 256>>>(A, mat * batch, 11u);
  fill_kernel<<<4096, 256>>>(B, mat * batch, 12u);
  TINYBATCH_CUDA_CHECK(cudaGetLastError());
  const tb::strided_view<const T, N, N> cA(A, batch);
  const tb::strided_view<T, N, N> vA(A, batch), vB(B, batch), vC(C, batch);
  if constexpr (inverse_size) {
    const double bytes = 2 * mb + 4.0 * double(batch);
    using S = k::launch_shape;
    inverse_before(c, cA, vC, info, bytes);
    inverse_shape<S{64, 0, false}>(c, cA, vC, info, bytes);
    inverse_shape<S{128, 0, false}>(c, cA, vC, info, bytes);
    inverse_shape<S{256, 0, false}>(c, cA, vC, info, bytes);
    inverse_shape<S{128, 4, false}>(c, cA, vC, info, bytes);  // <= 128 registers
    inverse_shape<S{128, 5, false}>(c, cA, vC, info, bytes);  // <= 102
    inverse_shape<S{256, 3, false}>(c, cA, vC, info, bytes);  // <= 85
    inverse_shape<S{256, 4, false}>(c, cA, vC, info, bytes);  // <= 64
    inverse_shape<S{128, 0, true}>(c, cA, vC, info, bytes);
    inverse_shape<S{256, 0, true}>(c, cA, vC, info, bytes);
    inverse_shape<S{128, 4, true}>(c, cA, vC, info, bytes);
    inverse_shape<S{256, 3, true}>(c, cA, vC, info, bytes);
  }
  if constexpr (gemm_size) {
    const double bytes = 3 * mb, fl = 2.0 * N * N * N;
    double ms = c.time_ms([&] { tb::cuda::fast::gemm(cudaStream_t{}, tb::op::no_trans, tb::op::no_trans, T(1), vA, vB, T(0), vC); });
    c.record("gemm", "tinybatch_fast", TB_STR(TB_SWEEP_P), N, batch, ms, fl, bytes);
    cublasHandle_t h;
    TINYBATCH_CUDA_CHECK(cublasCreate(&h));
    ms = c.time_ms([&] { TINYBATCH_CUDA_CHECK(gemm_sb(h, A, B, C, int(batch))); });
    c.record("gemm", "cublas_gemm_strided", TB_STR(TB_SWEEP_P), N, batch, ms, fl, bytes);
    TINYBATCH_CUDA_CHECK(cublasDestroy(h));
  }
  TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
  for (void* p : {(void*)A, (void*)B, (void*)C, (void*)info}) TINYBATCH_CUDA_CHECK(cudaFree(p));
}

}  // namespace sweep
