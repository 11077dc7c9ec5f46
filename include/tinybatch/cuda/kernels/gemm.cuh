// Fast gemm for M, N, K <= 32 (after ../shared/seeds/004): op(A) and op(B) of
// several matrices per thread block staged in shared memory by coalesced block-wide copies
// (16-byte loads on packed batches where tuning.hpp says so; transposed on the way where op
// says so), one thread per row of C accumulating its N
// entries in registers over fully unrolled loops, rows of op(B) read as 16-byte broadcasts.
// Each entry is summed in the order of reference::gemm (bit-identical with -fmad=false).
#pragma once

#include "common.cuh"

namespace tinybatch::cuda::fast_kernels {

/// Column pitch of op(A) in shared memory: M, or M rounded up to odd when A is staged
/// transposed (consecutive threads then write one row of the tile: odd pitch, no conflicts).
TINYBATCH_HD constexpr int gemm_a_pitch(int m, bool ta) { return ta && m % 2 == 0 ? m + 1 : m; }

template <class T, int M, int N, int K, bool TA, bool TB, int THREADS, int MINB, bool PACKED, class AtA,
          class AtB, class AtC>
__global__ void __launch_bounds__(THREADS, min_blocks_of(MINB))
    gemm_kernel(AtA A, AtB B, AtC C, index_t count, T alpha, T beta) {
  constexpr int W = seg_width(M), NB = THREADS / W;
  constexpr int MA = gemm_a_pitch(M, TA);     // op(A), column-major M x K, columns MA apart
  constexpr int AS = tile_stride(MA * K, W);
  constexpr int BP = row_pitch<T>(N);
  constexpr int BS = vec_stride<T>(K * BP);  // op(B), row-major K x N, rows BP apart
  __shared__ __align__(16) T As[NB * AS];
  __shared__ __align__(16) T Bs[NB * BS];
  const int seg = threadIdx.x / W, i = threadIdx.x % W;
  const bool lane_ok = i < M;
  for (index_t k0 = index_t(blockIdx.x) * NB; k0 < count; k0 += index_t(gridDim.x) * NB) {
    if (alpha != T(0)) {
      if constexpr (TA)  // A is K x M: (l, i) -> op(A)(i, l)
        to_tiles<THREADS, NB, K, M, AS, MA, 1, part::all, PACKED>(As, A, k0, count);
      else
        to_tiles<THREADS, NB, M, K, AS, 1, MA, part::all, PACKED>(As, A, k0, count);
      if constexpr (TB)  // B is N x K: (j, l) -> op(B)(l, j)
        to_tiles<THREADS, NB, N, K, BS, 1, BP, part::all, PACKED>(Bs, B, k0, count);
      else
        to_tiles<THREADS, NB, K, N, BS, BP, 1, part::all, PACKED>(Bs, B, k0, count);
    }
    __syncthreads();
    const index_t k = k0 + seg;
    T acc[N];
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = T(0);
    if (alpha != T(0)) {
      const T* a = As + seg * AS + i;
      const T* b = Bs + seg * BS;
#pragma unroll
      for (int l = 0; l < K; ++l) {
        const T ail = lane_ok ? a[l * MA] : T(0);
        T brow[N];
        get_row(b + l * BP, 0, brow);
#pragma unroll
        for (int j = 0; j < N; ++j) acc[j] += ail * brow[j];
      }
    }
    if (lane_ok && k < count) {
      T* c = C(k) + i;
      if (beta == T(0)) {
#pragma unroll
        for (int j = 0; j < N; ++j) c[index_t(j) * C.ld] = alpha * acc[j];
      } else {
#pragma unroll
        for (int j = 0; j < N; ++j) c[index_t(j) * C.ld] = alpha * acc[j] + beta * c[index_t(j) * C.ld];
      }
    }
    __syncthreads();
  }
}

/// gemm with one thread per matrix and no shared memory, for tiny sizes (tuning.hpp's
/// `per_matrix`): A, B (and C where beta != 0) loaded whole into registers, by 16-byte
/// vectors where a matrix is one aligned run, C stored the same way. No block barrier, no
/// tile: what the staged kernel spends on them is most of its time at n <= 4. Each entry is
/// summed in reference::gemm's order (bit-identical with -fmad=false).
template <class T, int M, int N, int K, bool TA, bool TB, int THREADS, class AtA, class AtB, class AtC>
__global__ void __launch_bounds__(THREADS)
    gemm_thread_kernel(AtA A, AtB B, AtC C, index_t count, T alpha, T beta) {
  constexpr int AR = TA ? K : M, AC = TA ? M : K, BR = TB ? N : K, BC = TB ? K : N;
  for (index_t k = index_t(blockIdx.x) * THREADS + threadIdx.x; k < count; k += index_t(gridDim.x) * THREADS) {
    T c[M * N];
    if (alpha != T(0)) {
      T a[AR * AC], b[BR * BC];
      load_small<AR, AC>(a, A(k), A.ld);
      load_small<BR, BC>(b, B(k), B.ld);
#pragma unroll
      for (int j = 0; j < N; ++j)
#pragma unroll
        for (int i = 0; i < M; ++i) {
          T acc = T(0);
#pragma unroll
          for (int l = 0; l < K; ++l) acc += (TA ? a[l + i * AR] : a[i + l * AR]) * (TB ? b[j + l * BR] : b[l + j * BR]);
          c[i + j * M] = acc;
        }
    } else {
#pragma unroll
      for (int e = 0; e < M * N; ++e) c[e] = T(0);
    }
    T* ck = C(k);
    if (beta == T(0)) {
#pragma unroll
      for (int e = 0; e < M * N; ++e) c[e] = alpha * c[e];
    } else {
      T c0[M * N];
      load_small<M, N>(c0, ck, C.ld);
#pragma unroll
      for (int e = 0; e < M * N; ++e) c[e] = alpha * c[e] + beta * c0[e];
    }
    store_small<M, N>(c, ck, C.ld);
  }
}

}  // namespace tinybatch::cuda::fast_kernels
