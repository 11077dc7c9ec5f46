// Fast triangular solves for n <= 32: getrs (no_trans / trans, with getrf's row
// interchanges) and potrs (lower / upper), NRHS <= 32 right-hand sides. One thread per row
// of B holding that row's NRHS entries in registers, several matrices per thread block; each
// thread loads the factor's elements its row uses straight from global memory, a column of
// the factor through its segment's shared-memory transpose where tuning.hpp says so (odd
// pitch: rows and columns conflict-free). (The factor staged through a block-wide tile, with
// block barriers, lost at every size and type on the H100, 1.2 - 2.3x slower:
// bench/results/h100/gpu-h100-b415ef3-dirty-sweep-solves.csv; it was removed.) Each substitution
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
TINYBATCH_HD constexpr int solve_pitch(int n) { return n % 2 == 0 ? n + 1 : n; }

/// Elements of shared memory per matrix.
TINYBATCH_HD constexpr int solve_tile_stride(int n) { return tile_stride(n * solve_pitch(n), seg_width(n)); }

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

/// b := b / d where `at` (the lane whose step it is), as b * (1 / d), dividing where d is
/// tiny, zero or NaN, where the reciprocal would not give b / d's value. The division sits
/// behind any_tiny, uniform over the warp and almost always false, so that the common path is
/// a multiply and a select: with the division behind the per-lane `at` branch, as before,
/// every step of the unrolled substitution held a divergent branch.
template <class T>
__device__ __forceinline__ void scale_at(T& b, bool at, T d, T rcp, bool tiny, bool any_tiny) {
  T x = b * rcp;
  if (any_tiny) {
    if (tiny) x = b / d;
  }
  b = at ? x : b;
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

/// The row of B that thread r reads (no_trans: B := P B before the solves) or of X that it
/// writes (trans: X := P^T Z after them), from its segment's pivots (pv: lane s holds ipiv[s]
/// - 1): the interchanges undone from the last to the first, or followed in LAPACK's backward
/// order, are the same loop.
template <int N, int W>
__device__ __forceinline__ int solve_row(int pv, int r) {
  int pos = r;
#pragma unroll
  for (int s = N - 1; s >= 0; --s) {
    const int ps = __shfl_sync(0xffffffffu, pv, s, W);
    if (pos == s)
      pos = ps;
    else if (pos == ps)
      pos = s;
  }
  return pos;
}

/// The forward and backward substitutions of row r of B (its NRHS entries in b), f(j, phase)
/// the factor element row r uses at step j (solve_elem's; phase std::true_type in the
/// forward phase, j < r, std::false_type in the backward one, j > r), d the diagonal element.
template <solve_kind K, int N, int NRHS, int W, class T, class F>
__device__ __forceinline__ void substitute(T (&b)[NRHS], F&& f, T d, int r) {
  using tr = solve_traits<K>;
  const T rcp = T(1) / d;
  const bool tiny = !(fabs(d) >= sfmin<T>());
  const bool any_tiny = __any_sync(0xffffffffu, tiny);  // the same in every lane of the warp
  // Forward: op(M) lower, x_j finished at step j, rows below subtract their multiple.
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const T fj = r > j ? f(j, std::true_type{}) : T(0);
#pragma unroll
    for (int c = 0; c < NRHS; ++c) {
      if constexpr (!tr::fwd_unit) scale_at(b[c], r == j, d, rcp, tiny, any_tiny);
      const T xj = __shfl_sync(0xffffffffu, b[c], j, W);
      if (r > j) b[c] -= fj * xj;
    }
  }
  // Backward: op(M) upper, from the last row up.
#pragma unroll
  for (int j = N - 1; j >= 0; --j) {
    const T h = r < j ? f(j, std::false_type{}) : T(0);
#pragma unroll
    for (int c = 0; c < NRHS; ++c) {
      if constexpr (!tr::bwd_unit) scale_at(b[c], r == j, d, rcp, tiny, any_tiny);
      const T xj = __shfl_sync(0xffffffffu, b[c], j, W);
      if (r < j) b[c] -= h * xj;
    }
  }
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
///
/// OPAQUE (launch_shape::opaque_ld): the factor's leading dimension goes through opaque()
/// (common.cuh) for each matrix, so that nvcc forms the n load offsets per matrix instead of
/// hoisting them out of the loop over matrices: hoisted, they held 64 of potrs float n = 32's
/// 122 registers (SASS, bench/results/sm90/gpu-sm90-2d8b5d1-sass-float32.txt).
template <class T, int N, int NRHS, int THREADS, int MINB, solve_kind K, bool XPOSE, bool OPAQUE, class AtA,
          class AtB>
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
    const int lda = opaque_if<OPAQUE>(A.ld);
    const bool active = k < count && (info == nullptr || info[k] == 0);
    int pos = r;
    if constexpr (tr::pivoted) pos = solve_row<N, W>(active && lane_ok ? ipiv[k][r] - 1 : r, r);
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
        g[c] = a && need ? a[r + index_t(c) * lda] : T(0);
        if (lane_ok) x[r * P + c] = g[c];
      }
      d = a ? a[r + index_t(r) * lda] : T(1);
      __syncwarp();
    } else {
      const T* a = active && lane_ok ? A(k) : nullptr;
#pragma unroll
      for (int j = 0; j < N; ++j) g[j] = a ? a[solve_elem<K>(r, j, lda)] : T(0);
      d = a ? a[r + index_t(r) * lda] : T(1);
    }
    // XP: a column element (j, r) comes from the tile, where row j put it.
    const T* xc = tile + seg * TS + r;
    substitute<K, N, NRHS, W>(b, [&](int j, auto fwd) {
      constexpr bool col = XP && (decltype(fwd)::value ? !tr::fwd_row : !tr::bwd_row);
      if constexpr (col)
        return lane_ok ? xc[j * P] : T(0);
      else
        return g[j];
    }, d, r);
    if (active && lane_ok) {
      auto* bk = B(k);
#pragma unroll
      for (int c = 0; c < NRHS; ++c) bk[dst + index_t(c) * B.ld] = b[c];
    }
    if constexpr (XP) __syncwarp();  // the tile is rewritten for the next matrix
  }
}


// ---- pipelined: the next matrix's loads in flight during this one's substitutions ----------
//
// ncu at n = 32 (double, c483dc0): one warp solves one matrix and loads nothing during its 64
// dependent steps, so only the other warps keep memory busy, and few fit (getrs: 80 registers,
// 37.5% occupancy, DRAM 67% busy; potrs: 155 registers, 18.75%, 36%). Here a warp loops over
// matrices (the grid is capped at the blocks that fit at once) and copies the next matrix's
// factor, right-hand sides and pivots into the other half of its double buffer in shared
// memory by cp.async (no registers held) while it solves the current one from the first half.
// The factor sits at the odd pitch P, so that rows and columns are both conflict-free.
// Results are those of solve_kernel (same substitute, same element order).

/// Shared-memory slot of one matrix in the pipelined solve: factor (pitch P), B, pivots.
template <class T, int N, int NRHS>
struct solve_slot {
  static constexpr int P = solve_pitch(N);
  T a[N * P];
  T b[N * NRHS];
  int piv[N];
};

/// One warp per matrix (N > 16), THREADS / 32 warps a block, each looping over the matrices
/// k, k + gridDim.x * THREADS / 32, ...; launch at most as many blocks as fit at once.
template <class T, int N, int NRHS, int THREADS, int MINB, solve_kind K, class AtA, class AtB>
__global__ void __launch_bounds__(THREADS, min_blocks_of(MINB))
    solve_pipelined_kernel(AtA A, pivot_view ipiv, AtB B, index_t count, const int* info) {
  static_assert(seg_width(N) == 32, "one warp per matrix");
  using tr = solve_traits<K>;
  using slot_t = solve_slot<T, N, NRHS>;
  constexpr int NW = THREADS / 32, P = slot_t::P;
  __shared__ __align__(16) slot_t slots[NW][2];
  const int warp = threadIdx.x / 32, r = threadIdx.x % 32;
  const bool lane_ok = r < N;
  const index_t step = index_t(gridDim.x) * NW;
  // Lane r copies row r of the factor, of B and pivot r (consecutive lanes, consecutive
  // addresses in every column). Matrices whose info is non-zero are not read.
  const auto issue = [&](index_t k, slot_t& sl) {
    if (k < count && lane_ok && (info == nullptr || info[k] == 0)) {
      const T* a = A(k);
#pragma unroll
      for (int c = 0; c < N; ++c) copy_async(&sl.a[r * P + c], a + r + index_t(c) * A.ld);
      const T* bk = B(k);
#pragma unroll
      for (int c = 0; c < NRHS; ++c) copy_async(&sl.b[r + c * N], bk + r + index_t(c) * B.ld);
      if constexpr (tr::pivoted) copy_async(&sl.piv[r], ipiv[k] + r);
    }
    copy_async_commit();  // every lane commits a group, empty or not, to count groups alike
  };
  index_t k = index_t(blockIdx.x) * NW + warp;
  issue(k, slots[warp][0]);
  for (int it = 0; k < count; k += step, ++it) {
    slot_t& cur = slots[warp][it & 1];
    issue(k + step, slots[warp][(it & 1) ^ 1]);  // that slot was read in the last iteration
    copy_async_wait<1>();                         // this matrix's group is complete
    __syncwarp();                                 // and every lane's part of it visible
    const bool active = info == nullptr || info[k] == 0;
    int pos = r;
    if constexpr (tr::pivoted) pos = solve_row<N, 32>(active && lane_ok ? cur.piv[r] - 1 : r, r);
    const int src = K == solve_kind::getrs_n ? pos : r, dst = K == solve_kind::getrs_t ? pos : r;
    T b[NRHS];
#pragma unroll
    for (int c = 0; c < NRHS; ++c) b[c] = active && lane_ok ? cur.b[src + c * N] : T(0);
    // Factor element (i, c) at a[i * P + c]: (r, j) where the phase reads rows, else (j, r).
    substitute<K, N, NRHS, 32>(b, [&](int j, auto fwd) {
      constexpr bool row = decltype(fwd)::value ? tr::fwd_row : tr::bwd_row;
      return lane_ok ? cur.a[row ? r * P + j : j * P + r] : T(0);
    }, lane_ok ? cur.a[r * P + r] : T(1), r);
    if (active && lane_ok) {
      auto* bk = B(k);
#pragma unroll
      for (int c = 0; c < NRHS; ++c) bk[dst + index_t(c) * B.ld] = b[c];
    }
    __syncwarp();  // every lane done with `cur` before the next iteration refills it
  }
  copy_async_wait<0>();
}

}  // namespace tinybatch::cuda::fast_kernels
