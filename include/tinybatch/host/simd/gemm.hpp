// gemm for fixed M, N, K <= 32, in the style of the small-GEMM paper (seeds/004): a tile of C
// is held in registers while the K loop streams columns of A through the vector registers and
// broadcasts elements of B into them (one fused multiply-add per pack and column of C).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../tuning.hpp"
#include "arch.hpp"

#if TINYBATCH_HOST_SIMD

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace tinybatch::detail::simd {

/// Register blocking of C: `rows` packs by `cols` columns. The accumulators, one pack of A per
/// row pack and a spare for the broadcast must fit in the register file; among tilings that
/// fit, the one with the most multiply-adds per load wins (rows * cols / (rows + cols)).
template <class Arch>
struct gemm_blocking {
  static constexpr int max_rows = Arch::registers == 32 ? 4 : 3;
  static constexpr int max_cols(int rows) { return (Arch::registers - 2 - rows) / rows; }
};

/// Splits `total` items into `parts` tiles as evenly as possible, the larger tiles last (so
/// the overlapping last pack of a column always shares a tile with the pack it overlaps).
constexpr int tile_begin(int total, int parts, int t) {
  const int small = total / parts, big_count = total % parts, small_count = parts - big_count;
  return t <= small_count ? t * small : small_count * small + (t - small_count) * (small + 1);
}

/// The packs of a column of C and of op(A): column_tiling's (packs of a power of two lanes,
/// the last one overlapping the one before where M is not a multiple), or, with AVX-512 where
/// M is not a power of two and bit_ceil(M) lanes fit one register, one pack of bit_ceil(M)
/// lanes whose lanes >= M are masked off (load_masked, store_masked): float M = 12 then takes
/// one 16-lane pack, not two overlapping 8-lane ones, half the multiply-adds.
template <class Arch, class T, int M>
struct gemm_tiling {
  using plain = column_tiling<Arch, T, M>;
  static constexpr bool masked = Arch::registers == 32 && (M & (M - 1)) != 0 &&
                                 bit_ceil(M) <= lanes<Arch, T> && bit_ceil(M) * int(sizeof(T)) >= 16;
  static constexpr int width = masked ? bit_ceil(M) : plain::width;
  static constexpr int count = masked ? 1 : plain::count;
  static constexpr int offset(int v) { return masked ? 0 : plain::offset(v); }
  static constexpr unsigned short mask = (1u << M) - 1u;
};
/// (Through an output argument, as load_masked.)
template <class tiling, int W, class T>
TINYBATCH_SIMD_INLINE void tile_load(pack<T, W>& v, const T* p) {
  if constexpr (tiling::masked)
    load_masked<W>(v, p, tiling::mask);
  else
    v = load<W>(p);
}
template <class tiling, int W, class T>
TINYBATCH_SIMD_INLINE void tile_store(T* p, const pack<T, W>& v) {
  if constexpr (tiling::masked)
    store_masked<W>(p, v, tiling::mask);
  else
    store<W>(p, v);
}

/// One register tile of C: packs [V0, V0 + MB) of the column tiling and columns [J0, J0 + NB).
/// A is M x K (already op(A)); op(B)(l, j) is b[l * bl + j * bj] (no_trans: bl = 1, bj = ldb;
/// trans: bl = ldb, bj = 1). BL and BJ are index_t, or std::integral_constant where B is
/// packed (gemm_range).
/// NT: beta is 0 and every pack of C is aligned to its size; C is written by streaming stores.
template <class Arch, class T, int M, int K, int V0, int MB, int J0, int NB, bool NT = false, class LA, class BL,
          class BJ, class LC>
TINYBATCH_SIMD_INLINE void gemm_tile(T alpha, const T* a, LA lda, const T* b, BL bl, BJ bj,
                                     T beta, T* c, LC ldc) {
  using tiling = gemm_tiling<Arch, T, M>;
  constexpr int W = tiling::width;
  using P = pack<T, W>;
  // Loops over the tile are unrolled completely (constant bounds), so `acc` and `av` become
  // registers. (Starting the accumulators as the first step's products instead of zeros would
  // turn a product of -0 into a -0 where the BLAS's 0 + (-0) gives +0.)
  P acc[MB][NB];
#pragma GCC unroll 32
  for (int j = 0; j < NB; ++j)
#pragma GCC unroll 8
    for (int v = 0; v < MB; ++v) acc[v][j] = P{};
  // The K loop streams (unrolled by two; unrolling it completely for small tiles gained float
  // n = 16 10 - 15% but made the release build of tests/test_simd_gemm compile over 40%
  // longer, and n = 32 1.6 - 2x slower where its code outgrew the instruction cache).
#pragma GCC unroll 2
  for (int l = 0; l < K; ++l) {
    P av[MB];
#pragma GCC unroll 8
    for (int v = 0; v < MB; ++v) tile_load<tiling, W>(av[v], a + tiling::offset(V0 + v) + index_t(l) * lda);
#pragma GCC unroll 32
    for (int j = 0; j < NB; ++j) {
      const T blj = b[l * bl + (J0 + j) * bj];
#pragma GCC unroll 8
      for (int v = 0; v < MB; ++v) acc[v][j] = av[v] * blj + acc[v][j];
    }
  }
  // C is read (beta != 0) for the whole tile before any of it is written: the last pack of a
  // column may overlap the previous one, and both live in this tile. alpha == 1 and beta == 0,
  // the common call, stores the accumulators as they are.
  if constexpr (NT) {
    (void)beta;
#pragma GCC unroll 32
    for (int j = 0; j < NB; ++j)
#pragma GCC unroll 8
      for (int v = 0; v < MB; ++v)
        stream<W>(c + tiling::offset(V0 + v) + index_t(J0 + j) * ldc, alpha * acc[v][j]);  // exact for alpha == 1
  } else if (beta == T(0) && alpha == T(1)) {
#pragma GCC unroll 32
    for (int j = 0; j < NB; ++j)
#pragma GCC unroll 8
      for (int v = 0; v < MB; ++v)
        tile_store<tiling, W>(c + tiling::offset(V0 + v) + index_t(J0 + j) * ldc, acc[v][j]);
  } else if (beta == T(0)) {
#pragma GCC unroll 32
    for (int j = 0; j < NB; ++j)
#pragma GCC unroll 8
      for (int v = 0; v < MB; ++v)
        tile_store<tiling, W>(c + tiling::offset(V0 + v) + index_t(J0 + j) * ldc, alpha * acc[v][j]);
  } else {
    P old[MB][NB];
#pragma GCC unroll 32
    for (int j = 0; j < NB; ++j)
#pragma GCC unroll 8
      for (int v = 0; v < MB; ++v) tile_load<tiling, W>(old[v][j], c + tiling::offset(V0 + v) + index_t(J0 + j) * ldc);
#pragma GCC unroll 32
    for (int j = 0; j < NB; ++j)
#pragma GCC unroll 8
      for (int v = 0; v < MB; ++v)
        tile_store<tiling, W>(c + tiling::offset(V0 + v) + index_t(J0 + j) * ldc, alpha * acc[v][j] + beta * old[v][j]);
  }
}

/// C := alpha op(A) op(B) + beta C for one matrix; C is M x N, op(A) M x K. alpha != 0 (the
/// caller handles alpha == 0, where the BLAS reads neither A nor B).
template <class Arch, class T, int M, int N, int K, bool TA, bool NT = false, class LA, class BL, class BJ,
          class LC>
TINYBATCH_SIMD_INLINE void gemm_one(T alpha, const T* a_in, LA lda_in, const T* b, BL bl, BJ bj,
                                    T beta, T* c, LC ldc) {
  using tiling = gemm_tiling<Arch, T, M>;
  using blocking = gemm_blocking<Arch>;
  // op(A) = A^T: rows of A are strided, so A^T is formed once in L1 and then streamed by
  // columns like a non-transposed A.
  alignas(64) T at[TA ? M * K : 1];
  if constexpr (TA) {
    for (int i = 0; i < M; ++i)
#pragma GCC unroll 32
      for (int l = 0; l < K; ++l) at[i + l * M] = a_in[l + index_t(i) * lda_in];
  }
  const T* const a = TA ? at : a_in;
  const auto lda = [&] {
    if constexpr (TA)
      return std::integral_constant<int, M>{};
    else
      return lda_in;
  }();
  constexpr int NV = tiling::count;
  constexpr int row_tiles = (NV + blocking::max_rows - 1) / blocking::max_rows;
  unroll<row_tiles>([&](auto rt) TINYBATCH_SIMD_AI {
    constexpr int V0 = tile_begin(NV, row_tiles, rt);
    constexpr int MB = tile_begin(NV, row_tiles, rt + 1) - V0;
    constexpr int max_nb = blocking::max_cols(MB);
    constexpr int col_tiles = (N + max_nb - 1) / max_nb;
    unroll<col_tiles>([&](auto ct) TINYBATCH_SIMD_AI {
      constexpr int J0 = tile_begin(N, col_tiles, ct);
      constexpr int NB = tile_begin(N, col_tiles, ct + 1) - J0;
      gemm_tile<Arch, T, M, K, V0, MB, J0, NB, NT>(alpha, a, lda, b, bl, bj, beta, c, ldc);
    });
  });
}

/// Whether C's packs can be streamed at all: whole packs of at least 16 bytes that tile each
/// column without overlap (M a multiple of the pack width), columns a whole number of packs
/// apart. Each matrix's start is checked as it comes.
template <class Arch, class T, int M>
constexpr bool streamable_rows() {
  constexpr int W = gemm_tiling<Arch, T, M>::width;
  return M % W == 0 && W * int(sizeof(T)) >= 16;
}
template <class Arch, class T, int M>
TINYBATCH_SIMD_INLINE bool streamable(const T* c, int ldc, int n) {
  constexpr std::size_t bytes = std::size_t(gemm_tiling<Arch, T, M>::width) * sizeof(T);
  return reinterpret_cast<std::uintptr_t>(c) % bytes == 0 && (n == 1 || std::size_t(ldc) * sizeof(T) % bytes == 0);
}

/// Bytes of the smallest run of whole matrices of C (M x N, packed) that is a whole number of
/// 64-byte lines: lcm(64, M * N * sizeof(T)).
template <class T, int M, int N>
constexpr std::size_t gemm_group_bytes() {
  std::size_t a = 64, b = std::size_t(M) * N * sizeof(T);
  const std::size_t prod = a * b;
  while (b != 0) {
    const std::size_t t = a % b;
    a = b, b = t;
  }
  return prod / a;
}
/// Whether the streaming gemm writes C in groups through an L1 buffer (gemm_range).
template <class Arch, class T, int M, int N>
constexpr bool grouped_streamable() {
  return !streamable_rows<Arch, T, M>() && gemm_group_bytes<T, M, N>() <= tuning::gemm_group_max_bytes;
}

/// Prefetches every line of A's and B's matrix k (and of C's where `c_too`, with intent to
/// write), matrices held as `span_*` bytes from their starts.
template <class T>
TINYBATCH_SIMD_INLINE void prefetch_operands(const matrix_starts<T>& A, const matrix_starts<T>& B,
                                             const matrix_starts<T>& C, index_t k, std::size_t span_a,
                                             std::size_t span_b, std::size_t span_c, bool c_too) {
  const char* a = reinterpret_cast<const char*>(A[k]);
  const char* b = reinterpret_cast<const char*>(B[k]);
  for (std::size_t o = 0; o < span_a; o += 64) __builtin_prefetch(a + o, 0, 3);
  for (std::size_t o = 0; o < span_b; o += 64) __builtin_prefetch(b + o, 0, 3);
  if (c_too) {
    const char* c = reinterpret_cast<const char*>(C[k]);
    for (std::size_t o = 0; o < span_c; o += 64) __builtin_prefetch(c + o, 1, 3);
  }
}

/// C := alpha A B + beta C for matrices [k0, k1) of packed batches of 2 x 2 matrices (ld 2,
/// stride 4, neither operand transposed): W / 4 matrices per register, C = A0 B0 + A1 B1 lane by
/// lane, with A0, A1 the columns of A and B0, B1 the rows of B spread over each matrix's lanes
/// by permutes within the register. The column-by-column kernel (gemm_one) spends a register,
/// a masked load and a store per 2-element column; this takes two loads, four permutes, two
/// multiply-adds and one store per W / 4 matrices. Development program, 2 threads, ns per matrix
/// cache-resident (128 KiB) and GB/s streaming (256 MiB), before / after / Eigen
/// (bench/results/gpu-host-xeon/cpu-d0df0d1-dev-gemm-2x2.txt): EPYC VM float 0.91 - 1.54 / 0.30 - 0.47 / 0.60 -
/// 0.85 ns, 12 - 22 / 39 - 55 / 24 - 45 GB/s; double 1.02 - 1.66 / 0.72 - 1.00 / 1.19 - 1.58 ns,
/// 24 - 40 / 37 - 58 / 28 - 40 GB/s. On the GPU machine's Xeon a kernel like it took float 0.43 -
/// 0.47 ns against the library's 1.27 - 1.37 and Eigen's 1.16 - 1.19, double 0.83 - 0.89 against
/// 1.54 - 1.59 and 2.03 - 2.20. The same products, summed in the same order from
/// zero, as gemm_one: the results are identical. `nt`: beta == 0 and streaming, so whole
/// aligned registers of C go out by streaming stores; the matrices before the first aligned one
/// and the last < W / 4 take gemm_one.
template <class Arch, class T>
TINYBATCH_SIMD_INLINE void gemm_2x2_packed(T alpha, const T* a, const T* b, T beta, T* c, index_t k0, index_t k1,
                                           bool nt) {
  constexpr int W = lanes<Arch, T>, per = W / 4;
  using P = pack<T, W>;
  using two = std::integral_constant<int, 2>;
  using one = std::integral_constant<index_t, 1>;
  using col = std::integral_constant<index_t, 2>;
  const auto single = [&](index_t k) __attribute__((always_inline)) {
    gemm_one<Arch, T, 2, 2, 2, false>(alpha, a + 4 * k, two{}, b + 4 * k, one{}, col{}, beta, c + 4 * k, two{});
  };
  index_t k = k0;
  if (nt)
    for (; k < k1 && reinterpret_cast<std::uintptr_t>(c + 4 * k) % Arch::bytes != 0; ++k) single(k);
  // Lane i = 4 m + p (matrix m, position p) takes lane 4 m + p & 1 of A (a00 a10 a00 a10),
  // 4 m + 2 + p & 1 (a01 a11 a01 a11), and 4 m + p & 2 of B (b00 b00 b01 b01), 4 m + p & 2 + 1
  // (b10 b10 b11 b11). (The packs are not returned from a helper: a vector return draws
  // GCC's -Wpsabi note in the including file.)
  [&]<int... I>(std::integer_sequence<int, I...>) __attribute__((always_inline)) {
    for (; k1 - k >= per; k += per) {
      const P av = load<W>(a + 4 * k), bv = load<W>(b + 4 * k);
      P acc = __builtin_shufflevector(av, av, ((I & ~3) + (I & 1))...) * __builtin_shufflevector(bv, bv, ((I & ~3) + (I & 2))...) + P{};
      acc = __builtin_shufflevector(av, av, ((I & ~3) + 2 + (I & 1))...) * __builtin_shufflevector(bv, bv, ((I & ~3) + (I & 2) + 1)...) + acc;
      if (nt)
        stream<W>(c + 4 * k, alpha * acc);  // exact for alpha == 1
      else if (beta == T(0) && alpha == T(1))
        store<W>(c + 4 * k, acc);
      else if (beta == T(0))
        store<W>(c + 4 * k, alpha * acc);
      else
        store<W>(c + 4 * k, alpha * acc + beta * load<W>(c + 4 * k));
    }
  }(std::make_integer_sequence<int, W>{});
  for (; k < k1; ++k) single(k);
  if (nt) store_fence();
}

/// Matrices [k0, k1) of the batch, with instruction set `s`. `streaming`: the call's
/// operands outgrow the last-level cache (tuning::streaming_min_bytes), so A and B (and C
/// where it is read) are prefetched tuning::gemm_prefetch_ahead_bytes ahead (where
/// tuning::gemm_prefetches says so: not on AMD), and with beta
/// == 0 every matrix whose C is aligned for it is written by streaming stores.
template <int M, int N, int K, bool TA, class T>
void gemm_range(isa s, bool tb, T alpha, matrix_starts<T> A, matrix_starts<T> B, T beta,
                matrix_starts<T> C, index_t k0, index_t k1, bool streaming = false) {
  const index_t bl = tb ? B.ld : 1, bj = tb ? 1 : B.ld;
  with_isa(s, [&](auto arch) __attribute__((always_inline)) {
    using Arch = decltype(arch);
    if constexpr (M == 2 && N == 2 && K == 2 && !TA) {
      if (!tb && A.ptrs == nullptr && B.ptrs == nullptr && C.ptrs == nullptr && A.ld == 2 && B.ld == 2 && C.ld == 2 &&
          A.stride == 4 && B.stride == 4 && C.stride == 4) {
        gemm_2x2_packed<Arch>(alpha, A.base, B.base, beta, C.base, k0, k1, streaming && beta == T(0));
        return;
      }
    }
    if (streaming) {
      // The spans cover each matrix from its start to its last element (the gaps of a
      // larger leading dimension too: a few lines more, fewer instructions).
      const std::size_t span_a = sizeof(T) * (std::size_t(A.ld) * ((TA ? M : K) - 1) + (TA ? K : M));
      const std::size_t span_b = sizeof(T) * (std::size_t(B.ld) * ((tb ? K : N) - 1) + (tb ? N : K));
      const std::size_t span_c = sizeof(T) * (std::size_t(C.ld) * (N - 1) + M);
      // Matrices under a line: one matrix in `every` prefetches (float n = 2, a prefetch per
      // matrix and operand: 24 -> 16 GB/s); a power of two, tested by a mask (a `%` divided).
      index_t every = 1;
      while (every * span_a < 64) every *= 2;
      // No software prefetch (tuning::gemm_prefetches): a distance past every matrix.
      const index_t ahead = tuning::gemm_prefetches().load(std::memory_order_relaxed)
                                ? index_t((tuning::gemm_prefetch_ahead_bytes + span_a - 1) / span_a)
                                : k1 - k0;
      const bool nt = beta == T(0) && streamable_rows<Arch, T, M>();
      const matrix_starts<T> a = A, b = B, c = C;
      const T al = alpha, be = beta;
      if constexpr (grouped_streamable<Arch, T, M, N>()) {
        // C a packed batch: G matrices at a time into an L1 buffer, then to memory by
        // streaming stores, so that C's lines are not read first (tuning::gemm_group_max_bytes).
        // Matrices before the first one whose C starts a line, and the last < G, are written
        // directly; a group's lines hold only its own matrices, so threads never share one.
        if (beta == T(0) && c.ptrs == nullptr && c.ld == M && c.stride == index_t(M) * N) {
          constexpr int G = int(gemm_group_bytes<T, M, N>() / (sizeof(T) * M * N)), W = Arch::bytes / int(sizeof(T));
          constexpr int lines = int(gemm_group_bytes<T, M, N>() / 64), per_line = 64 / Arch::bytes;
          using ldc = std::integral_constant<int, M>;
          // One pack of slack: the last column of the last matrix is stored as a (masked)
          // whole pack, which GCC's -Warray-bounds would otherwise see past the end.
          alignas(64) T buf[G * M * N + W];
          const auto one = [&](index_t k, T* out, auto ld) __attribute__((always_inline)) {
            if (k + ahead < k1 && (k & (every - 1)) == 0) prefetch_operands(a, b, c, k + ahead, span_a, span_b, span_c, false);
            gemm_one<Arch, T, M, N, K, TA>(al, a[k], a.ld, b[k], bl, bj, T(0), out, ld);
          };
          index_t k = k0;
          for (; k < k1 && reinterpret_cast<std::uintptr_t>(c[k]) % 64 != 0; ++k) one(k, c[k], ldc{});
          for (; k1 - k >= G; k += G) {
            for (int g = 0; g < G; ++g) one(k + g, buf + g * M * N, ldc{});
            T* const dst = c[k];
            for (int l = 0; l < lines * per_line; ++l) stream<W>(dst + l * W, load<W>(buf + l * W));
          }
          for (; k < k1; ++k) one(k, c[k], ldc{});
          store_fence();
          return;
        }
      }
      for (index_t k = k0; k < k1; ++k) {
        if (k + ahead < k1 && (k & (every - 1)) == 0) prefetch_operands(a, b, c, k + ahead, span_a, span_b, span_c, !nt);
        if constexpr (streamable_rows<Arch, T, M>()) {
          if (nt && streamable<Arch, T, M>(c[k], c.ld, N)) {
            gemm_one<Arch, T, M, N, K, TA, true>(al, a[k], a.ld, b[k], bl, bj, be, c[k], c.ld);
            continue;
          }
        }
        gemm_one<Arch, T, M, N, K, TA>(al, a[k], a.ld, b[k], bl, bj, be, c[k], c.ld);
      }
      if (nt) store_fence();
      return;
    }
    if constexpr (sizeof(T) == 4 || M * N * K <= 24 * 24 * 24) {
      // Local copies of the arguments: read through the closure, they were reloaded for every
      // matrix (a store to C may alias alpha and beta). One thread, 128 KiB, ns per matrix,
      // through the closure / copies / LIBXSMM in the same run (bench/results/epyc-vm/
      // cpu-d6815bc-epyc-dev-gemm-ab.txt, run r5): double n = 2 3.3 / 1.8 / 2.8,
      // 4 7.0 / 4.1 / 6.4, 8 17.6 / 13.7 / 15.4, 16 92 / 74 / 74; float n = 8 16.2 / 12.6 /
      // 15.8, 16 56 / 48 / 46, 32 312 / 292 / 290. Not for double n = 32: 617 -> 669 (LIBXSMM
      // 598), the copies kept in registers across its six column tiles pushed their column
      // offsets to the stack.
      const matrix_starts<T> a = A, b = B, c = C;
      const T al = alpha, be = beta;
      const index_t l = bl, j = bj;
      if constexpr (M * N * K <= 24 * 24 * 24) {
        // Packed op(B) = B (ldb == K, the common batch): its strides as compile-time
        // constants, so every broadcast of B is a displacement from one pointer, as in
        // LIBXSMM's JIT kernels. One thread, 128 KiB, ns per matrix, run-time / compile-time
        // strides (LIBXSMM), Xeon VM: double n = 2 2.1 / 1.8 (3.0), 5 11.2
        // / 9.5 (12.4), 8 26 / 22.5 (23), 12 84 / 77 (68), 16 121 / 116 (110); float n = 8 20
        // / 16 (18), 12 46 / 40 (33), 16 79 / 60 (56). Not at n = 32 (even within 2%), where
        // it would only add compile time; not for op(B) = B^T (one more copy of the kernel).
        // A's and C's leading dimensions too where they are packed (double n = 12
        // 77.0 -> 69.8 ns, float n = 16 60.4 -> 56.4; LIBXSMM 66.9, 55.2): packed batches only.
        if (!tb && b.ld == K && a.ld == (TA ? K : M) && c.ld == M) {
          using unit = std::integral_constant<index_t, 1>;
          using col = std::integral_constant<index_t, K>;
          using lda = std::integral_constant<int, TA ? K : M>;
          using ldc = std::integral_constant<int, M>;
          for (index_t k = k0; k < k1; ++k) gemm_one<Arch, T, M, N, K, TA>(al, a[k], lda{}, b[k], unit{}, col{}, be, c[k], ldc{});
          return;
        }
      }
      for (index_t k = k0; k < k1; ++k) gemm_one<Arch, T, M, N, K, TA>(al, a[k], a.ld, b[k], l, j, be, c[k], c.ld);
    } else {
      for (index_t k = k0; k < k1; ++k) gemm_one<Arch, T, M, N, K, TA>(alpha, A[k], A.ld, B[k], bl, bj, beta, C[k], C.ld);
    }
  });
}

}  // namespace tinybatch::detail::simd

#pragma GCC diagnostic pop

#endif  // TINYBATCH_HOST_SIMD
