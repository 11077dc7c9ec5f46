// Launch parameters of the fast CUDA kernels (kernels/*.cuh), one entry per (operation,
// type, n) for sm_90 (H100). Every kernel runs one thread per matrix row in segments of
// seg_width(n) lanes (the next power of two >= n), several matrices per thread block:
// matrices per block = threads / seg_width(n), further limited by the 48 KiB of static shared
// memory each kernel stages its matrices through.
//
// `threads` is the thread-block size. The values are first guesses, not yet swept: the one
// H100 run so far (bench/results/gpu-h100-*.csv) measured them as they are. A tuning sweep
// in bench/ that rewrites this table is still to do (issue #4).
#pragma once

namespace tinybatch::cuda::fast_kernels {

enum class fast_op { getrf, inverse, potrf, gemm, getrs, potrs };

struct launch_shape {
  int threads;  ///< thread-block size (a multiple of 32)
};

/// Threads per block for `op` on n x n matrices of `elem_bytes`-byte elements on sm_90.
constexpr launch_shape tuned(fast_op op, int elem_bytes, int n) {
  (void)elem_bytes;
  switch (op) {
    case fast_op::gemm:
      return {n <= 8 ? 256 : 128};
    case fast_op::inverse:
      return {n <= 16 ? 128 : 64};
    case fast_op::getrf:
    case fast_op::potrf:
    case fast_op::getrs:
    case fast_op::potrs:
    default:
      return {n <= 8 ? 256 : 128};
  }
}

}  // namespace tinybatch::cuda::fast_kernels
