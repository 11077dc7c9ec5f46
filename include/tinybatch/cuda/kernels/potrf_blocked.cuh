// Batched Cholesky of any order, fixed or variable size: the fused left-looking panel kernel
// (one thread block per matrix; per panel of IB columns the SYRK + GEMM update, POTF2 and
// TRSM in one kernel, the panel in registers), and the solve with its factor.
//
// Why left-looking: each panel is written once, when it is final, so a matrix that fails
// (info = j) leaves every column right of j exactly as it was, as LAPACK's dpotf2 leaves it,
// and the update reads the factored columns (L2-resident while the matrix is in flight)
// instead of writing the trailing matrix at every step as a right-looking update would.
// Each thread owns RPT rows of the panel: its IB accumulators per row stay in registers
// from the update through the triangular solve to the store, so the panel never goes
// through shared memory; the factored columns of the rows IB at a time pass through shared
// memory as the update's broadcast operand, and the IB x IB diagonal block is factored by
// one warp in shared memory.
//
// Launch modes (the paper's terms): loop-exclusive, one launch per panel sized for the
// rows that panel has left (the default), or loop-inclusive, one launch for the whole
// factorization. For variable-size batches, greedy scheduling starts every matrix at step
// 0, lazy scheduling starts each so that all finish at the last step; early termination is
// classic (blocks with nothing to do leave) or aggressive (idle warps of live blocks leave
// too, the barriers then counting only the live warps).
#pragma once

#include <cuda_runtime.h>
#include <math.h>

#include "../../core/config.hpp"
#include "../../core/enums.hpp"
#include "../../policy.hpp"
#include "../error.hpp"
#include "tuning.hpp"

#include <type_traits>

namespace tinybatch::cuda::blocked_kernels {

/// Columns of the factored part staged through shared memory per update step.
inline constexpr int update_chunk = 32;

/// Per-launch description of where each matrix stands.
struct step_plan {
  int step;         // this launch's step (loop-exclusive); -1: all steps (loop-inclusive)
  int steps_total;  // panels of the largest matrix
  bool lazy;        // lazy scheduling (variable sizes): matrix k starts at steps_total - its panels
  index_t base;     // first matrix of this launch (grids hold at most 2^31 - 1 blocks)
};

template <bool AGGRESSIVE>
__device__ __forceinline__ void block_barrier(int threads) {
  if constexpr (AGGRESSIVE) {
    // Named barrier 1 over the live warps only: the idle ones have left the kernel.
    asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory");
  } else {
    (void)threads;
    __syncthreads();
  }
}

/// Factor-as-lower element (r, c) of a matrix stored lower (r, c) or upper (c, r).
template <bool UPPER, class T>
__device__ __forceinline__ T* factor_at(T* m, int ld, int r, int c) {
  return UPPER ? m + c + index_t(r) * ld : m + r + index_t(c) * ld;
}

/// One panel (columns i .. i + IB) of one matrix of order n, by `nt` threads.
/// Returns the failing column (0-based, global) or -1.
template <class T, int IB, int RPT, bool UPPER, bool AGGRESSIVE>
__device__ int potrf_panel(T* m, int ld, int n, int i, int nt, T (*sB)[IB][update_chunk + 1],
                           T (*sD)[IB + 1], T* rcp, int* fail_col) {
  const int t = threadIdx.x;
  const int rows = n - i;
  const int w = rows < IB ? rows : IB;
  const int per_chunk = nt * RPT;
  int failed = w;  // first failed column of the panel, w if none
  for (int r0 = 0; r0 < rows; r0 += per_chunk) {
    T acc[RPT][IB];
    int rr[RPT];
#pragma unroll
    for (int q = 0; q < RPT; ++q) {
      rr[q] = r0 + q * nt + t;
      const bool live = rr[q] < rows;
#pragma unroll
      for (int c = 0; c < IB; ++c)
        acc[q][c] = live && c < w && (rr[q] >= IB || c <= rr[q]) ? *factor_at<UPPER>(m, ld, i + rr[q], i + c) : T(0);
    }
    // Update: panel -= L(i:n, 0:i) L(i:i+w, 0:i)^T, the factored columns `update_chunk` at a
    // time; L(i:i+w, chunk) goes through shared memory, double-buffered so that one barrier
    // per chunk suffices.
    int buf = 0;
    for (int k0 = 0; k0 < i; k0 += update_chunk, buf ^= 1) {
      const int kc = i - k0 < update_chunk ? i - k0 : update_chunk;
      for (int e = t; e < IB * update_chunk; e += nt) {
        // Consecutive threads on consecutive addresses: down a column of the lower factor,
        // along a column of the upper one.
        const int c = UPPER ? e / update_chunk : e % IB, kk = UPPER ? e % update_chunk : e / IB;
        sB[buf][c][kk] = c < w && kk < kc ? *factor_at<UPPER>(m, ld, i + c, k0 + kk) : T(0);
      }
      block_barrier<AGGRESSIVE>(nt);
#pragma unroll 4
      for (int kk = 0; kk < kc; ++kk) {
#pragma unroll
        for (int q = 0; q < RPT; ++q) {
          if (rr[q] < rows) {
            const T a = *factor_at<UPPER>(m, ld, i + rr[q], k0 + kk);
#pragma unroll
            for (int c = 0; c < IB; ++c) acc[q][c] -= a * sB[buf][c][kk];
          }
        }
      }
    }
    if (r0 == 0) {
      // The diagonal block: its rows' updated values to shared memory, then POTF2 there by
      // warp 0 (lane = row), in dpotf2's column order.
#pragma unroll
      for (int q = 0; q < RPT; ++q)
        if (rr[q] < w) {
#pragma unroll
          for (int c = 0; c < IB; ++c)
            if (c <= rr[q]) sD[rr[q]][c] = acc[q][c];
        }
      block_barrier<AGGRESSIVE>(nt);
      if (t < 32) {
        int f = w;
        for (int c = 0; c < w; ++c) {
          const T d = sD[c][c];
          if (!(d > T(0))) {
            f = c;  // sD[c][c] keeps the failed value, as dpotf2 stores it
            break;
          }
          const T l = sqrt(d);
          const T inv = T(1) / l;
          __syncwarp();
          if (t == c) sD[c][c] = l, rcp[c] = inv;
          if (t > c && t < w) sD[t][c] *= inv;
          __syncwarp();
          if (t > c && t < w)
            for (int c2 = c + 1; c2 <= t; ++c2) sD[t][c2] -= sD[t][c] * sD[c2][c];
          __syncwarp();
        }
        if (t == 0) *fail_col = f;
      }
      block_barrier<AGGRESSIVE>(nt);
      failed = *fail_col;
    } else {
      block_barrier<AGGRESSIVE>(nt);  // every chunk's update done before sB is restaged
    }
    // TRSM of the rows below the diagonal block, in registers: x_c = (a_c - sum x_c' L_cc') / L_cc.
#pragma unroll
    for (int q = 0; q < RPT; ++q) {
      const int r = rr[q];
      if (r >= rows) continue;
      T* const row0 = m;
      if (r < w) {
#pragma unroll
        for (int c = 0; c < IB; ++c) {
          if (c > r) break;
          if (c < failed) *factor_at<UPPER>(row0, ld, i + r, i + c) = sD[r][c];
          else if (c == failed && c == r) *factor_at<UPPER>(row0, ld, i + r, i + c) = sD[r][c];
        }
      } else {
#pragma unroll
        for (int c = 0; c < IB; ++c) {
          if (c >= failed) break;
          T x = acc[q][c];
#pragma unroll
          for (int c2 = 0; c2 < c; ++c2) x -= acc[q][c2] * sD[c][c2];
          acc[q][c] = x * rcp[c];
          *factor_at<UPPER>(row0, ld, i + r, i + c) = acc[q][c];
        }
      }
    }
    // On a failed column the later chunks still take the columns left of it (dpotf2 has
    // finished those for every row); column `failed` and those right of it stay as they were.
  }
  return failed < w ? i + failed : -1;
}

/// Threads a step needs for `rows` rows: RPT rows each, whole warps, at most MAXT.
template <int RPT, int MAXT>
__host__ __device__ constexpr int step_threads(int rows) {
  int t = (rows + RPT - 1) / RPT;
  t = (t + 31) / 32 * 32;
  return t < 32 ? 32 : (t > MAXT ? MAXT : t);
}

template <class T, int IB, int RPT, int MAXT, bool UPPER, bool AGGRESSIVE, class V>
__global__ void __launch_bounds__(MAXT) potrf_step_kernel(V A, index_t count, int* info, step_plan plan) {
  __shared__ T sB[2][IB][update_chunk + 1];
  __shared__ T sD[IB][IB + 1];
  __shared__ T rcp[IB];
  __shared__ int fail_col;
  const index_t k = plan.base + blockIdx.x;
  if (k >= count) return;
  const auto a = A[k];
  const int n = a.rows();
  const int panels = (n + IB - 1) / IB;
  int j0 = 0, j1 = panels;
  if (plan.step >= 0) {
    const int j = plan.lazy ? plan.step - (plan.steps_total - panels) : plan.step;
    if (j < 0 || j >= panels) return;  // early termination: nothing to do at this step
    j0 = j, j1 = j + 1;
  }
  if (info[k] != 0) return;  // failed at an earlier step
  for (int j = j0; j < j1; ++j) {
    const int i = j * IB;
    int nt = blockDim.x;
    if constexpr (AGGRESSIVE) {
      // Idle warps leave; later steps need fewer rows still, so they are not missed.
      nt = step_threads<RPT, MAXT>(n - i);
      if (nt > int(blockDim.x)) nt = blockDim.x;
      if (int(threadIdx.x) >= nt) return;
    }
    const int f = potrf_panel<T, IB, RPT, UPPER, AGGRESSIVE>(a.data, a.ld, n, i, nt, sB, sD, rcp, &fail_col);
    if (f >= 0) {
      if (threadIdx.x == 0) info[k] = f + 1;
      return;
    }
    // The next panel's update reads this one's stores: visible to the block after a barrier.
    block_barrier<AGGRESSIVE>(nt);
  }
}

/// A X = B with the Cholesky factor (lower: L L^T, upper: U^T U), one block per (matrix,
/// right-hand side), one barrier per row and sweep. The column of B is updated in place: it
/// stays in L1, and a barrier makes each step's stores visible to the whole block.
template <class T, bool UPPER, class VA, class VB>
__global__ void __launch_bounds__(256) potrs_kernel(VA A, VB B, index_t count, const int* info, index_t base) {
  const index_t k = base + blockIdx.x;
  if (k >= count) return;
  if (info && info[k] != 0) return;
  const auto a = A[k];
  const auto b = B[k];
  const int n = a.rows(), nrhs = b.cols();
  const int t = threadIdx.x, nt = blockDim.x;
  for (int c = blockIdx.y; c < nrhs; c += gridDim.y) {
    T* const x = &b(0, c);
    // L y = b, by columns of L: y_j final, then subtracted from the rows below.
    for (int j = 0; j < n; ++j) {
      const T yj = x[j] / *factor_at<UPPER>(a.data, a.ld, j, j);
      for (int r = j + 1 + t; r < n; r += nt) x[r] -= *factor_at<UPPER>(a.data, a.ld, r, j) * yj;
      __syncthreads();
      if (t == 0) x[j] = yj;
    }
    __syncthreads();
    // L^T x = y, by rows of L: x_j final, then subtracted from the rows above.
    for (int j = n - 1; j >= 0; --j) {
      const T xj = x[j] / *factor_at<UPPER>(a.data, a.ld, j, j);
      for (int r = t; r < j; r += nt) x[r] -= *factor_at<UPPER>(a.data, a.ld, j, r) * xj;
      __syncthreads();
      if (t == 0) x[j] = xj;
    }
    __syncthreads();
  }
}

}  // namespace tinybatch::cuda::blocked_kernels

// The GEMM-updated path for larger uniform batches (uses factor_at above), and the on-chip
// kernel for orders up to 128.
#include "potrf_gemm.cuh"
#include "potrf_onchip.cuh"

namespace tinybatch::cuda::blocked {

namespace bk = blocked_kernels;

/// Variable-size batches: early termination and scheduling (the policy's kernels knob,
/// kernels::blocked in policy.hpp).
struct cholesky_options {
  int shape = -1;          ///< index into bk::cholesky_shapes; -1: the tuning table's
  bool inclusive = false;  ///< one loop-inclusive launch instead of one launch per panel
  kernels::early_exit early = kernels::early_exit::aggressive;
  kernels::start sched = kernels::start::lazy;
  /// > 0 takes the GEMM-updated path (potrf_gemm.cuh, panels of 32 columns; variable-size
  /// batches with the update by its own kernel); 0: the fused kernel; -1: the tuning table's
  /// choice (cholesky_gemm_nb, cholesky_vbatch_gemm), unless shape or inclusive asks for the
  /// fused kernel.
  int gemm_nb = -1;
  /// The policy named its kernels (kernels::blocked): early, sched and inclusive are the
  /// caller's; otherwise variable-size batches take the tuning table's inclusive choice.
  bool named = false;
  /// Orders up to onchip::max_order: 1 takes the on-chip kernel (potrf_onchip.cuh, the
  /// matrix in one block's registers), 0 does not, -1: the tuning table's choice unless
  /// another field above asks for a kernel.
  int onchip = -1;
  /// Variable-size batches on the GEMM-updated path, double: 1 runs the update on the FP64
  /// tensor cores (DMMA), 0 with FMA, -1: the tuning table's choice (cholesky_vbatch_mma).
  int vgemm_mma = -1;
  /// Variable-size batches on the GEMM-updated path: 1 walks each step's live work through
  /// device-built lists (potrf_gemm_vbatch's work_lists), 0 sizes launches for the largest
  /// order, -1: the tuning table's choice (cholesky_vbatch_lists).
  int vbatch_lists = -1;
  /// Variable-size batches on the GEMM-updated path: 1 runs each panel step fused (the update,
  /// the diagonal block and the rows below in two launches, no workspace), 0 split, -1: the
  /// tuning table's choice (cholesky_vbatch_fused).
  int vbatch_fused = -1;
};

template <class K>
constexpr cholesky_options cholesky_options_of() {
  if constexpr (requires { K::early; K::when; K::inclusive; })
    return {-1, K::inclusive, K::early, K::when, -1, true, 0};
  else
    return {};
}

template <class V>
inline constexpr bool supported_view =
    std::is_same_v<typename V::value_type, float> || std::is_same_v<typename V::value_type, double>;

inline constexpr index_t max_grid = 2147483647;

template <class T, bk::cholesky_shape S, bool UPPER, bool AGG, class V>
void potrf_launch(CUstream_st* stream, const V& A, int* info, int nmax, bool inclusive, bool lazy) {
  constexpr int IB = S.ib;
  const index_t count = A.count();
  const int steps = (nmax + IB - 1) / IB;
  const auto kernel = bk::potrf_step_kernel<T, IB, S.rpt, S.maxt, UPPER, AGG, V>;
  for (index_t base = 0; base < count; base += max_grid) {
    const unsigned grid = unsigned(count - base < max_grid ? count - base : max_grid);
    if (inclusive) {
      kernel<<<grid, bk::step_threads<S.rpt, S.maxt>(nmax), 0, stream>>>(A, count, info, {-1, steps, false, base});
      check_launch("tinybatch::cuda potrf (blocked, loop-inclusive)");
      continue;
    }
    for (int s = 0; s < steps; ++s) {
      // Rows the tallest live panel has at this step.
      const int rows = lazy ? (steps - s) * IB : nmax - s * IB;
      const int threads = bk::step_threads<S.rpt, S.maxt>(rows < nmax ? rows : nmax);
      kernel<<<grid, threads, 0, stream>>>(A, count, info, {s, steps, lazy, base});
      check_launch("tinybatch::cuda potrf (blocked)");
    }
  }
}

template <class T, int SI, class V>
void potrf_shape(CUstream_st* stream, uplo u, const V& A, int* info, int nmax, const cholesky_options& o) {
  constexpr bk::cholesky_shape S = bk::cholesky_shapes[SI];
  const bool lazy = !V::uniform && o.sched == kernels::start::lazy;
  if constexpr (!V::uniform) {
    if (o.early == kernels::early_exit::aggressive) {
      u == uplo::upper ? potrf_launch<T, S, true, true>(stream, A, info, nmax, o.inclusive, lazy)
                       : potrf_launch<T, S, false, true>(stream, A, info, nmax, o.inclusive, lazy);
      return;
    }
  }
  u == uplo::upper ? potrf_launch<T, S, true, false>(stream, A, info, nmax, o.inclusive, lazy)
                   : potrf_launch<T, S, false, false>(stream, A, info, nmax, o.inclusive, lazy);
}

/// Cholesky of every matrix of A (strided, pointer-array or variable-size view, any order);
/// nmax = the largest order. info is zeroed here, then set on the device by the failing
/// panel; nothing waits for the host.
template <class V>
void potrf(CUstream_st* stream, uplo u, const V& A, int* info, int nmax, cholesky_options o = {}) {
  using T = typename V::value_type;
  if (A.count() <= 0) return;
  check(cudaMemsetAsync(info, 0, sizeof(int) * std::size_t(A.count()), stream), "cudaMemsetAsync(info, 0)");
  if (nmax <= 0) return;
  // (Compile-time orders up to 32 take the register kernels before they get here: the GEMM
  // path is not instantiated for them.)
  if (nmax <= onchip::max_order &&
      (o.onchip > 0 || (o.onchip < 0 && o.shape < 0 && !o.inclusive && o.gemm_nb < 0 && !o.named &&
                        bk::cholesky_onchip(int(sizeof(T)), nmax, V::uniform)))) {
    u == uplo::upper ? onchip::potrf<T, true>(stream, A, info, nmax) : onchip::potrf<T, false>(stream, A, info, nmax);
    return;
  }
  if constexpr (V::uniform && (V::static_rows == dynamic || V::static_rows > 32)) {
    const int nb = o.gemm_nb >= 0                    ? o.gemm_nb
                   : o.shape < 0 && !o.inclusive ? bk::cholesky_gemm_nb(int(sizeof(T)), nmax)
                                                  : 0;
    // One width is instantiated here (each costs every program that calls potrf on a
    // run-time-size view about 10 s of nvcc time); potrf_gemm<T, 16, UPPER> is there to
    // call directly (the tuning benchmark and the tests do).
    if (nb > 0) {
      u == uplo::upper ? potrf_gemm<T, 32, true>(stream, A, info, nmax) : potrf_gemm<T, 32, false>(stream, A, info, nmax);
      return;
    }
    if (o.shape < 0 && !o.inclusive) o.inclusive = bk::cholesky_inclusive(int(sizeof(T)), nmax);
  } else if constexpr (!V::uniform) {
    // The GEMM-updated path with the update by potrf_vgemm_kernel (sizes on the device).
    if (o.gemm_nb > 0 || (o.gemm_nb < 0 && o.shape < 0 && !o.inclusive && !o.named &&
                          bk::cholesky_vbatch_gemm(int(sizeof(T)), nmax))) {
      if constexpr (std::is_same_v<T, double>)  // DMMA: double only
        if (o.vgemm_mma > 0 || (o.vgemm_mma < 0 && bk::cholesky_vbatch_mma(int(sizeof(T)), nmax))) {
          u == uplo::upper ? potrf_gemm_vbatch<T, 32, true, true>(stream, A, info, nmax, -1, o.vbatch_lists, o.vbatch_fused)
                           : potrf_gemm_vbatch<T, 32, false, true>(stream, A, info, nmax, -1, o.vbatch_lists, o.vbatch_fused);
          return;
        }
      u == uplo::upper ? potrf_gemm_vbatch<T, 32, true>(stream, A, info, nmax, -1, o.vbatch_lists, o.vbatch_fused)
                       : potrf_gemm_vbatch<T, 32, false>(stream, A, info, nmax, -1, o.vbatch_lists, o.vbatch_fused);
      return;
    }
    if (!o.named && o.shape < 0) o.inclusive = bk::cholesky_vbatch_inclusive(int(sizeof(T)), nmax);
  }
  const int si = o.shape >= 0 ? o.shape : bk::cholesky_shape_for(int(sizeof(T)), nmax);
  switch (si) {
    case 0: potrf_shape<T, 0>(stream, u, A, info, nmax, o); break;
    case 1: potrf_shape<T, 1>(stream, u, A, info, nmax, o); break;
    default: potrf_shape<T, 2>(stream, u, A, info, nmax, o); break;
  }
}

/// potrs with potrf's factor: any order, any number of right-hand sides (nrhs_max bounds the
/// second grid dimension; a variable batch may pass 1: each block loops over its columns).
template <class VA, class VB>
void potrs(CUstream_st* stream, uplo u, const VA& A, const VB& B, const int* info, int nrhs_max) {
  using T = typename VB::value_type;
  const index_t count = B.count();
  const unsigned gy = unsigned(nrhs_max < 1 ? 1 : nrhs_max > 65535 ? 65535 : nrhs_max);
  for (index_t base = 0; base < count; base += max_grid) {
    const unsigned grid = unsigned(count - base < max_grid ? count - base : max_grid);
    if (u == uplo::upper)
      bk::potrs_kernel<T, true><<<dim3(grid, gy), 256, 0, stream>>>(A, B, count, info, base);
    else
      bk::potrs_kernel<T, false><<<dim3(grid, gy), 256, 0, stream>>>(A, B, count, info, base);
    check_launch("tinybatch::cuda potrs (blocked)");
  }
}

}  // namespace tinybatch::cuda::blocked
