// The host backend's tuned choices, in one table: for each operation and scalar type, the
// orders n (fixed sizes, 1..32) at which `kernels::automatic` runs the staged compact kernels
// (host/compact/staged.hpp) instead of the scalar reference, from bench/cpu/bench_cpu's
// `tinybatch_par` and `tb_reference_par` columns (docs/tuning.md: how to remeasure);
// `kernels::simd` ignores it.
#pragma once

#if __has_include(<unistd.h>)
#include <unistd.h>
#endif

#include <atomic>
#include <cstddef>
#include <cstdio>

namespace tinybatch::detail::simd::tuning {

enum class op { getrf, potrf, getrs, potrs, trsm, getri, inverse, gemm, convert };

struct orders {
  int min_n, max_n;
  constexpr bool has(int n) const { return n >= min_n && n <= max_n; }
};

/// Where the staged kernels are the default, by operation and type. Today everywhere: in
/// bench/results/xeon-vm/cpu-2026-11-23-vm.csv (2 threads, n in {2, 3, 4, 5, 8, 12, 16, 24, 32}) the
/// staged kernels beat the reference loops in both regimes and types (1.2 - 9x) but for potrf
/// at n <= 3 cache-resident (double 0.94x at n = 2, 1.02x at 3; float 0.79x, 0.88x), where
/// streaming they win 1.4 - 2.4x: large batches decide. Orders between the measured ones
/// follow their neighbours; trsm and getri are not in the benchmark and follow getrs and
/// inverse, whose kernels they are part of.
constexpr orders staged_orders(op o, bool is_double) {
  (void)o;
  (void)is_double;
  return {1, 32};
}

template <class T>
constexpr bool staged(op o, int n) {
  return staged_orders(o, sizeof(T) == 8).has(n);
}

/// The largest order at which the staged kernels take whole groups of a packed batch (W
/// matrices back to back) from memory into registers and back by shuffles, the lane kernel
/// running on the registers (compact/kernels.inc, the *_group functions), instead of through
/// the thread's scratch buffer; by operation, type and instruction set. One thread, 128 KiB per
/// operand, ns per matrix, buffer / registers everywhere, two development runs alike
/// (bench/results/epyc-vm/cpu-7e063ac-epyc-dev-register-groups.txt), AVX-512:
///   inverse double n=2 2.8 / 2.0, 3 6.5 / 6.2, 4 12.2 / 10.6; float 1.3 / 1.2, 4.5 / 4.3, 6.4 / 6.2
///   getrf   double n=2 2.8 / 2.2, 3 5.4 / 6.4, 4 10.6 / 10.9; float 1.9 / 1.6, 4.5 / 4.7, 5.8 / 5.9
///   potrf   double n=2 2.5 / 1.6, 3 4.6 / 4.2, 4 7.0 / 5.9; float 1.05 / 0.85, 3.7 / 3.4, 4.0 / 3.8
///   getrs   double n=2 2.0 / 1.2, 3 4.3 / 4.3, 4 5.8 / 6.0; float 1.4 / 1.0, 3.0 / 2.2, 3.4 / 2.7
///   potrs   double n=2 1.8 / 1.3, 3 5.3 / 4.3, 4 5.3 / 4.3; float 1.0 / 0.5, 2.6 / 1.9, 3.2 / 2.3
/// AVX2: registers faster at every cell, by 2 - 30% (inverse double n = 3 even).
/// Where GCC's code for the register form of getrf lost (its pivoting blends on 9 - 16 live
/// vectors), the buffer stays.
constexpr int register_group_max_order(op o, bool is_double, bool avx512) {
  if (o == op::getrf) return avx512 ? 2 : 4;
  if (o == op::getrs) return avx512 && is_double ? 3 : 4;
  return 4;
}

/// Where getrs and potrs solve one matrix at a time, the right-hand side in registers
/// (host/simd/solve.hpp), instead of staging W factors into the compact layout; both are
/// SIMD kernels, so this holds for `kernels::simd` too. From a development program (one
/// thread, 128 KiB of factors, one right-hand side, ns per matrix, staged / direct; the table
/// in git show b70cdcc:docs/cpu-backend.md):
///   getrs no_trans double n=5 15 / 17, 6 20 / 26, 8 25 / 22, 12 62 / 49, 16 68 / 37,
///     24 175 / 120, 32 381 / 136; float n=8 16 / 17, 12 37 / 34, 16 44 / 33, 24 97 / 86,
///     32 196 / 128;
///   getrs trans (a transposed copy first) double n=8 31 / 24, 12 59 / 72, 16 69 / 60,
///     24 164 / 179, 32 366 / 296; float n=12 36 / 41, 16 45 / 44, 24 93 / 129, 32 191 / 152;
///   potrs double n=5 14 / 19, 8 26 / 14, 12 53 / 47, 16 71 / 48, 24 146 / 137, 32 380 / 254;
///   potrs float n=8 15 / 12, 16 42 / 36, 24 78 / 108, 32 184 / 139 (lower; upper alike).
/// Streaming (2 threads, 256 MiB) both kinds ran at 18 - 32 GB/s of the 48 - 53 GB/s copy
/// bandwidth before the direct solves prefetched (run-to-run spread about 15%); direct getrs
/// double gained at n = 24, 32 (28 against 21 - 25), direct potrs lost 10 - 15% there. With
/// the prefetch (4b4148b) direct potrs double wins there too (2026-11-25, one development
/// program, 256 MiB, 2 threads, GB/s direct / staged in the same run, three runs: n = 24
/// 37 / 25, 37 / 26, 29 / 25; 28 26 / 24, 28 / 25, 26 / 24; 32 22 / 21, 29 / 21, 28 / 20).
/// It was not taken then: under AddressSanitizer + UBSan (tests/run.sh) the direct potrs of
/// double n = 32 (4 matrices x 4 packs, both sweeps and the transposed copy unrolled) did not
/// finish compiling in 45 minutes; since d9ca697 the sanitized build groups one matrix from
/// n = 9 (306 s). Against potrs' triangle-only staging (20ef195), both at -O3, 2 threads,
/// GB/s, medians of 3 alternating runs (bench/results/epyc-vm/cpu-f9903e3-epyc-dev-potrs-direct-ab.txt),
/// staged / direct:
///   n             21         24         26         28         30         32
///   0.5 MiB   33 / 28    36 / 36    36 / 31    35 / 31    41 / 31    30 / 35   (run A)
///             35 / -     38 / 53    45 / -     36 / -     44 / -     35 / 46   (run B)
///   256 MiB   24 / 24    26 / 37    26 / 22    26 / 25    26 / 27    20 / 29   (run A)
///             24 / -     32 / 30    30 / -     32 / -     32 / -     25 / 34   (run B)
/// Direct wins where the AVX-512 packs (8 doubles) tile the column exactly, n = 24 and 32; at
/// the others its last pack overlaps its neighbour and repeats work, and staging wins.
/// Under AddressSanitizer double potrs stays staged from n = 21, as it was before d6815bc:
/// the sanitized tests (n = 2, 7, 8, 32) compiling the direct potrs of double n = 32 took
/// test_simd_solve_2 from 242 to 840 s, and a local CI run to 88 minutes of its 90 (other
/// compiles ran beside it; the run before took 73). The release tests check the direct kernel
/// at every n, the sanitized ones at n = 8.
constexpr bool direct_order(op o, bool is_double, int n, bool trans = false) {
  if (o == op::getrs) return trans ? n >= 28 : n >= (is_double ? 8 : 12);
#if defined(__SANITIZE_ADDRESS__)
  if (o == op::potrs) return (n >= 8 && n <= 20) || (!is_double && n >= 28);
#else
  if (o == op::potrs) return (n >= 8 && n <= 20) || (is_double ? n == 24 || n == 32 : n >= 28);
#endif
  return false;
}

template <class T>
constexpr bool direct(op o, int n, bool trans = false) {
  return direct_order(o, sizeof(T) == 8, n, trans);
}

/// Where a direct solve that outgrows the last-level cache (streaming_min_bytes) takes one
/// matrix at a time, the next one prefetched, instead of interleaved groups (solve.hpp
/// solve_range). Groups are G streams of factors at once; streaming, one stream read memory
/// faster. EPYC VM, 2 threads, one right-hand side, GB/s, groups / one, two runs each
/// (bench/results/epyc-vm/cpu-e79f6ff-epyc-dev-solves-streaming.txt):
///   256 MiB, double: getrs n=8 26 - 27 / 37, 12 20 / 31, 16 18 / 33 - 34, 24 18 / 35,
///     32 20 / 23; potrs 8 30 - 32 / 38 - 40, 12 24 / 32, 16 29 / 39 - 40, 24 18 - 20 / 35,
///     32 22 - 23 / 31 - 32;
///   256 MiB, float: getrs 12 24 - 27 / 24 - 25, 16 23 - 24 / 20 - 24, 24 13 - 18 / 22 - 28,
///     32 17 / 25 - 27; potrs 8 31 / 27, 12 25 - 26 / 25, 16 22 - 23 / 20 - 24, 32 18 - 19 /
///     24 - 28;
///   8 MiB (in the last-level cache), groups win: double getrs n=16 70 / 50, 32 77 - 79 /
///     63 - 64; float getrs 32 62 - 63 / 39 - 40.
/// Hence double at every order, float from n = 24.
constexpr bool streams_one_at_a_time(bool is_double, int n) { return is_double || n >= 24; }

/// The largest cache of cpu0 as Linux's sysfs lists it (what lscpu shows: the cache a core
/// shares, 32 MiB on the EPYC VM), or -1. sysconf's _SC_LEVEL3_CACHE_SIZE reported 320 MiB
/// there: the whole socket's L3, of which one core's complex sees a tenth.
inline long sysfs_cache_bytes() {
  long best = -1;
  for (int i = 0; i < 8; ++i) {
    char path[64];
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    std::FILE* f = std::fopen(path, "r");
    if (!f) break;
    long v = 0;
    char unit = 0;
    const int got = std::fscanf(f, "%ld%c", &v, &unit);
    std::fclose(f);
    if (got >= 1) {
      if (got == 2 && unit == 'K') v <<= 10;
      if (got == 2 && unit == 'M') v <<= 20;
      best = v > best ? v : best;
    }
  }
  return best;
}

/// Where a call's operands together span at least this many bytes it streams: gemm's outputs
/// that are only written (C with beta == 0) go to memory by streaming stores (simd/arch.hpp
/// `stream`), and the direct solves take one matrix at a time (streams_one_at_a_time). The
/// size of the last-level cache (sysfs_cache_bytes, else the C library's; at least 8 MiB,
/// 64 MiB when neither says). Below it the output is likely still in cache when it is read
/// next, and a streaming store would evict it. Tests set it to 0 or to the largest value.
inline std::size_t default_streaming_min_bytes() {
  long llc = sysfs_cache_bytes();
#if defined(_SC_LEVEL3_CACHE_SIZE)
  if (llc <= 0) llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  if (llc <= 0) return std::size_t(64) << 20;
  return std::size_t(llc) < (std::size_t(8) << 20) ? std::size_t(8) << 20 : std::size_t(llc);
}
/// In that regime gemm prefetches the operands of the matrix this many bytes of A ahead (every
/// line of A and B, and of C where C is read), where gemm_prefetches() says so: without it the
/// hardware prefetchers alone left the streaming gemm a quarter below the copy bandwidth on
/// the Xeon VM (git show b70cdcc:docs/performance.md, CPU).
inline constexpr std::size_t gemm_prefetch_ahead_bytes = 4096;
/// Whether the streaming gemm prefetches in software: not on AMD's cores, where the hardware
/// prefetchers alone stream faster and the software prefetches (a burst of a matrix's lines
/// at a time) cost up to 2x. Development program, 2 threads, 256 MiB per operand, beta = 0, GB/s of A + B + C,
/// with / without, two passes (bench/results/epyc-vm/cpu-c42d1e0-dev-gemm-prefetch.txt, runs 3, x):
/// EPYC VM (Zen 4) double n = 2 33 - 38 / 39 - 43, 8 35 - 36 / 41 - 43, 12 22 / 27 - 32, 16 24 -
/// 25 / 39 - 41, 24 21 - 22 / 26 - 27, 32 20 - 22 / 27 (OpenBLAS's loop 25 - 30); the GPU
/// machine's Xeon n = 4 31 / 21 - 26, 8 31 / 25 - 28, 12 27 / 21, 16 - 32 even within the
/// passes' spread, n = 2 18 - 19 / 22 - 24. A run-time value: tests and development programs
/// set it.
inline bool default_gemm_prefetches() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  return !__builtin_cpu_is("amd");
#else
  return true;
#endif
}
inline std::atomic<bool>& gemm_prefetches() {
  static std::atomic<bool> on{default_gemm_prefetches()};
  return on;
}
/// In that regime, where C's columns cannot be streamed pack by pack (M not a multiple of the
/// pack) but C is a packed batch, gemm writes groups of matrices whose C spans a whole number
/// of cache lines to an L1 buffer and streams the buffer (simd/gemm.hpp, grouped_streamable and
/// gemm_range), for groups of at most this many bytes. Xeon VM, 2 threads, 256 MiB per operand, GB/s plain ->
/// grouped, medians of 3 passes (bench/results/xeon-vm/cpu-203013e-xeon-dev-gemm-grouped-nt.txt):
/// double n = 3 24 -> 30, 6 29 -> 36, 7 29 -> 38, 12 25 -> 30, 20 18 -> 22, 10 30 -> 26 (loses);
/// float 3 21 -> 29, 6 25 -> 31, 12 23 -> 30, 24 18 -> 20. Double n = 24 (4608-byte groups)
/// lost (23 -> 22), hence the cap.
inline constexpr std::size_t gemm_group_max_bytes = 4096;
inline std::atomic<std::size_t>& streaming_min_bytes() {
  static std::atomic<std::size_t> bytes{default_streaming_min_bytes()};
  return bytes;
}
/// Whether a call whose operands span `footprint` bytes streams (streaming_min_bytes).
inline bool streams(std::size_t footprint) {
  return footprint >= streaming_min_bytes().load(std::memory_order_relaxed);
}

/// When `par` runs a call on the calling thread, with no OpenMP region (host/ranges.hpp
/// fit_threads): where its operands (all matrices together) weigh less than
/// parallel_min_bytes(threads) = 24 KiB + 2 KiB per thread, a byte of getrf's or potrf's
/// weighing 1 and the others' parallel_weight(op). A team's fork and join cost 1.1 - 1.7 us
/// with 2 threads (best - median; both machines) and more with more threads: more than the
/// team saves on a batch of a few microseconds. Where one thread and the team were even, by
/// operand bytes, KiB (geometric means over n = 2, 4, 8, 16, ordinary and compact, double and
/// float; development program, 4 - 512 KiB per operand, bench/results/gpu-host-xeon/cpu-0462913-dev-small-calls.txt):
///                       getrf potrf inverse getrs potrs gemm
///   Xeon, 2 threads       26    30     48     63    78   133  (a second run: 31 31 84 94 97 221)
///   Xeon, 8 threads       42    47     98    123   137   284
///   Xeon, 16 threads      47    61     87    118   150   235  (58 65 112 150 174 314)
///   EPYC VM, 2 threads    35    41     68     95    91   295  (22 27 32 47 45 119)
/// Hence the weights (a factorization's byte costs 2 of the inverse's, 3 of a solve's) and the
/// rule's 28 - 56 KiB. gemm's crossings (and the inverse's) were measured with their inputs in
/// the calling thread's cache, the others' with inputs just written by the team; bench_cpu,
/// where the previous implementation's team leaves them spread, found the team 1.5x faster for
/// gemm at 64 KiB per operand on 16 threads (bench/results/gpu-host-xeon/cpu-f27346a-xeon-small-*.csv) with
/// a weight of 1/6: gemm weighs as the solves (a third), and the layout conversions (copies,
/// not measured) with it. One rule for every operation on bytes alone was within 10% of the
/// better of the two at every size on average, but missed by 2x on gemm (too early) and the
/// factorizations (too late); counting flops (bytes + c flops) did not help: gemm has the most
/// flops and the cheapest bytes. A team smaller than the whole did not help either: one thread
/// per 32 KiB was 10 - 35% slower than all 16 at 64 - 256 KiB on the Xeon.
constexpr double parallel_weight(op o) {
  switch (o) {
    case op::getrf: case op::potrf: case op::getri: return 1;
    case op::inverse: return 0.5;
    case op::getrs: case op::potrs: case op::trsm: case op::gemm: case op::convert: return 1.0 / 3;
  }
  return 1;
}
/// A run-time value: parallel_min_bytes_set() = B makes it B for every team (0: the team always,
/// whatever the size; -1: the rule).
inline std::atomic<long>& parallel_min_bytes_set() {
  static std::atomic<long> bytes{-1};  // -1: the rule above
  return bytes;
}
inline std::size_t parallel_min_bytes(int threads) {
  const long set = parallel_min_bytes_set().load(std::memory_order_relaxed);
  if (set >= 0) return std::size_t(set);
  return (std::size_t(24) << 10) + (std::size_t(2) << 10) * std::size_t(threads > 0 ? threads : 1);
}

}  // namespace tinybatch::detail::simd::tuning
