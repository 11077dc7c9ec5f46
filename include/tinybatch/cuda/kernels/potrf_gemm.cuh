// Batched Cholesky of larger orders on uniform batches: left-looking by panels of NB columns,
// each panel's update by cuBLAS batched GEMM (tensor-core DGEMM on sm_80 and later), its
// factorization by one kernel, or (small orders, cholesky_gemm_split) by two launches: the
// diagonal blocks one warp each, then the rows below.
//
// Why: the fused kernel (potrf_blocked.cuh) does the update with one FMA per shared-memory
// load and re-reads the factored columns n / (6 IB) times; from n of about a hundred that,
// not the arithmetic, limits it, and cuSOLVER's potrfBatched overtakes it. Here the update
// of panel j, S = L(j:n, 0:j) L(j:j+w, 0:j)^T, is one GEMM over the whole batch (strided
// or pointer-array) into a workspace S, and the panel kernel then factors A(j:n, j:j+w) - S:
// POTF2 of the diagonal block in one warp's registers, TRSM of the rows below in registers.
//
// The matrix itself is written only by the panel kernel, and only once per element, when
// final: GEMM reads A and writes S. So a matrix that fails at column f (info = f + 1) keeps
// every column right of f as it was, as with LAPACK's dpotf2 and the fused kernel, the
// other triangle is never touched, and no update needs a triangle-only (SYRK) product.
#pragma once

#include <cuda_runtime.h>
#include <math.h>
#include <mma.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/config.hpp"
#include "../../core/enums.hpp"
#include "../cublas.hpp"
#include "../error.hpp"
#include "common.cuh"

namespace tinybatch::cuda::blocked_kernels {

/// Two consecutive elements, loaded by one instruction.
template <class T>
using pair_of_t = std::conditional_t<std::is_same_v<T, float>, float2, double2>;

/// Threads (= rows below the diagonal block) per panel block.
inline constexpr int gemm_panel_threads = 128;
/// Panel blocks resident per SM, the register budget: double 5 (96 registers, what nvcc takes
/// unbounded), float 6 (80; unbounded it took 112, four blocks, 1.08 - 1.16x slower on an H100).
template <class T>
inline constexpr int gemm_panel_min_blocks = sizeof(T) == 4 ? 6 : 5;

/// POTF2 of the w x w diagonal block in one warp's registers, one row per lane (acc holds
/// the lane's row, 0 above the diagonal), right-looking: at step c lane c's pivot is
/// shuffled to all, the rows below scale their element of column c and broadcast it through
/// bc (double-buffered, 16-byte aligned), and subtract its multiple from the rest of their
/// row; `__syncwarp` only. With RCP, rcp gets 1 / L(c, c). Returns the failing column (w if
/// none); lane `failed` then keeps the updated pivot in acc[failed], as dpotf2 leaves it.
template <bool RCP, class T, int NB>
__device__ __forceinline__ int warp_potf2(T (&acc)[NB], T (*bc)[NB], int lane, int w, T* rcp) {
  const bool drow = lane < w;
  bc[0][lane % NB] = T(0), bc[1][lane % NB] = T(0);
  __syncwarp();
  int failed = w;
#pragma unroll
  for (int c = 0; c < NB; ++c) {
    if (c >= failed) break;  // uniform: failed and w are the same in every lane
    T* const buf = bc[c & 1];
    const T d = __shfl_sync(0xffffffffu, acc[c], c);
    if (!(d > T(0))) {
      failed = c;
      break;
    }
    // 1 / L(c, c) by one reciprocal square root (at most 1 ulp in double, 2 in float).
    const T inv = rsqrt(d);
    if (lane == c) {
      acc[c] = d * inv;
      if constexpr (RCP) rcp[c] = inv;
    } else if (lane > c && drow) {
      acc[c] *= inv;
      buf[lane] = acc[c];
    }
    __syncwarp();
    // Elements right of the diagonal (c2 > lane) take junk here: never read, never stored.
    if (lane > c && drow) fast_kernels::sub_row(acc, acc[c], buf, c + 1);
  }
  return failed;
}

/// Stores warp_potf2's row of the diagonal block: the columns left of the failure, and the
/// failing pivot itself as dpotf2 stores it (its updated value); the rest keeps its input.
template <bool UPPER, class T, int NB>
__device__ __forceinline__ void store_diag_row(const T (&acc)[NB], T* m, int ld, int lane, int w, int failed) {
  if (lane >= w) return;
#pragma unroll
  for (int c = 0; c < NB; ++c)
    if (c <= lane && (c < failed || (c == failed && c == lane))) *factor_at<UPPER>(m, ld, lane, c) = acc[c];
}

/// Panel j (columns j .. j + w) of matrix base + blockIdx.x, blockIdx.y-th group of rows below
/// the diagonal block. S (null at j = 0): the panel's update, (n - j) x w, column-major with
/// leading dimension lds, s_stride apart per matrix of the launch. In every block warp 0
/// factors the w x w diagonal block (the same arithmetic in each block, so each finds the
/// same failing column); block y = 0 stores it and info.
template <class T, int NB, bool UPPER, class V>
__global__ void __launch_bounds__(gemm_panel_threads, gemm_panel_min_blocks<T>)
    potrf_gemm_panel_kernel(V A, index_t base, index_t count, int* info, const T* S, int lds, index_t s_stride,
                            int j) {
  constexpr int TPB = gemm_panel_threads;
  static_assert(NB >= 4 && NB <= 32 && NB % 4 == 0 && TPB % 32 == 0,
                "potrf_gemm_panel_kernel: the diagonal block is one warp's rows");
  // The factored diagonal block, row-major and unpadded: the TRSM reads row c at one
  // address for the whole warp (a broadcast, no bank conflicts), two elements per load.
  __shared__ __align__(16) T sL[NB][NB];
  __shared__ __align__(16) T bc[2][NB];  // POTF2's column broadcast, double-buffered
  __shared__ T rcp[NB];
  __shared__ int s_failed;
  const index_t k = base + blockIdx.x;
  if (k >= count) return;
  // A failure at an earlier panel (info <= j) ends the matrix; this launch's own failure is
  // written by block 0 while others may still read: they must not act on it.
  const int prev = info[k];
  if (prev != 0 && prev <= j) return;
  const auto a = A[k];
  const int n = a.rows();
  if (j >= n) return;
  const int rows = n - j, w = rows < NB ? rows : NB;
  T* const m = a.data + j + index_t(j) * a.ld;  // L(j, j), lower or upper storage alike
  const T* const s = S ? S + index_t(blockIdx.x) * s_stride : nullptr;
  const int t = threadIdx.x, lane = t % 32;
  const bool diag_warp = t < 32;
  // This thread's row below the diagonal block, updated, in registers.
  const int r = w + int(blockIdx.y) * TPB + t;
  const bool mine = r < rows;
  T acc[NB];
  const auto load_row = [&](int row, bool ok, int upto) {
#pragma unroll
    for (int c = 0; c < NB; ++c)
      acc[c] = ok && c < upto ? *factor_at<UPPER>(m, a.ld, row, c) - (s ? s[row + index_t(c) * lds] : T(0)) : T(0);
  };
  // Warps 1.. issue their rows' loads now: they arrive while warp 0 factors the diagonal block.
  if (!diag_warp) load_row(r, mine, w);

  if (diag_warp) {
    // POTF2 in warp 0's registers (warp_potf2). No block-wide barrier: the former
    // shared-memory POTF2 by the whole block took two per column and was most of this
    // kernel's time (ncu, docs/cholesky.md).
    const bool drow = lane < w;
    load_row(lane, drow, lane + 1);  // the lower triangle; above it stays 0
    const int failed = warp_potf2<true>(acc, bc, lane, w, rcp);
    if (drow) {
#pragma unroll
      for (int c = 0; c < NB; ++c)
        if (c <= lane) sL[lane][c] = acc[c];
    }
    if (lane == 0) s_failed = failed;
    if (blockIdx.y == 0) {
      store_diag_row<UPPER>(acc, m, a.ld, lane, w, failed);
      if (lane == 0 && failed < w) info[k] = j + failed + 1;
    }
  }
  __syncthreads();
  if (diag_warp) load_row(r, mine, w);  // warp 0's own row below, now that acc is free
  const int failed = s_failed;

  // TRSM of this row: x_c = (a_c - sum_{c' < c} x_c' L(c, c')) / L(c, c), for the columns left
  // of a failure (dpotf2 has finished those for every row).
  if (mine) {
#pragma unroll
    for (int c = 0; c < NB; ++c) {
      if (c >= failed) break;
      T x = acc[c];
      const T* const lr = sL[c];
#pragma unroll
      for (int c2 = 0; c2 + 1 < c; c2 += 2) {
        const auto two = *reinterpret_cast<const pair_of_t<T>*>(lr + c2);  // one 8- or 16-byte load
        x -= acc[c2] * two.x;
        x -= acc[c2 + 1] * two.y;
      }
      if (c % 2 == 1) x -= acc[c - 1] * lr[c - 1];
      acc[c] = x * rcp[c];
      *factor_at<UPPER>(m, a.ld, r, c) = acc[c];
    }
  }
}

/// Variable-size batches: the live work of each panel step as a list of (matrix of the
/// launch, row group) items, built on the device once per chunk (vwork_build_kernel). Why:
/// launches sized for the largest order give every matrix the tallest matrix's row groups;
/// at a largest order of 512 (uniform sizes) 63 - 69% of the update's blocks had no rows and
/// left at once, and matrices that had ended still took a block in every launch. With lists,
/// each launch is a resident grid whose blocks loop over the step's items (no host
/// synchronisation: the count stays on the device).
struct vwork {
  int i, y;
};
/// Items' kinds: the update's tiles of vgemm_rows rows, the diagonal blocks, the row groups of
/// gemm_panel_threads rows below them (the split step); the fused step's tiles below its head
/// tile (vwork_rest, y from 1; the head tiles are the diagonal blocks' list).
enum vwork_kind { vwork_update = 0, vwork_diag = 1, vwork_trsm = 2, vwork_rest = 3, vwork_kinds = 4 };
/// The lists each step needs: the split step's, the fused step's.
inline constexpr unsigned vwork_split = 1u << vwork_update | 1u << vwork_diag | 1u << vwork_trsm;
inline constexpr unsigned vwork_fused = 1u << vwork_diag | 1u << vwork_rest;
inline constexpr int vgemm_rows = 64;  // rows of S per update tile (potrf_vgemm_kernel)
/// Items of one matrix of order n at panel j (w = its width NB or what is left).
TINYBATCH_HD inline int vwork_items(int kind, int n, int j, int NB) {
  if (j >= n) return 0;
  if (kind == vwork_update) return j > 0 ? (n - j + vgemm_rows - 1) / vgemm_rows : 0;
  if (kind == vwork_diag) return 1;
  if (kind == vwork_rest) return (n - j - 1) / vgemm_rows;
  const int below = n - j - (n - j < NB ? n - j : NB);
  return (below + gemm_panel_threads - 1) / gemm_panel_threads;
}
/// The same where kinds (a vwork_split / vwork_fused mask) leaves the kind out: none.
TINYBATCH_HD inline int vwork_items(unsigned kinds, int kind, int n, int j, int NB) {
  return kinds >> kind & 1u ? vwork_items(kind, n, j, NB) : 0;
}

/// Builds the lists of every panel step for matrices base .. base + cnt (one thread each):
/// step p's items of kind q are counted in total[q * steps + p] (zeroed before) and go to
/// items + cap * (the items of one matrix of order nmax in the lists before it), cap the
/// chunk's matrices (potrf_gemm_vbatch computes the same offsets). A warp reserves its items
/// with one atomic per list, so a matrix's items are contiguous and the warp's matrices
/// adjacent (their tiles share L2). Orders above nmax have no items (mark_oversize_kernel
/// gave them info = -2).
template <class V>
__global__ void vwork_build_kernel(V A, index_t base, int cnt, int nmax, int NB, int steps, index_t cap,
                                   unsigned kinds, vwork* items, int* total) {
  const int i = int(blockIdx.x) * blockDim.x + int(threadIdx.x), lane = int(threadIdx.x) % 32;
  int n = i < cnt ? A[base + i].rows() : 0;
  if (n > nmax) n = 0;
  index_t start = 0;
  for (int q = 0; q < vwork_kinds; ++q)
    for (int p = 0; p < steps; ++p) {
      vwork* const list = items + start;  // this step's list
      start += cap * vwork_items(kinds, q, nmax, p * NB, NB);
      const int mine = vwork_items(kinds, q, n, p * NB, NB);
      int incl = mine;  // the warp's inclusive prefix of its items
#pragma unroll
      for (int o = 1; o < 32; o *= 2) {
        const int v = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += v;
      }
      const int sum = __shfl_sync(0xffffffffu, incl, 31);
      if (sum == 0) continue;  // uniform in the warp
      int at = 0;
      if (lane == 31) at = atomicAdd(total + q * steps + p, sum);
      at = __shfl_sync(0xffffffffu, at, 31) + incl - mine;
      vwork* const out = list + at;
      const int y0 = q == vwork_rest;  // the fused step's head tile is the diagonal blocks' item
      for (int y = 0; y < mine; ++y) out[y] = vwork{i, y0 + y};
    }
}

/// The diagonal block of panel j of matrix i of the launch (base + i), one warp, POTF2 in
/// registers as in potrf_gemm_panel_kernel; stores the block (columns left of a failure and
/// the failing pivot) and info.
template <class T, int NB, bool UPPER, class V>
__device__ __forceinline__ void gemm_diag_block(const V& A, index_t base, index_t count, int* info, const T* S,
                                                int lds, index_t s_stride, int j, index_t i, T (*bc)[NB], int lane) {
  const index_t k = base + i;
  if (k >= count) return;
  const int prev = info[k];
  if (prev != 0 && prev <= j) return;
  const auto a = A[k];
  const int n = a.rows();
  if (j >= n) return;
  const int rows = n - j, w = rows < NB ? rows : NB;
  T* const m = a.data + j + index_t(j) * a.ld;
  const T* const s = S ? S + i * s_stride : nullptr;
  const bool drow = lane < w;
  T acc[NB];
#pragma unroll
  for (int c = 0; c < NB; ++c)
    acc[c] = drow && c <= lane ? *factor_at<UPPER>(m, a.ld, lane, c) - (s ? s[lane + index_t(c) * lds] : T(0)) : T(0);
  const int failed = warp_potf2<false>(acc, bc, lane, w, static_cast<T*>(nullptr));
  store_diag_row<UPPER>(acc, m, a.ld, lane, w, failed);
  if (lane == 0 && failed < w) info[k] = j + failed + 1;
}

/// Matrices per block of the diagonal-block kernel (one warp each).
inline constexpr int gemm_diag_warps = 4;

/// The split panel, first launch: the diagonal blocks of panel j, one warp per matrix
/// (gemm_diag_block). LIST: the warps loop over the step's items (vwork) instead.
template <class T, int NB, bool UPPER, bool LIST = false, class V>
__global__ void __launch_bounds__(32 * gemm_diag_warps)
    potrf_gemm_diag_kernel(V A, index_t base, index_t count, int* info, const T* S, int lds, index_t s_stride,
                           int j, const vwork* items = nullptr, const int* total = nullptr) {
  static_assert(NB >= 4 && NB <= 32 && NB % 4 == 0, "potrf_gemm_diag_kernel: the diagonal block is one warp's rows");
  __shared__ __align__(16) T bcs[gemm_diag_warps][2][NB];
  const int wp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const index_t first = index_t(blockIdx.x) * gemm_diag_warps + wp;
  if constexpr (LIST) {
    const int tot = *total;
    for (index_t w = first; w < tot; w += index_t(gridDim.x) * gemm_diag_warps)
      gemm_diag_block<T, NB, UPPER>(A, base, count, info, S, lds, s_stride, j, items[w].i, bcs[wp], lane);
  } else {
    gemm_diag_block<T, NB, UPPER>(A, base, count, info, S, lds, s_stride, j, first, bcs[wp], lane);
  }
}

/// One row of X L^T = B by substitution (the TRSM of the rows below a diagonal block): x holds
/// the row of B on entry and of X on return, for the columns left of failed; L row-major (row
/// c at L + c * ldl, 16-byte aligned: pair loads), rcp[c] = 1 / L(c, c); each solved element
/// also goes to out(c, value).
template <class T, int NB, class Out>
__device__ __forceinline__ void row_solve(T (&x)[NB], const T* L, int ldl, const T* rcp, int failed, Out&& out) {
#pragma unroll
  for (int c = 0; c < NB; ++c) {
    if (c >= failed) break;
    T v = x[c];
    const T* const lr = L + c * ldl;
#pragma unroll
    for (int c2 = 0; c2 + 1 < c; c2 += 2) {
      const auto two = *reinterpret_cast<const pair_of_t<T>*>(lr + c2);
      v -= x[c2] * two.x;
      v -= x[c2 + 1] * two.y;
    }
    if (c % 2 == 1) v -= x[c - 1] * lr[c - 1];
    x[c] = v * rcp[c];
    out(c, x[c]);
  }
}

/// The rows below the diagonal block of panel j of matrix i of the launch (base + i), y-th
/// group of TPB, TRSM against the block the first launch stored, up to this panel's failure
/// if any. sL, rcp: the block's shared memory.
template <class T, int NB, bool UPPER, class V>
__device__ __forceinline__ void gemm_trsm_rows(const V& A, index_t base, index_t count, const int* info, const T* S,
                                               int lds, index_t s_stride, int j, index_t i, int y, T (*sL)[NB],
                                               T* rcp) {
  constexpr int TPB = gemm_panel_threads;
  const index_t k = base + i;
  if (k >= count) return;
  const int prev = info[k];
  if (prev != 0 && prev <= j) return;
  const auto a = A[k];
  const int n = a.rows();
  if (j >= n) return;
  const int rows = n - j, w = rows < NB ? rows : NB;
  // This panel's failure (info in j + 1 .. j + w) ends the solve at that column.
  const int failed = prev != 0 ? prev - 1 - j : w;
  T* const m = a.data + j + index_t(j) * a.ld;
  const T* const s = S ? S + i * s_stride : nullptr;
  const int t = threadIdx.x;
  const int r = w + y * TPB + t;
  const bool mine = r < rows;
  T acc[NB];
#pragma unroll
  for (int c = 0; c < NB; ++c)
    acc[c] = mine && c < w ? *factor_at<UPPER>(m, a.ld, r, c) - (s ? s[r + index_t(c) * lds] : T(0)) : T(0);
  for (int e = t; e < NB * NB; e += TPB) {
    const int rr = UPPER ? e / NB : e % NB, cc = UPPER ? e % NB : e / NB;
    if (cc <= rr && rr < failed) sL[rr][cc] = *factor_at<UPPER>(m, a.ld, rr, cc);
  }
  __syncthreads();
  if (t < failed) rcp[t] = T(1) / sL[t][t];
  __syncthreads();
  if (mine) row_solve(acc, sL[0], NB, rcp, failed, [&](int c, T v) { *factor_at<UPPER>(m, a.ld, r, c) = v; });
}

/// The split panel, second launch: the rows below the diagonal blocks (gemm_trsm_rows), block
/// (x, y) for matrix base + x, row group y; LIST: the blocks loop over the step's items.
template <class T, int NB, bool UPPER, bool LIST = false, class V>
__global__ void __launch_bounds__(gemm_panel_threads, gemm_panel_min_blocks<T>)
    potrf_gemm_trsm_kernel(V A, index_t base, index_t count, const int* info, const T* S, int lds,
                           index_t s_stride, int j, const vwork* items = nullptr, const int* total = nullptr) {
  __shared__ __align__(16) T sL[NB][NB];
  __shared__ T rcp[NB];
  if constexpr (LIST) {
    const int tot = *total;
    for (int w = int(blockIdx.x); w < tot; w += int(gridDim.x)) {
      const vwork it = items[w];
      gemm_trsm_rows<T, NB, UPPER>(A, base, count, info, S, lds, s_stride, j, it.i, it.y, sL, rcp);
      __syncthreads();  // the next item rewrites sL and rcp
    }
  } else {
    gemm_trsm_rows<T, NB, UPPER>(A, base, count, info, S, lds, s_stride, j, blockIdx.x, int(blockIdx.y), sL, rcp);
  }
}

/// The variable-size update's tile: rows of S per block, columns of L per shared-memory chunk,
/// threads per block (a 16 x 8 grid; each thread 4 rows x NB / 8 columns of S).
inline constexpr int vgemm_kc = 16, vgemm_threads = 128;

/// Row r and column p (within the chunk) of a chunk's element e that a thread loads: along
/// rows in lower storage (consecutive addresses), along the chunk's columns in upper storage
/// (stored transposed), so a warp's loads are contiguous either way.
struct vgemm_at {
  int r, p;
};
template <bool UPPER, int KC, int ROWS>
__device__ __forceinline__ vgemm_at vgemm_element(int e) {
  return UPPER ? vgemm_at{e / KC, e % KC} : vgemm_at{e % ROWS, e / ROWS};
}

/// The update's arithmetic on one vgemm_rows x NB tile of S, from the chunks of KC columns
/// of L in shared memory (sa[p][r] = L(r0 + r, p0 + p), sb[p][c] = L(c, p0 + p), rows of
/// LDA and LDB elements): plain FMA, each thread 4 x NB / 8 outputs (a 16 x 8 thread grid).
template <class T, int NB>
struct vgemm_fma {
  static constexpr int pad = 1;  // shared rows of vgemm_rows + 1 and NB + 1 elements
  static constexpr int RM = vgemm_rows / 16, RN = NB / 8;
  static constexpr int stage_elems = 0;  // the store goes from registers
  T acc[RM][RN] = {};
  template <int LDA, int LDB>
  __device__ __forceinline__ void chunk(const T* sa, const T* sb, int t) {
    const int tr = t % 16, tc = t / 16;
#pragma unroll
    for (int kk = 0; kk < vgemm_kc; ++kk) {
      T av[RM], bv[RN];
#pragma unroll
      for (int x = 0; x < RM; ++x) av[x] = sa[kk * LDA + tr + 16 * x];
#pragma unroll
      for (int y = 0; y < RN; ++y) bv[y] = sb[kk * LDB + tc + 8 * y];
#pragma unroll
      for (int x = 0; x < RM; ++x)
#pragma unroll
        for (int y = 0; y < RN; ++y) acc[x][y] += av[x] * bv[y];
    }
  }
  /// The tile into shared memory, column-major, leading dimension LDS (the fused step).
  template <int LDS>
  __device__ __forceinline__ void to_shared(T* st, int t) const {
    const int tr = t % 16, tc = t / 16;
#pragma unroll
    for (int x = 0; x < RM; ++x)
#pragma unroll
      for (int y = 0; y < RN; ++y) st[(tc + 8 * y) * LDS + tr + 16 * x] = acc[x][y];
  }
  /// Rows r0.. of S (m rows, w columns in all) into s.
  __device__ __forceinline__ void store(T* s, int lds, int r0, int m, int w, int t, T*) const {
    const int tr = t % 16, tc = t / 16;
#pragma unroll
    for (int x = 0; x < RM; ++x)
#pragma unroll
      for (int y = 0; y < RN; ++y) {
        const int r = r0 + tr + 16 * x, c = tc + 8 * y;
        if (r < m && c < w) s[r + index_t(c) * lds] = acc[x][y];
      }
  }
};

/// The same on the FP64 tensor cores (DMMA, 8 x 8 x 4, through WMMA; double, sm_80 and
/// later): warp v holds rows 16 v .. 16 v + 15 of the tile as 2 x NB / 8 accumulator
/// fragments; A's fragments are column-major and B's row-major views of the same shared
/// chunks (rows padded to multiples of 4 elements: WMMA wants 32-byte aligned fragments);
/// the tile leaves through shared memory, because a fragment's element-to-thread map is
/// unspecified. Why: the FMA tile issues 8 shared loads per 16 FMAs per thread and the FP64
/// FMA pipe has half the tensor cores' rate.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
template <int NB>
struct vgemm_mma {
  static constexpr int pad = 4;
  static constexpr int FN = NB / 8, LDST = vgemm_rows + 4;
  static constexpr int stage_elems = NB * LDST;  // the tile on its way out, column-major
  static_assert(vgemm_rows == 16 * (vgemm_threads / 32) && NB % 8 == 0 && vgemm_kc % 4 == 0, "vgemm_mma: tile");
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 8, 8, 4, double> c[2][FN];
  __device__ __forceinline__ vgemm_mma() {
#pragma unroll
    for (int x = 0; x < 2; ++x)
#pragma unroll
      for (int y = 0; y < FN; ++y) nvcuda::wmma::fill_fragment(c[x][y], 0.0);
  }
  template <int LDA, int LDB>
  __device__ __forceinline__ void chunk(const double* sa, const double* sb, int t) {
    using namespace nvcuda;
    static_assert(LDA % 4 == 0 && LDB % 4 == 0, "vgemm_mma: 32-byte aligned fragments");
    const int v = t / 32;
#pragma unroll
    for (int k0 = 0; k0 < vgemm_kc; k0 += 4) {
      wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::col_major> a[2];
#pragma unroll
      for (int x = 0; x < 2; ++x) wmma::load_matrix_sync(a[x], sa + k0 * LDA + 16 * v + 8 * x, LDA);
#pragma unroll
      for (int y = 0; y < FN; ++y) {
        wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::row_major> b;
        wmma::load_matrix_sync(b, sb + k0 * LDB + 8 * y, LDB);
#pragma unroll
        for (int x = 0; x < 2; ++x) wmma::mma_sync(c[x][y], a[x], b, c[x][y]);
      }
    }
  }
  template <int LDS>
  __device__ __forceinline__ void to_shared(double* st, int t) const {
    static_assert(LDS % 4 == 0, "vgemm_mma: 32-byte aligned fragments");
    const int v = t / 32;
#pragma unroll
    for (int x = 0; x < 2; ++x)
#pragma unroll
      for (int y = 0; y < FN; ++y)
        nvcuda::wmma::store_matrix_sync(st + 8 * y * LDS + 16 * v + 8 * x, c[x][y], LDS, nvcuda::wmma::mem_col_major);
  }
  /// stage: stage_elems of shared memory (the chunks' buffer: every chunk has been used).
  __device__ __forceinline__ void store(double* s, int lds, int r0, int m, int w, int t, double* stage) const {
    using namespace nvcuda;
    const int v = t / 32;
#pragma unroll
    for (int x = 0; x < 2; ++x)
#pragma unroll
      for (int y = 0; y < FN; ++y)
        wmma::store_matrix_sync(stage + 8 * y * LDST + 16 * v + 8 * x, c[x][y], LDST, wmma::mem_col_major);
    __syncthreads();
    for (int e = t; e < vgemm_rows * NB; e += vgemm_threads) {
      const int r = e % vgemm_rows, col = e / vgemm_rows;
      if (r0 + r < m && col < w) s[r0 + r + index_t(col) * lds] = stage[col * LDST + r];
    }
  }
};
#else
// No DMMA before sm_80: a build for an older GPU runs the FMA tile where DMMA was asked for.
template <int NB>
struct vgemm_mma : vgemm_fma<double, NB> {};
#endif

template <class T, int NB, bool MMA>
struct vgemm_tile_of {
  using type = vgemm_fma<T, NB>;
};
template <int NB>
struct vgemm_tile_of<double, NB, true> {
  using type = vgemm_mma<NB>;
};

/// The update tile's shared memory: the chunks of L (two with cp.async), elements.
template <class T, int NB, bool MMA>
struct vgemm_smem {
  using tile = typename vgemm_tile_of<T, NB, MMA>::type;
  static constexpr int LDA = vgemm_rows + tile::pad, LDB = NB + tile::pad;
  static constexpr int CH = vgemm_kc * (LDA + LDB);  // one chunk of L
  static constexpr int BUF = (vgemm_async_v<sizeof(T), MMA> ? 2 : 1) * CH;
};

/// acc += rows r0 .. r0 + vgemm_rows of L(j:n, 0:j) L(j:j+w, 0:j)^T (zeros past m = n - j
/// rows and w columns); L = &L(j, 0); sm: vgemm_smem's BUF elements. Every thread of the
/// block calls it; it ends with a barrier, after which sm is free.
template <class T, int NB, bool UPPER, bool MMA, class Tile>
__device__ __forceinline__ void vgemm_accumulate(Tile& acc, const T* L, int ld, int m, int w, int r0, int j, int t,
                                                 T* sm) {
  using mem = vgemm_smem<T, NB, MMA>;
  constexpr int MT = vgemm_rows, KC = vgemm_kc, TPB = vgemm_threads;
  constexpr int LA = MT * KC / TPB, LB = NB * KC / TPB;  // elements each thread loads
  constexpr int LDA = mem::LDA, LDB = mem::LDB, CH = mem::CH;
  constexpr bool ASYNC = vgemm_async_v<sizeof(T), MMA>;
  static_assert(NB % 8 == 0 && NB % KC == 0 && MT % 16 == 0 && LA * TPB == MT * KC && LB * TPB == NB * KC,
                "potrf_vgemm_kernel: tile");
  if constexpr (ASYNC) {
    // Chunk p0 into buffer b: rows past the matrix read nothing and land as zeros.
    const auto issue = [&](int p0, int b) {
      T* const sa = sm + b * CH;
      T* const sb = sa + KC * LDA;
#pragma unroll
      for (int q = 0; q < LA; ++q) {
        const auto [r, p] = vgemm_element<UPPER, KC, MT>(t + q * TPB);
        const bool ok = r0 + r < m;
        fast_kernels::copy_async_or_zero(sa + p * LDA + r, ok ? factor_at<UPPER>(L, ld, r0 + r, p0 + p) : L, ok);
      }
#pragma unroll
      for (int q = 0; q < LB; ++q) {
        const auto [r, p] = vgemm_element<UPPER, KC, NB>(t + q * TPB);
        const bool ok = r < w;
        fast_kernels::copy_async_or_zero(sb + p * LDB + r, ok ? factor_at<UPPER>(L, ld, r, p0 + p) : L, ok);
      }
      fast_kernels::copy_async_commit();
    };
    issue(0, 0);
    int b = 0;
    for (int p0 = 0; p0 < j; p0 += KC, b ^= 1) {  // j is a multiple of NB, hence of KC
      if (p0 + KC < j) {
        issue(p0 + KC, b ^ 1);  // the other buffer: its chunk was used before the last barrier
        fast_kernels::copy_async_wait<1>();
      } else {
        fast_kernels::copy_async_wait<0>();
      }
      __syncthreads();
      acc.template chunk<LDA, LDB>(sm + b * CH, sm + b * CH + KC * LDA, t);
      __syncthreads();
    }
  } else {
    T* const sa = sm;
    T* const sb = sm + KC * LDA;
    T ra[LA], rb[LB];
    const auto load = [&](int p0) {
#pragma unroll
      for (int q = 0; q < LA; ++q) {
        const auto [r, p] = vgemm_element<UPPER, KC, MT>(t + q * TPB);
        ra[q] = r0 + r < m ? *factor_at<UPPER>(L, ld, r0 + r, p0 + p) : T(0);
      }
#pragma unroll
      for (int q = 0; q < LB; ++q) {
        const auto [r, p] = vgemm_element<UPPER, KC, NB>(t + q * TPB);
        rb[q] = r < w ? *factor_at<UPPER>(L, ld, r, p0 + p) : T(0);
      }
    };
    load(0);
    for (int p0 = 0; p0 < j; p0 += KC) {  // j is a multiple of NB, hence of KC
#pragma unroll
      for (int q = 0; q < LA; ++q) {
        const auto [r, p] = vgemm_element<UPPER, KC, MT>(t + q * TPB);
        sa[p * LDA + r] = ra[q];
      }
#pragma unroll
      for (int q = 0; q < LB; ++q) {
        const auto [r, p] = vgemm_element<UPPER, KC, NB>(t + q * TPB);
        sb[p * LDB + r] = rb[q];
      }
      __syncthreads();
      if (p0 + KC < j) load(p0 + KC);
      acc.template chunk<LDA, LDB>(sa, sb, t);
      __syncthreads();
    }
  }
}

/// Variable-size batches: panel j's update S = L(j:n, 0:j) L(j:j+w, 0:j)^T of each matrix by
/// its own order, read on the device (cuBLAS's batched GEMMs take their sizes from the host).
/// Tile y of matrix base + i: rows vgemm_rows * y .. of its S. Matrices that ended (order <= j,
/// or failed at an earlier panel) leave at once. L's chunks go through shared memory, the
/// next chunk's loads issued before the current one's arithmetic (MMA: on the tensor cores,
/// double only; float takes the FMA tile either way): by cp.async into a second buffer
/// (vgemm_async: no registers hold the loads in flight), or through registers.
template <class T, int NB, bool UPPER, bool MMA, class V>
__device__ __forceinline__ void vgemm_tile(const V& A, index_t base, index_t count, const int* info, T* S, int lds,
                                           index_t s_stride, int j, index_t i, int y) {
  using mem = vgemm_smem<T, NB, MMA>;
  using tile = typename mem::tile;
  // The chunks, then the tile's way out (both stay within one block's 48 KiB).
  __shared__ __align__(32) T sm[mem::BUF > tile::stage_elems ? mem::BUF : tile::stage_elems];
  const index_t k = base + i;
  if (k >= count) return;
  const int prev = info[k];
  if (prev != 0 && prev <= j) return;
  const auto a = A[k];
  const int n = a.rows();
  const int r0 = y * vgemm_rows;
  if (j + r0 >= n) return;
  const int m = n - j, w = m < NB ? m : NB;
  const T* const L = a.data + (UPPER ? index_t(j) * a.ld : index_t(j));  // L(j, 0)
  const int t = threadIdx.x;
  tile acc;
  vgemm_accumulate<T, NB, UPPER, MMA>(acc, L, a.ld, m, w, r0, j, t, sm);
  acc.store(S + i * s_stride, lds, r0, m, w, t, sm);
}

/// The update's launch: block (x, y) for matrix base + x, rows vgemm_rows * y .. of S;
/// LIST: the blocks loop over the step's items (vwork).
template <class T, int NB, bool UPPER, bool MMA, bool LIST = false, class V>
__global__ void __launch_bounds__(vgemm_threads, vgemm_min_blocks(sizeof(T), MMA))
    potrf_vgemm_kernel(V A, index_t base, index_t count, const int* info, T* S, int lds, index_t s_stride, int j,
                       const vwork* items = nullptr, const int* total = nullptr) {
  if constexpr (LIST) {
    const int tot = *total;
    for (int w = int(blockIdx.x); w < tot; w += int(gridDim.x)) {
      const vwork it = items[w];
      vgemm_tile<T, NB, UPPER, MMA>(A, base, count, info, S, lds, s_stride, j, it.i, it.y);
      __syncthreads();  // the next item rewrites the shared chunks and the store's stage
    }
  } else {
    vgemm_tile<T, NB, UPPER, MMA>(A, base, count, info, S, lds, s_stride, j, blockIdx.x, int(blockIdx.y));
  }
}

/// The fused step's shared memory (one set a block, whichever tile it runs).
template <class T, int NB, bool MMA>
struct vfused_shared {
  using mem = vgemm_smem<T, NB, MMA>;
  static constexpr int LDS = vgemm_rows + 4;  // the stage: the tile's A - S, column-major (WMMA: a multiple of 4)
  static constexpr int LDR = NB + 2;          // the diagonal block, row-major (rows 16-byte aligned: pair loads)
  // The chunks, then the stage (every chunk used by then).
  __align__(32) T sm[mem::BUF > NB * LDS ? mem::BUF : NB * LDS];
  __align__(16) T sL[NB * LDR];
  __align__(16) T bc[2][NB];
  T rcp[NB];
  int fail;
};

/// Variable-size batches, the fused panel step (no workspace S): a tile of vgemm_rows rows of
/// panel j accumulates their update (vgemm_accumulate), subtracts it from A in shared memory
/// and finishes the rows there. HEAD, the tile at the top of the panel (y = 0): one warp
/// factors the diagonal block (warp_potf2) and sets info, then the tile solves its rows below
/// the block against it; the other tiles (y >= 1, the launch after the heads') solve theirs
/// against the block the head stored, up to this panel's failing column if any. Each element is written once, when final, as in the split step: a matrix failing in this
/// panel at column f gets its columns left of f and the failing pivot; the rest keeps its
/// input. Why: the split step's update writes S and its TRSM launch reads A and S and writes
/// L, four passes over the panel's rows where these tiles make two.
template <class T, int NB, bool UPPER, bool MMA, bool HEAD, class V>
__device__ __forceinline__ void vfused_tile(const V& A, index_t base, index_t count, int* info, int j, index_t i,
                                            int y, vfused_shared<T, NB, MMA>& sh) {
  using mem = vgemm_smem<T, NB, MMA>;
  using tile = typename mem::tile;
  constexpr int MT = vgemm_rows, TPB = vgemm_threads;
  constexpr int LDS = vfused_shared<T, NB, MMA>::LDS, LDR = vfused_shared<T, NB, MMA>::LDR;
  static_assert(NB <= 32 && NB % 2 == 0 && MT >= 32 && MT <= TPB, "vfused_tile: shape");
  const index_t k = base + i;
  if (k >= count) return;
  const int prev = info[k];
  if (prev != 0 && prev <= j) return;
  const auto a = A[k];
  const int n = a.rows();
  const int r0 = y * MT;
  if (j + r0 >= n) return;
  const int m = n - j, w = m < NB ? m : NB, ld = a.ld;
  T* const P = a.data + j + index_t(j) * ld;                            // A(j, j)
  const T* const L = a.data + (UPPER ? index_t(j) * ld : index_t(j));  // L(j, 0)
  const int t = threadIdx.x;
  T* const st = sh.sm;
  T* const sL = sh.sL;
  if (j > 0) {
    tile acc;
    vgemm_accumulate<T, NB, UPPER, MMA>(acc, L, ld, m, w, r0, j, t, sh.sm);
    acc.template to_shared<LDS>(st, t);
    __syncthreads();
  }
  // Element e of the tile, along the storage's contiguous direction (rows of the lower factor,
  // columns of the upper one).
  const auto at = [](int e) { return UPPER ? vgemm_at{e / NB, e % NB} : vgemm_at{e % MT, e / MT}; };
  // st = A - S: zeros past the matrix, past w columns, and right of the diagonal block's diagonal.
  for (int e = t; e < MT * NB; e += TPB) {
    const auto [r, c] = at(e);
    const bool in = r0 + r < m && c < w && !(HEAD && c > r);
    const T s = j > 0 ? st[c * LDS + r] : T(0);
    st[c * LDS + r] = in ? *factor_at<UPPER>(P, ld, r0 + r, c) - s : T(0);
  }
  __syncthreads();
  int failed;
  if constexpr (HEAD) {
    if (t < 32) {
      T row[NB];
#pragma unroll
      for (int c = 0; c < NB; ++c) row[c] = st[c * LDS + t];
      const int f = warp_potf2<true>(row, sh.bc, t, w, sh.rcp);
      if (t < w)
#pragma unroll
        for (int c = 0; c < NB; ++c)
          if (c <= t) st[c * LDS + t] = row[c], sL[t * LDR + c] = row[c];
      if (t == 0) {
        sh.fail = f;
        if (f < w) info[k] = j + f + 1;
      }
    }
    __syncthreads();
    failed = sh.fail;
  } else {
    // The diagonal block the head stored, its rows up to this panel's failure.
    failed = prev != 0 ? prev - 1 - j : w;
    for (int e = t; e < NB * NB; e += TPB) {
      const int rr = UPPER ? e / NB : e % NB, cc = UPPER ? e % NB : e / NB;
      if (cc <= rr && rr < failed) sL[rr * LDR + cc] = __ldcg(factor_at<UPPER>(P, ld, rr, cc));  // L2 only
    }
    __syncthreads();
    if (t < failed) sh.rcp[t] = T(1) / sL[t * LDR + t];
    __syncthreads();
  }
  // The rows below the diagonal block: X L11^T = A - S by substitution, one row a thread.
  if (t < MT && (!HEAD || t >= w) && r0 + t < m) {
    T x[NB];
#pragma unroll
    for (int c = 0; c < NB; ++c) x[c] = st[c * LDS + t];
    row_solve(x, sL, LDR, sh.rcp, failed, [&](int c, T v) { st[c * LDS + t] = v; });
  }
  __syncthreads();
  for (int e = t; e < MT * NB; e += TPB) {
    const auto [r, c] = at(e);
    if (r0 + r >= m || c >= w) continue;
    const bool keep = HEAD && r < w ? c <= r && (c < failed || (c == failed && c == r)) : c < failed;
    if (keep) *factor_at<UPPER>(P, ld, r0 + r, c) = st[c * LDS + r];
  }
}

/// The fused step's launches, resident grids over the step's lists: the head tiles (HEAD: the
/// diagonal blocks' list, tile 0 of each live matrix), then the other tiles (vwork_rest).
template <class T, int NB, bool UPPER, bool MMA, bool HEAD, class V>
__global__ void __launch_bounds__(vgemm_threads, vgemm_min_blocks(sizeof(T), MMA))
    potrf_vfused_kernel(V A, index_t base, index_t count, int* info, int j, const vwork* items, const int* total) {
  __shared__ vfused_shared<T, NB, MMA> sh;
  const int tot = *total;
  for (int w = int(blockIdx.x); w < tot; w += int(gridDim.x)) {
    const vwork it = items[w];
    vfused_tile<T, NB, UPPER, MMA, HEAD>(A, base, count, info, j, it.i, HEAD ? 0 : it.y, sh);
    __syncthreads();  // the next item rewrites the shared buffers
  }
}

/// Variable-size batches: a matrix of order above the launch's nmax (a max_n that was too
/// small) gets LAPACK's "argument 2" (info = -2) and is left alone: every later kernel skips a
/// matrix whose info is set, and its update would not fit the workspace.
template <class V>
__global__ void mark_oversize_kernel(V A, index_t base, index_t count, int* info, int nmax) {
  const index_t k = base + index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count && A[k].rows() > nmax) info[k] = -2;
}

/// Pointer-array batches: the operands of panel j's GEMM, one pointer per matrix.
template <class T, bool UPPER>
__global__ void gemm_operands_kernel(T* const* ptrs, index_t base, int cnt, int ld, int j, T* S, index_t s_stride,
                                     const T** a_ops, T** s_ops) {
  const int i = int(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= cnt) return;
  // L(j, 0) of the lower factor is at (j, 0); of the upper one (stored transposed) at (0, j).
  a_ops[i] = ptrs[base + i] + (UPPER ? index_t(j) * ld : index_t(j));
  s_ops[i] = S + index_t(i) * s_stride;
}

}  // namespace tinybatch::cuda::blocked_kernels

namespace tinybatch::cuda::detail {

inline cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                   int k, const float* alpha, const float* const* a, int lda, const float* const* b,
                                   int ldb, const float* beta, float* const* c, int ldc, int count) {
  return cublasSgemmBatched(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, count);
}
inline cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                   int k, const double* alpha, const double* const* a, int lda,
                                   const double* const* b, int ldb, const double* beta, double* const* c, int ldc,
                                   int count) {
  return cublasDgemmBatched(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, count);
}

}  // namespace tinybatch::cuda::detail

namespace tinybatch::cuda::blocked {

/// Workspace of the GEMM-updated path: S for at most this many bytes of matrices at a time
/// (larger batches run in chunks of matrices).
inline constexpr std::size_t gemm_workspace_bytes = std::size_t(256) << 20;

/// The GEMM-updated path's workspace for count matrices: S, `per` elements a matrix, for a
/// chunk of them at a time (what fits gemm_workspace_bytes), then `extra` bytes a matrix of the
/// chunk and `fixed` bytes. Stream-ordered
/// (cudaMallocAsync), freed behind the kernels that use it.
template <class T>
struct gemm_workspace {
  index_t chunk;
  std::size_t s_bytes;
  void* p = nullptr;
  CUstream_st* stream;
  gemm_workspace(CUstream_st* s, index_t count, index_t per, std::size_t extra, std::size_t fixed = 0) : stream(s) {
    chunk = std::max<index_t>(1, index_t(gemm_workspace_bytes / std::max<std::size_t>(1, sizeof(T) * std::size_t(per) + extra)));
    chunk = std::min<index_t>({chunk, count, index_t(2147483647)});
    s_bytes = sizeof(T) * std::size_t(chunk * per);
    const std::size_t bytes = s_bytes + extra * std::size_t(chunk) + fixed;
    check(cudaMallocAsync(&p, bytes, s), "cudaMallocAsync(&workspace, " + std::to_string(bytes) + ", stream)");
  }
  gemm_workspace(const gemm_workspace&) = delete;
  gemm_workspace& operator=(const gemm_workspace&) = delete;
  ~gemm_workspace() { (void)cudaFreeAsync(p, stream); }
  T* S() const { return static_cast<T*>(p); }
  char* after_S() const { return static_cast<char*>(p) + s_bytes; }
};

/// The panel step of panel j for the chunk base .. base + cnt: the diagonal blocks and the
/// rows below (`below` in the tallest matrix), as one kernel or (split) two launches. S: the
/// update (null at j = 0).
/// One panel step's work lists (vwork_build_kernel) and the resident grids that walk them.
struct vwork_step {
  const blocked_kernels::vwork *diag, *trsm;
  const int *diag_total, *trsm_total;
  unsigned diag_grid, trsm_grid;
};

/// lists (variable-size batches): the split step's launches as resident grids over the
/// step's work lists; the one-kernel step ignores them.
template <class T, int NB, bool UPPER, class V>
void panel_step(CUstream_st* stream, const V& A, index_t base, int cnt, int* info, const T* S, int lds, index_t per,
                int j, int below, bool split, const vwork_step* lists = nullptr) {
  namespace bk = blocked_kernels;
  constexpr int TPB = bk::gemm_panel_threads;
  const index_t end = base + cnt;  // this chunk's matrices only
  if (split && lists) {
    bk::potrf_gemm_diag_kernel<T, NB, UPPER, true><<<lists->diag_grid, 32 * bk::gemm_diag_warps, 0, stream>>>(
        A, base, end, info, S, lds, per, j, lists->diag, lists->diag_total);
    check_launch("tinybatch::cuda potrf (GEMM-updated diagonal blocks, work list)");
    if (below > 0)
      bk::potrf_gemm_trsm_kernel<T, NB, UPPER, true><<<lists->trsm_grid, TPB, 0, stream>>>(
          A, base, end, info, S, lds, per, j, lists->trsm, lists->trsm_total);
  } else if (split) {
    bk::potrf_gemm_diag_kernel<T, NB, UPPER>
        <<<unsigned((cnt + bk::gemm_diag_warps - 1) / bk::gemm_diag_warps), 32 * bk::gemm_diag_warps, 0, stream>>>(
            A, base, end, info, S, lds, per, j);
    check_launch("tinybatch::cuda potrf (GEMM-updated diagonal blocks)");
    if (below > 0) {
      const dim3 grid(unsigned(cnt), unsigned((below + TPB - 1) / TPB));
      bk::potrf_gemm_trsm_kernel<T, NB, UPPER><<<grid, TPB, 0, stream>>>(A, base, end, info, S, lds, per, j);
    }
  } else {
    const dim3 grid(unsigned(cnt), unsigned(std::max(1, (below + TPB - 1) / TPB)));
    bk::potrf_gemm_panel_kernel<T, NB, UPPER><<<grid, TPB, 0, stream>>>(A, base, end, info, S, lds, per, j);
  }
  check_launch("tinybatch::cuda potrf (GEMM-updated panel)");
}

/// Cholesky of every matrix of a uniform view (strided_view or pointer_view) of order n by
/// panels of NB columns, updates by cuBLAS. info is already zeroed. Nothing waits for the host.
template <class T, int NB, bool UPPER, class V>
void potrf_gemm(CUstream_st* stream, const V& A, int* info, int n, int split_panel = -1) {
  namespace bk = blocked_kernels;
  // The panel step in two launches (1) or one kernel (0); -1: the tuning table's choice.
  const bool split = split_panel >= 0 ? split_panel > 0 : bk::cholesky_gemm_split(int(sizeof(T)), n);
  const index_t count = A.count();
  if (count <= 0 || n <= 0) return;
  const index_t per = index_t(n) * NB;  // S of one matrix: n x NB, leading dimension n
  constexpr bool pointers = requires(const V& v) { v.pointers(); };
  // Pointer arrays: then the GEMM's operand pointers, two a matrix.
  const gemm_workspace<T> ws(stream, count, per, pointers ? 2 * sizeof(T*) : 0);
  const index_t chunk = ws.chunk;
  T* const S = ws.S();
  const T** const a_ops = reinterpret_cast<const T**>(ws.after_S());
  T** const s_ops = reinterpret_cast<T**>(ws.after_S() + sizeof(T*) * std::size_t(chunk));
  cublasHandle_t h = n > NB ? detail::cublas_handle(stream) : nullptr;
  const T one = 1, zero = 0;
  // Lower: S = L(j:n, 0:j) L(j:j+w, 0:j)^T, A(j, 0) twice with N, T. Upper (U = L^T):
  // S = U(0:j, j:n)^T U(0:j, j:j+w), U(0, j) twice with T, N.
  const cublasOperation_t ta = UPPER ? CUBLAS_OP_T : CUBLAS_OP_N, tb = UPPER ? CUBLAS_OP_N : CUBLAS_OP_T;
  for (index_t base = 0; base < count; base += chunk) {
    const int cnt = int(std::min(chunk, count - base));
    for (int j = 0; j < n; j += NB) {
      const int w = std::min(NB, n - j);
      if (j > 0) {
        const std::string what = std::string(sizeof(T) == 4 ? "cublasSgemm" : "cublasDgemm") +
                                 (pointers ? "Batched" : "StridedBatched") + " (Cholesky update, m " +
                                 std::to_string(n - j) + ", n " + std::to_string(w) + ", k " + std::to_string(j) +
                                 ", count " + std::to_string(cnt) + ")";
        if constexpr (pointers) {
          bk::gemm_operands_kernel<T, UPPER><<<unsigned((cnt + 255) / 256), 256, 0, stream>>>(
              A.pointers(), base, cnt, A.ld(), j, S, per, a_ops, s_ops);
          check_launch("tinybatch::cuda potrf (GEMM-updated, operands)");
          check(detail::gemm_batched(h, ta, tb, n - j, w, j, &one, a_ops, A.ld(), a_ops, A.ld(), &zero, s_ops, n, cnt),
                what);
        } else {
          const T* a0 = A.data() + base * A.stride() + (UPPER ? index_t(j) * A.ld() : index_t(j));
          check(detail::gemm_strided(h, ta, tb, n - j, w, j, &one, a0, A.ld(), (long long)A.stride(), a0, A.ld(),
                                     (long long)A.stride(), &zero, S, n, (long long)per, cnt),
                what);
        }
      }
      panel_step<T, NB, UPPER>(stream, A, base, cnt, info, j > 0 ? S : nullptr, n, per, j, n - j - w, split);
    }
  }
}

/// Cholesky of every matrix of a variable-size view by panels of NB columns, as potrf_gemm,
/// each panel's update by potrf_vgemm_kernel (sizes read on the device); nmax bounds every
/// order. Nothing waits for the host; info is already zeroed. MMA: the update on the FP64
/// tensor cores (double; float runs the FMA tile). split_panel: the panel step in two launches
/// (1), one kernel (0), or the tuning table's choice (-1). work_lists (with the two-launch
/// step): 1 builds each step's live work on the device (vwork) and runs the update and the
/// panel step as resident grids over it; 0 sizes every launch for nmax, where a matrix whose
/// order is past the panel, or that failed, leaves its blocks at once (classic early exit,
/// all matrices from panel 0); -1: the tuning table's choice (cholesky_vbatch_lists). fused: 1
/// runs each step as the fused step (potrf_vfused_kernel, over work lists, no S; split_panel
/// and work_lists then do not apply), 0 does not, -1: the tuning table's choice
/// (cholesky_vbatch_fused).
template <class T, int NB, bool UPPER, bool MMA = false, class V>
void potrf_gemm_vbatch(CUstream_st* stream, const V& A, int* info, int nmax, int split_panel = -1,
                       int work_lists = -1, int fused = -1) {
  namespace bk = blocked_kernels;
  constexpr bool mma = MMA && sizeof(T) == 8;
  const bool fuse = fused >= 0 ? fused > 0 : bk::cholesky_vbatch_fused(int(sizeof(T)), nmax, mma);
  const bool split = !fuse && (split_panel >= 0 ? split_panel > 0 : bk::cholesky_gemm_split(int(sizeof(T)), nmax));
  const bool lists =
      fuse || (split && (work_lists >= 0 ? work_lists > 0 : bk::cholesky_vbatch_lists(int(sizeof(T)), nmax, mma)));
  const index_t count = A.count();
  if (count <= 0 || nmax <= 0) return;
  // S of one matrix: nmax x NB, leading dimension nmax (the fused step needs none).
  const index_t per = fuse ? 0 : index_t(nmax) * NB;
  const int steps = (nmax + NB - 1) / NB;
  const unsigned kinds = fuse ? bk::vwork_fused : bk::vwork_split;
  // Work lists: each step's capacity per matrix (its items at order nmax), and the counts.
  const std::size_t lists_n = std::size_t(bk::vwork_kinds) * std::size_t(steps);
  std::vector<index_t> start(lists ? lists_n : 0);
  index_t per_matrix = 0;
  for (int q = 0; lists && q < bk::vwork_kinds; ++q)
    for (int p = 0; p < steps; ++p) {
      start[std::size_t(q * steps + p)] = per_matrix;
      per_matrix += bk::vwork_items(kinds, q, nmax, p * NB, NB);
    }
  const std::size_t fixed = lists ? lists_n * sizeof(int) : 0;
  const gemm_workspace<T> ws(stream, count, per, sizeof(bk::vwork) * std::size_t(per_matrix), fixed);
  const index_t chunk = ws.chunk;
  T* const S = ws.S();
  bk::vwork* const items = reinterpret_cast<bk::vwork*>(ws.after_S());
  int* const totals = reinterpret_cast<int*>(items + per_matrix * chunk);
  unsigned grid_u = 0, grid_d = 0, grid_t = 0;
  if (lists) {
    // Each step's list holds its items for chunk matrices of order nmax (vwork_build_kernel
    // computes the same offsets).
    for (auto& x : start) x *= chunk;
    if (fuse) {
      grid_d = fast_kernels::resident_grid(bk::potrf_vfused_kernel<T, NB, UPPER, MMA, true, V>, bk::vgemm_threads, ~0u);
      grid_t = fast_kernels::resident_grid(bk::potrf_vfused_kernel<T, NB, UPPER, MMA, false, V>, bk::vgemm_threads, ~0u);
    } else {
      grid_u = fast_kernels::resident_grid(bk::potrf_vgemm_kernel<T, NB, UPPER, MMA, true, V>, bk::vgemm_threads, ~0u);
      grid_d = fast_kernels::resident_grid(bk::potrf_gemm_diag_kernel<T, NB, UPPER, true, V>,
                                           32 * bk::gemm_diag_warps, ~0u);
      grid_t = fast_kernels::resident_grid(bk::potrf_gemm_trsm_kernel<T, NB, UPPER, true, V>, bk::gemm_panel_threads,
                                           ~0u);
    }
  }
  for (index_t base = 0; base < count; base += chunk) {
    const int cnt = int(std::min(chunk, count - base));
    bk::mark_oversize_kernel<<<unsigned((cnt + 255) / 256), 256, 0, stream>>>(A, base, base + cnt, info, nmax);
    check_launch("tinybatch::cuda potrf (GEMM-updated, orders above max_n)");
    if (lists) {
      check(cudaMemsetAsync(totals, 0, sizeof(int) * lists_n, stream), "cudaMemsetAsync(work list counts)");
      bk::vwork_build_kernel<<<unsigned((cnt + 127) / 128), 128, 0, stream>>>(A, base, cnt, nmax, NB, steps, chunk,
                                                                             kinds, items, totals);
      check_launch("tinybatch::cuda potrf (GEMM-updated, work lists)");
    }
    for (int p = 0; p < steps; ++p) {
      const int j = p * NB, w = std::min(NB, nmax - j);
      if (fuse) {
        // The head tiles (diagonal block, POTF2, their rows below), then the other tiles.
        const std::size_t d = std::size_t(bk::vwork_diag * steps + p), r = std::size_t(bk::vwork_rest * steps + p);
        bk::potrf_vfused_kernel<T, NB, UPPER, MMA, true>
            <<<unsigned(std::min<index_t>(grid_d, cnt)), bk::vgemm_threads, 0, stream>>>(
                A, base, base + cnt, info, j, items + start[d], totals + d);
        check_launch("tinybatch::cuda potrf (fused variable-size step, head tiles)");
        if (const int rest = bk::vwork_items(bk::vwork_rest, nmax, j, NB); rest > 0) {
          bk::potrf_vfused_kernel<T, NB, UPPER, MMA, false>
              <<<unsigned(std::min<index_t>(grid_t, index_t(cnt) * rest)), bk::vgemm_threads, 0, stream>>>(
                  A, base, base + cnt, info, j, items + start[r], totals + r);
          check_launch("tinybatch::cuda potrf (fused variable-size step, tiles below)");
        }
        continue;
      }
      if (j > 0) {
        if (lists) {
          const unsigned g = unsigned(std::min<index_t>(grid_u, index_t(cnt) * bk::vwork_items(bk::vwork_update, nmax, j, NB)));
          bk::potrf_vgemm_kernel<T, NB, UPPER, MMA, true><<<g, bk::vgemm_threads, 0, stream>>>(
              A, base, base + cnt, info, S, nmax, per, j, items + start[std::size_t(p)],
              totals + bk::vwork_update * steps + p);
        } else {
          const dim3 grid(unsigned(cnt), unsigned((nmax - j + bk::vgemm_rows - 1) / bk::vgemm_rows));
          bk::potrf_vgemm_kernel<T, NB, UPPER, MMA>
              <<<grid, bk::vgemm_threads, 0, stream>>>(A, base, base + cnt, info, S, nmax, per, j);
        }
        check_launch("tinybatch::cuda potrf (GEMM-updated, variable-size update)");
      }
      vwork_step ls{};
      if (lists) {
        const std::size_t d = std::size_t(bk::vwork_diag * steps + p), t = std::size_t(bk::vwork_trsm * steps + p);
        ls = {items + start[d], items + start[t], totals + d, totals + t,
              unsigned(std::min<index_t>(grid_d, (cnt + bk::gemm_diag_warps - 1) / bk::gemm_diag_warps)),
              unsigned(std::min<index_t>(grid_t, index_t(cnt) * std::max(1, bk::vwork_items(bk::vwork_trsm, nmax, j, NB))))};
      }
      panel_step<T, NB, UPPER>(stream, A, base, cnt, info, j > 0 ? S : nullptr, nmax, per, j, nmax - j - w, split,
                               lists ? &ls : nullptr);
    }
  }
}

}  // namespace tinybatch::cuda::blocked
