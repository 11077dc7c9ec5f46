// Launch parameters of the fast CUDA kernels (kernels/*.cuh), one entry per (operation,
// type, n) for sm_90 (H100). Every kernel runs one thread per matrix row in segments of
// seg_width(n) lanes (the next power of two >= n), several matrices per thread block:
// matrices per block = threads / seg_width(n), further limited by the 48 KiB of static shared
// memory each kernel stages its matrices through.
//
// `threads` is the thread-block size, `min_blocks` the register cap (below). The values are
// not swept: thread counts are first guesses, register caps come from one ncu profile. A
// tuning sweep in bench/ that rewrites this table is still to do (issue #4).
#pragma once

namespace tinybatch::cuda::fast_kernels {

enum class fast_op { getrf, inverse, potrf, gemm, getrs, potrs };

struct launch_shape {
  int threads;     ///< thread-block size (a multiple of 32)
  int min_blocks;  ///< __launch_bounds__ minimum blocks per SM (0: none): caps registers at
                   ///< 64K / (threads * min_blocks), the occupancy limiter ncu found (issue #4)
  bool staged = true;  ///< inverse: matrices through a shared-memory tile (else row by row)
};

/// Threads per block for `op` on n x n matrices of `elem_bytes`-byte elements on sm_90.
constexpr launch_shape tuned(fast_op op, int elem_bytes, int n) {
  (void)elem_bytes;
  // ncu (H100, double, e9a8e4d, no min_blocks yet): every kernel profiled was limited by
  // registers, with < 1 eligible warp per scheduler and DRAM 9-50% busy: getrf n=16 116
  // registers (25% occupancy), n=32 180 (12.5%); inverse n=8 128 (25%), n=32 247 (12.5%);
  // gemm n=32 158 (18.75%, also 48 KiB of shared memory). min_blocks caps registers at
  // 65536 / (threads * min_blocks); ptxas -v (sm_90) reports no spills at these caps
  // except inverse double n=8 (36 bytes), 16 (20), 24 (40), 32 (228) and gemm double n=8 (16).
  //
  // Measured with these values (bench/results/gpu-h100-2a90dd3.csv against e9a8e4d, memory
  // roofline fractions): the caps helped at n = 8..32 (getrf double n=16 .48 -> .62, n=32
  // .27 -> .43; gemm double n=8 .76 -> .85, n=16 .79 -> .87; potrf double n=8 .69 -> .82) and
  // hurt at n <= 5, where the kernels only stage data (gemm float n=3 .77 -> .56, potrf float
  // n=2 .84 -> .65, getrf double n=2 .88 -> .79): the n <= 5 caps are to go (not yet run).
  switch (op) {
    case fast_op::gemm:
      if (n <= 5) return {256, 0};
      if (n <= 8) return {256, 3};
      if (n <= 16) return {128, 6};
      return {128, 0};
    case fast_op::inverse:  // provisional: to be replaced by the sweep's choice
      if (n <= 8) return {256, 0, false};
      if (n <= 16) return {128, 0, false};
      return {128, 4, false};
    case fast_op::getrf:
      if (n <= 8) return {256, 0};  // n = 6..8: 126 registers; capped at 80 it spills 124 bytes
      if (n <= 16) return {128, 6};
      return {128, 4};
    case fast_op::potrf:
      if (n <= 5) return {256, 0};
      if (n <= 8) return {256, 3};
      if (n <= 16) return {128, 6};
      return {128, 0};  // 110 registers; capped at 96 it spills 120 bytes
    case fast_op::getrs:
    case fast_op::potrs:
    default:
      return {n <= 8 ? 256 : 128, 0};
  }
}

/// Smallest n at which the CUDA backend runs the fast getrs / potrs kernels (solve.cuh);
/// below it the generic one-thread-per-matrix kernel measured faster on the H100
/// (bench/results/gpu-h100-83ab075.csv, 1 right-hand side, roofline fractions fast | generic:
/// getrs float n=2 .68|.84, 3 .46|.67, 4 .48|.52, 5 .35|.49, 8 .41|.29; getrs double n=3
/// .51|.65, 4 .64|.53; potrs float n=3 .51|.59, 4 .66|.57, 5 .41|.56, 8 .46|.27; potrs double
/// fast at every n). n = 6, 7 were not measured: the fast kernels take them.
constexpr int solve_fast_min_n(fast_op op, int elem_bytes) {
  if (op == fast_op::getrs) return elem_bytes == 4 ? 6 : 4;
  return elem_bytes == 4 ? 6 : 1;
}

/// Smallest m, n and k at which the CUDA backend gives gemm on strided batches to cuBLAS
/// (cublas<t>gemmStridedBatched) instead of the fast kernel (gemm.cuh). Provisional (from
/// bench/results/gpu-h100-3c73957.csv, square n, roofline fractions fast | cuBLAS: double
/// n=16 .88|.57, 20 .69|.72, 24 .71|.90; float n=20 .59|.53, 24 .59|.66).
constexpr int gemm_vendor_min_n(int elem_bytes) { return elem_bytes == 4 ? 24 : 20; }

}  // namespace tinybatch::cuda::fast_kernels
