// The fast inverse as it was before the Gauss-Jordan kernel (commit ac68758, cuda/kernels/
// inverse.cuh): [A | I] in registers (2n values per thread). Kept here only so that the
// tuning sweep measures before and after in the same run.
// Fast out-of-place inverse for n <= 32 (issue #4, after ../shared/seeds/002): one kernel
// that reads A once and writes inv(A) once. Each thread holds a row of the augmented
// [A | I] in registers; the lazily swapped LU of getrf.cuh runs on it (the right half
// becomes L^-1 P), then the backward solve with U, row by row through shared memory,
// leaves row i of inv(A) in the thread at logical position i.
//
// info is getrf's (first exactly zero pivot); a singular matrix's X then holds its LU
// factors, as reference::inverse (getrf, then getri) leaves it.
#pragma once

#include <tinybatch/cuda/kernels/getrf.cuh>

namespace sweep_before {
using namespace tinybatch::cuda::fast_kernels;
using tinybatch::index_t;

template <class T, int N, int THREADS, int MINB, class AtA, class AtX>
__global__ void __launch_bounds__(THREADS, min_blocks_of(MINB))
    inverse_augmented_kernel(AtA A, AtX X, index_t count, int* info) {
  constexpr int W = seg_width(N), NB = THREADS / W, TS = tile_stride(N * N, W);
  constexpr int NP = (N + vec_width<T> - 1) / vec_width<T> * vec_width<T>;
  constexpr int BS = vec_stride<T>(2 * NP);
  __shared__ __align__(16) T tile[NB * TS];
  __shared__ __align__(16) T bc[2][NB * BS];
  const int seg = threadIdx.x / W, r = threadIdx.x % W;
  const bool lane_ok = r < N;
  T* t = tile + seg * TS;
  for (index_t k0 = index_t(blockIdx.x) * NB; k0 < count; k0 += index_t(gridDim.x) * NB) {
    to_tiles<THREADS, NB, N, N, TS, 1, N, part::all>(tile, A, k0, count);
    __syncthreads();
    lu_row<T, N> s;
    T b[N];
#pragma unroll
    for (int c = 0; c < N; ++c) s.a[c] = lane_ok ? t[r + c * N] : T(0), b[c] = c == r ? T(1) : T(0);
    s.pos = lane_ok ? r : 64 + r, s.chosen = false, s.chosen_at = 0, s.info = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) lu_step<W, N, true>(s, b, j, r, lane_ok, bc[j & 1] + seg * BS, NP);
    // Backward: x_j = (y_j - sum_{c > j} u_jc x_c) / u_jj, from j = n - 1 down.
#pragma unroll
    for (int j = N - 1; j >= 0; --j) {
      T* buf = bc[(N + (N - 1 - j)) & 1] + seg * BS;
      if (lane_ok && s.pos == j) {
        const T rcp = T(1) / s.a[j];
#pragma unroll
        for (int c = 0; c < N; ++c) b[c] *= rcp;
        put_row(buf, 0, b);
      }
      __syncwarp();
      if (lane_ok && s.pos < j) sub_row(b, s.a[j], buf, 0);
    }
    __syncwarp();
    const index_t k = k0 + seg;
    if (lane_ok) {
      if (s.info == 0) {
#pragma unroll
        for (int c = 0; c < N; ++c) t[s.pos + c * N] = b[c];
      } else {
#pragma unroll
        for (int c = 0; c < N; ++c) t[s.pos + c * N] = s.a[c];
      }
    }
    if (r == 0 && k < count) info[k] = s.info;
    __syncthreads();
    from_tiles<THREADS, NB, N, N, TS, 1, N, part::all>(tile, X, k0, count);
    __syncthreads();
  }
}

}  // namespace sweep_before
