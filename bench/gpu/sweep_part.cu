// One (type, n) of the tuning sweep (sweep_main.cu), compiled once per part with
// -DTB_SWEEP_T=float|double -DTB_SWEEP_P=s|d -DTB_SWEEP_N=n (bench/gpu/meson.build).
//   getrf (n in 2, 3, 4, 5, 8, 12, 16, 20, 24, 32): the fast kernel at tuning.hpp's shape
//     with its pivot search and with the butterfly, then with the default search (fit) at
//     the launch shapes below (threads, register cap through __launch_bounds__ min blocks),
//     in place with the input restored before each run, and cublas<t>getrfBatched on the
//     same data (the staged kernel of 045adb9 and the variants that lost to this one were
//     measured by the sweep of bench/results/h100/gpu-h100-1b98ad3-dirty-sweep-variants.csv, then removed);
//   potrf (same n, lower): the fast kernel at tuning.hpp's shape and at the shapes below,
//     in place on diagonally dominant input restored before each run (the variant staged
//     through a block-wide tile, measured by the sweeps of 1b98ad3 and b415ef3, is gone);
//   inverse (same n): the fast kernel at every launch shape below, out of place, 1 GiB per
//     operand, and with each pivot search at tuning.hpp's shape (the [A | I] kernel it
//     replaced, measured by the sweep of 0b57285, is gone);
//   getrs (no_trans, and trans as getrs_t) and potrs (lower), one right-hand side (same n):
//     the solve kernel at the launch shapes of solve_shapes, columns by strided loads or
//     through the per-segment transpose, the right-hand side restored before each run (the
//     staged kernel, measured by the sweep of b415ef3, is gone);
//   gemm (n <= 8): the staged kernel and the one-thread-per-matrix kernel (beta = 0);
//   gemm (n in 16 .. 24, 28, 32): the fast kernel (cuda::fast::gemm) and
//     cublas<t>gemmStridedBatched on the same data (beta = 0): the crossover.
#include <cublas_v2.h>

#include <tinybatch/cuda.hpp>

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
// getrf and the inverse also between 8 and 16, where rows per thread pay off
constexpr bool getrf_size = inverse_size || N < 16;
constexpr bool gemm_size = N >= 16;
// -DTB_SWEEP_BUILD=<mask> compiles only some operations' sweeps (1 getrf, 2 inverse,
// 4 potrf, 8 gemm, 16 getrs and potrs; default all): a part then builds in a fraction of
// the time (the solve and potrf sweeps of issue 4 were built that way, outside meson).
#ifndef TB_SWEEP_BUILD
#define TB_SWEEP_BUILD 31
#endif


[[maybe_unused]] constexpr const char* pm_name(k::pivot_method m) {
  return m == k::pivot_method::butterfly ? "butterfly"
         : m == k::pivot_method::redux   ? "redux"
         : m == k::pivot_method::split   ? "split"
                                         : "fit";
}
[[maybe_unused]] std::string shape_name(k::launch_shape S) {
  return "t" + std::to_string(S.threads) + "_mb" + std::to_string(S.min_blocks) +
         (S.per_matrix ? "_thread" : S.pipelined ? "_pipelined" : S.transpose ? "_xpose" : "_direct") +
         (S.rows > 1 ? "_r" + std::to_string(S.rows) : "") + (S.opaque_ld ? "_opq" : "") +
         (S.pivot == k::pivot_method::split ? "_split" : "") + (S.rcp_fast ? "" : "_div");
}

template <k::launch_shape S, k::pivot_method PM = k::default_pivot>
void inverse_shape(const sweep::context& c, const tb::strided_view<const T, N, N>& A,
                   const tb::strided_view<T, N, N>& X, int* info, double bytes, bool named = false) {
  const double ms =
      c.time_ms([&] { tb::cuda::fast::detail_fast::inverse_with<S, PM>(cudaStream_t{}, A, X, info); });
  const std::string impl = shape_name(S) + (named ? std::string("_") + pm_name(PM) : "");
  c.record("inverse", impl, TB_STR(TB_SWEEP_P), N, A.count(), ms, 2.0 * N * N * N, bytes);
}

template <k::launch_shape S, k::pivot_method PM = k::default_pivot>
void getrf_shape(const sweep::context& c, const tb::strided_view<T, N, N>& A, const tb::pivot_view& pv, int* info,
                 double bytes, const std::function<void()>& restore, bool named = false) {
  const double ms = c.time_restored(
      [&] { tb::cuda::fast::detail_fast::getrf_with<S, PM>(cudaStream_t{}, A, pv, info); }, restore);
  const std::string impl = shape_name(S) + (named ? std::string("_") + pm_name(PM) : "");
  c.record("getrf", impl, TB_STR(TB_SWEEP_P), N, A.count(), ms, 2.0 / 3 * N * N * N, bytes);
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

[[maybe_unused]] cublasStatus_t getrf_b(cublasHandle_t h, float** a, int* piv, int* info, int batch) {
  return cublasSgetrfBatched(h, N, a, N, piv, info, batch);
}
[[maybe_unused]] cublasStatus_t getrf_b(cublasHandle_t h, double** a, int* piv, int* info, int batch) {
  return cublasDgetrfBatched(h, N, a, N, piv, info, batch);
}

/// Adds n + |a_ii| to the diagonal: the lower triangle is then that of a symmetric,
/// diagonally dominant, positive definite matrix.
__global__ void spd_kernel(T* a, index_t count) {
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < count * N; e += index_t(gridDim.x) * blockDim.x) {
    const index_t k = e / N;
    const int i = int(e - k * N);
    T& d = a[k * N * N + i + i * N];
    d = T(N) + (d < T(0) ? -d : d);
  }
}

template <k::launch_shape S>
void potrf_shape(const sweep::context& c, const tb::strided_view<T, N, N>& A, int* info, double bytes,
                 const std::function<void()>& restore) {
  const double ms = c.time_restored(
      [&] { tb::cuda::fast::detail_fast::potrf_with<S>(cudaStream_t{}, tb::uplo::lower, A, info); }, restore);
  c.record("potrf", shape_name(S), TB_STR(TB_SWEEP_P), N, A.count(), ms, double(N) * N * N / 3, bytes);
}

template <k::launch_shape S, k::solve_kind K>
void solve_shape(const sweep::context& c, const char* op, const tb::strided_view<const T, N, N>& A,
                 const tb::pivot_view& pv, const tb::strided_view<T, N, 1>& b, double bytes,
                 const std::function<void()>& restore) {
  const double ms = c.time_restored(
      [&] { tb::cuda::fast::detail_fast::solve_with<S, K>(cudaStream_t{}, A, pv, b, nullptr, op); }, restore);
  c.record(op, shape_name(S), TB_STR(TB_SWEEP_P), N, A.count(), ms, 2.0 * N * N, bytes);
}

/// Every launch shape of the solve sweep for kind K: tuning.hpp's and the ones below.
template <k::solve_kind K>
void solve_shapes(const sweep::context& c, const char* op, const tb::strided_view<const T, N, N>& A,
                  const tb::pivot_view& pv, const tb::strided_view<T, N, 1>& b, double bytes,
                  const std::function<void()>& restore) {
  using S = k::launch_shape;
  constexpr bool lu = K == k::solve_kind::getrs_n || K == k::solve_kind::getrs_t;
  constexpr S tuned = k::tuned(lu ? k::fast_op::getrs : k::fast_op::potrs, sizeof(T), N);
  solve_shape<tuned, K>(c, op, A, pv, b, bytes, restore);
  solve_shape<S{.threads = 64}, K>(c, op, A, pv, b, bytes, restore);
  solve_shape<S{.threads = 128}, K>(c, op, A, pv, b, bytes, restore);
  solve_shape<S{.threads = 256}, K>(c, op, A, pv, b, bytes, restore);
  solve_shape<S{.threads = 128, .min_blocks = 4}, K>(c, op, A, pv, b, bytes, restore);  // <= 128 registers
  solve_shape<S{.threads = 128, .min_blocks = 6}, K>(c, op, A, pv, b, bytes, restore);  // <= 85
  solve_shape<S{.threads = 256, .min_blocks = 4}, K>(c, op, A, pv, b, bytes, restore);  // <= 64
  solve_shape<S{.threads = 256, .min_blocks = 6}, K>(c, op, A, pv, b, bytes, restore);  // <= 42
  if constexpr (K != k::solve_kind::getrs_n) {  // columns through the per-segment transpose
    solve_shape<S{.threads = 64, .transpose = true}, K>(c, op, A, pv, b, bytes, restore);
    solve_shape<S{.threads = 128, .transpose = true}, K>(c, op, A, pv, b, bytes, restore);
    solve_shape<S{.threads = 128, .min_blocks = 4, .transpose = true}, K>(c, op, A, pv, b, bytes, restore);
    solve_shape<S{.threads = 128, .min_blocks = 6, .transpose = true}, K>(c, op, A, pv, b, bytes, restore);
    solve_shape<S{.threads = 256, .min_blocks = 4, .transpose = true}, K>(c, op, A, pv, b, bytes, restore);
  }
  // the tuned shape and the transposing ones with the factor's offsets formed per matrix
  solve_shape<S{tuned.threads, tuned.min_blocks, tuned.per_matrix, tuned.packed, tuned.transpose, tuned.rows,
                tuned.pipelined, true}, K>(c, op, A, pv, b, bytes, restore);
  solve_shape<S{.threads = 64, .opaque_ld = true}, K>(c, op, A, pv, b, bytes, restore);
  solve_shape<S{.threads = 128, .opaque_ld = true}, K>(c, op, A, pv, b, bytes, restore);
  if constexpr (K != k::solve_kind::getrs_n) {
    solve_shape<S{.threads = 64, .transpose = true, .opaque_ld = true}, K>(c, op, A, pv, b, bytes, restore);
    solve_shape<S{.threads = 128, .transpose = true, .opaque_ld = true}, K>(c, op, A, pv, b, bytes, restore);
    solve_shape<S{.threads = 128, .min_blocks = 6, .transpose = true, .opaque_ld = true}, K>(c, op, A, pv, b, bytes,
                                                                                            restore);
  }
  if constexpr (N > 16) {  // one warp per matrix, looping, the next matrix in flight
    solve_shape<S{.threads = 32, .pipelined = true}, K>(c, op, A, pv, b, bytes, restore);
    solve_shape<S{.threads = 64, .pipelined = true}, K>(c, op, A, pv, b, bytes, restore);
    solve_shape<S{.threads = 128, .pipelined = true}, K>(c, op, A, pv, b, bytes, restore);
  }
}

__global__ void pointers_kernel(T** p, T* base, index_t count, index_t stride) {
  for (index_t k = index_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += index_t(gridDim.x) * blockDim.x)
    p[k] = base + k * stride;
}

}  // namespace

namespace sweep {

namespace {
// A template, so that `if constexpr` discards the operations TB_SWEEP_BUILD leaves out
// (in a plain function their branches would still be compiled).
template <int Build>
void run_part(const context& c) {
  constexpr bool build_getrf = Build & 1, build_inverse = Build & 2, build_potrf = Build & 4,
                 build_gemm = Build & 8, build_solves = Build & 16;
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
  using S = k::launch_shape;
  using PM = k::pivot_method;
  if constexpr (getrf_size && build_getrf) {
  if (c.o.has("getrf")) {
    // A0 keeps the input; A is restored from it before each run.
    T* A0;
    int* piv;
    T** Ap;
    TINYBATCH_CUDA_CHECK(cudaMalloc(&A0, mat * sizeof(T) * batch));
    TINYBATCH_CUDA_CHECK(cudaMalloc(&piv, sizeof(int) * N * batch));
    TINYBATCH_CUDA_CHECK(cudaMalloc(&Ap, sizeof(T*) * batch));
    TINYBATCH_CUDA_CHECK(cudaMemcpy(A0, A, mat * sizeof(T) * batch, cudaMemcpyDeviceToDevice));
    pointers_kernel<<<1024, 256>>>(Ap, A, batch, mat);
    const auto restore = [&] {
      TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(A, A0, mat * sizeof(T) * batch, cudaMemcpyDeviceToDevice));
    };
    const tb::pivot_view pv(piv, index_t(N) * batch, N);
    const double bytes = 2 * mb + 4.0 * double(N + 1) * double(batch);
    constexpr S tuned = k::tuned(k::fast_op::getrf, sizeof(T), N);
    // tuning.hpp's shape and pivot search first (ncu-counts.sh profiles the first launch),
    // then the same shape with the butterfly
    getrf_shape<tuned, tuned.pivot>(c, vA, pv, info, bytes, restore, true);
    getrf_shape<tuned, PM::butterfly>(c, vA, pv, info, bytes, restore, true);
    getrf_shape<S{.threads = 64}>(c, vA, pv, info, bytes, restore);
    getrf_shape<S{.threads = 128}>(c, vA, pv, info, bytes, restore);
    getrf_shape<S{.threads = 128, .min_blocks = 4}>(c, vA, pv, info, bytes, restore);  // <= 128 registers
    getrf_shape<S{.threads = 128, .min_blocks = 5}>(c, vA, pv, info, bytes, restore);  // <= 102
    getrf_shape<S{.threads = 128, .min_blocks = 6}>(c, vA, pv, info, bytes, restore);  // <= 85
    getrf_shape<S{.threads = 256, .min_blocks = 3}>(c, vA, pv, info, bytes, restore);  // <= 85
    getrf_shape<S{.threads = 256, .min_blocks = 4}>(c, vA, pv, info, bytes, restore);  // <= 64
    if constexpr (k::seg_width(N) == 8) {  // the split pivot search on segments of 8 lanes
      getrf_shape<S{.threads = 64}, PM::split>(c, vA, pv, info, bytes, restore, true);
      getrf_shape<S{.threads = 128}, PM::split>(c, vA, pv, info, bytes, restore, true);
      getrf_shape<S{.threads = 128, .min_blocks = 5}, PM::split>(c, vA, pv, info, bytes, restore, true);
      getrf_shape<S{.threads = 128, .min_blocks = 6}, PM::split>(c, vA, pv, info, bytes, restore, true);
      getrf_shape<S{.threads = 256, .min_blocks = 4}, PM::split>(c, vA, pv, info, bytes, restore, true);
    }
    if constexpr (N == 3 || N == 5 || N == 6 || N == 7) {
      getrf_shape<S{.threads = 64, .rows = 2}>(c, vA, pv, info, bytes, restore);
      getrf_shape<S{.threads = 128, .rows = 2}>(c, vA, pv, info, bytes, restore);
    }
    if constexpr (N == 6 || N == 12 || N == 24) {  // n / 3 a power of two: every lane busy
      getrf_shape<S{.threads = 64, .rows = 3}>(c, vA, pv, info, bytes, restore);
      getrf_shape<S{.threads = 128, .rows = 3}>(c, vA, pv, info, bytes, restore);
      getrf_shape<S{.threads = 128, .min_blocks = 4, .rows = 3}>(c, vA, pv, info, bytes, restore);
    }
    if constexpr (N >= 8) {  // several rows per thread (getrf_rows_kernel)
      getrf_shape<S{.threads = 64, .rows = 2}>(c, vA, pv, info, bytes, restore);
      getrf_shape<S{.threads = 128, .rows = 2}>(c, vA, pv, info, bytes, restore);
      getrf_shape<S{.threads = 128, .min_blocks = 2, .rows = 2}>(c, vA, pv, info, bytes, restore);  // <= 255
      getrf_shape<S{.threads = 128, .min_blocks = 3, .rows = 2}>(c, vA, pv, info, bytes, restore);  // <= 170
      getrf_shape<S{.threads = 128, .min_blocks = 4, .rows = 2}>(c, vA, pv, info, bytes, restore);  // <= 128
      getrf_shape<S{.threads = 256, .min_blocks = 3, .rows = 2}>(c, vA, pv, info, bytes, restore);  // <= 85
      if constexpr (sizeof(T) == 4 && N >= 16) {
        getrf_shape<S{.threads = 128, .min_blocks = 2, .rows = 4}>(c, vA, pv, info, bytes, restore);
        getrf_shape<S{.threads = 128, .min_blocks = 3, .rows = 4}>(c, vA, pv, info, bytes, restore);
      }
    }
    cublasHandle_t h;
    TINYBATCH_CUDA_CHECK(cublasCreate(&h));
    const double ms = c.time_restored([&] { TINYBATCH_CUDA_CHECK(getrf_b(h, Ap, piv, info, int(batch))); }, restore);
    c.record("getrf", "cublas_getrf", TB_STR(TB_SWEEP_P), N, batch, ms, 2.0 / 3 * N * N * N, bytes);
    TINYBATCH_CUDA_CHECK(cublasDestroy(h));
    restore();
    TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
    for (void* p : {(void*)A0, (void*)piv, (void*)Ap}) TINYBATCH_CUDA_CHECK(cudaFree(p));
  }
  }
  if constexpr (getrf_size && build_inverse) {
  if (c.o.has("inverse")) {
    const double bytes = 2 * mb + 4.0 * double(batch);
    constexpr S tuned = k::tuned(k::fast_op::inverse, sizeof(T), N);
    inverse_shape<tuned, tuned.pivot>(c, cA, vC, info, bytes, true);  // first: ncu-counts.sh
    inverse_shape<tuned, PM::butterfly>(c, cA, vC, info, bytes, true);
    inverse_shape<S{.threads = 64}>(c, cA, vC, info, bytes);
    inverse_shape<S{.threads = 128}>(c, cA, vC, info, bytes);
    inverse_shape<S{.threads = 256}>(c, cA, vC, info, bytes);
    inverse_shape<S{.threads = 128, .min_blocks = 4}>(c, cA, vC, info, bytes);  // <= 128 registers
    inverse_shape<S{.threads = 128, .min_blocks = 5}>(c, cA, vC, info, bytes);  // <= 102
    inverse_shape<S{.threads = 256, .min_blocks = 3}>(c, cA, vC, info, bytes);  // <= 85
    inverse_shape<S{.threads = 256, .min_blocks = 4}>(c, cA, vC, info, bytes);  // <= 64
    if constexpr (k::seg_width(N) == 8) {  // the split pivot search on segments of 8 lanes
      inverse_shape<S{.threads = 64}, PM::split>(c, cA, vC, info, bytes, true);
      inverse_shape<S{.threads = 128}, PM::split>(c, cA, vC, info, bytes, true);
      inverse_shape<S{.threads = 128, .min_blocks = 5}, PM::split>(c, cA, vC, info, bytes, true);
      inverse_shape<S{.threads = 256, .min_blocks = 3}, PM::split>(c, cA, vC, info, bytes, true);
      inverse_shape<S{.threads = 256, .min_blocks = 4}, PM::split>(c, cA, vC, info, bytes, true);
    }
    if constexpr (N >= 5) {  // several rows per thread (inverse_rows_kernel)
      inverse_shape<S{.threads = 64, .rows = 2}>(c, cA, vC, info, bytes);
      inverse_shape<S{.threads = 128, .rows = 2}>(c, cA, vC, info, bytes);
      inverse_shape<S{.threads = 128, .min_blocks = 4, .rows = 2}>(c, cA, vC, info, bytes);
      inverse_shape<S{.threads = 256, .min_blocks = 3, .rows = 2}>(c, cA, vC, info, bytes);
    }
    if constexpr (N == 6 || N == 12 || N == 24) {
      inverse_shape<S{.threads = 64, .rows = 3}>(c, cA, vC, info, bytes);
      inverse_shape<S{.threads = 128, .rows = 3}>(c, cA, vC, info, bytes);
      inverse_shape<S{.threads = 128, .min_blocks = 4, .rows = 3}>(c, cA, vC, info, bytes);
    }
    if constexpr (N <= 5) {  // one thread per matrix
      inverse_shape<S{.threads = 64, .per_matrix = true}>(c, cA, vC, info, bytes);
      inverse_shape<S{.threads = 128, .per_matrix = true}>(c, cA, vC, info, bytes);
      inverse_shape<S{.threads = 256, .per_matrix = true}>(c, cA, vC, info, bytes);
    }
  }
  }
  if constexpr (inverse_size && build_potrf) {
  if (c.o.has("potrf")) {
    // lower triangle, in place, the input (SPD) restored before each run
    T* A0;
    TINYBATCH_CUDA_CHECK(cudaMalloc(&A0, mat * sizeof(T) * batch));
    spd_kernel<<<4096, 256>>>(B, batch);
    TINYBATCH_CUDA_CHECK(cudaMemcpy(A0, B, mat * sizeof(T) * batch, cudaMemcpyDeviceToDevice));
    const auto restore = [&] {
      TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(B, A0, mat * sizeof(T) * batch, cudaMemcpyDeviceToDevice));
    };
    const double bytes = 2 * mb + 4.0 * double(batch);
    potrf_shape<k::tuned(k::fast_op::potrf, sizeof(T), N)>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 64}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 128}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 256}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 128, .min_blocks = 4}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 128, .min_blocks = 5}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 128, .min_blocks = 6}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 256, .min_blocks = 3}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 256, .min_blocks = 4}>(c, vB, info, bytes, restore);
    // the same with the final stores' addresses from an opaque ld (tuning.hpp)
    potrf_shape<S{.threads = 128, .opaque_ld = true}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 128, .min_blocks = 4, .opaque_ld = true}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 128, .min_blocks = 5, .opaque_ld = true}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 128, .min_blocks = 6, .opaque_ld = true}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 256, .min_blocks = 3, .opaque_ld = true}>(c, vB, info, bytes, restore);
    potrf_shape<S{.threads = 256, .min_blocks = 4, .opaque_ld = true}>(c, vB, info, bytes, restore);
    restore();
    TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
    TINYBATCH_CUDA_CHECK(cudaFree(A0));
  }
  }
  if constexpr (inverse_size && build_solves) {
  if (c.o.has("getrs") || c.o.has("potrs")) {
    // One right-hand side per matrix, restored before each run; its vectors live in C.
    // getrs: the LU factors of A (the fast getrf) with their pivots; potrs: the Cholesky
    // factor (lower) of the diagonally dominant matrix of B. Bytes as bench_gpu counts them:
    // the whole factor, the pivots (getrs), the right-hand side read and written.
    T* const x = C;
    T* const x0 = C + index_t(N) * batch;
    fill_kernel<<<4096, 256>>>(x0, index_t(N) * batch, 13u);
    const auto restore = [&] {
      TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(x, x0, sizeof(T) * N * batch, cudaMemcpyDeviceToDevice));
    };
    const tb::strided_view<T, N, 1> vx(x, batch);
    const double vec = 2.0 * sizeof(T) * N * double(batch);
    if (c.o.has("getrs")) {
      int* piv;
      TINYBATCH_CUDA_CHECK(cudaMalloc(&piv, sizeof(int) * N * batch));
      const tb::pivot_view pv(piv, index_t(N) * batch, N);
      tb::cuda::fast::getrf(cudaStream_t{}, vA, pv, info);
      solve_shapes<k::solve_kind::getrs_n>(c, "getrs", cA, pv, vx, mb + 4.0 * N * double(batch) + vec, restore);
      solve_shapes<k::solve_kind::getrs_t>(c, "getrs_t", cA, pv, vx, mb + 4.0 * N * double(batch) + vec, restore);
      TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
      TINYBATCH_CUDA_CHECK(cudaFree(piv));
    }
    if (c.o.has("potrs")) {
      spd_kernel<<<4096, 256>>>(B, batch);
      tb::cuda::fast::potrf(cudaStream_t{}, tb::uplo::lower, vB, info);
      const tb::strided_view<const T, N, N> cB(B, batch);
      solve_shapes<k::solve_kind::potrs_l>(c, "potrs", cB, tb::pivot_view{}, vx, mb + vec, restore);
    }
    TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  }
  if constexpr (N <= 8 && build_gemm) {
  if (c.o.has("gemm")) {
    // small n: the staged kernel at tuning.hpp's shape and one thread per matrix
    const double bytes = 3 * mb, fl = 2.0 * N * N * N;
    const auto shape = [&]<S Sh>(const char* name) {
      const double ms = c.time_ms([&] {
        tb::cuda::fast::detail_fast::gemm_with<Sh, false, false>(cudaStream_t{}, T(1), vA, vB, T(0), vC);
      });
      c.record("gemm", name, TB_STR(TB_SWEEP_P), N, batch, ms, fl, bytes);
    };
    constexpr S tuned = k::tuned(k::fast_op::gemm, sizeof(T), N);
    shape.template operator()<tuned>("tuned");
    shape.template operator()<S{.threads = 256, .min_blocks = tuned.min_blocks, .packed = tuned.packed}>("staged_t256");
    // register caps (ncu, double n = 4 at 256 threads: 84 registers, 25% occupancy, half the
    // stall cycles on global loads)
    shape.template operator()<S{.threads = 256, .min_blocks = 2, .packed = tuned.packed}>("staged_t256_mb2");
    shape.template operator()<S{.threads = 256, .min_blocks = 3, .packed = tuned.packed}>("staged_t256_mb3");
    shape.template operator()<S{.threads = 256, .min_blocks = 4, .packed = tuned.packed}>("staged_t256_mb4");
    shape.template operator()<S{.threads = 128, .min_blocks = 6, .packed = tuned.packed}>("staged_t128_mb6");
    shape.template operator()<S{.threads = 128, .min_blocks = 8, .packed = tuned.packed}>("staged_t128_mb8");
    shape.template operator()<S{.threads = 64, .packed = tuned.packed}>("staged_t64");
    shape.template operator()<S{.threads = 64, .per_matrix = true}>("thread_t64");
    shape.template operator()<S{.threads = 128, .per_matrix = true}>("thread_t128");
    shape.template operator()<S{.threads = 256, .per_matrix = true}>("thread_t256");
  }
  }
  if constexpr (gemm_size && build_gemm) {
  if (c.o.has("gemm")) {
    const double bytes = 3 * mb, fl = 2.0 * N * N * N;
    double ms = c.time_ms([&] { tb::cuda::fast::gemm(cudaStream_t{}, tb::op::no_trans, tb::op::no_trans, T(1), vA, vB, T(0), vC); });
    c.record("gemm", "tinybatch_fast", TB_STR(TB_SWEEP_P), N, batch, ms, fl, bytes);
    cublasHandle_t h;
    TINYBATCH_CUDA_CHECK(cublasCreate(&h));
    ms = c.time_ms([&] { TINYBATCH_CUDA_CHECK(gemm_sb(h, A, B, C, int(batch))); });
    c.record("gemm", "cublas_gemm_strided", TB_STR(TB_SWEEP_P), N, batch, ms, fl, bytes);
    TINYBATCH_CUDA_CHECK(cublasDestroy(h));
  }
  }
  TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
  for (void* p : {(void*)A, (void*)B, (void*)C, (void*)info}) TINYBATCH_CUDA_CHECK(cudaFree(p));
}
}  // namespace

void TB_CAT(sweep, TB_SWEEP_P, TB_SWEEP_N)(const context& c) {
  if (c.o.has_n(N)) run_part<TB_SWEEP_BUILD>(c);
}

}  // namespace sweep
