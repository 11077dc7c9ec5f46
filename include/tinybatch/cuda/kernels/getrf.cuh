// Fast getrf for n <= 32 (after ../shared/seeds/002: LU of a million matrices):
// one thread per row with the row in registers, the pivot found by warp reductions, lazy
// swapping (a row stays in its thread; only its logical position changes and it is written
// to its final place at the end), several matrices per thread block.
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

/// The pivot of one column as the segment's lanes see it: its logical position p, and
/// whether this lane holds it.
struct pivot_pick {
  int p;
  bool win;
};

/// The lanes of this thread's segment of W lanes (W a power of two <= 32), as a warp mask.
template <int W>
__device__ __forceinline__ unsigned seg_mask() {
  if constexpr (W >= 32) {
    return 0xffffffffu;
  } else {
    const unsigned lane = threadIdx.x & 31u;
    return ((1u << W) - 1u) << (lane & ~unsigned(W - 1));
  }
}

/// The maximum (MIN: the minimum) of x over this lane's segment of W lanes: one reduction
/// with the segment's lanes as the mask, or (SPLIT) one over the whole warp per segment, the
/// other segments' lanes giving the identity (pivot_method in tuning.hpp says why).
template <int W, bool SPLIT, bool MIN>
__device__ __forceinline__ unsigned segment_reduce(unsigned x) {
  const auto reduce = [](unsigned mask, unsigned y) {
    return MIN ? __reduce_min_sync(mask, y) : __reduce_max_sync(mask, y);
  };
  if constexpr (!SPLIT || W >= 32) {
    return reduce(seg_mask<W>(), x);
  } else {
    constexpr unsigned identity = MIN ? ~0u : 0u;
    const int g = int(threadIdx.x & 31u) / W;  // this lane's segment in its warp
    unsigned r = identity;
#pragma unroll
    for (int q = 0; q < 32 / W; ++q) {
      const unsigned b = reduce(0xffffffffu, g == q ? x : identity);
      if (g == q) r = b;
    }
    return r;
  }
}

/// How pivot_search reduces over the segment of W lanes: pivot_method (tuning.hpp).
inline constexpr pivot_method default_pivot = pivot_method::fit;

/// The pivot of column j among the lanes that may still be chosen (`cand`) at logical
/// positions `pos`, lane r of the segment holding value v. Keys order the candidates as
/// LAPACK's idamax does, starting at the diagonal (position j): a NaN there beats everything,
/// a NaN elsewhere loses to every number; among equal keys the smallest position wins.
template <int W, pivot_method PM = default_pivot, class T>
__device__ __forceinline__ pivot_pick pivot_search(T v, bool cand, int pos, int j, int r) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  constexpr pivot_method M = pivot_method::butterfly;  // no redux.sync before sm_80
#else
  constexpr pivot_method M = PM != pivot_method::fit ? PM
                             : W >= 32               ? pivot_method::redux
                             : W == 16               ? pivot_method::split
                                                     : pivot_method::butterfly;
#endif
  if constexpr (M == pivot_method::butterfly) {
    T key = !cand ? T(-2) : (v != v) ? (pos == j ? T(INFINITY) : T(-1)) : fabs(v);
    int id = pos * 32 + r;
#pragma unroll
    for (int o = W / 2; o >= 1; o /= 2) {
      const T ok = __shfl_xor_sync(0xffffffffu, key, o, W);
      const int oi = __shfl_xor_sync(0xffffffffu, id, o, W);
      if (ok > key || (ok == key && oi < id)) key = ok, id = oi;
    }
    return {id >> 5, (id & 31) == r};
  } else {
    // redux, or split (W < 32): the same keys and reductions, over the segment's mask or
    // once per segment over the whole warp (segment_reduce).
    constexpr bool SPLIT = M == pivot_method::split;
    const auto seg_max = [](unsigned x) { return segment_reduce<W, SPLIT, false>(x); };
    // Keys: 0 not a candidate, 1 NaN off the diagonal, |v| + 2 a number, all ones NaN on it.
    bool top;  // this lane holds the largest key
    if constexpr (sizeof(T) == 4) {
      const unsigned m = __float_as_uint(v) & 0x7fffffffu;
      const unsigned key = !cand ? 0u : m > 0x7f800000u ? (pos == j ? ~0u : 1u) : m + 2u;
      top = key == seg_max(key);
    } else {
      const unsigned long long m = (unsigned long long)__double_as_longlong(v) & 0x7fffffffffffffffull;
      const unsigned long long key = !cand ? 0ull : m > 0x7ff0000000000000ull ? (pos == j ? ~0ull : 1ull) : m + 2ull;
      const unsigned hi = unsigned(key >> 32), lo = unsigned(key);
      const bool top_hi = hi == seg_max(hi);
      const unsigned top_lo = seg_max(top_hi ? lo : 0u);  // every lane (no && shortcut)
      top = top_hi && lo == top_lo;
    }
    // Candidates' positions are distinct and >= j, chosen rows' < j, idle lanes' >= 64.
    const int p = int(segment_reduce<W, SPLIT, true>(top ? unsigned(pos) : ~0u));
    return {p, pos == p};
  }
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
/// the winner also broadcasts b[0, n) from buf + off and the other rows update it.
/// (Computing every candidate's reciprocal during the pivot search, so that the winner
/// broadcasts 1 / pivot with its row and the division leaves the step's dependent chain,
/// measured slower in 39 of 40 (type, n, shape) pairs swept, both types:
/// bench/results/h100/gpu-h100-1b98ad3-dirty-sweep-variants.csv.)
template <int W, int N, bool EXTRA, pivot_method PM = default_pivot, bool RCP = true, class T>
__device__ __forceinline__ void lu_step(lu_row<T, N>& s, T (&b)[N], int j, int r, bool lane_ok,
                                        T* buf, int off) {
  const bool cand = lane_ok && !s.chosen;
  const pivot_pick pk = pivot_search<W, PM>(s.a[j], cand, s.pos, j, r);
  if (pk.win) {
    put_row(buf, j, s.a);
    if constexpr (EXTRA) put_row(buf + off, 0, b);
  }
  __syncwarp();
  const T piv = buf[j];
  if (pk.win) {
    s.chosen = true, s.chosen_at = pk.p, s.pos = j;
  } else if (s.pos == j) {
    s.pos = pk.p;
  }
  if (piv == T(0) && s.info == 0) s.info = j + 1;
  if (cand && !pk.win) {
    if constexpr (RCP) {
      // pivot_scale: the reciprocal without rcp.rn's branches (launch_shape::rcp_fast).
      s.a[j] = pivot_scale(s.a[j], piv);
    } else if (piv != T(0)) {
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

/// The getrf kernel: each thread loads its row and stores it at its final place directly
/// (the lanes of a segment touch consecutive elements of one column at a time), with no
/// shared-memory tile and no block-wide barrier. (The tile of 045adb9, staged by coalesced
/// block-wide copies, measured slower at every n swept on the H100, both types: double n=16
/// .62 -> .95 of the roofline without it, n=32 .42 -> .75.)
template <class T, int N, int THREADS, int MINB, pivot_method PM = default_pivot, bool RCP = true, class At>
__global__ void __launch_bounds__(THREADS, min_blocks_of(MINB))
    getrf_kernel(At A, index_t count, pivot_view ipiv, int* info) {
  constexpr int W = seg_width(N), NB = THREADS / W, BS = vec_stride<T>(N);
  __shared__ __align__(16) T bc[2][NB * BS];
  const int seg = threadIdx.x / W, r = threadIdx.x % W;
  const bool lane_ok = r < N;
  for (index_t k0 = index_t(blockIdx.x) * NB; k0 < count; k0 += index_t(gridDim.x) * NB) {
    const index_t k = k0 + seg;
    const bool live = k < count;
    lu_row<T, N> s;
    {
      const T* a = lane_ok && live ? A(k) + r : nullptr;
#pragma unroll
      for (int c = 0; c < N; ++c) s.a[c] = a ? a[index_t(c) * A.ld] : T(0);
    }
    s.pos = lane_ok ? r : 64 + r, s.chosen = false, s.chosen_at = 0, s.info = 0;
    T none[N];
#pragma unroll
    for (int j = 0; j < N; ++j) lu_step<W, N, false, PM, RCP>(s, none, j, r, lane_ok, bc[j & 1] + seg * BS, 0);
    if (lane_ok && live) {
      T* x = A(k) + s.pos;
#pragma unroll
      for (int c = 0; c < N; ++c) x[index_t(c) * A.ld] = s.a[c];
      ipiv[k][s.pos] = s.chosen_at + 1;
    }
    if (r == 0 && live) info[k] = s.info;
    __syncwarp();  // every lane done with the broadcast rows before the next matrix
  }
}

// ---- several rows per thread ----------------------------------------------------------------
//
// Lane r of a segment of W = seg_width(ceil(n / R)) lanes holds rows r, r + W, ... (R rows),
// so one read of the broadcast row from shared memory serves R rows and a warp holds R times
// as many matrices. Pivots, info and every element's operations are those of the kernel
// above (and so of reference::getrf): the pivot is the largest key, ties to the smallest
// logical position.
// Why: ncu at n = 32 (H100, both types) found the shared-memory pipe the busiest unit (66-74%)
// and a third of the stall cycles waiting on it. Two rows per thread did not pay there (the
// registers per thread double: float n = 32 spilled at 80 registers, .76 -> .50 of the
// roofline), but it does where one row per thread leaves lanes idle: float n = 3, 5, 6 and
// 9..14 gain .05-.21 (tuning.hpp); inverse_rows_kernel (inverse.cuh) does the same for
// the inverse.

/// Row state of one thread holding R rows.
template <class T, int N, int R>
struct lu_rows {
  T a[R][N];
  int pos[R];        // logical positions (64 + physical row for rows beyond n)
  bool chosen[R];    // already pivot rows
  int chosen_at[R];  // logical position when chosen (LAPACK's ipiv - 1)
  int info;          // first exactly zero pivot (1-based), uniform over the segment
};

/// Rows r, r + W, ... of a segment's matrix (a: its element (r, 0), null for none; leading
/// dimension ld) into x, zero where a row does not exist; pos[i]: their logical positions
/// (64 + the row beyond n). Lanes of a segment load consecutive elements of a column.
template <int W, int R, int N, class T>
__device__ __forceinline__ void load_rows(T (&x)[R][N], int (&pos)[R], const T* a, index_t ld,
                                          const bool (&ok)[R], int r) {
#pragma unroll
  for (int i = 0; i < R; ++i) {
#pragma unroll
    for (int c = 0; c < N; ++c) x[i][c] = a && ok[i] ? a[W * i + index_t(c) * ld] : T(0);
    pos[i] = (ok[i] ? 0 : 64) + r + W * i;
  }
}

/// Each existing row x[i] to row pos[i] of the matrix at a (leading dimension ld).
template <int R, int N, class T>
__device__ __forceinline__ void store_rows(const T (&x)[R][N], const int (&pos)[R], T* a, index_t ld,
                                           const bool (&ok)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
    if (ok[i]) {
#pragma unroll
      for (int c = 0; c < N; ++c) a[pos[i] + index_t(c) * ld] = x[i][c];
    }
}

/// y[i][c] -= m[i] * buf[c] for c in [b, E) and the rows i with act[i]: one 16-byte read of
/// buf for all R rows; each row sees sub_row's operations.
template <int R, int E, class T>
__device__ __forceinline__ void sub_rows(T (&y)[R][E], const T (&m)[R], const bool (&act)[R],
                                         const T* buf, int b) {
  constexpr int v = vec_width<T>;
  using V = vec_t<T>;
#pragma unroll
  for (int q = b / v; q * v < E; ++q) {
    T t[v];
    unpack(reinterpret_cast<const V*>(buf)[q], t);
#pragma unroll
    for (int e = 0; e < v; ++e)
      if (q * v + e >= b && q * v + e < E)
#pragma unroll
        for (int i = 0; i < R; ++i)
          if (act[i]) y[i][q * v + e] -= m[i] * t[e];
  }
}

/// The logical position of column j's pivot over a segment of W lanes holding R rows each
/// (a[i] the rows, pos[i] their positions, cand[i] whether row i may be chosen):
/// pivot_search's keys, the thread's best row first, then a butterfly on (key, position).
/// Candidates' positions are distinct, so the winner is the row that holds the result.
template <int W, int R, int N, class T>
__device__ __forceinline__ int rows_pivot(const T (&a)[R][N], const int (&pos)[R], const bool (&cand)[R], int j) {
  T key = T(-2);
  int best = 1 << 20;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const T v = a[i][j];
    const T ki = !cand[i] ? T(-2) : (v != v) ? (pos[i] == j ? T(INFINITY) : T(-1)) : fabs(v);
    if (ki > key || (ki == key && pos[i] < best)) key = ki, best = pos[i];
  }
#pragma unroll
  for (int o = W / 2; o >= 1; o /= 2) {
    const T ok = __shfl_xor_sync(0xffffffffu, key, o, W);
    const int ob = __shfl_xor_sync(0xffffffffu, best, o, W);
    if (ok > key || (ok == key && ob < best)) key = ok, best = ob;
  }
  return best;
}

/// Step j for a segment of W lanes with R rows each (ok[i]: row i exists), broadcast row
/// `buf` as in lu_step.
template <int W, int N, int R, class T>
__device__ __forceinline__ void lu_step_rows(lu_rows<T, N, R>& s, int j, const bool (&ok)[R], T* buf) {
  bool cand[R];
#pragma unroll
  for (int i = 0; i < R; ++i) cand[i] = ok[i] && !s.chosen[i];
  const int p = rows_pivot<W>(s.a, s.pos, cand, j);
  bool win[R], upd[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    win[i] = cand[i] && s.pos[i] == p;
    upd[i] = cand[i] && !win[i];
    if (win[i]) put_row(buf, j, s.a[i]);
  }
  __syncwarp();
  const T piv = buf[j];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (win[i]) {
      s.chosen[i] = true, s.chosen_at[i] = p, s.pos[i] = j;
    } else if (s.pos[i] == j) {
      s.pos[i] = p;
    }
  }
  if (piv == T(0) && s.info == 0) s.info = j + 1;
  if (piv != T(0)) {
    if (fabs(piv) >= sfmin<T>()) {
      const T rcp = T(1) / piv;
#pragma unroll
      for (int i = 0; i < R; ++i)
        if (upd[i]) s.a[i][j] *= rcp;
    } else {
#pragma unroll
      for (int i = 0; i < R; ++i)
        if (upd[i]) s.a[i][j] /= piv;
    }
  }
  if (j + 1 < N) {
    T m[R];
#pragma unroll
    for (int i = 0; i < R; ++i) m[i] = s.a[i][j];
    sub_rows(s.a, m, upd, buf, j + 1);
  }
}

/// getrf with R rows per thread; loads and stores as getrf_kernel (lanes of a segment touch
/// consecutive elements of a column).
template <class T, int N, int R, int THREADS, int MINB, class At>
__global__ void __launch_bounds__(THREADS, min_blocks_of(MINB))
    getrf_rows_kernel(At A, index_t count, pivot_view ipiv, int* info) {
  constexpr int W = seg_width((N + R - 1) / R), NB = THREADS / W, BS = vec_stride<T>(N);
  __shared__ __align__(16) T bc[2][NB * BS];
  const int seg = threadIdx.x / W, r = threadIdx.x % W;
  bool ok[R];
#pragma unroll
  for (int i = 0; i < R; ++i) ok[i] = r + W * i < N;
  for (index_t k0 = index_t(blockIdx.x) * NB; k0 < count; k0 += index_t(gridDim.x) * NB) {
    const index_t k = k0 + seg;
    const bool live = k < count;
    lu_rows<T, N, R> s;
    load_rows<W>(s.a, s.pos, live ? A(k) + r : nullptr, A.ld, ok, r);
#pragma unroll
    for (int i = 0; i < R; ++i) s.chosen[i] = false, s.chosen_at[i] = 0;
    s.info = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) lu_step_rows<W, N, R>(s, j, ok, bc[j & 1] + seg * BS);
    if (live) {
      store_rows(s.a, s.pos, A(k), A.ld, ok);
#pragma unroll
      for (int i = 0; i < R; ++i)
        if (ok[i]) ipiv[k][s.pos[i]] = s.chosen_at[i] + 1;
      if (r == 0) info[k] = s.info;
    }
    __syncwarp();  // every lane done with the broadcast rows before the next matrix
  }
}

}  // namespace tinybatch::cuda::fast_kernels
