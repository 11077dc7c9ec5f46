// Fast potrf for n <= 32: one thread per row of the factor (L, or U^T for the
// upper triangle, transposed on its way through shared memory), the row in registers,
// right-looking: column j of the factor broadcast through shared memory at step j and
// subtracted from the rows below at once, several matrices per thread block. Only the requested triangle is read or written. Column j is computed as LAPACK's
// dpotf2 (reference::potrf) computes it, in the same order, so with -fmad=false the results
// are bit-identical to it; info = the first non-positive or NaN pivot, where it stops.
#pragma once

#include <math.h>

#include "common.cuh"

namespace tinybatch::cuda::fast_kernels {

/// Each thread loads its row of the factor (row r of A's lower triangle, or column r of its
/// upper one) and stores it back directly, with no tile and no block-wide barrier. (A
/// variant staged through a block-wide shared-memory tile lost at every n in two sweeps on
/// the H100, left- and right-looking: bench/results/h100/gpu-h100-1b98ad3-dirty-sweep.csv,
/// gpu-h100-b415ef3-dirty-sweep-potrf.csv; it was removed.)
///
/// OPAQUE (launch_shape::opaque_ld): the late re-reads and the final stores form their
/// addresses from opaque(A(k)) and opaque(A.ld) (common.cuh), so that nvcc recomputes them
/// instead of keeping the loads' n 64-bit column offsets live across the n steps.
template <class T, int N, int THREADS, int MINB, bool UPPER, bool OPAQUE, class At>
__global__ void __launch_bounds__(THREADS, min_blocks_of(MINB)) potrf_kernel(At A, index_t count, int* info) {
  constexpr int W = seg_width(N), NB = THREADS / W;
  constexpr int BS = vec_stride<T>(N);
  __shared__ __align__(16) T bc[2][NB * BS];
  const int seg = threadIdx.x / W, r = threadIdx.x % W;
  const bool lane_ok = r < N;
  // element c of row r of the factor in A: (r, c) of the lower triangle, (c, r) of the upper
  const auto at = [&](T* m, int c, int ld) { return UPPER ? m + c + index_t(r) * ld : m + r + index_t(c) * ld; };
  for (index_t k0 = index_t(blockIdx.x) * NB; k0 < count; k0 += index_t(gridDim.x) * NB) {
    const index_t k = k0 + seg;
    const bool live = k < count;
    T a[N];
    {
      T* m = lane_ok && live ? A(k) : nullptr;
#pragma unroll
      for (int c = 0; c < N; ++c) a[c] = m && c <= r ? *at(m, c, A.ld) : T(0);
    }
    // Right-looking: at step j the segment takes the diagonal d from thread j, every row
    // below scales its element of column j, puts it in the broadcast buffer, and subtracts
    // its multiple of column j from the rest of its row. Element (r, c) sees the same
    // operations in the same order as in dpotf2's dot products (k = 0, 1, ..., c - 1), but
    // the n steps' dependent chain no longer holds a dot product of up to n - 1 terms.
    int inf = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      T* buf = bc[j & 1] + seg * BS;
      const T d = __shfl_sync(0xffffffffu, a[j], j, W);
      if (inf == 0) {  // uniform over the segment
        if (!(d > T(0))) {
          if (r == j) a[j] = d;
          inf = j + 1;
        } else {
          const T l = sqrt(d);
          if (r == j) {
            a[j] = l;
          } else if (r > j && lane_ok) {
            const T rcp = T(1) / l;
            a[j] = a[j] * rcp;
            buf[r] = a[j];
          }
        }
      }
      __syncwarp();
      // Elements c > r (above the diagonal) take junk here: never read, never stored.
      if (j + 1 < N && inf == 0 && r > j && lane_ok) sub_row(a, a[j], buf, j + 1);
    }
    // dpotf2 stops at the first failed pivot j (info = j + 1): column j below the diagonal
    // and everything right of it keep their input values. The right-looking steps before it
    // updated them, so rows below j read theirs again (the input is still in place).
    if (inf != 0 && lane_ok && live && r >= inf) {
      T* const m = opaque_if<OPAQUE>(A(k));
      const int ld = opaque_if<OPAQUE>(A.ld);
#pragma unroll
      for (int c = 0; c < N; ++c) {
        if (c >= inf - 1 && c <= r) a[c] = *at(m, c, ld);
      }
    }
    if (lane_ok && live) {
      T* const m = opaque_if<OPAQUE>(A(k));
      const int ld = opaque_if<OPAQUE>(A.ld);
#pragma unroll
      for (int c = 0; c < N; ++c)
        if (c <= r) *at(m, c, ld) = a[c];
    }
    if (r == 0 && live) info[k] = inf;
    __syncwarp();  // every lane done with the broadcast rows before the next matrix
  }
}

}  // namespace tinybatch::cuda::fast_kernels
