// Ordinary-layout batches through the compact lane kernels ("staged"): each thread takes W
// matrices at a time (W = the vector width of the instruction set), gathers them into a
// small buffer in the compact layout (element (i, j) of the W matrices in one vector),
// runs the lane kernel of kernels.inc on it, and scatters the outputs back. The buffer stays
// in L1 (L2 at n = 32), so memory sees each matrix read once and written once, as with any
// in-place kernel, while every lane factors its own matrix with no shuffles: per matrix this
// is 3 to 6 times faster than the scalar reference and than a one-matrix-at-a-time SIMD
// kernel, whose pivot searches and reductions are chains of dependent shuffles (measured
// numbers in docs/design.md, CPU kernels). The gather / scatter is O(n^2) against the kernels' O(n^3).
//
// Pivots and info come out of the lane kernels exactly as the reference's (same order of
// arithmetic); lanes past the end of the batch hold identities and write nothing.
//
// What is read and written differs from the reference in one respect: whole matrices go
// through the buffer. potrf, potrs and trsm stage only the vector-wide chunks of A that hold
// an element of the triangle they use, but chunks across the diagonal (and the last,
// partial group of a range, element by element) take elements of the other triangle through
// the buffer (potrf writes them back with their bits unchanged); getrs / potrs read the
// factors and pivots of the matrices they then skip (info != 0) and leave their right-hand
// sides untouched; getri leaves a failed matrix untouched. A program that writes the other
// triangle from another thread during the call, or passes no pivots for failed matrices,
// needs kernels::reference.
#pragma once

#include "../simd/arch.hpp"

#if TINYBATCH_HOST_SIMD

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "../../core/compact.hpp"
#include "../../core/memory.hpp"
#include "../../core/pivots.hpp"
#include "../ranges.hpp"
#include "../tuning.hpp"
#include "kernels.hpp"

namespace tinybatch::detail::compact::staged {

using simd::matrix_starts;

/// A packed strided batch (ld == M, matrix k at base + k M N) with its extents in the type:
/// every address of a group folds to the group's base plus a constant. Through matrix_starts
/// the staging of tiny matrices was mostly scalar bookkeeping: W pointers computed, compared
/// (back_to_back) and prefetched one by one per operand and group (getrs, double, n = 2, one
/// thread: 6.5 ns per matrix staged against 1.6 in the compact layout; git show b70cdcc:docs/cpu-backend.md).
template <class T, int M, int N>
struct packed_starts {
  static constexpr bool packed = true;
  static constexpr int ld = M;
  T* base;
  TINYBATCH_LANES_INLINE T* operator[](index_t k) const { return base + k * (index_t(M) * N); }
};
template <class S>
inline constexpr bool is_packed_starts = requires { S::packed; };
/// W packed matrices in a buffer, addressed by their batch indices k0, k0 + 1, ...: where a
/// kernel writes a block of a packed output before it is streamed out (staged::inverse).
template <class T, int M, int N>
struct block_starts {
  static constexpr bool packed = true;
  static constexpr int ld = M;
  T* base;
  index_t k0;
  TINYBATCH_LANES_INLINE T* operator[](index_t k) const { return base + (k - k0) * (index_t(M) * N); }
};

/// Whether a is such a batch of M x N matrices.
template <int M, int N, class T>
bool packed_batch(const matrix_starts<T>& a) {
  return a.ptrs == nullptr && a.ld == M && a.stride == index_t(M) * N;
}

/// Largest staged group (elements per matrix, all operands) that gets the packed_starts
/// instantiation: where the staging costs as much as the kernel (n <= 8). Above it the
/// kernels' O(n^3) hides the bookkeeping, and a second instantiation only costs compile time.
inline constexpr int packed_max_elems = 8 * 9;

/// f(a') with a' the packed_starts of a where a is packed and small enough, else f(a).
template <int M, int N, int Elems, class T, class F>
bool with_starts(const matrix_starts<T>& a, F&& f) {
  if constexpr (Elems <= packed_max_elems)
    if (packed_batch<M, N>(a)) return f(packed_starts<T, M, N>{a.base});
  return f(a);
}
template <int M1, int N1, int M2, int N2, int Elems, class T, class F>
bool with_starts(const matrix_starts<T>& a, const matrix_starts<T>& b, F&& f) {
  if constexpr (Elems <= packed_max_elems)
    if (packed_batch<M1, N1>(a) && packed_batch<M2, N2>(b))
      return f(packed_starts<T, M1, N1>{a.base}, packed_starts<T, M2, N2>{b.base});
  return f(a, b);
}

/// Bytes of staged operands that still run at full vector width; larger ones run at half the
/// width. 64 KiB keeps full width at every n <= 32 in double except the solves' matrix plus
/// right-hand sides at n = 32. Before getrf and getri were register-tiled, full width at n = 32
/// (a 64 KiB group, past the 48 KiB L1) made every rank-1 update an L2 round trip and the
/// limit was 32 KiB; since, full width measured faster (double, one thread, ns per matrix,
/// 64 against 32 KiB: getrf n = 28 1343-1445 / 1585-1663, n = 32 2026-2168 / 2141-2278;
/// inverse n = 24 1343-1418 / 1688-1724, n = 32 3200-3301 / 3545-3783; potrf n = 32 904-924 /
/// 1049-1111; getrs n = 32 511-533 / 485-498).
inline constexpr std::size_t l1_stage_bytes = 64 * 1024;

/// Software prefetching of the matrices the staged kernels will stage next: for matrices
/// below `prefetch_below_bytes`, `prefetch_ahead_bytes` of them ahead of the group being
/// computed. Each group is read, computed and written in turn; at small n a group's kernel
/// is short and the loads of the next one stall it. Measured streaming, 256 MiB, 2 threads,
/// roofline fraction without / with (development program): n = 4 double getrf .85 / 1.36,
/// getrs .83 / 1.00, inverse .73 / .89; n = 2 inverse .77 / .83; but n = 16 getrf .72 / .69,
/// n = 32 getrf .54 / .49, getrs .68 / .59 (there the hardware prefetchers keep up and the
/// extra instructions cost), n = 8 mixed (getrf .73 / .69, getrs .62 / .80).
inline constexpr std::size_t prefetch_ahead_bytes = 4096;
inline constexpr std::size_t prefetch_below_bytes = 512;

/// Prefetches the matrices of the group prefetch_ahead_bytes after the one at k0 (Write:
/// for writing, as the operands updated in place).
template <int W, int M, int N, bool Write, class S>
TINYBATCH_LANES_INLINE void prefetch_ahead(const S& a, index_t k0, index_t e) {
  using T = std::remove_pointer_t<decltype(a[0])>;
  if constexpr (std::size_t(M) * N * sizeof(T) >= prefetch_below_bytes) return;
  constexpr std::size_t group = std::size_t(W) * M * N * sizeof(T);
  constexpr index_t groups = group >= prefetch_ahead_bytes ? 1 : index_t((prefetch_ahead_bytes + group - 1) / group);
  const index_t k = k0 + groups * W;
  if constexpr (is_packed_starts<S>) {  // one contiguous run: a prefetch per cache line
    if (k >= e) return;
    const char* p = reinterpret_cast<const char*>(a[k]);
    const std::size_t span = std::size_t(e - k < W ? e - k : W) * M * N * sizeof(T);
    for (std::size_t o = 0; o < span; o += 64) __builtin_prefetch(p + o, Write, 3);
    return;
  }
  const std::size_t span = (std::size_t(a.ld) * (N - 1) + M) * sizeof(T);
  for (int l = 0; l < W && k + l < e; ++l) {
    const char* p = reinterpret_cast<const char*>(a[k + l]);
    for (std::size_t o = 0; o < span; o += 64) __builtin_prefetch(p + o, Write, 3);
    __builtin_prefetch(p + span - 1, Write, 3);
  }
}

/// Calls f(lanes<P, Ops>{}) compiled for the active instruction set, P the widest lanes of it
/// whose staged operands (`bytes_per_lane` each lane) fit l1_stage_bytes; false where there is
/// no SIMD (the caller then runs the reference).
template <class T, std::size_t BytesPerLane, class F>
bool with_vector_lanes(simd::isa s, F&& f) {
  constexpr int w512 = simd::lanes<simd::avx512, T>, w256 = simd::lanes<simd::avx2, T>;
  constexpr int w512_fit = BytesPerLane * w512 <= l1_stage_bytes ? w512 : w256;
  constexpr int w256_fit = BytesPerLane * w256 <= l1_stage_bytes ? w256 : w256 / 2;
  if constexpr (simd::avx512_built) {
    if (s == simd::isa::avx512) {
      simd::run_avx512(f, lanes<simd::pack<T, w512_fit>, avx512::ops>{});
      return true;
    }
  }
  if (s == simd::isa::avx2) {
    simd::run_avx2(f, lanes<simd::pack<T, w256_fit>, avx2::ops>{});
    return true;
  }
  return false;
}

/// Scratch of one thread: `n` elements, 64-byte aligned, on the heap (up to 64 KiB per
/// operand at n = 32: too much for the stacks of some threading runtimes).
template <class T>
struct scratch {
  std::unique_ptr<T, void (*)(void*)> p;
  explicit scratch(std::size_t n) : p(static_cast<T*>(host_space::allocate(n * sizeof(T))), &host_space::deallocate) {}
  T* get() const { return p.get(); }
};

/// buf := matrices k0 .. k0 + W - 1 of `a` (M x N), compact with group width W; lanes at or
/// past `count` get the identity, on which every kernel is harmless. A full block goes
/// through the lane kernels' in-register transposes (Ops::stage_in) where they apply.
template <class P, class Ops, int M, int N, int Part = 0, class S, class T>
TINYBATCH_LANES_INLINE void gather(const S& a, index_t k0, index_t count, T* buf) {
  constexpr int W = lane_traits<P>::width;
  if (k0 + W <= count) {
    const T* s[W];
    for (int l = 0; l < W; ++l) s[l] = a[k0 + l];
    if (Ops::template stage_in<P, M, N, Part>(s, a.ld, buf)) return;
    for (int j = 0; j < N; ++j)  // element by element, each vector built in registers
      for (int i = 0; i < M; ++i) {
        P v;
#pragma GCC unroll 16
        for (int l = 0; l < W; ++l) v[l] = s[l][i + index_t(j) * a.ld];
        std::memcpy(buf + (i + j * M) * W, &v, sizeof v);
      }
    return;
  }
  for (int l = 0; l < W; ++l) {
    T* d = buf + l;
    if (k0 + l < count) {
      const T* s = a[k0 + l];
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < M; ++i) d[(i + j * M) * W] = s[i + index_t(j) * a.ld];
    } else {
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < M; ++i) d[(i + j * M) * W] = i == j ? T(1) : T(0);
    }
  }
}

/// The lanes of buf back into their matrices, for the lanes below `count` where keep(l).
template <class P, class Ops, int M, int N, int Part = 0, class T, class S, class Keep>
TINYBATCH_LANES_INLINE void scatter(const T* buf, const S& a, index_t k0, index_t count, Keep&& keep) {
  constexpr int W = lane_traits<P>::width;
  bool all = k0 + W <= count;
  for (int l = 0; l < W && all; ++l) all = keep(l);
  if (all) {
    T* d[W];
    for (int l = 0; l < W; ++l) d[l] = a[k0 + l];
    if (Ops::template stage_out<P, M, N, Part>(buf, d, a.ld)) return;
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < M; ++i) {
        P v;
        std::memcpy(&v, buf + (i + j * M) * W, sizeof v);
#pragma GCC unroll 16
        for (int l = 0; l < W; ++l) d[l][i + index_t(j) * a.ld] = v[l];
      }
    return;
  }
  for (int l = 0; l < W && k0 + l < count; ++l) {
    if (!keep(l)) continue;
    T* d = a[k0 + l];
    const T* s = buf + l;
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < M; ++i) d[i + index_t(j) * a.ld] = s[(i + j * M) * W];
  }
}
inline constexpr auto all_lanes = [](int) { return true; };

/// Whether getri's column interchanges are left to scatter_columns: from the order where the
/// kernels stop unrolling (below it the swaps are blends in registers, and moving whole
/// columns one by one cost more than the swaps: inverse, double, n = 3, 9.9 against 18.2 ns).
constexpr bool defer_column_swaps(int n) {
  return n > generic::full_unroll;
}

/// scatter with getri's column interchanges applied on the way: column j of lane l's
/// buffer goes to column dest[l * N + j] of its matrix (kernels.inc, column_destinations).
template <class P, class Ops, int M, int N, class T, class S, class Keep>
TINYBATCH_LANES_INLINE void scatter_columns(const T* buf, const int* dest, const S& a, index_t k0, index_t count,
                                            Keep&& keep) {
  constexpr int W = lane_traits<P>::width;
  bool all = k0 + W <= count;
  for (int l = 0; l < W && all; ++l) all = keep(l);
  for (int j = 0; j < N; ++j) {
    const T* s = buf + std::size_t(j) * M * W;
    if (all) {
      T* d[W];
      for (int l = 0; l < W; ++l) d[l] = a[k0 + l] + index_t(dest[l * N + j]) * a.ld;
      if (Ops::template stage_out_column<P, M>(s, d)) continue;
      for (int i = 0; i < M; ++i) {
        P v;
        std::memcpy(&v, s + i * W, sizeof v);
#pragma GCC unroll 16
        for (int l = 0; l < W; ++l) d[l][i] = v[l];
      }
      continue;
    }
    for (int l = 0; l < W && k0 + l < count; ++l) {
      if (!keep(l)) continue;
      T* d = a[k0 + l] + index_t(dest[l * N + j]) * a.ld;
      for (int i = 0; i < M; ++i) d[i] = s[i * W + l];
    }
  }
}

/// body(tag, W, k0, e, scratch) for every W matrices k0.. of each thread's range [b, e) of
/// the batch, with the lanes of the active instruction set and scratch for `Elems` elements
/// per matrix (all its staged operands) per lane. Ranges are whole groups of 64 bytes of
/// lanes, so no W-block straddles two threads but the last. False where there is no SIMD.
/// after(tag) runs once per thread after its range (a fence for streaming stores).
template <class T, std::size_t Elems, class Policy, class Body, class After>
bool for_lane_blocks(const Policy& policy, index_t count, Body&& body, After&& after) {
  const simd::isa s = simd::active_isa();  // once per call: every thread runs the same set
  if (s == simd::isa::none) return false;
  constexpr int G = compact_width<T>;
  for_each_range(policy, (count + G - 1) / G, [&](index_t g0, index_t g1) {
    const index_t b = g0 * G, e = g1 * G < count ? g1 * G : count;
    const scratch<T> buf(Elems * G);
    with_vector_lanes<T, Elems * sizeof(T)>(s, [&](auto tag) {
      constexpr int W = lane_traits<typename decltype(tag)::type>::width;
      for (index_t k0 = b; k0 < e; k0 += W) body(tag, std::integral_constant<int, W>{}, k0, e, buf.get());
      after(tag);
    });
  });
  return true;
}
template <class T, std::size_t Elems, class Policy, class Body>
bool for_lane_blocks(const Policy& policy, index_t count, Body&& body) {
  return for_lane_blocks<T, Elems>(policy, count, body, [](auto) {});
}

/// Whether a whole group of the batch of type S (operation O, order Order, E elements per
/// matrix in all operands) skips the buffer: the lane kernels' *_group functions, from memory
/// to registers and back (a packed batch of tiny matrices; tuning::register_group_max_order).
template <simd::tuning::op O, class Ops, class P, int Order, int E, class S>
constexpr bool in_registers() {
  using T = typename lane_traits<P>::scalar;
  return is_packed_starts<std::decay_t<S>> && Ops::template group_in_registers<P, Order, E>() &&
         Order <= simd::tuning::register_group_max_order(O, sizeof(T) == 8, sizeof(P) == 64);
}

#define TINYBATCH_STAGED_LANES(tag, w) \
  using P = typename decltype(tag)::type; \
  using Ops = typename decltype(tag)::ops; \
  constexpr int W = decltype(w)::value

// Each function below takes the batch as matrix_starts (strided and pointer-array views both
// reduce to it), so a kernel is instantiated once per scalar type and size.

template <int M, int N, class T, class Policy>
bool getrf(const Policy& policy, const matrix_starts<T>& a0, index_t count, const pivot_view& ipiv, int* info) {
  return with_starts<M, N, M * N>(a0, [&](const auto& a) {
    return for_lane_blocks<T, M * N>(policy, count, [&](auto tag, auto w, index_t k0, index_t e, T* buf) {
      TINYBATCH_STAGED_LANES(tag, w);
      prefetch_ahead<W, M, N, true>(a, k0, e);
      if constexpr (in_registers<simd::tuning::op::getrf, Ops, P, (M > N ? M : N), M * N, decltype(a)>()) {
        if (k0 + W <= e) {
          Ops::template getrf_group<P, M, N>(a[k0], ipiv, info, k0, e);
          return;
        }
      }
      gather<P, Ops, M, N>(a, k0, e, buf);
      Ops::template getrf<P, M, N, W>(buf, ipiv, info, k0, e);
      scatter<P, Ops, M, N>(buf, a, k0, e, all_lanes);
    });
  });
}

template <int N, bool Lower, class T, class Policy>
bool potrf(const Policy& policy, const matrix_starts<T>& a0, index_t count, int* info) {
  // Whole groups stage only the chunks that hold an element of the factor's triangle (the
  // lane kernel reads nothing else); chunks across the diagonal take the other triangle's
  // elements through the buffer and back bit for bit.
  constexpr int part = Lower ? 1 : -1;
  return with_starts<N, N, N * N>(a0, [&](const auto& a) {
    return for_lane_blocks<T, N * N>(policy, count, [&](auto tag, auto w, index_t k0, index_t e, T* buf) {
      TINYBATCH_STAGED_LANES(tag, w);
      prefetch_ahead<W, N, N, true>(a, k0, e);
      if constexpr (in_registers<simd::tuning::op::potrf, Ops, P, N, N * N, decltype(a)>()) {
        if (k0 + W <= e) {
          Ops::template potrf_group<P, N, Lower>(a[k0], info, k0, e);
          return;
        }
      }
      gather<P, Ops, N, N, part>(a, k0, e, buf);
      Ops::template potrf<P, N, W, Lower>(buf, info, k0, e);
      scatter<P, Ops, N, N, part>(buf, a, k0, e, all_lanes);
    });
  });
}

/// A solve leaves B of a matrix whose factorization failed (info[k] != 0) as it was.
inline auto solved_lanes(const int* info, index_t k0) {
  return [=](int l) { return !info || info[k0 + l] == 0; };
}

/// Whether no matrix of the W from k0 failed its factorization (info[k] == 0).
inline bool all_factored(const int* info, index_t k0, int W) {
  int any = 0;
  if (info)
    for (int l = 0; l < W; ++l) any |= info[k0 + l];
  return any == 0;
}

/// A solve with the factor A (N x N) and right-hand sides B (N x NRHS) staged together;
/// solve(tag, W, a, b, k0, e) runs the lane kernel on the group's buffers. PartA: the part
/// of A the kernel reads (gather's Part: 0 all, 1 lower triangle, -1 upper). Whole packed
/// groups of tiny matrices whose factorizations all succeeded go through registers instead:
/// group(tag, a, b, k0, e) with the group's first factor and right-hand sides in memory.
template <simd::tuning::op O, int N, int NRHS, int PartA = 0, class T, class Policy, class Solve, class Group>
bool staged_solve(const Policy& policy, const matrix_starts<T>& a0, const matrix_starts<T>& b0, index_t count,
                  const int* info, Solve&& solve, Group&& group) {
  constexpr int E = N * (N + NRHS);
  return with_starts<N, N, N, NRHS, E>(a0, b0, [&](const auto& a, const auto& b) {
    return for_lane_blocks<T, E>(policy, count, [&](auto tag, auto w, index_t k0, index_t e, T* buf) {
      TINYBATCH_STAGED_LANES(tag, w);
      T* bb = buf + std::size_t(N) * N * W;
      prefetch_ahead<W, N, N, false>(a, k0, e);
      prefetch_ahead<W, N, NRHS, true>(b, k0, e);
      if constexpr (in_registers<O, Ops, P, N, E, decltype(a)>()) {
        if (k0 + W <= e && all_factored(info, k0, W)) {
          group(tag, a[k0], b[k0], k0, e);
          return;
        }
      }
      gather<P, Ops, N, N, PartA>(a, k0, e, buf);
      gather<P, Ops, N, NRHS>(b, k0, e, bb);
      solve(tag, w, buf, bb, k0, e);
      scatter<P, Ops, N, NRHS>(bb, b, k0, e, solved_lanes(info, k0));
    });
  });
}

template <int N, int NRHS, bool Trans, class T, class Policy>
bool getrs(const Policy& policy, const matrix_starts<T>& a, const pivot_view& ipiv, const matrix_starts<T>& b,
           index_t count, const int* info) {
  return staged_solve<simd::tuning::op::getrs, N, NRHS>(
      policy, a, b, count, info,
      [&](auto tag, auto w, T* ab, T* bb, index_t k0, index_t e) {
        TINYBATCH_STAGED_LANES(tag, w);
        Ops::template getrs<P, N, NRHS, W, Trans>(ab, ipiv, bb, k0, e);
      },
      [&](auto tag, const T* ag, T* bg, index_t k0, index_t e) {
        using P = typename decltype(tag)::type;
        using Ops = typename decltype(tag)::ops;
        Ops::template getrs_group<P, N, NRHS, Trans>(ag, ipiv, bg, k0, e);
      });
}

template <int N, int NRHS, bool Lower, class T, class Policy>
bool potrs(const Policy& policy, const matrix_starts<T>& a, const matrix_starts<T>& b, index_t count,
           const int* info) {
  // Only the factor's triangle is staged (as in potrf): the lane kernel reads nothing else.
  return staged_solve<simd::tuning::op::potrs, N, NRHS, Lower ? 1 : -1>(
      policy, a, b, count, info,
      [&](auto tag, auto w, T* ab, T* bb, index_t, index_t) {
        TINYBATCH_STAGED_LANES(tag, w);
        Ops::template potrs<P, N, NRHS, W, Lower>(ab, bb);
      },
      [&](auto tag, const T* ag, T* bg, index_t, index_t) {
        using P = typename decltype(tag)::type;
        using Ops = typename decltype(tag)::ops;
        Ops::template potrs_group<P, N, NRHS, Lower>(ag, bg);
      });
}

/// B := alpha op(A)^{-1} B or alpha B op(A)^{-1}; A is K x K (K = M on the left, N on the right).
template <int M, int N, bool Left, bool Lower, bool Trans, bool Unit, class T, class Policy>
bool trsm(const Policy& policy, T alpha, const matrix_starts<T>& a, const matrix_starts<T>& b, index_t count) {
  constexpr int K = Left ? M : N;
  return for_lane_blocks<T, K * K + M * N>(policy, count,
                            [&](auto tag, auto w, index_t k0, index_t e, T* buf) {
                              TINYBATCH_STAGED_LANES(tag, w);
                              const std::size_t sa = std::size_t(K) * K * W;
                              prefetch_ahead<W, K, K, false>(a, k0, e);
                              prefetch_ahead<W, M, N, true>(b, k0, e);
                              gather<P, Ops, K, K, Lower ? 1 : -1>(a, k0, e, buf);  // A's triangle only
                              gather<P, Ops, M, N>(b, k0, e, buf + sa);
                              Ops::template trsm<P, M, N, W, Left, Lower, Trans, Unit>(alpha, buf, buf + sa);
                              scatter<P, Ops, M, N>(buf + sa, b, k0, e, all_lanes);
                            });
}

/// inv(A) in place from getrf's factors; info[k] = the first zero U(k, k), A then unchanged.
template <int N, class T, class Policy>
bool getri(const Policy& policy, const matrix_starts<T>& a0, const pivot_view& ipiv, index_t count, int* info) {
  return with_starts<N, N, N * N>(a0, [&](const auto& a) {
    return for_lane_blocks<T, N * N>(policy, count, [&](auto tag, auto w, index_t k0, index_t e, T* buf) {
      TINYBATCH_STAGED_LANES(tag, w);
      const auto inverted = [&](int l) { return info[k0 + l] == 0; };  // else untouched
      prefetch_ahead<W, N, N, true>(a, k0, e);
      gather<P, Ops, N, N>(a, k0, e, buf);
      if constexpr (defer_column_swaps(N)) {
        int dest[W * N];
        Ops::template getri<P, N, W, true>(buf, ipiv, info, k0, e, dest);
        scatter_columns<P, Ops, N, N>(buf, dest, a, k0, e, inverted);
      } else {
        Ops::template getri<P, N, W>(buf, ipiv, info, k0, e);
        scatter<P, Ops, N, N>(buf, a, k0, e, inverted);
      }
    });
  });
}

/// inv(A) of the W matrices k0.. of a into out's (the streaming inverse's block; out: the
/// batch X or a block_starts buffer). The cache-resident loop of inverse writes it out.
template <class P, class Ops, int N, class T, class S, class O>
TINYBATCH_LANES_INLINE void invert_block(const S& a, const O& out, index_t k0, index_t e, T* buf, int* info) {
  constexpr int W = lane_traits<P>::width;
  if constexpr (in_registers<simd::tuning::op::inverse, Ops, P, N, N * N, S>()) {
    if (k0 + W <= e) {  // a whole packed group: no buffer
      Ops::template inverse_group<P, N>(a[k0], out[k0], info, k0, e);
      return;
    }
  }
  gather<P, Ops, N, N>(a, k0, e, buf);
  if constexpr (defer_column_swaps(N)) {
    int dest[W * N];
    Ops::template inverse<P, N, W, true>(buf, buf, info, k0, e, dest);
    scatter_columns<P, Ops, N, N>(buf, dest, out, k0, e, all_lanes);
  } else {
    Ops::template inverse<P, N, W>(buf, buf, info, k0, e);
    scatter<P, Ops, N, N>(buf, out, k0, e, all_lanes);
  }
}

/// X := inv(A), A untouched (a singular A leaves its LU factors in X, as reference::inverse).
template <int N, class T, class Policy>
bool inverse(const Policy& policy, const matrix_starts<T>& a0, const matrix_starts<T>& x0, index_t count, int* info) {
  // Streaming, a packed X is written W matrices at a time (a whole number of 64-byte lines
  // when W lanes fill one) through an L1 block by streaming stores, so that X's lines are
  // not read from memory before they are written (write-allocate).
  const bool streaming = simd::tuning::streams(std::size_t(count) * 2 * N * N * sizeof(T));
  return with_starts<N, N, N, N, N * N>(a0, x0, [&](const auto& a, const auto& x) {
    using X = std::decay_t<decltype(x)>;
    // Two loops: the cache-resident one exactly as before the streaming stores.
    if constexpr (is_packed_starts<X>) {
      if (streaming)
        return for_lane_blocks<T, N * N>(
            policy, count,
            [&](auto tag, auto w, index_t k0, index_t e, T* buf) {
              TINYBATCH_STAGED_LANES(tag, w);
              prefetch_ahead<W, N, N, false>(a, k0, e);
              if constexpr (W * sizeof(T) == 64) {
                if (k0 + W <= e && reinterpret_cast<std::uintptr_t>(x[k0]) % 64 == 0) {
                  alignas(64) T block[W * N * N];
                  invert_block<P, Ops, N>(a, block_starts<T, N, N>{block, k0}, k0, e, buf, info);
                  Ops::template stream_out<P>(x[k0], block, N * N);
                  return;
                }
              }
              prefetch_ahead<W, N, N, true>(x, k0, e);
              invert_block<P, Ops, N>(a, x, k0, e, buf, info);
            },
            [](auto tag) { decltype(tag)::ops::stream_fence(); });
    }
    // invert_block written out: through it (always inline) the cache-resident ordinary
    // inverse measured 5% slower at double n = 2, 3, through a lambda 10 - 15%
    // (bench/results/xeon-vm/cpu-e2ffbf4-dev-inverse-cache.txt).
    return for_lane_blocks<T, N * N>(policy, count, [&](auto tag, auto w, index_t k0, index_t e, T* buf) {
      TINYBATCH_STAGED_LANES(tag, w);
      prefetch_ahead<W, N, N, false>(a, k0, e);
      prefetch_ahead<W, N, N, true>(x, k0, e);
      if constexpr (in_registers<simd::tuning::op::inverse, Ops, P, N, N * N, decltype(a)>()) {
        if (k0 + W <= e) {  // a whole packed group: no buffer
          Ops::template inverse_group<P, N>(a[k0], x[k0], info, k0, e);
          return;
        }
      }
      gather<P, Ops, N, N>(a, k0, e, buf);
      if constexpr (defer_column_swaps(N)) {
        int dest[W * N];
        Ops::template inverse<P, N, W, true>(buf, buf, info, k0, e, dest);
        scatter_columns<P, Ops, N, N>(buf, dest, x, k0, e, all_lanes);
      } else {
        Ops::template inverse<P, N, W>(buf, buf, info, k0, e);
        scatter<P, Ops, N, N>(buf, x, k0, e, all_lanes);
      }
    });
  });
}

#undef TINYBATCH_STAGED_LANES

}  // namespace tinybatch::detail::compact::staged

#endif  // TINYBATCH_HOST_SIMD
