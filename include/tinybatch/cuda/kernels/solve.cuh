// Fast triangular solves for n <= 32 (issue #4): getrs (no_trans / trans, with getrf's row
// interchanges) and potrs (lower / upper), NRHS <= 32 right-hand sides. One thread per row
// of B holding that row's NRHS entries in registers, several matrices per thread block; each
// thread loads the factor's elements its row uses straight from global memory, a column of
// the factor through its segment's shared-memory transpose where tuning.hpp says so (odd
// pitch: rows and columns conflict-free). (The factor staged through a block-wide tile, with
// block barriers, lost at every size and type on the H100, 1.2 - 2.3x slower:
// bench/results/gpu-h100-b415ef3-dirty-sweep-solves.csv; it was removed.) Each substitution
// step broadcasts the finished x_j of every right-hand side with one warp shuffle, and every
// lower row (forward) or upper row (backward) subtracts its multiple at once.
//
// Not bit-identical to reference::getrs / potrs: the backward phase subtracts the terms of
// row i in descending column order (the reference's dot products ascend), and x_j is
// b_j * (1 / d_j), the reciprocal computed once per row in parallel, instead of b_j / d_j
// (the division where |d_j| < the smallest normal number, as getrf does, so that tiny
// pivots do not overflow the reciprocal). The tests check LAPACK's residual ratio.
//
// ipiv: LAPACK's sequential interchanges. Each thread works out from them which row of B it
// reads (no_trans: B := P B before the solves) or which row of X it writes (trans: X :=
// P^T Z after them) with n shuffles of the pivots; nothing moves in memory but the thread's
// own row. With `info`, matrices whose info is non-zero are neither read nor written.
#pragma once

#include <math.h>

#include "../../core/pivots.hpp"
#include "common.cuh"

namespace tinybatch::cuda::fast_kernels {

/// Which solve: the factor's access pattern of each phase.
enum class solve_kind { getrs_n, getrs_t, potrs_l, potrs_u };

/// Row pitch of the transposed factor in shared memory: odd, so that rows and columns are
/// both conflict-free.
constexpr int solve_pitch(int n) { return n % 2 == 0 ? n + 1 : n; }

/// Elements of shared memory per matrix.
constexpr int solve_tile_stride(int n) { return tile_stride(n * solve_pitch(n), seg_width(n)); }

template <solve_kind K>
struct solve_traits {
  // forward phase (lower triangular op(M)): element (i, j), j < i, read as M(i, j) (row) or
  // M(j, i) (column); unit diagonal or not. The backward phase (upper triangular) likewise.
  static constexpr bool fwd_row = K == solve_kind::getrs_n || K == solve_kind::potrs_l;
  static constexpr bool fwd_unit = K == solve_kind::getrs_n;
  static constexpr bool bwd_row = K == solve_kind::getrs_n || K == solve_kind::potrs_u;
  static constexpr bool bwd_unit = K == solve_kind::getrs_t;
  static constexpr bool pivoted = K == solve_kind::getrs_n || K == solve_kind::getrs_t;
};

/// x = b / d as b * (1 / d), dividing (in a branch, rarely taken) where d is tiny, zero or
/// NaN, where the reciprocal would not give b / d's value.
template <class T>
__device__ __forceinline__ T solve_scale(T b, T d, T rcp, bool tiny) {
  T x = b * rcp;
  if (tiny) x = b / d;
  return x;
}

/// Offset, in a column-major matrix of leading dimension ld, of the factor element that row
/// r uses at substitution step j: the forward phase's for j < r, the backward phase's for
/// j > r, the diagonal for j == r; (r, j) where that phase reads rows, (j, r) where it reads
/// columns.
template <solve_kind K>
__device__ __forceinline__ index_t solve_elem(int r, int j, index_t ld) {
  using tr = solve_traits<K>;
  const bool row = r > j ? tr::fwd_row : r < j ? tr::bwd_row : true;
  return row ? r + j * ld : j + r * ld;
}

/// Each thread loads the elements of the factor it uses straight from global memory into
/// registers, as getrf and potrf do since f5a7915, with no block-wide tile and no block
/// barrier: for getrs no_trans the lanes of a segment read consecutive elements of one
/// column per instruction. The phases
/// that read columns of the factor (getrs trans, potrs' second phase) either load them with
/// a stride of ld between lanes (XPOSE false: the matrix comes through L1), or (XPOSE) each
/// thread loads the elements of its row that some row needs, coalesced, writes them to its
/// segment's shared-memory tile (row-major, odd pitch) and reads its column back from there
/// after a __syncwarp (no block barrier).
template <class T, int N, int NRHS, int THREADS, int MINB, solve_kind K, bool XPOSE, class AtA, class AtB>
__global__ void __launch_bounds__(THREADS, min_blocks_of(MINB))
    solve_kernel(AtA A, pivot_view ipiv, AtB B, index_t count, const int* info) {
  using tr = solve_traits<K>;
  constexpr int W = seg_width(N), NB = THREADS / W, P = solve_pitch(N), TS = solve_tile_stride(N);
  constexpr bool XP = XPOSE && !(tr::fwd_row && tr::bwd_row);
  __shared__ __align__(16) T tile[XP ? NB * TS : 1];
  const int seg = threadIdx.x / W, r = threadIdx.x % W;
  const bool lane_ok = r < N;
  for (index_t k0 = index_t(blockIdx.x) * NB; k0 < count; k0 += index_t(gridDim.x) * NB) {
    const index_t k = k0 + seg;
    const bool active = k < count && (info == nullptr || info[k] == 0);
    // The row this thread reads (no_trans) or writes (trans): the interchanges undone from the
    // last to the first, or followed in LAPACK's backward order, are the same loop.
    int pos = r;
    if constexpr (tr::pivoted) {
      const int pv = active && lane_ok ? ipiv[k][r] - 1 : r;
#pragma unroll
      for (int s = N - 1; s >= 0; --s) {
        const int ps = __shfl_sync(0xffffffffu, pv, s, W);
        if (pos == s)
          pos = ps;
        else if (pos == ps)
          pos = s;
      }
    }
    const int src = K == solve_kind::getrs_n ? pos : r, dst = K == solve_kind::getrs_t ? pos : r;
    T b[NRHS];
    if (active && lane_ok) {
      const auto* bk = B(k);
#pragma unroll
      for (int c = 0; c < NRHS; ++c) b[c] = bk[src + index_t(c) * B.ld];
    } else {
#pragma unroll
      for (int c = 0; c < NRHS; ++c) b[c] = T(0);
    }
    // g[j]: the factor's element this row uses at step j (solve_elem).
    T g[N], d;
    if constexpr (XP) {
      // g[c] = element (r, c) where row r reads it or row c reads it as its column element.
      const T* a = active && lane_ok ? A(k) : nullptr;
      T* x = tile + seg * TS;
#pragma unroll
      for (int c = 0; c < N; ++c) {
        const bool need = c < r ? tr::fwd_row || !tr::bwd_row : c > r ? tr::bwd_row || !tr::fwd_row : false;
        g[c] = a && need ? a[r + index_t(c) * A.ld] : T(0);
        if (lane_ok) x[r * P + c] = g[c];
      }
      d = a ? a[r + index_t(r) * A.ld] : T(1);
      __syncwarp();
    } else {
      const T* a = active && lane_ok ? A(k) : nullptr;
#pragma unroll
      for (int j = 0; j < N; ++j) g[j] = a ? a[solve_elem<K>(r, j, A.ld)] : T(0);
      d = a ? a[r + index_t(r) * A.ld] : T(1);
    }
    // XP: a column element (j, r) comes from the tile, where row j put it.
    const T* xc = tile + seg * TS + r;
    const T rcp = T(1) / d;
    const bool tiny = !(fabs(d) >= sfmin<T>());
    // Forward: op(M) lower, x_j finished at step j, rows below subtract their multiple.
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const T f = r > j ? (XP && !tr::fwd_row ? (lane_ok ? xc[j * P] : T(0)) : g[j]) : T(0);
#pragma unroll
      for (int c = 0; c < NRHS; ++c) {
        T x = b[c];
        if constexpr (!tr::fwd_unit) {
          if (r == j) x = solve_scale(b[c], d, rcp, tiny), b[c] = x;
        }
        const T xj = __shfl_sync(0xffffffffu, x, j, W);
        if (r > j) b[c] -= f * xj;
      }
    }
    // Backward: op(M) upper, from the last row up.
#pragma unroll
    for (int j = N - 1; j >= 0; --j) {
      const T h = r < j ? (XP && !tr::bwd_row ? (lane_ok ? xc[j * P] : T(0)) : g[j]) : T(0);
#pragma unroll
      for (int c = 0; c < NRHS; ++c) {
        T x = b[c];
        if constexpr (!tr::bwd_unit) {
          if (r == j) x = solve_scale(b[c], d, rcp, tiny), b[c] = x;
        }
        const T xj = __shfl_sync(0xffffffffu, x, j, W);
        if (r < j) b[c] -= h * xj;
      }
    }
    if (active && lane_ok) {
      auto* bk = B(k);
#pragma unroll
      for (int c = 0; c < NRHS; ++c) bk[dst + index_t(c) * B.ld] = b[c];
    }
    if constexpr (XP) __syncwarp();  // the tile is rewritten for the next matrix
  }
}

}  // namespace tinybatch::cuda::fast_kernels
