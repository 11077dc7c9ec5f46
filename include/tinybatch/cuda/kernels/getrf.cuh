// Fast getrf for n <= 32 (issue #4, after ../shared/seeds/002: LU of a million matrices):
// one thread per row with the row in registers, the pivot found by a butterfly of warp
// shuffles, lazy swapping (a row stays in its thread; only its logical position changes and
// it is written to its final place at the end), several matrices per thread block.
//
// Pivots and info are LAPACK's (reference::getrf): the first row, in the current order, of
// largest magnitude; a NaN never beats a number unless it sits in the diagonal position
// (where LAPACK's idamax starts); info = the first exactly zero pivot, and the factorization
// goes on. Each element sees the same operations in the same order as reference::getrf, so
// with -fmad=false the results are bit-identical to it.
#pragma once

#include <math.h>

#include "../../core/pivots.hpp"
#include "common.cuh"

namespace tinybatch::cuda::fast_kernels {

/// Butterfly reduction over a segment of W lanes: the id (pos * 32 + lane-in-segment) of the
/// pivot of column j. `cand`: the row may still be chosen; `pos`: its logical position.
template <int W, class T>
__device__ __forceinline__ int pivot_search(T v, bool cand, int pos, int j, int r) {
  T key = !cand ? T(-2) : (v != v) ? (pos == j ? T(INFINITY) : T(-1)) : fabs(v);
  int id = pos * 32 + r;
#pragma unroll
  for (int o = W / 2; o >= 1; o /= 2) {
    const T ok = __shfl_xor_sync(0xffffffffu, key, o, W);
    const int oi = __shfl_xor_sync(0xffffffffu, id, o, W);
    if (ok > key || (ok == key && oi < id)) key = ok, id = oi;
  }
  return id;
}

/// Row state of one thread in the right-looking, lazily swapped LU of its matrix.
template <class T, int N>
struct lu_row {
  T a[N];
  int pos;         // logical row position (64 + lane for lanes beyond n)
  bool chosen;     // already a pivot row
  int chosen_at;   // its logical position when chosen (LAPACK's ipiv - 1)
  int info;        // first exactly zero pivot (1-based), uniform over the segment
};

/// Step j of the factorization, for the segment of W lanes whose broadcast row is `buf`
/// (16-byte aligned, at least n elements; alternate two buffers between steps). With EXTRA
/// (inverse) the winner also broadcasts b[0, n) from buf + off and the other rows update it.
template <int W, int N, bool EXTRA, class T>
__device__ __forceinline__ void lu_step(lu_row<T, N>& s, T (&b)[N], int j, int r, bool lane_ok,
                                        T* buf, int off) {
  const int id = pivot_search<W>(s.a[j], lane_ok && !s.chosen, s.pos, j, r);
  const int p = id >> 5;
  const bool win = (id & 31) == r;
  if (win) {
    put_row(buf, j, s.a);
    if constexpr (EXTRA) put_row(buf + off, 0, b);
  }
  __syncwarp();
  const T piv = buf[j];
  if (win) {
    s.chosen = true, s.chosen_at = p, s.pos = j;
  } else if (s.pos == j) {
    s.pos = p;
  }
  if (piv == T(0) && s.info == 0) s.info = j + 1;
  if (lane_ok && !s.chosen) {
    if (piv != T(0)) {
      if (fabs(piv) >= sfmin<T>()) {
        const T rcp = T(1) / piv;
        s.a[j] *= rcp;
      } else {
        s.a[j] /= piv;
      }
    }
    if (j + 1 < N) sub_row(s.a, s.a[j], buf, j + 1);
    if constexpr (EXTRA) sub_row(b, s.a[j], buf + off, 0);
  }
}

template <class T, int N, int THREADS, int MINB, class At>
__global__ void __launch_bounds__(THREADS, min_blocks_of(MINB))
    getrf_kernel(At A, index_t count, pivot_view ipiv, int* info) {
  constexpr int W = seg_width(N), NB = THREADS / W, TS = tile_stride(N * N, W);
  constexpr int BS = vec_stride<T>(N);
  __shared__ __align__(16) T tile[NB * TS];
  __shared__ __align__(16) T bc[2][NB * BS];
  const int seg = threadIdx.x / W, r = threadIdx.x % W;
  const bool lane_ok = r < N;
  T* t = tile + seg * TS;
  for (index_t k0 = index_t(blockIdx.x) * NB; k0 < count; k0 += index_t(gridDim.x) * NB) {
    to_tiles<THREADS, NB, N, N, TS, 1, N, part::all>(tile, A, k0, count);
    __syncthreads();
    lu_row<T, N> s;
#pragma unroll
    for (int c = 0; c < N; ++c) s.a[c] = lane_ok ? t[r + c * N] : T(0);
    s.pos = lane_ok ? r : 64 + r, s.chosen = false, s.chosen_at = 0, s.info = 0;
    T none[N];
#pragma unroll
    for (int j = 0; j < N; ++j) lu_step<W, N, false>(s, none, j, r, lane_ok, bc[j & 1] + seg * BS, 0);
    __syncwarp();
    const index_t k = k0 + seg;
    if (lane_ok) {
#pragma unroll
      for (int c = 0; c < N; ++c) t[s.pos + c * N] = s.a[c];
      if (k < count) ipiv[k][s.pos] = s.chosen_at + 1;
    }
    if (r == 0 && k < count) info[k] = s.info;
    __syncthreads();
    from_tiles<THREADS, NB, N, N, TS, 1, N, part::all>(tile, A, k0, count);
    __syncthreads();
  }
}

}  // namespace tinybatch::cuda::fast_kernels
