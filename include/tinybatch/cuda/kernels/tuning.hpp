// Launch parameters of the fast CUDA kernels (kernels/*.cuh), one entry per (operation,
// type, n) for sm_90 (H100). Every kernel runs one thread per matrix row in segments of
// seg_width(n) lanes (the next power of two >= n), several matrices per thread block:
// matrices per block = threads / seg_width(n), further limited by the 48 KiB of static shared
// memory each kernel stages its matrices through.
//
// `threads` is the thread-block size, `min_blocks` the register cap (below). The shapes of
// getrf, potrf and the inverse and the gemm crossover to cuBLAS come from the sweep of
// bench/gpu/sweep_part.cu (bench/gpu/run-all.sh with TB_SWEEP=1; TB_SWEEP_OPS narrows it);
// for gemm and the solves thread counts are first guesses and register caps come from one
// ncu profile (not swept yet, issue #4).
#pragma once

namespace tinybatch::cuda::fast_kernels {

enum class fast_op { getrf, inverse, potrf, gemm, getrs, potrs };

struct launch_shape {
  int threads;     ///< thread-block size (a multiple of 32)
  int min_blocks;  ///< __launch_bounds__ minimum blocks per SM (0: none): caps registers at
                   ///< 64K / (threads * min_blocks), the occupancy limiter ncu found (issue #4)
  bool staged = true;  ///< potrf: matrices through a shared-memory tile (else each thread
                       ///< loads and stores its row directly); getrf and the inverse always
                       ///< run row by row
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
  // n=2 .84 -> .65, getrf double n=2 .88 -> .79). getrf and potrf, row by row since f5a7915,
  // were swept again (below: capped at every size but potrf n = 3 float, 6 - 8 double);
  // gemm's n <= 5 caps were not.
  switch (op) {
    case fast_op::gemm:
      if (n <= 5) return {256, 0};
      if (n <= 8) return {256, 3};
      if (n <= 16) return {128, 6};
      return {128, 0};
    case fast_op::inverse:
      // Gauss-Jordan kernel (inverse.cuh), row by row (a tile lost at every n swept).
      // Sweep bench/results/gpu-h100-0b57285-sweep.csv (bench/gpu/sweep_part.cu: 11 launch
      // shapes per type and n), roofline fraction of the shape chosen here, and of the
      // [A | I] kernel it replaced at its last tuned shape (before_augmented):
      //   double n=2 .907 (.404), 3 .756 (.291), 4 .942 (.337), 5 .606 (.325), 8 .909 (.393),
      //          12 .591 (.253), 16 .699 (.288), 20 .355 (.152), 24 .382 (.162), 32 .377 (.124);
      //   float  n=2 .712 (.300), 3 .521 (.217), 4 .774 (.262), 5 .393 (.235), 8 .682 (.301),
      //          12 .438 (.206), 16 .562 (.237), 20 .299 (.120), 24 .334 (.128), 32 .374 (.136).
      // The best shape swept was at most .01 above these (double n=2: 64 threads .916; float
      // n=2, 3: no cap .718, .530). Sizes in between take their neighbours' shapes (not swept).
      // Since then the pivot search of n >= 17 reduces whole warps by __reduce_max_sync
      // (pivot_method::fit, getrf.cuh): at these shapes, sweep bench/results/gpu-h100-1b98ad3-dirty-sweep-variants.csv,
      // butterfly -> fit: double n=20 .344 -> .448, 24 .370 -> .436, 32 .376 -> .469; float
      // n=20 .297 -> .390, 24 .332 -> .419, 32 .371 -> .476 (the same shapes stayed best).
      if (elem_bytes == 8) {
        if (n <= 5) return {128, 5, false};   // <= 102 registers
        if (n <= 16) return {256, 4, false};  // <= 64
        if (n <= 24) return {256, 3, false};  // <= 85
        return {128, 4, false};               // <= 128
      }
      if (n <= 16) return {128, 5, false};
      if (n <= 24) return {256, 4, false};
      return {256, 3, false};
    case fast_op::getrf:
      // Row by row (no tile), pivot search pivot_method::fit (getrf.cuh). Sweep
      // bench/results/gpu-h100-1b98ad3-dirty-sweep.csv (bench/gpu/sweep_part.cu, 0.5 GiB per operand), roofline
      // fraction of the shape chosen here | cublas<t>getrfBatched in the same run | the staged
      // butterfly kernel of 045adb9 at its shape (bench/results/gpu-h100-1b98ad3-dirty-sweep-variants.csv):
      //   double n=2 .980|.922|.795, 3 .918|.514|.561, 4 1.01|.617|.544, 5 .831|.374|.515,
      //          8 1.01|.486|.579, 12 .814|.304|.471, 16 .958|.349|.618, 20 .723|.265|.314,
      //          24 .760|.291|.334, 32 .762|.333|.424;
      //   float  n=2 .961|.851|.660, 3 .706|.346|.438, 4 .937|.477|.617, 5 .517|.250|.308,
      //          8 .831|.386|.393, 12 .548|.239|.319, 16 .727|.285|.418, 20 .582|.180|.260,
      //          24 .651|.200|.266, 32 .770|.234|.314.
      // The best shape swept was at most .01 above these. 64 registers (256 threads, 4
      // blocks) spills at double n=32 (.20 of the roofline).
      if (elem_bytes == 8) {
        if (n <= 8) return {128, 6, false};   // <= 85 registers
        if (n <= 24) return {256, 4, false};  // <= 64
        return {128, 5, false};               // <= 102
      }
      if (n <= 8) return {128, 5, false};    // <= 102
      if (n <= 16) return {128, 6, false};   // <= 85
      return {256, 4, false};                // <= 64
    case fast_op::potrf:
      // Row by row (each thread loads and stores its row of the factor directly). Sweep
      // bench/results/gpu-h100-1b98ad3-dirty-sweep.csv (lower triangle; the fraction counts the whole n x n matrix read
      // and written, as bench_gpu does, so it exceeds 1 where only the triangle's sectors
      // move), shape chosen here | the staged kernel at the shape of 3c73957:
      //   double n=2 1.02|.897, 3 .979|.704, 4 1.02|.908, 5 .993|.611, 8 1.11|.834,
      //          12 1.13|.612, 16 1.14|.798, 20 .777|.494, 24 .763|.468, 32 .570|.541;
      //   float  n=2 .946|.747, 3 .842|.545, 4 1.01|.641, 5 .773|.476, 8 .972|.499,
      //          12 .756|.370, 16 .916|.538, 20 .550|.358, 24 .632|.377, 32 .508|.446.
      // The best shape swept was at most .013 above these. Upper triangles (a thread's row
      // of U^T is a column of A: strided loads) were not timed.
      if (elem_bytes == 8) {
        if (n <= 5) return {128, 6, false};
        if (n <= 8) return {128, 0, false};
        if (n <= 12) return {128, 6, false};
        if (n <= 16) return {128, 4, false};
        if (n <= 24) return {128, 6, false};
        return {128, 4, false};
      }
      if (n <= 2) return {128, 6, false};
      if (n <= 3) return {128, 0, false};
      if (n <= 20) return {128, 6, false};
      if (n <= 24) return {256, 4, false};
      return {128, 4, false};
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
/// (cublas<t>gemmStridedBatched) instead of the fast kernel (gemm.cuh). Measured on the H100
/// (bench/results/gpu-h100-0b57285-sweep.csv, square n, beta = 0, 1 GiB per operand),
/// roofline fractions fast kernel | cuBLAS:
///   double n=16 1.01|.57, 17 .61|.47, 18 .64|.57, 19 .67|.56, 20 .71|.72, 21 .72|.66,
///          22 .68|.80, 23 .69|.76, 24 .72|.90, 28 .71|1.01, 32 .63|1.01;
///   float  n=16 .80|.41, 17 .50|.40, 18 .53|.44, 19 .55|.49, 20 .59|.53, 21 .61|.57,
///          22 .60|.60, 23 .51|.63, 24 .59|.66, 28 .60|.71, 32 .69|.81.
/// From n = 22 on cuBLAS is as fast or faster at every measured n, in both types (n = 20
/// double is a tie, n = 21 goes to the kernel). Strided batches of run-time sizes follow the
/// same rule (below it they run the one-thread-per-matrix generic kernel).
constexpr int gemm_vendor_min_n(int elem_bytes) {
  (void)elem_bytes;
  return 22;
}

}  // namespace tinybatch::cuda::fast_kernels
