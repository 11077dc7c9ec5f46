// Fast out-of-place inverse for n <= 32 (after ../shared/seeds/002): one kernel
// that reads A once and writes inv(A) once, by an in-place Gauss-Jordan elimination with
// partial pivoting that keeps n values per thread: thread r holds row r of the working
// matrix W (= A at the start), which becomes a row of inv(A). Nothing of [A | I] is carried.
//
// Step j: the pivot of column j is found among the rows not yet chosen by the butterfly of
// getrf.cuh (same keys, same lazy logical positions, so the same rows LAPACK picks); the
// pivot row P (as it stands) is broadcast through shared memory; every other row computes
// l = W_rj / P_j exactly as getrf scales its multiplier (reciprocal, or a division below the
// smallest normal number), then W_rc -= l P_c for c != j and W_rj = -l; the pivot row keeps
// its values, sets W_pj = 1 and remembers the scale 1 / P_j, applied once at the end (the
// classic step scales the pivot row at once; deferring it is exact algebra, since every
// later update of the row is linear in it). Rows never move (lazy swap): the row chosen at
// step j is row j of inv(A), and column c of W is column perm[c] of inv(A), perm[c] being the
// row chosen at step c; the rows go to their place through the shared-memory tile.
//
// For the rows not yet chosen, columns > j see exactly getrf's operations in getrf's order,
// so pivots and info (the first exactly zero pivot) are getrf's. A singular matrix (info
// != 0) gets its LU factors, as reference::inverse (getrf, then getri) leaves them: the tile
// still holds A, and the warp that has such a matrix runs getrf's steps on it.
#pragma once

#include "getrf.cuh"

namespace tinybatch::cuda::fast_kernels {

/// y[c] -= m * buf[c] for every c in [0, E) except `skip`, buf read in 16-byte vectors.
template <int E, class T>
__device__ __forceinline__ void sub_row_except(T (&y)[E], T m, const T* buf, int skip) {
  constexpr int v = vec_width<T>;
  using V = vec_t<T>;
#pragma unroll
  for (int q = 0; q * v < E; ++q) {
    T t[v];
    unpack(reinterpret_cast<const V*>(buf)[q], t);
#pragma unroll
    for (int e = 0; e < v; ++e)
      if (q * v + e < E && q * v + e != skip) y[q * v + e] -= m * t[e];
  }
}

/// Row state of one thread in the lazily pivoted Gauss-Jordan inversion.
template <class T, int N>
struct gj_row {
  T a[N];
  T scale;    // 1 / pivot once chosen (the row's deferred scaling)
  int pos;    // logical row position (64 + lane for lanes beyond n)
  bool chosen;
  int info;   // first exactly zero pivot (1-based), uniform over the segment
};

/// Step j of the inversion for the segment whose broadcast row is `buf` (alternate two).
template <int W, int N, pivot_method PM = default_pivot, class T>
__device__ __forceinline__ void gj_step(gj_row<T, N>& s, int j, int r, bool lane_ok, T* buf) {
  const pivot_pick pk = pivot_search<W, PM>(s.a[j], lane_ok && !s.chosen, s.pos, j, r);
  if (pk.win) put_row(buf, 0, s.a);
  __syncwarp();
  const T piv = buf[j];
  if (pk.win) {
    s.chosen = true, s.pos = j;
  } else if (s.pos == j) {
    s.pos = pk.p;
  }
  if (piv == T(0) && s.info == 0) s.info = j + 1;
  // The reciprocal by rcp_rn / pivot_scale (common.cuh: no rcp.rn branches) in float, by the
  // division in double: same-run A/B on the H100 (bench/results/h100/gpu-h100-0ff2d37-ab-rcp*.txt),
  // tuned shape, division -> rcp_rn: float n=16 .65 -> .70, 32 .48 -> .48; double n=16
  // .73 -> .71, 32 .47 -> .46.
  constexpr bool fast = sizeof(T) == 4;
  const T rcp = fast ? rcp_rn(piv) : T(1) / piv;
  if (pk.win) {
    s.a[j] = T(1), s.scale = rcp;
  } else if (lane_ok) {
    // getrf's multiplier, computed as getrf computes it
    T l = s.a[j];
    if constexpr (fast) {
      l = pivot_scale(l, piv, rcp);
    } else if (piv != T(0)) {
      if (fabs(piv) >= sfmin<T>())
        l *= rcp;
      else
        l /= piv;
    }
    sub_row_except(s.a, l, buf, j);
    s.a[j] = -l;
  }
}

/// Each thread loads its row and stores its row of inv(A) directly (the lanes of a segment
/// touch consecutive elements of one column at a time), with no tile and no block-wide
/// barrier. (A variant staged through a shared-memory tile, as getrf is, measured slower at
/// every n on the H100: bench/results/h100/gpu-h100-0b57285-sweep.csv; removed.)
template <class T, int N, int THREADS, int MINB, pivot_method PM = default_pivot, class AtA, class AtX>
__global__ void __launch_bounds__(THREADS, min_blocks_of(MINB))
    inverse_kernel(AtA A, AtX X, index_t count, int* info) {
  constexpr int W = seg_width(N);
  constexpr int BS = vec_stride<T>(N);
  __shared__ __align__(16) T bc[2][(THREADS / W) * BS];
  __shared__ int perm_all[THREADS];  // perm[c]: the row chosen at step c (segment stride W)
  const int seg = threadIdx.x / W, r = threadIdx.x % W;
  const bool lane_ok = r < N;
  int* perm = perm_all + seg * W;
  for (index_t k0 = index_t(blockIdx.x) * (THREADS / W); k0 < count; k0 += index_t(gridDim.x) * (THREADS / W)) {
    const index_t k = k0 + seg;
    const bool live = k < count;
    gj_row<T, N> s;
    {
      const T* a = lane_ok && live ? A(k) + r : nullptr;
#pragma unroll
      for (int c = 0; c < N; ++c) s.a[c] = a ? a[index_t(c) * A.ld] : T(0);
    }
    s.scale = T(1), s.pos = lane_ok ? r : 64 + r, s.chosen = false, s.info = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) gj_step<W, N, PM>(s, j, r, lane_ok, bc[j & 1] + seg * BS);
    if (lane_ok) perm[s.pos] = r;
    __syncwarp();
    const bool singular = live && s.info != 0;
    if (lane_ok && live && !singular) {
      T* x = X(k) + s.pos;
#pragma unroll
      for (int c = 0; c < N; ++c) x[index_t(perm[c]) * X.ld] = s.a[c] * s.scale;
    }
    if (__any_sync(0xffffffffu, singular)) {
      // LU factors of the singular matrices: getrf on A (read again). The whole warp runs it
      // (its reductions span the segments); other segments discard theirs.
      __syncwarp();
      lu_row<T, N> u;
      const T* a = lane_ok && singular ? A(k) + r : nullptr;
#pragma unroll
      for (int c = 0; c < N; ++c) u.a[c] = a ? a[index_t(c) * A.ld] : T(0);
      u.pos = lane_ok ? r : 64 + r, u.chosen = false, u.chosen_at = 0, u.info = 0;
      T none[N];
#pragma unroll
      for (int j = 0; j < N; ++j) lu_step<W, N, false, PM>(u, none, j, r, lane_ok, bc[j & 1] + seg * BS, 0);
      __syncwarp();
      if (lane_ok && singular) {
        T* x = X(k) + u.pos;
#pragma unroll
        for (int c = 0; c < N; ++c) x[index_t(c) * X.ld] = u.a[c];
      }
    }
    if (r == 0 && live) info[k] = s.info;
    __syncwarp();  // every lane done with perm and the broadcast rows before the next matrix
  }
}

/// The inverse with R rows per thread (tuning.hpp's `rows`), as getrf_rows_kernel: lane r of
/// a segment of W = seg_width(ceil(n / R)) lanes holds rows r, r + W, ...; one read of the
/// broadcast row serves R rows. Every element sees gj_step's operations, so the results are
/// those of inverse_kernel.
template <class T, int N, int R>
struct gj_rows {
  T a[R][N];
  T scale[R];
  int pos[R];
  bool chosen[R];
  int info;
};

/// y[i][c] -= m[i] * buf[c] for every c in [0, E) but `skip`, in the rows with act[i].
template <int R, int E, class T>
__device__ __forceinline__ void sub_rows_except(T (&y)[R][E], const T (&m)[R], const bool (&act)[R],
                                                const T* buf, int skip) {
  constexpr int v = vec_width<T>;
  using V = vec_t<T>;
#pragma unroll
  for (int q = 0; q * v < E; ++q) {
    T t[v];
    unpack(reinterpret_cast<const V*>(buf)[q], t);
#pragma unroll
    for (int e = 0; e < v; ++e)
      if (q * v + e < E && q * v + e != skip)
#pragma unroll
        for (int i = 0; i < R; ++i)
          if (act[i]) y[i][q * v + e] -= m[i] * t[e];
  }
}

template <int W, int N, int R, class T>
__device__ __forceinline__ void gj_step_rows(gj_rows<T, N, R>& s, int j, const bool (&ok)[R], T* buf) {
  bool cand[R];
#pragma unroll
  for (int i = 0; i < R; ++i) cand[i] = ok[i] && !s.chosen[i];
  const int p = rows_pivot<W>(s.a, s.pos, cand, j);
  bool win[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    win[i] = cand[i] && s.pos[i] == p;
    if (win[i]) put_row(buf, 0, s.a[i]);
  }
  __syncwarp();
  const T piv = buf[j];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (win[i]) {
      s.chosen[i] = true, s.pos[i] = j;
    } else if (s.pos[i] == j) {
      s.pos[i] = p;
    }
  }
  if (piv == T(0) && s.info == 0) s.info = j + 1;
  const T rcp = T(1) / piv;
  T m[R];
  bool act[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    act[i] = ok[i] && !win[i];
    T l = s.a[i][j];  // getrf's multiplier, computed as getrf computes it
    if (piv != T(0)) {
      if (fabs(piv) >= sfmin<T>())
        l *= rcp;
      else
        l /= piv;
    }
    m[i] = l;
    if (win[i]) s.a[i][j] = T(1), s.scale[i] = rcp;
  }
  sub_rows_except(s.a, m, act, buf, j);
#pragma unroll
  for (int i = 0; i < R; ++i)
    if (act[i]) s.a[i][j] = -m[i];
}

template <class T, int N, int R, int THREADS, int MINB, class AtA, class AtX>
__global__ void __launch_bounds__(THREADS, min_blocks_of(MINB))
    inverse_rows_kernel(AtA A, AtX X, index_t count, int* info) {
  constexpr int W = seg_width((N + R - 1) / R), NB = THREADS / W, BS = vec_stride<T>(N);
  __shared__ __align__(16) T bc[2][NB * BS];
  __shared__ int perm_all[NB * N];  // perm[c]: the row chosen at step c
  const int seg = threadIdx.x / W, r = threadIdx.x % W;
  int* perm = perm_all + seg * N;
  bool ok[R];
#pragma unroll
  for (int i = 0; i < R; ++i) ok[i] = r + W * i < N;
  for (index_t k0 = index_t(blockIdx.x) * NB; k0 < count; k0 += index_t(gridDim.x) * NB) {
    const index_t k = k0 + seg;
    const bool live = k < count;
    gj_rows<T, N, R> s;
    load_rows<W>(s.a, s.pos, live ? A(k) + r : nullptr, A.ld, ok, r);
#pragma unroll
    for (int i = 0; i < R; ++i) s.scale[i] = T(1), s.chosen[i] = false;
    s.info = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) gj_step_rows<W, N, R>(s, j, ok, bc[j & 1] + seg * BS);
#pragma unroll
    for (int i = 0; i < R; ++i)
      if (ok[i]) perm[s.pos[i]] = r + W * i;
    __syncwarp();
    const bool singular = live && s.info != 0;
    if (live && !singular) {
#pragma unroll
      for (int i = 0; i < R; ++i)
        if (ok[i]) {
          T* x = X(k) + s.pos[i];
#pragma unroll
          for (int c = 0; c < N; ++c) x[index_t(perm[c]) * X.ld] = s.a[i][c] * s.scale[i];
        }
    }
    if (__any_sync(0xffffffffu, singular)) {
      // LU factors of the singular matrices, as inverse_kernel: getrf on A read again.
      __syncwarp();
      lu_rows<T, N, R> u;
      load_rows<W>(u.a, u.pos, singular ? A(k) + r : nullptr, A.ld, ok, r);
#pragma unroll
      for (int i = 0; i < R; ++i) u.chosen[i] = false, u.chosen_at[i] = 0;
      u.info = 0;
#pragma unroll
      for (int j = 0; j < N; ++j) lu_step_rows<W, N, R>(u, j, ok, bc[j & 1] + seg * BS);
      __syncwarp();
      if (singular) store_rows(u.a, u.pos, X(k), X.ld, ok);
    }
    if (r == 0 && live) info[k] = s.info;
    __syncwarp();  // every lane done with perm and the broadcast rows before the next matrix
  }
}

/// The inverse with one thread per matrix for tiny n (tuning.hpp's `per_matrix`): the matrix
/// loaded whole into registers (16-byte loads where it is one aligned run), then
/// reference::inverse's own steps, getrf (dgetf2) and getri (dtrti2, then the solve with L
/// and the column interchanges), over fully unrolled loops; row and column interchanges by
/// predicated register moves. Every operation is the reference's, in its order, so pivots,
/// info, the LU factors of a singular matrix and inv(A) are bit-identical to it (with
/// -fmad=false). No shared memory, no shuffles: the row-per-thread kernel spends most of its
/// time at n <= 4 on what a single thread does not need.
template <class T, int N, int THREADS, class AtA, class AtX>
__global__ void __launch_bounds__(THREADS) inverse_thread_kernel(AtA A, AtX X, index_t count, int* info) {
  for (index_t k = index_t(blockIdx.x) * THREADS + threadIdx.x; k < count; k += index_t(gridDim.x) * THREADS) {
    T a[N * N];
    load_small<N, N>(a, A(k), A.ld);
    auto at = [&](int i, int j) -> T& { return a[i + j * N]; };
    int piv[N];
    int inf = 0;
    // getrf (reference::getrf)
#pragma unroll
    for (int j = 0; j < N; ++j) {
      int p = j;
      T amax = fabs(at(j, j));
#pragma unroll
      for (int i = j + 1; i < N; ++i)
        if (fabs(at(i, j)) > amax) amax = fabs(at(i, j)), p = i;
      piv[j] = p;
      T apj = at(j, j);
#pragma unroll
      for (int i = j + 1; i < N; ++i)
        if (p == i) apj = at(i, j);
      if (apj != T(0)) {
#pragma unroll
        for (int i = j + 1; i < N; ++i)
          if (p == i) {
#pragma unroll
            for (int c = 0; c < N; ++c) {
              const T t = at(i, c);
              at(i, c) = at(j, c);
              at(j, c) = t;
            }
          }
        if (fabs(at(j, j)) >= sfmin<T>()) {
          const T rcp = T(1) / at(j, j);
#pragma unroll
          for (int i = j + 1; i < N; ++i) at(i, j) *= rcp;
        } else {
#pragma unroll
          for (int i = j + 1; i < N; ++i) at(i, j) /= at(j, j);
        }
      } else if (inf == 0) {
        inf = j + 1;
      }
#pragma unroll
      for (int c = j + 1; c < N; ++c) {
        const T t = at(j, c);
#pragma unroll
        for (int i = j + 1; i < N; ++i) at(i, c) -= at(i, j) * t;
      }
    }
    if (inf == 0) {
      // getri (reference::getri): inv(U) column by column
#pragma unroll
      for (int j = 0; j < N; ++j) {
        at(j, j) = T(1) / at(j, j);
        const T ajj = -at(j, j);
#pragma unroll
        for (int i = 0; i < j; ++i) {
          T s = 0;
#pragma unroll
          for (int l = i; l < j; ++l) s += at(i, l) * at(l, j);
          at(i, j) = s * ajj;
        }
      }
      // inv(A) L = inv(U), right to left
#pragma unroll
      for (int j = N - 1; j >= 0; --j) {
        T work[N];
#pragma unroll
        for (int i = j + 1; i < N; ++i) work[i] = at(i, j), at(i, j) = T(0);
#pragma unroll
        for (int l = j + 1; l < N; ++l)
#pragma unroll
          for (int i = 0; i < N; ++i) at(i, j) -= at(i, l) * work[l];
      }
      // column interchanges, last to first
#pragma unroll
      for (int j = N - 2; j >= 0; --j)
#pragma unroll
        for (int q = j + 1; q < N; ++q)
          if (piv[j] == q) {
#pragma unroll
            for (int i = 0; i < N; ++i) {
              const T t = at(i, j);
              at(i, j) = at(i, q);
              at(i, q) = t;
            }
          }
    }
    store_small<N, N>(a, X(k), X.ld);
    info[k] = inf;
  }
}

}  // namespace tinybatch::cuda::fast_kernels
