// Batched Cholesky of orders up to 16 R (R = 3 .. 8) with the whole lower triangle in the
// registers of one thread block: each matrix is read once and written once, nothing in
// between goes to memory.
//
// Why: the fused left-looking kernel and the GEMM-updated path re-read the factored columns
// at every panel (and the GEMM path writes and reads its workspace), up to 1.65x the bound's
// traffic; a right-looking factorization that keeps the matrix on chip moves the lower
// triangle in and out once, half the bound's (whole-matrix) traffic, and what is left is
// arithmetic and one block barrier per column.
//
// Layout: 256 threads as a 16 x 16 grid; thread (tr, tc) owns the elements (tr + 16 a,
// tc + 16 b) of the lower tiles a >= b, R (R + 1) / 2 of them in registers (the lanes along a
// matrix's contiguous direction vary fastest, so each load and store is 16 consecutive
// elements). Column k, after the update of step k - 1, goes through shared memory (double
// buffered, written by the 16 threads that own it): every thread reads the pivot and the
// entries of its rows and columns, scales them by 1 / sqrt(pivot) on the fly and updates its
// trailing elements. The owners of column k + 1 update and publish it first, so the next
// step's barrier waits for the fewest operations.
#pragma once

#include <cuda_runtime.h>
#include <math.h>

#include "../../core/config.hpp"
#include "../error.hpp"

namespace tinybatch::cuda::onchip_kernels {

inline constexpr int threads = 256;  // 16 x 16

/// Blocks per SM the register budget is set for (R (R + 1) / 2 elements and 2 R multipliers
/// per thread); from nvcc -Xptxas -v for sm_90, double / float registers: R = 3 40 / 32,
/// 4 62 / 40, 5 80 / 48, 6 80 (a few spilled words) / 64, 7 and 8 128 / 80.
template <class T, int R>
inline constexpr int min_blocks =
    sizeof(T) == 8 ? (R <= 3 ? 6 : R <= 4 ? 4 : R <= 6 ? 3 : 2) : (R <= 3 ? 8 : R <= 4 ? 6 : R <= 5 ? 5 : R <= 6 ? 4 : 3);

/// Factor-as-lower element (r, c) of a matrix stored lower (r, c) or upper (c, r).
template <bool UPPER, class T>
__device__ __forceinline__ T* at(T* m, int ld, int r, int c) {
  return UPPER ? m + c + index_t(r) * ld : m + r + index_t(c) * ld;
}

template <class T, int R, bool UPPER, class V>
__global__ void __launch_bounds__(threads, min_blocks<T, R>) potrf_onchip_kernel(V A, index_t base, index_t count,
                                                                                  int* info) {
  constexpr int E = R * (R + 1) / 2;
  __shared__ T col[2][16 * R];
  const index_t k_mat = base + blockIdx.x;
  if (k_mat >= count) return;
  const auto a = A[k_mat];
  const int n = a.rows();
  if (n <= 0) return;
  if (n > 16 * R) {  // a variable-size batch whose max_n was too small: LAPACK's "argument 2"
    if (threadIdx.x == 0) info[k_mat] = -2;
    return;
  }
  // Consecutive threads along the stored matrix's contiguous direction: rows of a lower,
  // columns of an upper (L^T) one.
  const int t = threadIdx.x;
  const int tr = UPPER ? t / 16 : t % 16, tc = UPPER ? t % 16 : t / 16;
  T* const m = a.data;
  const int ld = a.ld;

  T acc[E];
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j <= i; ++j) {
      const int r = tr + 16 * i, c = tc + 16 * j;
      // Rows and columns past n are 0 (their updates stay 0); above the diagonal is never read.
      acc[i * (i + 1) / 2 + j] = r < n && c <= r ? *at<UPPER>(m, ld, r, c) : T(0);
    }
  if (tc == 0) {
#pragma unroll
    for (int i = 0; i < R; ++i) col[0][tr + 16 * i] = acc[i * (i + 1) / 2];
  }

  int failed = n;
  T pivot = T(0);
#pragma unroll
  for (int b = 0; b < R; ++b) {
    if (16 * b >= n || failed < n) break;  // uniform
    for (int q = 0; q < 16; ++q) {
      const int k = 16 * b + q;
      if (k >= n) break;
      __syncthreads();
      const T* const cur = col[k & 1];
      T* const nxt = col[(k + 1) & 1];
      const T d = cur[k];
      if (!(d > T(0))) {  // uniform: every thread read the same pivot
        failed = k, pivot = d;
        break;
      }
      const T inv = rsqrt(d);
      // This step's multipliers of this thread's rows and columns (tiles b .. R - 1).
      T sr[R], sc[R];
#pragma unroll
      for (int i = b; i < R; ++i) sr[i] = cur[tr + 16 * i] * inv, sc[i] = cur[tc + 16 * i] * inv;
      // The owners of column k finish it: L(k, k) = sqrt(d), L(i, k) = a(i, k) / sqrt(d).
      if (tc == q) {
#pragma unroll
        for (int i = b; i < R; ++i) {
          T& x = acc[i * (i + 1) / 2 + b];
          x = tr + 16 * i == k ? d * inv : sr[i];
        }
      }
      // The owners of column k + 1 update it and publish it first.
      const int kn = k + 1;
      const bool owner = tc == (kn & 15) && kn < n;
      const int bn = kn >> 4;
#pragma unroll
      for (int j = b; j < R; ++j) {
        if (owner && j == bn) {
#pragma unroll
          for (int i = j; i < R; ++i) {
            T& x = acc[i * (i + 1) / 2 + j];
            x -= sr[i] * sc[j];
            nxt[tr + 16 * i] = x;
          }
        }
      }
      // Everyone else's trailing elements (columns right of k; junk above the diagonal,
      // never stored or read).
#pragma unroll
      for (int j = b; j < R; ++j) {
        if ((j > b || tc > q) && !(owner && j == bn)) {
#pragma unroll
          for (int i = j; i < R; ++i)
            if (16 * i < n) acc[i * (i + 1) / 2 + j] -= sr[i] * sc[j];
        }
      }
    }
  }
  // Columns left of a failure, and the failing pivot as dpotf2 stores it (its updated value);
  // the rest keeps its input.
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j <= i; ++j) {
      const int r = tr + 16 * i, c = tc + 16 * j;
      if (r < n && c <= r && c < failed) *at<UPPER>(m, ld, r, c) = acc[i * (i + 1) / 2 + j];
    }
  if (failed < n && t == 0) {
    *at<UPPER>(m, ld, failed, failed) = pivot;
    info[k_mat] = failed + 1;
  }
}

}  // namespace tinybatch::cuda::onchip_kernels

namespace tinybatch::cuda::onchip {

/// Orders this path takes (the largest instantiated tile count times 16).
inline constexpr int max_order = 128;

template <class T, int R, bool UPPER, class V>
void launch(CUstream_st* stream, const V& A, int* info) {
  const index_t count = A.count();
  constexpr index_t max_grid = 2147483647;
  for (index_t base = 0; base < count; base += max_grid) {
    const unsigned grid = unsigned(count - base < max_grid ? count - base : max_grid);
    onchip_kernels::potrf_onchip_kernel<T, R, UPPER><<<grid, onchip_kernels::threads, 0, stream>>>(A, base, count,
                                                                                                   info);
    check_launch("tinybatch::cuda potrf (on-chip)");
  }
}

/// Cholesky of every matrix of A (uniform or variable-size view, orders up to nmax <=
/// max_order). info is already zeroed.
template <class T, bool UPPER, class V>
void potrf(CUstream_st* stream, const V& A, int* info, int nmax) {
  // The fewest tiles that hold the largest order: fewer registers, more blocks per SM.
  switch ((nmax + 15) / 16) {
    case 0: case 1: case 2: case 3: launch<T, 3, UPPER>(stream, A, info); break;
    case 4: launch<T, 4, UPPER>(stream, A, info); break;
    case 5: launch<T, 5, UPPER>(stream, A, info); break;
    case 6: launch<T, 6, UPPER>(stream, A, info); break;
    case 7: launch<T, 7, UPPER>(stream, A, info); break;
    default: launch<T, 8, UPPER>(stream, A, info); break;
  }
}

}  // namespace tinybatch::cuda::onchip
