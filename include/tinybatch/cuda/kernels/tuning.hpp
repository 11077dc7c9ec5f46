// Launch parameters of the fast CUDA kernels (kernels/*.cuh), one entry per (operation,
// type, n) for sm_90 (H100). Every kernel runs one thread per matrix row in segments of
// seg_width(n) lanes (the next power of two >= n), several matrices per thread block:
// matrices per block = threads / seg_width(n), further limited by the 48 KiB of static shared
// memory each kernel stages its matrices through.
//
// `threads` is the thread-block size, `min_blocks` the register cap (below). The shapes of
// getrf, potrf and the inverse and the gemm crossover to cuBLAS come from the sweep of
// bench/gpu/sweep_part.cu (bench/gpu/run-all.sh with TB_SWEEP=1; TB_SWEEP_OPS narrows it);
// the solves' shapes come from their own sweep (TB_SWEEP_OPS=getrs,potrs); for gemm thread
// counts are first guesses and register caps come from one ncu profile (not swept yet).
#pragma once

namespace tinybatch::cuda::fast_kernels {

enum class fast_op { getrf, inverse, potrf, gemm, getrs, potrs };

/// How the pivot search of getrf and the inverse (getrf.cuh pivot_search) reduces over a
/// segment of W lanes (W = seg_width(n), a power of two <= 32):
///   butterfly: log2(W) levels of shuffles of (key, pos * 32 + lane) pairs;
///   redux: integer keys (the bits of |v| are monotonic as unsigned) reduced by
///     __reduce_max_sync (float once, double twice: high word, then low word among ties), then
///     the smallest logical position among the lanes holding the maximum (__reduce_min_sync),
///     with the segment's lanes as the mask;
///   split: for W < 32, one reduction over the whole warp per segment, the other segments'
///     lanes contributing the identity (0 to a maximum, all ones to a minimum): no partial
///     masks, 2 * 32 / W reductions a step (3 * 32 / W in double) instead of log2(W) levels
///     of shuffles;
///   fit: redux where a segment is a whole warp (W = 32), split at W = 16, butterfly below.
/// Measured on the H100: redux with a mask of part of the warp ran at a third of the
/// butterfly's speed (bench/results/h100/gpu-h100-1b98ad3-dirty-sweep-redux-float.log: float getrf
/// n=2 .66 -> .21; inverse n=16 .55 -> .45); on whole warps it won (float getrf n=32 .31 ->
/// .43, inverse n=32 .37 -> .48); a ballot shortcut (one lane holding the maximum wins at
/// once) lost (getrf n=32 .39 -> .32). split against butterfly at W = 16, best one-row shape
/// each (bench/results/h100/gpu-h100-fc050c0-dirty-sweep-split16.csv and -split8.csv, 0.5 GiB):
/// getrf float n=16 .72 -> .87, 14 .65 -> .79 (two rows per thread before), double n=12
/// .80 -> .90, 13 .77 -> .92; inverse float n=16 .56 -> .65, double n=16 .66 -> .72. At
/// W = 8 split won only for float getrf n = 8 (.82 -> .86; tuned there) and lost or tied
/// elsewhere (double getrf n=5 .82 -> .71, float inverse n=8 .67 -> .68 one row, below two
/// rows' .75).
enum class pivot_method { butterfly, redux, fit, split };

struct launch_shape {
  int threads;         ///< thread-block size (a multiple of 32)
  int min_blocks = 0;  ///< __launch_bounds__ minimum blocks per SM (0: none): caps registers at
                       ///< 64K / (threads * min_blocks), the occupancy limiter ncu found
  bool per_matrix = false;  ///< gemm, inverse: one thread per matrix, the whole matrix in
                            ///< registers (else one thread per row, several matrices a block)
  bool packed = false;      ///< gemm: 16-byte loads into the tiles where a block's matrices are
                            ///< a packed, aligned run of a strided batch (common.cuh)
  bool transpose = false;   ///< solves: columns of the factor through a per-segment
                            ///< shared-memory transpose instead of strided loads (solve.cuh)
  int rows = 1;             ///< getrf, inverse: rows per thread (getrf_rows_kernel,
                            ///< inverse_rows_kernel)
  bool pipelined = false;   ///< solves at n > 16: each warp loops over matrices, the next
                            ///< one's loads in flight by cp.async (solve_pipelined_kernel)
  bool opaque_ld = false;   ///< potrf: the final stores' addresses from an ld the optimizer
                            ///< cannot see through (common.cuh opaque): no spills of the
                            ///< column offsets at n >= 24, more registers where no cap binds;
                            ///< solves (solve_kernel): the factor's load offsets formed per
                            ///< matrix, not hoisted out of the loop over matrices
  pivot_method pivot = pivot_method::fit;  ///< getrf, inverse (one row per thread): the pivot
                                           ///< search (above)
  bool rcp_fast = true;  ///< getrf (one row per thread): the pivot's reciprocal by rcp_fast
                         ///< (common.cuh: rcp.rn's fast path without its branches), else by
                         ///< the division (getrf case below says where each measured faster)
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
  // Measured with these values (bench/results/h100/gpu-h100-2a90dd3.csv against e9a8e4d, memory
  // roofline fractions): the caps helped at n = 8..32 (getrf double n=16 .48 -> .62, n=32
  // .27 -> .43; gemm double n=8 .76 -> .85, n=16 .79 -> .87; potrf double n=8 .69 -> .82) and
  // hurt at n <= 5, where the kernels only stage data (gemm float n=3 .77 -> .56, potrf float
  // n=2 .84 -> .65, getrf double n=2 .88 -> .79). getrf and potrf, row by row since f5a7915,
  // were swept again (below: capped at every size but potrf n = 3 float, 6 - 8 double);
  // gemm's n <= 5 caps were not.
  switch (op) {
    case fast_op::gemm:
      // packed (16-byte loads of A and B on packed batches) against the scalar loads, one
      // development run each on the H100 (bench/results/h100/gpu-h100-b415ef3-dirty-gemm-loads.log,
      // square n, beta = 0, 1 GiB per operand), roofline fraction scalar -> packed:
      //   float  n=2 .72 -> .57, 3 .61 -> .59, 4 .84 -> .71, 5 .60 -> .58, 8 .77 -> .91,
      //          12 .58 -> .94, 16 .80 -> 1.02, 20 .59 -> .71;
      //   double n=2 .94 -> .94, 3 .89 -> .76, 4 .80 -> .75, 5 .68 -> .65, 8 .96 -> .99,
      //          12 .90 -> .99, 16 1.01 -> .98, 20 .71 -> .61.
      // (Fewer, wider loads lose where a block holds little: at n <= 5 half the threads or
      // fewer load a vector.)
      // One thread per matrix (per_matrix: gemm_thread_kernel, no shared memory, 16-byte
      // loads and stores of whole matrices) against the staged kernel, sweep
      // bench/results/h100/gpu-h100-1a72aa9-dirty-sweep-gemm-small.csv (beta = 0), staged | thread:
      //   float  n=2 .74|1.06, 3 .63|.59, 4 .87|1.06, 5 .62|.26, 8 .95|.73;
      //   double n=2 .86|1.04, 3 .93|.58, 4 .83|.73, 5 .70|.41, 8 1.02|.64.
      // Odd sizes have no 16-byte runs; from n = 5 the registers (3 n^2 values) cost more.
      // Register caps at n <= 8 (ncu, double n = 4 at 256 threads and no cap: 84 registers,
      // 25% occupancy, half the stall cycles waiting on global loads; sweep
      // bench/results/h100/gpu-h100-9378c41-dirty-sweep-gemm-caps.csv, 0.5 GiB), shape before ->
      // 128 threads capped at 64 registers (min_blocks 8): double n=3 .89 -> .93, 4 .79 ->
      // 1.04, 5 .69 -> .99, 6 .95 -> 1.04, 7 .93 -> 1.02 (8: .98 -> .72, spills; stays);
      // float n=3 .61 -> .71, 5 .61 -> .78, 6 .74 -> .89, 7 .69 -> .84, 8 .92 -> 1.00.
      if (n <= 2 || (elem_bytes == 4 && n == 4)) return {.threads = 256, .per_matrix = true};
      {
        const bool packed = elem_bytes == 4 ? n >= 8 : n >= 8 && n <= 12;
        if (n <= 7 || (elem_bytes == 4 && n == 8)) return {.threads = 128, .min_blocks = 8, .packed = packed};
        if (n <= 8) return {.threads = 256, .min_blocks = 3, .packed = packed};
        if (n <= 16) return {.threads = 128, .min_blocks = 6, .packed = packed};
        return {.threads = 128, .packed = packed};
      }
    case fast_op::inverse:
      // Gauss-Jordan kernel (inverse.cuh), row by row (a tile lost at every n swept).
      // Sweep bench/results/h100/gpu-h100-0b57285-sweep.csv (bench/gpu/sweep_part.cu: 11 launch
      // shapes per type and n), roofline fraction of the shape chosen here, and of the
      // [A | I] kernel it replaced at its last tuned shape (before_augmented):
      //   double n=2 .907 (.404), 3 .756 (.291), 4 .942 (.337), 5 .606 (.325), 8 .909 (.393),
      //          12 .591 (.253), 16 .699 (.288), 20 .355 (.152), 24 .382 (.162), 32 .377 (.124);
      //   float  n=2 .712 (.300), 3 .521 (.217), 4 .774 (.262), 5 .393 (.235), 8 .682 (.301),
      //          12 .438 (.206), 16 .562 (.237), 20 .299 (.120), 24 .334 (.128), 32 .374 (.136).
      // The best shape swept was at most .01 above these (double n=2: 64 threads .916; float
      // n=2, 3: no cap .718, .530). Sizes in between take their neighbours' shapes (not swept).
      // Since then the pivot search of n >= 17 reduces whole warps by __reduce_max_sync
      // (pivot_method::fit, getrf.cuh): at these shapes, sweep bench/results/h100/gpu-h100-1b98ad3-dirty-sweep-variants.csv,
      // butterfly -> fit: double n=20 .344 -> .448, 24 .370 -> .436, 32 .376 -> .469; float
      // n=20 .297 -> .390, 24 .332 -> .419, 32 .371 -> .476 (the same shapes stayed best).
      // Float n = 1, 2, 4: one thread per matrix (inverse_thread_kernel: reference::inverse's
      // own steps in registers, 16-byte loads and stores). Sweep
      // bench/results/h100/gpu-h100-9283ce6-sweep-inverse.csv, best row-per-thread shape | one
      // thread per matrix (256 threads): float n=2 .72|1.00, 3 .53|.48, 4 .78|.96, 5 .39|.12;
      // double n=2 .91|.40, 3 .76|.21, 4 .95|.18, 5 .61|.12. (At n >= 5 float and n >= 4
      // double the kernel keeps the matrix in local memory: loops bounded by an outer index
      // stay loops. Unrolled by a template it still lost at n = 3 - 8 and won only at n = 2:
      // bench/results/h100/gpu-h100-bdb32a3-dirty-sweep-thread.csv, git show b70cdcc:docs/performance.md.)
      // Two rows per thread (inverse_rows_kernel; sweep
      // bench/results/h100/gpu-h100-4cfecce-dirty-sweep-rows.csv, 0.5 GiB, every n <= 16), best
      // one-row shape -> best two-row shape: float n=5 .40 -> .59, 6 .47 -> .67, 7 .57 -> .69,
      // 8 .69 -> .74, 9 .33 -> .46, 10 .37 -> .51, 11 .41 -> .52, 12 .44 -> .51, 13 .44 -> .50,
      // 14 .48 -> .53, 15 .51 -> .54 (16 .57 -> .58, 20 - 32 lose: not taken); double n=5
      // .60 -> .66 (9 .49 -> .52 not taken; 6 - 32 lose, n >= 20 by half: registers). Three
      // rows per thread (every lane busy at n = 6, 12, 24) lost everywhere.
      // Since the split pivot search at W = 16 (sweeps of fc050c0 above, 0.5 GiB), best shape
      // before -> now: float n=12 .50 -> .54, 13 .49 -> .54, 14 .52 -> .58, 15 .54 -> .60 (one
      // row per thread now, two before), 16 .56 -> .65; double n=12 .59 -> .66, 16 .66 -> .72,
      // 9 - 15 .49 - .62 -> .50 - .65.
      if (elem_bytes == 4 && (n <= 2 || n == 4)) return {.threads = 256, .per_matrix = true};
      if (elem_bytes == 4 && n >= 5 && n <= 15) {
        if (n == 6) return {.threads = 128, .rows = 2};
        if (n == 7) return {.threads = 128, .min_blocks = 4, .rows = 2};
        if (n <= 11) return {.threads = 64, .rows = 2};
        return {.threads = 128};
      }
      if (elem_bytes == 8) {
        if (n == 5) return {.threads = 64, .rows = 2};
        if (n <= 5) return {.threads = 128, .min_blocks = 5};   // <= 102 registers
        if (n <= 8) return {.threads = 256, .min_blocks = 4};   // <= 64
        if (n <= 15) return {.threads = 256, .min_blocks = 3};  // <= 85
        if (n <= 16) return {.threads = 128, .min_blocks = 5};  // <= 102
        if (n <= 24) return {.threads = 256, .min_blocks = 3};  // <= 85
        return {.threads = 128, .min_blocks = 4};               // <= 128
      }
      if (n <= 16) return {.threads = 128, .min_blocks = 5};
      if (n <= 24) return {.threads = 256, .min_blocks = 4};
      return {.threads = 256, .min_blocks = 3};
    case fast_op::getrf:
      // Row by row (no tile), pivot search pivot_method::fit (getrf.cuh). Sweep
      // bench/results/h100/gpu-h100-1b98ad3-dirty-sweep.csv (bench/gpu/sweep_part.cu, 0.5 GiB per operand), roofline
      // fraction of the shape chosen here | cublas<t>getrfBatched in the same run | the staged
      // butterfly kernel of 045adb9 at its shape (bench/results/h100/gpu-h100-1b98ad3-dirty-sweep-variants.csv):
      //   double n=2 .980|.922|.795, 3 .918|.514|.561, 4 1.01|.617|.544, 5 .831|.374|.515,
      //          8 1.01|.486|.579, 12 .814|.304|.471, 16 .958|.349|.618, 20 .723|.265|.314,
      //          24 .760|.291|.334, 32 .762|.333|.424;
      //   float  n=2 .961|.851|.660, 3 .706|.346|.438, 4 .937|.477|.617, 5 .517|.250|.308,
      //          8 .831|.386|.393, 12 .548|.239|.319, 16 .727|.285|.418, 20 .582|.180|.260,
      //          24 .651|.200|.266, 32 .770|.234|.314.
      // The best shape swept was at most .01 above these. 64 registers (256 threads, 4
      // blocks) spills at double n=32 (.20 of the roofline).
      // Two rows per thread (getrf_rows_kernel; sweeps
      // bench/results/h100/gpu-h100-a2aeae0-dirty-sweep-getrf-rows.csv and
      // gpu-h100-4cfecce-dirty-sweep-rows.csv, 0.5 GiB, every n <= 16), best one-row shape ->
      // best two-row shape: float n=3 .70 -> .82, 5 .51 -> .72, 6 .61 -> .76, 9 .41 -> .60,
      // 10 .46 -> .65, 11 .50 -> .68, 12 .55 -> .72, 13 .57 -> .65, 14 .62 -> .67; it loses at
      // float 7 (.72 -> .67), 8 (.83 -> .78), 15, 16 (even) and above (n=32 .76 -> .50:
      // registers), and in double everywhere but n=9 (.64 -> .68, within run-to-run spread;
      // not taken). Where one row per thread leaves lanes of a segment idle, two rows halve
      // the segment and the shared-memory reads per matrix. Three rows (every lane busy at
      // n = 6, 12, 24) lost everywhere.
      // The pivot's reciprocal by rcp_fast (common.cuh) against T(1) / piv, same-run A/B
      // sweeps at every shape (bench/results/h100/gpu-h100-0ff2d37-ab-rcp-{1,2}.txt,
      // gpu-h100-7014fe9-ab-rcp-getrf-20-24.txt, 0.5 GiB), tuned shape, division -> rcp_fast:
      // float n=8 .87 -> .92, 16 .85 -> .92 - .93, 20 .58 -> .62, 24 .64 -> .68, 32 .76 -> .77 - .79; double
      // n=5 - 16 +.00 - .01, 32 .75 -> .77 - .78, but n=20 .71 -> .66 and 24 .75 -> .72 at
      // the 64-register cap (where it gained at every other shape): those keep the division.
      // (getrf_rows_kernel lost with it, float n=10 .63 -> .60, and keeps the division.)
      if (elem_bytes == 8) {
        if (n <= 8) return {.threads = 128, .min_blocks = 6};   // <= 85 registers
        if (n <= 16) return {.threads = 256, .min_blocks = 4};  // <= 64
        if (n <= 24) return {.threads = 256, .min_blocks = 4, .rcp_fast = false};
        return {.threads = 128, .min_blocks = 5};               // <= 102
      }
      // Since the split pivot search (pivot_method above; sweeps
      // bench/results/h100/gpu-h100-fc050c0-dirty-sweep-split8.csv and -split16.csv, 0.5 GiB), one
      // row per thread beats two from n = 12 (float n=12 .68 -> .71, 13 .62 -> .73, 14 .65 ->
      // .79, 15 .66 -> .80, 16 .72 -> .87; 9 - 11 stay with two rows, .57 - .67), and split
      // itself wins at n = 8 (.82 -> .86). In double the shapes stayed best (n = 9 - 16 at
      // 256 threads .73 - .97).
      if (n == 3 || n == 6) return {.threads = 64, .rows = 2};
      if (n == 5) return {.threads = 128, .rows = 2};
      if (n == 8) return {.threads = 128, .pivot = pivot_method::split};
      if (n <= 8) return {.threads = 128, .min_blocks = 5};    // <= 102
      if (n <= 11) return {.threads = 64, .rows = 2};
      if (n <= 16) return {.threads = 64};
      return {.threads = 256, .min_blocks = 4};                // <= 64
    case fast_op::potrf:
      // Right-looking, row by row (each thread loads and stores its row of the factor
      // directly). Sweep bench/results/h100/gpu-h100-b415ef3-dirty-sweep-potrf.csv (lower triangle; the
      // fraction counts the whole n x n matrix read and written, as bench_gpu does, so it
      // exceeds 1 where only the triangle's sectors move), shape chosen here | the
      // left-looking kernel it replaced, at its shape, in the sweep of 1b98ad3 (another run):
      //   double n=2 .99|1.02, 3 .95|.98, 4 .99|1.02, 5 .95|.99, 8 1.08|1.11, 12 1.13|1.13,
      //          16 1.21|1.14, 20 .81|.78, 24 .85|.76, 32 .83|.57;
      //   float  n=2 .93|.95, 3 .84|.84, 4 1.00|1.01, 5 .71|.77, 8 .93|.97, 12 .74|.76,
      //          16 .89|.92, 20 .56|.55, 24 .64|.63, 32 .63|.51.
      // The best shape swept was at most .02 above these. The staged kernel (a tile per block)
      // lost at every n again (.32 - .93). Upper triangles (a thread's row of U^T is a column
      // of A: strided loads) were not timed.
      //
      // opaque_ld (the final stores' addresses from an opaque ld, common.cuh): same-run A/B
      // on an H200, bench/results/h200/gpu-h200-18b075f-dirty-ab-opaque-ld.txt, best shape without
      // -> with it: double n=16 .92 -> .93, 20 .60 -> .61, 24 .63 -> .72, 32 .61 -> .72;
      // float n=16 .64 -> .64, 20 .40 -> .41, 24 .46 -> .52, 32 .47 -> .65 (ptxas: the
      // spills of double n=24 and float n=32 go; float n=16 takes 77 registers instead of 56).
      // Then on an H100, one sweep (bench/results/h100/gpu-h100-18b075f-dirty-opaque-ld-sweep-
      // potrf.log), best shape without -> with: double n=20 .82 -> .85, 24 .85 -> 1.01,
      // 32 .83 -> .92; float n=20 .56 -> .57, 24 .64 -> .72, 32 .63 -> .88 (and at n <= 16
      // no shape with it beat the best without).
      if (elem_bytes == 8) {
        if (n <= 5) return {.threads = 128, .min_blocks = 6};   // <= 85 registers
        if (n <= 8) return {.threads = 128};
        if (n <= 16) return {.threads = 128, .min_blocks = 6};
        if (n <= 24) return {.threads = 128, .min_blocks = 6, .opaque_ld = true};
        return {.threads = 128, .min_blocks = 5, .opaque_ld = true};  // <= 102
      }
      if (n <= 5) return {.threads = 128};
      if (n <= 8) return {.threads = 128, .min_blocks = 6};
      if (n <= 12) return {.threads = 128};
      if (n <= 16) return {.threads = 128, .min_blocks = 6};
      if (n <= 20) return {.threads = 256, .min_blocks = 4};    // <= 64
      return {.threads = 256, .min_blocks = 4, .opaque_ld = true};
    case fast_op::getrs:
      // Direct kernel (solve.cuh: the factor straight from global memory, no tile, no block
      // barrier). Sweeps bench/results/h100/gpu-h100-b415ef3-dirty-sweep-solves.csv (no_trans) and
      // -sweep-solves-gemm.csv (no_trans again, and trans), one right-hand side, 1 GiB of
      // factors; roofline fraction of the shape chosen here | the staged kernel at the shape
      // it had before (256 threads n <= 8, else 128, no cap), no_trans:
      //   double n=2 .97|.78, 3 .88|.56, 4 1.02|.70, 5 .82|.46, 8 .99|.48, 12 .94|.60,
      //          16 .99|.69, 20 .78|.50, 24 .80|.55, 32 .81|.57;
      //   float  n=2 .90|.68, 3 .77|.49, 4 .95|.57, 5 .68|.42, 8 .94|.41, 12 .78|.39,
      //          16 .87|.62, 20 .57|.44, 24 .62|.47, 32 .74|.57.
      // trans reads columns of the factor: `transpose` (through the segment's shared-memory
      // tile) where it measured faster than strided loads at the same shape, which is where
      // the stride is a power of two (cache-set conflicts): double n=16 .66 -> .95, 32 .57 ->
      // .74; float n=2 .77 -> .87, 3 .63 -> .72, 4 .84 -> .90, 16 .66 -> .80, 32 .34 -> .65
      // (64 threads: no_trans .735 there as at 128). Elsewhere it lost (float n=8 .96 -> .80).
      // The best shape swept was at most .02 above these for no_trans.
      // Since the substitutions scale by a multiply and a select (scale_at, solve.cuh), and
      // with the pipelined kernel for n = 17..24 and float 25..32 (sweep
      // bench/results/h100/gpu-h100-c483dc0-dirty-sweep-solves-select.csv, 1 GiB), no_trans,
      // shape before -> shape here: double n=20 .75 -> .80, 24 .81 -> .84, 32 .85 (kept:
      // pipelined .81; trans would gain, .79 -> .85); float n=20 .59 -> .64, 24 .65 -> .68,
      // 32 .75 -> .79.
      //
      // opaque_ld (solve_kernel forms the factor's load offsets per matrix instead of keeping
      // them hoisted: potrs float n = 32 122 -> 56 registers, double 166 -> 104), one H100
      // sweep (bench/results/h100/gpu-h100-31f6e56-dirty-sweep-solves-opaque.csv), no_trans / trans,
      // shape before -> shape here: double n=16 .98 / .98 -> .99 / .99, 32 .84 / .74 -> .94 /
      // .83; float n=16 .91 / .70 -> .97 / .80, 24 .68 / .69 -> .86 / .71, 32 .78 / .79 -> .95
      // / .82 (at float n = 24, 32 the transpose serves trans, no_trans reads directly).
      // Float n = 17..20 (sweep at n = 20, bench/results/h100/gpu-h100-90a8655-sweep-solves-opaque-20.csv):
      // pipelined .64 / .66 -> .80 / .69 at 128 threads with opaque_ld, no transpose (with
      // it trans fell to .55); the double solves at n = 20 gained nothing.
      if (elem_bytes == 4 && n > 20) return {.threads = 128, .transpose = true, .opaque_ld = true};
      if (elem_bytes == 4 && n > 16) return {.threads = 128, .opaque_ld = true};
      if (n == 16 || (elem_bytes == 8 && n > 24))
        return {.threads = 128, .min_blocks = 6, .transpose = true, .opaque_ld = true};  // <= 85
      if (n > 16 && (elem_bytes == 4 || n <= 24)) return {.threads = 128, .pipelined = true};
      if (elem_bytes == 8) {
        if (n == 5 || n == 12) return {.threads = 256, .min_blocks = 6};             // <= 42 registers
        if (n > 16 && n <= 20) return {.threads = 256, .min_blocks = 4};              // <= 64
        if (n == 16 || n > 24) return {.threads = 128, .min_blocks = 6, .transpose = true};  // <= 85
        return {.threads = 128, .min_blocks = 6};
      }
      // Float n = 3, 4: capped at 85 registers since scale_at (no_trans .67 -> .76, .88 -> .96
      // in the sweep above; at the 128-register cap they lost .08 - .10 to before it).
      if (n <= 2) return {.threads = 128, .min_blocks = 4, .transpose = true};  // <= 128
      if (n <= 4) return {.threads = 128, .min_blocks = 6, .transpose = true};  // <= 85
      if (n == 16) return {.threads = 128, .min_blocks = 6, .transpose = true};
      if (n > 24) return {.threads = 64, .transpose = true};
      return {.threads = 128, .min_blocks = 6};
    case fast_op::potrs:
      // Direct kernel, lower triangle, one right-hand side; same sweeps, shape chosen |
      // staged. The second phase reads columns of L: through the transpose where it won
      // (n >= 12 double, 20 float: double n=16 .87 -> 1.17, 32 .58 -> .77; float n=32 .49 ->
      // .61), strided below.
      //   double n=2 1.02|.87, 3 .95|.73, 4 1.03|.69, 5 .85|.44, 8 1.01|.54, 12 .88|.50,
      //          16 1.17|.58, 20 .68|.36, 24 .72|.38, 32 .77|.56;
      //   float  n=2 .95|.71, 3 .81|.50, 4 .92|.63, 5 .60|.32, 8 .86|.43, 12 .65|.35,
      //          16 .70|.48, 20 .46|.32, 24 .52|.33, 32 .61|.47.
      // After scale_at (solve.cuh: no divergent branch per substitution step), same sweep as
      // getrs above, shape before -> shape here: double n=20 .65 -> .79 and 24 .76 -> .81
      // (pipelined), 32 .93 (64 threads through the transpose, unchanged; it was .78 before
      // scale_at); float n=16 .81 -> .92 (64 threads, transpose), 20 .43 -> .64 and 24 .50
      // -> .66 (pipelined), 32 .69 -> .76 (64 threads, transpose).
      // opaque_ld (getrs above; same sweep), shape before -> shape here: double n=24 .81 ->
      // .91, 32 .92 -> 1.08; float n=24 .66 -> .69, 32 .75 -> 1.01 (float n = 16: .91 without,
      // .84 with: not taken).
      if (n > 24) return {.threads = 64, .transpose = true, .opaque_ld = true};
      if (n > 20 && n <= 24) return {.threads = 128, .min_blocks = 6, .transpose = true, .opaque_ld = true};
      if (n > 16 && n <= 24) return {.threads = 128, .pipelined = true};
      if (elem_bytes == 4 && n == 16) return {.threads = 64, .transpose = true};
      if (elem_bytes == 8) {
        // Since scale_at (sweep above): n = 3 .80 at 42 registers (256 threads, 6 blocks; .95
        // before it) against .93 at 128 threads uncapped; n = 5 .77 through the transpose,
        // .87 direct.
        if (n <= 2) return {.threads = 256, .min_blocks = 6};
        if (n <= 3) return {.threads = 128};
        if (n <= 4) return {.threads = 64};
        if (n <= 5) return {.threads = 64};
        if (n <= 8) return {.threads = 256, .min_blocks = 4};
        if (n <= 20) return {.threads = 256, .min_blocks = 4, .transpose = true};
        if (n <= 24) return {.threads = 128, .min_blocks = 4, .transpose = true};
        return {.threads = 64, .transpose = true};
      }
      if (n == 3) return {.threads = 128, .min_blocks = 4};  // since scale_at: .75 at 256 threads, .78
      if (n <= 8) return {.threads = 128, .min_blocks = 4};
      if (n <= 12) return {.threads = 256, .min_blocks = 4};
      if (n <= 16) return {.threads = 128, .min_blocks = 6};
      if (n <= 24) return {.threads = 64, .transpose = true};
      return {.threads = 256, .min_blocks = 4, .transpose = true};
    default:
      return {.threads = 128};
  }
}

/// Smallest n at which the CUDA backend runs the fast getrs / potrs kernels (solve.cuh)
/// instead of the generic one-thread-per-matrix kernel. Until the direct solve kernel the
/// generic one won at small n (bench/results/h100/gpu-h100-83ab075-solves.csv: getrs float n=2
/// .68|.84 fast|generic, 5 .35|.49; potrs float n=5 .41|.56); the direct kernel reaches
/// getrs float n=2 .90, 5 .68, potrs float n=5 .60 in its sweep (above), and bench_gpu runs
/// the generic kernel beside it (tinybatch_generic) to keep checking.
constexpr int solve_fast_min_n(fast_op op, int elem_bytes) {
  (void)op, (void)elem_bytes;
  return 1;
}

/// Smallest m, n and k at which the CUDA backend gives gemm on strided batches to cuBLAS
/// (cublas<t>gemmStridedBatched) instead of the fast kernel (gemm.cuh). Measured on the H100
/// (bench/results/h100/gpu-h100-0b57285-sweep.csv, square n, beta = 0, 1 GiB per operand),
/// roofline fractions fast kernel | cuBLAS:
///   double n=16 1.01|.57, 17 .61|.47, 18 .64|.57, 19 .67|.56, 20 .71|.72, 21 .72|.66,
///          22 .68|.80, 23 .69|.76, 24 .72|.90, 28 .71|1.01, 32 .63|1.01;
///   float  n=16 .80|.41, 17 .50|.40, 18 .53|.44, 19 .55|.49, 20 .59|.53, 21 .61|.57,
///          22 .60|.60, 23 .51|.63, 24 .59|.66, 28 .60|.71, 32 .69|.81.
/// From n = 22 on cuBLAS is as fast or faster at every measured n, in both types (n = 20
/// double is a tie, n = 21 goes to the kernel). Strided batches of run-time sizes follow the
/// same rule (below it they run the one-thread-per-matrix generic kernel).
///
/// Since float gemm loads its tiles by 16-byte vectors (`packed` above) the fast kernel beats
/// cuBLAS at every float n measured (bench/results/h100/gpu-h100-b415ef3-dirty-sweep-solves-gemm.csv,
/// fast | cuBLAS: n=16 1.02|.41, 20 .70|.53, 22 .76|.59, 24 .75|.66, 28 .81|.70, 32 .90|.81),
/// so float never crosses over on fixed-size views (33); double still does at 22 (n=22
/// .67|.79, 24 .72|.87, 32 .62|.99 in the same run). Run-time sizes (`fixed_size` false)
/// have no fast kernel, only the generic one: they cross over at 22 in both types.
constexpr int gemm_vendor_min_n(int elem_bytes, bool fixed_size = true) {
  return elem_bytes == 4 && fixed_size ? 33 : 22;
}

}  // namespace tinybatch::cuda::fast_kernels

namespace tinybatch::cuda::blocked_kernels {

/// Shape of the fused left-looking Cholesky (potrf_blocked.cuh): IB columns per panel, RPT
/// rows per thread, at most MAXT threads per block (rows beyond MAXT * RPT run in further
/// chunks of the same block).
struct cholesky_shape {
  int ib, rpt, maxt;
};
/// The shapes the backend instantiates (the tuning benchmark, bench/gpu/bench_potrf_large.cu,
/// sweeps every one of them).
inline constexpr cholesky_shape cholesky_shapes[] = {{8, 1, 512}, {16, 1, 512}, {32, 1, 256}};

/// Index into cholesky_shapes for order n (the largest of a variable-size batch). A wider
/// panel reads the factored columns fewer times (the update reads about n^3 / (6 IB)
/// elements), at the price of IB accumulators per row in registers. From the sweep of
/// bench_potrf_large on the H200 (bench/results/h200/potrf-large-*.csv, double, 0.5 GiB,
/// loop-exclusive, ms for IB = 8 | 16 | 32): n = 33 1.30 | 2.15 | 3.82, 64 1.11 | 1.31 |
/// 1.51, 128 1.60 | 1.80 | 1.62, 256 3.30 | 3.10 | 2.42, 512 9.12 | 7.14 | 4.90, 1024 42.2 |
/// 25.9 | 16.9. Float (potrf-large-cce6cfc-s-sweep.csv): the same rule is best except at
/// n = 64 - 128, where loop-inclusive IB 8 is 1.14 - 1.43x faster (not in the table yet).
constexpr int cholesky_shape_for(int elem_bytes, int n) {
  (void)elem_bytes;
  return n <= 160 ? 0 : 2;
}

/// Uniform batches: the panel width of the GEMM-updated path (potrf_gemm.cuh: cuBLAS batched
/// GEMM for each panel's update) for order n, 0 where the fused kernel above is faster.
/// The backend instantiates width 32. Width 64 lost everywhere in the sweep below (its POTF2
/// and TRSM cost more than the wider GEMM saved); since the panel kernel factors the diagonal
/// block in one warp's registers, widths are multiples of 4 up to 32, and 16 is there for the sweep and the
/// tests (potrf_gemm<T, 16, UPPER>). From the sweep of
/// bench_potrf_large on an H100 (bench/results/h100/potrf-gemm-3248e24-sweep.csv, 0.5 GiB,
/// ms, fused default | GEMM nb 32 | nb 64 | cuSOLVER): double n = 64 1.18 | 2.06 | - | 1.77,
/// 100 1.75 | 1.95 | - | 1.86, 128 1.70 | 1.55 | 3.06 | 1.54, 256 2.50 | 1.56 | 2.50 | 1.75,
/// 1024 17.5 | 2.99 | 3.84 | 4.00; float 100 2.50 | 2.31 | 1.73 (loop-inclusive IB 8), 128
/// 2.43 | 1.75 | 1.60 (inclusive IB 8), 200 3.69 | 2.03, 1024 17.7 | 3.50 | 4.40.
/// On the H200 (potrf-gemm-3248e24-sweep-h200.csv) double crossed at n = 128 (fused 1.52 |
/// GEMM 1.52 ms; 112: 1.68 | 1.75), float at 160. Since the panel kernel's POTF2 lost its
/// per-element / and % and its divisions (1.2 - 1.4x faster path), the crossover is lower in
/// both types: H100, bench/results/h100/potrf-gemm-sweep-low.csv, ms, fused default | fused
/// loop-inclusive IB 8 | GEMM nb 32: double n = 64 1.18 | 1.02 | 1.19, 80 1.34 | 1.26 |
/// 1.33, 96 1.49 | 1.36 | 1.14, 112 1.77 | 1.65 | 1.23; float (its fused default was
/// loop-inclusive there) n = 80 1.49 | 1.63 (GEMM), 96 1.44 | 1.32, 128 1.61 | 1.21, 144 2.02
/// | 1.35.
constexpr int cholesky_gemm_nb(int elem_bytes, int n) {
  (void)elem_bytes;
  return n >= 96 ? 32 : 0;
}

/// The GEMM-updated path's panel step in two launches (a diagonal-block kernel, one warp per
/// matrix, then the TRSM of the rows below; potrf_gemm.cuh) instead of one kernel whose warp 0
/// factors the diagonal block while the other warps wait. H100, 0.5 GiB, ms, one kernel | two
/// launches, two alternating runs (bench/results/h100/potrf-gemm-split-ab.log): double n = 128
/// 0.93 | 0.72, 1024 2.38 | 2.52; float 128 1.10 | 0.99, 1024 2.72 | 3.09. The orders between,
/// H100, 1 GiB (bench/results/h100/potrf-fixed-split-51a7978.csv), one kernel | two launches:
/// double 160 1.67 | 1.34, 256 1.94 | 1.55, 384 2.29 | 1.98, 512 2.57 | 2.38, 768 3.30 | 3.22,
/// 1024 3.93 | 3.98; float 160 2.00 | 1.86, 256 2.28 | 2.06, 512 3.00 | 2.89, 768 3.80 | 3.94,
/// 1024 4.53 | 4.86. The variable-size GEMM path (largest order nmax) gained the same way at
/// 256 and 512 (potrf-var-51a7978-{d,s}.csv: 15 - 20%).
constexpr bool cholesky_gemm_split(int elem_bytes, int n) {
  return elem_bytes == 8 ? n <= 768 : n <= 512;
}

/// Uniform batches: the on-chip kernel (potrf_onchip.cuh: the whole matrix in one block's
/// registers, read and written once) for these orders. H100, 0.5 GiB, ms, default before
/// (fused; GEMM path from 96) | on-chip (bench/results/h100/potrf-onchip-fixed.csv): double
/// n = 33 1.36 | 1.87, 48 1.08 | 1.13, 64 1.03 | 1.00, 80 1.27 | 0.94, 96 0.69 | 0.99, 128
/// 0.73 | 1.15; float 48 1.59 | 1.50, 64 1.46 | 1.37, 80 1.50 | 1.23, 96 1.04 | 1.21.
/// Variable-size batches keep the loop-inclusive fused kernel: on-chip lost at max 128
/// (3000 matrices 0.43 | 0.55, 100000 9.7 | 17.0) and tied at 64.
constexpr bool cholesky_onchip(int elem_bytes, int n, bool uniform) {
  (void)elem_bytes;
  return uniform && n >= 64 && n < 96;
}

/// Uniform batches on the fused kernel: one loop-inclusive launch instead of one per panel,
/// from n = 64 to the GEMM crossover. Float, H200, ms, exclusive | inclusive (IB 8): n = 64
/// 1.65 | 1.45, 100 2.39 | 1.74, 128 2.33 | 1.63. Double, H100 (the sweep above): 64 1.18 |
/// 1.02, 80 1.34 | 1.26; on the H200 it gained 8% at 64 and lost at 100 and 128 (now on the
/// GEMM path).
constexpr bool cholesky_inclusive(int elem_bytes, int n) {
  (void)elem_bytes;
  return n >= 64 && n < 96;
}

/// Variable-size batches: the GEMM-updated path (potrf_gemm_vbatch: the panel kernels of the
/// uniform path, each update by potrf_vgemm_kernel with the sizes read on the device) for
/// this largest order; otherwise the fused kernel (below). H100, 3000 matrices, ms, uniform /
/// Gaussian sizes, the default then (fused) | the GEMM path with the panel step in two
/// launches (FMA update; DMMA below) (bench/results/h100/potrf-var-51a7978-{d,s}.csv): double max
/// 128 0.427 / 0.346 | 0.425 / 0.415, 256 2.38 / 1.97 | 1.41 / 1.25, 512 11.5 / 9.19 | 6.60 /
/// 5.61; float 128 0.298 / 0.253 | 0.354 / 0.337, 256 1.33 / 1.05 | 1.09 / 0.96, 512 7.43 /
/// 6.09 | 4.33 / 3.65; at 100000 matrices of max 128 the fused kernel is 1.5 - 2x faster.
constexpr bool cholesky_vbatch_gemm(int elem_bytes, int nmax) {
  (void)elem_bytes;
  return nmax > 128;
}

/// Variable-size batches on the GEMM-updated path, double: the update on the FP64 tensor cores
/// (DMMA through WMMA) rather than FMA for this largest order. H100, 3000 matrices, ms, panel
/// step in two launches, FMA | DMMA, uniform / Gaussian (bench/results/h100/potrf-var-51a7978-d.csv):
/// max 128 0.425 | 0.415, 0.415 | 0.398; 256 1.41 | 1.37, 1.25 | 1.20; 512 6.60 | 6.31, 5.61 |
/// 5.34: 3 - 5% everywhere.
constexpr bool cholesky_vbatch_mma(int elem_bytes, int nmax) {
  (void)nmax;
  return elem_bytes == 8;
}

/// Variable-size batches on the GEMM-updated path with the two-launch panel step: each step's
/// live work as device-built lists walked by resident grids (vwork in potrf_gemm.cuh) rather
/// than launches sized for the largest order; mma: the update on the tensor cores. H200, 3000
/// matrices, ms, grid | lists, uniform / Gaussian sizes (bench/results/h200/
/// potrf-var-lists-ff2755a.csv): float max 256 1.045 | 0.958, 0.969 | 0.846; 512 4.060 | 3.904,
/// 3.470 | 3.190 (1.04 - 1.15x); double DMMA 256 1.323 | 1.323, 1.233 | 1.217; 512 5.524 |
/// 5.381, 4.785 | 4.665 (1.00 - 1.03x); double FMA 256 1.389 | 1.467, 1.293 | 1.329; 512 6.068 |
/// 6.596, 5.218 | 5.542 (0.92 - 0.97x: slower, not understood; not the default tile).
constexpr bool cholesky_vbatch_lists(int elem_bytes, int nmax, bool mma) {
  (void)nmax;
  return elem_bytes == 4 || mma;
}

/// Variable-size batches on the GEMM-updated path, the update tile (potrf_vgemm_kernel): its
/// next chunk of L in flight by cp.async into a second shared buffer (async) or held in
/// registers (12 values a thread), and its register cap as blocks of vgemm_threads per SM
/// (__launch_bounds__'s second argument; 0: none). Without a cap the DMMA tile took 164
/// registers, 3 blocks (12 warps) an SM, and Nsight Compute saw it wait on latency with DRAM
/// half busy (H100, max 512, bench/results/h100/ncu-vgemm-24e7d22.txt). A cap of 4 fits 128
/// registers without spills in every instantiation; 5 and 6 spill a little. H100, 3000
/// matrices, ms, default path, uniform / Gaussian sizes, two rounds in one call
/// (bench/results/h100/potrf-var-vgemm-ab-24e7d22.csv): double max 512, registers uncapped
/// 5.91 / 5.07, registers cap 4 5.66 / 4.91, cp.async cap 4 5.57 / 4.84, cp.async cap 5
/// 5.68 / 4.93, cap 6 6.28 / 5.35; max 256 1.331 / 1.177 -> 1.279 / 1.127 (cp.async cap 4);
/// float max 512 4.02 / 3.27 -> 3.85 / 3.15, 256 0.978 / 0.846 -> 0.946 / 0.825. cp.async with
/// a cap of 4: 1.03 - 1.06x everywhere. A tuning build may set TINYBATCH_TUNE_VGEMM_ASYNC (0 or
/// 1) and TINYBATCH_TUNE_VGEMM_MIN_BLOCKS.
constexpr bool vgemm_async(int elem_bytes, bool mma) {
  (void)elem_bytes, (void)mma;
#ifdef TINYBATCH_TUNE_VGEMM_ASYNC
  return TINYBATCH_TUNE_VGEMM_ASYNC != 0;
#else
  return true;
#endif
}
/// Variable-size batches on the GEMM-updated path: each panel step as the fused step
/// (potrf_vfused_kernel: a head launch that updates, factors and solves the top tile of each
/// live matrix's panel, then one for the tiles below; no workspace S, two launches a step)
/// instead of the split step (update into S, diagonal blocks, TRSM of the rows below);
/// cholesky_options::vbatch_fused 1 / 0 forces either.
/// H100, 3000 matrices, ms, split with lists | fused in two launches | in one, uniform /
/// Gaussian sizes (bench/results/h100/potrf-var-fused-04606f3.csv, -cross-04606f3.csv), double
/// with the DMMA update: max 256 1.276 | 1.434 | 1.473, 1.124 | 1.293 | 1.353; 320 1.894 |
/// 2.162 | 2.217, 1.658 | 1.866 | 1.924; 384 3.287 | 2.978 | 2.988, 2.881 | 2.588 | 2.663;
/// 448 4.281 | 3.980 | 3.937, 3.739 | 3.445 | 3.485; 512 5.541 | 5.272 | 5.328, 4.807 | 4.461
/// | 4.479. A later call (potrf-var-fused-inv-932f116.csv), split | fused: 384 2.971 | 2.970,
/// 2.583 | 2.593; 448 3.992 | 3.992, 3.436 | 3.435; 512 5.269 | 5.265, 4.462 | 4.462; 320
/// 1.889 | 2.159. The split step's time moves by up to 8% between calls, the fused step's by
/// under 1%: fused is 1.00 - 1.11x from 384 and loses up to 320 (0.87 - 0.89x), where the
/// head tiles (one warp factors the diagonal block while three wait, half the threads solve)
/// weigh more against the tiles below. Float (FMA update) loses at 256 and 512 (0.73 -
/// 0.84x): split. Tried and removed: one cooperative launch a step whose tiles below wait on
/// their head's flag (release / acquire), 0.94 - 1.02x the two launches' speed; the
/// solve as a product with the block's inverse (DMMA or all threads): 0.91 - 0.98x with DMMA,
/// 0.93 - 0.97x in float, and a NaN in a row then reaches the whole row's solution; heads of
/// 32 rows, a warp each with its own DMMA update (loads through registers): 0.81 - 0.87x
/// (bench/results/h100/potrf-var-fused-h32-3c583a5.csv).
constexpr bool cholesky_vbatch_fused(int elem_bytes, int nmax, bool mma) {
  return elem_bytes == 8 && mma && nmax > 352;
}

template <int ElemBytes, bool Mma>
inline constexpr bool vgemm_async_v = vgemm_async(ElemBytes, Mma);  // for device code
constexpr int vgemm_min_blocks(int elem_bytes, bool mma) {
  (void)elem_bytes, (void)mma;
#ifdef TINYBATCH_TUNE_VGEMM_MIN_BLOCKS
  return TINYBATCH_TUNE_VGEMM_MIN_BLOCKS;
#else
  return 4;
#endif
}

/// Variable-size batches under the default policy: one loop-inclusive launch (aggressive
/// early exit, greedy) up to a largest order of 128 in double and 256 in float, per-panel
/// launches (aggressive, lazy) beyond. H100, bench_potrf_large, ms, per-panel | inclusive,
/// uniform / Gaussian sizes (bench/results/h100/potrf-var-before-d.csv): double, 3000
/// matrices, max 32 0.057 | 0.046, 0.054 | 0.037; 64 0.145 | 0.131, 0.136 | 0.119; 128 0.671 |
/// 0.426, 0.612 | 0.337; 256 2.39 | 2.53, 1.98 | 2.02; 512 11.5 | 13.7, 9.20 | 10.8; 100000
/// matrices, 32 0.768 | 0.602, 0.688 | 0.528; 64 2.76 | 2.69, 2.22 | 2.33; 128 12.3 | 9.76,
/// 9.39 | 6.67. Float, 3000 matrices (potrf-var-default.csv): 256 1.47 | 1.32, 1.28 | 1.06;
/// 512 7.42 | 7.46, 6.08 | 5.82 (the per-panel classic lazy: 6.89, 5.81).
constexpr bool cholesky_vbatch_inclusive(int elem_bytes, int nmax) {
  return nmax <= (elem_bytes == 4 ? 256 : 128);
}

}  // namespace tinybatch::cuda::blocked_kernels
