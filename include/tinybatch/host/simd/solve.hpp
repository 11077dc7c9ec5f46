// getrs and potrs one matrix at a time ("direct"), for the orders where that beats staging
// (host/tuning.hpp): each right-hand side is held in vector registers and the triangles are
// read by columns, which are contiguous in the column-major factor, so a solve streams its
// factor once with whole-vector loads. Step j of a column sweep broadcasts x_j from its lane
// (one shuffle) and subtracts x_j times column j from the packs below (forward) or above
// (backward) it; the lanes of the other triangle are blended out, never multiplied (they may
// hold anything).
//
// Why not the staged compact kernels here: staging transposes W whole factors into lanes
// for O(n^2) work, so a solve pays its data movement twice (getrs double, one thread, n = 32:
// 380 - 530 ns per matrix staged, 136 direct; git show b70cdcc:docs/cpu-backend.md has the comparison).
//
// Transposed triangles (getrs trans, and the second triangle of potrs) are swept by columns of
// a transposed copy formed in L1 by W x W register transposes. A diagonal entry divides as a
// multiplication by its reciprocal, formed once per matrix (as OpenBLAS's trsm kernels do): the
// solutions differ from the reference's in rounding only. A group with a diagonal entry whose
// reciprocal may overflow (below the smallest normal number) is solved by divisions instead.
#pragma once

#include "arch.hpp"

#if TINYBATCH_HOST_SIMD

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "../../core/matrix_ref.hpp"
#include "../../core/pivots.hpp"
#include "../../reference/cholesky.hpp"
#include "../../reference/lu.hpp"
#include "../tuning.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace tinybatch::detail::simd::direct {

// The helpers below return packs through a reference: a vector return value draws GCC's
// -Wpsabi note where the template is instantiated, past this header's pragma.

/// d := lane L of v in every lane.
template <int W, int L, class P, int... I>
TINYBATCH_SIMD_INLINE void broadcast_lane(P& d, const P& v, std::integer_sequence<int, I...>) {
  d = __builtin_shufflevector(v, v, (I * 0 + L)...);
}

/// v := v with the lanes whose row (Off + lane) is past J (Below) or before J (!Below) kept
/// and the others zero: a blend with a constant mask.
template <int W, int Off, int J, bool Below, class P, int... I>
TINYBATCH_SIMD_INLINE void keep_rows(P& v, std::integer_sequence<int, I...>) {
  const P z{};
  v = __builtin_shufflevector(v, z, ((Below ? Off + I > J : Off + I < J) ? I : W + I)...);
}

/// The column tiling of an N-vector: packs of W at tiling::offset(v), the last one overlapping
/// its neighbour where W does not divide N. Overlapping lanes hold the same row; every update
/// treats both copies alike, so they stay equal.
template <class Arch, class T, int N>
struct vec {
  using tiling = column_tiling<Arch, T, N>;
  static constexpr int W = tiling::width, NV = tiling::count;
  using P = pack<T, W>;
  /// The pack that holds row j, and its lane there.
  static constexpr int pack_of(int j) { return j / W < NV - 1 ? j / W : NV - 1; }
  static constexpr int lane_of(int j) { return j - tiling::offset(pack_of(j)); }
};

/// x_g := T_g^{-1} x_g for the triangles of G matrices at once (column j of T_g at
/// t[g] + j * ldt): Lower sweeps forward, else backward; without Unit, x_j = x_j * r_j (rd[g]:
/// reciprocals of the diagonal, N of them). Each step's broadcast and multiply-add wait on the
/// step before, a chain of about 8 cycles a step; G independent matrices fill it.
template <class Arch, class T, int N, bool Lower, bool Unit, int G, class P, int NV>
TINYBATCH_SIMD_INLINE void sweep_columns(const T* const (&t)[G], index_t ldt, P (&x)[G][NV], const T* const (&rd)[G]) {
  using V = vec<Arch, T, N>;
  constexpr int W = V::W;
  constexpr auto lanes = std::make_integer_sequence<int, W>{};
  unroll<N>([&](auto s) TINYBATCH_SIMD_AI {
    constexpr int j = Lower ? int(s) : N - 1 - int(s);
    constexpr int vj = V::pack_of(j), lj = V::lane_of(j);
    P xj[G];
    unroll<G>([&](auto g) TINYBATCH_SIMD_AI { broadcast_lane<W, lj>(xj[g], x[g][vj], lanes); });
    unroll<NV>([&](auto v) TINYBATCH_SIMD_AI {
      constexpr int off = V::tiling::offset(v);
      // Packs with a row strictly past (Lower) or before j take part.
      if constexpr (Lower ? off + W - 1 > j : off < j) {
        unroll<G>([&](auto g) TINYBATCH_SIMD_AI {
          P c = load<W>(t[g] + index_t(j) * ldt + off);
          if constexpr (Lower ? off <= j : off + W - 1 >= j) keep_rows<W, off, j, Lower>(c, lanes);
          // x_j's scaling moves onto the column, off the chain: (c r_j) x_j for c (r_j x_j).
          if constexpr (!Unit) c = c * splat<W>(rd[g][j]);
          x[g][v] = x[g][v] - c * xj[g];
        });
      }
    });
  });
  if constexpr (!Unit)
    unroll<G>([&](auto g) TINYBATCH_SIMD_AI { unroll<NV>([&](auto v) TINYBATCH_SIMD_AI { x[g][v] = x[g][v] * load<W>(rd[g] + V::tiling::offset(v)); }); });
}

/// d := t(Off + l, Off + l) in lane l: diagonal entries gathered in registers.
template <int Off, class P, class T, int... L>
TINYBATCH_SIMD_INLINE void diagonal_pack(P& d, const T* t, index_t ldt, std::integer_sequence<int, L...>) {
  d = P{t[(Off + L) + index_t(Off + L) * ldt]...};
}

/// rd[0, N) := 1 / the diagonal of t; dmin := the least |t(j, j)| so far, lane by lane (NaN
/// entries left out: their solves are NaN either way). The diagonal goes to registers
/// directly: written to a stack array element by element and loaded back by vectors, each
/// load waited for the scalar stores to retire (no store forwarding), which cost getrs double
/// n = 8 a third of its time at -O2 (-O3 happened to build the packs in registers).
template <class Arch, class T, int N, class P>
TINYBATCH_SIMD_INLINE void reciprocals(const T* t, index_t ldt, T* rd, P& dmin) {
  using V = vec<Arch, T, N>;
  constexpr int W = V::W;
  using I = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;
  typedef I bits __attribute__((vector_size(sizeof(P))));
  unroll<V::NV>([&](auto v) TINYBATCH_SIMD_AI {
    constexpr int off = V::tiling::offset(v);
    P d;
    diagonal_pack<off>(d, t, ldt, std::make_integer_sequence<int, W>{});
    store<W>(rd + off, splat<W>(T(1)) / d);
    const P a = (P)((bits)d & (bits{} + std::numeric_limits<I>::max()));
    dmin = a < dmin ? a : dmin;
  });
}

/// v[0] := the least lane of v, by halving (log2 W shuffles and minima, once per group).
template <int W, class P, int... I>
TINYBATCH_SIMD_INLINE void least_to_first(P& v, std::integer_sequence<int, I...> lanes) {
  if constexpr (W > 1) {
    const P u = __builtin_shufflevector(v, v, (I ^ (W / 2))...);
    v = u < v ? u : v;
    least_to_first<W / 2>(v, lanes);
  }
}

template <int W, int H, class P, int... X>
TINYBATCH_SIMD_INLINE void transpose_pair(P& a, P& b, std::integer_sequence<int, X...>) {
  const P lo = __builtin_shufflevector(a, b, ((X & H) == 0 ? X : W + X - H)...);
  const P hi = __builtin_shufflevector(a, b, ((X & H) == 0 ? X + H : W + X)...);
  a = lo;
  b = hi;
}
/// v[r][l] := v[l][r] for W x W lanes (W a power of two): log2(W) butterfly stages.
template <int W, int H = W / 2, class P>
TINYBATCH_SIMD_INLINE void transpose(P (&v)[W]) {
  if constexpr (H >= 1) {
    unroll<W>([&](auto i) TINYBATCH_SIMD_AI {
      if constexpr ((i & H) == 0) transpose_pair<W, H>(v[i], v[i + H], std::make_integer_sequence<int, W>{});
    });
    transpose<W, H / 2>(v);
  }
}

/// at (N x N, leading dimension N) := a^T, by W x W tiles of the column tiling in both
/// directions (overlapping tiles write the same values twice); Part: which triangle of at is
/// needed (+1 upper, -1 lower, 0 all): tiles without an element of it are skipped, and the
/// sweeps blend those lanes out. Tiles go column by column of a, which the hardware
/// prefetchers follow.
template <class Arch, class T, int N, int Part>
TINYBATCH_SIMD_INLINE void transpose_into(const T* a, index_t lda, T* at) {
  using V = vec<Arch, T, N>;
  constexpr int W = V::W;
  using P = typename V::P;
  unroll<V::NV>([&](auto vc) TINYBATCH_SIMD_AI {
    constexpr int c0 = V::tiling::offset(vc);
    unroll<V::NV>([&](auto vr) TINYBATCH_SIMD_AI {
      constexpr int r0 = V::tiling::offset(vr);
      // at's tile at rows c0.., columns r0..: an element above (below) its diagonal?
      if constexpr (Part == 0 || (Part > 0 ? c0 < r0 + W - 1 : c0 + W - 1 > r0)) {
        P t[W];
        unroll<W>([&](auto l) TINYBATCH_SIMD_AI { t[l] = load<W>(a + r0 + index_t(c0 + l) * lda); });
        transpose<W>(t);
        unroll<W>([&](auto l) TINYBATCH_SIMD_AI { store<W>(at + c0 + (r0 + l) * N, t[l]); });
      }
    });
  });
}

/// idx := the row of b that LAPACK's forward interchanges (1-based ipiv) bring to each row:
/// (P b)[i] = b[idx[i]], and the backward interchanges of z put z[i] at row idx[i]. Formed
/// once per matrix on integers; the right-hand sides are then gathered and scattered by it.
/// (Swapping a copy of each column in place, then loading it by vectors, cost getrs double
/// n = 16 a third of its time: the vector loads wait for the scalar stores to retire.)
template <int N>
TINYBATCH_SIMD_INLINE void row_sources(int* idx, const int* ipiv) {
  for (int i = 0; i < N; ++i) idx[i] = i;
  for (int i = 0; i < N; ++i) {
    const int p = ipiv[i] - 1, t = idx[i];
    idx[i] = idx[p];
    idx[p] = t;
  }
}

/// d := b[idx[Off]], b[idx[Off + 1]], ..., built in registers. (GCC 12 at -O3 reports the
/// packs of x that this assigns as maybe used uninitialized: a false positive, silenced here.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <int Off, class P, class T, int... L>
TINYBATCH_SIMD_INLINE void gather_pack(P& d, const T* b, const int* idx, std::integer_sequence<int, L...>) {
  d = P{b[idx[Off + L]]...};
}
#pragma GCC diagnostic pop

/// One group of G matrices: factor a[g] (leading dimension lda), pivots ipiv[g] (getrs),
/// right-hand sides b[g] (leading dimension ldb[g]).
template <class T, int G>
struct group {
  const T* a[G];
  const int* ipiv[G];
  T* b[G];
  index_t ldb[G];
};

enum class solve_kind { getrs_n, getrs_t, potrs_lower, potrs_upper };

/// op(A) X = B with getrf's factors (getrs_*) or A X = B with potrf's (potrs_*) for the G
/// matrices of `m`; B (N x NRHS) is overwritten with X. Returns false, B untouched, where a
/// diagonal entry of a factor is below the smallest normal number in magnitude (or zero):
/// its reciprocal may overflow (1 / 1e-310 is inf in double) where LAPACK's trsm divides;
/// getrf keeps such a pivot with info 0.
template <class Arch, class T, int N, int NRHS, solve_kind K, int G>
TINYBATCH_SIMD_INLINE bool solve_group(const group<T, G>& m, index_t lda) {
  using V = vec<Arch, T, N>;
  using P = typename V::P;
  constexpr int W = V::W;
  constexpr bool getrs = K == solve_kind::getrs_n || K == solve_kind::getrs_t;
  // Transposed triangles are swept by columns of a transposed copy: all of getrs trans, the
  // second triangle of potrs (L^T of lower; U^T, the first, of upper).
  constexpr bool copy = K != solve_kind::getrs_n;
  alignas(64) T at[G][copy ? N * N : 1];
  alignas(64) T rd[G][N];
  const T* lo[G];  // swept forward
  const T* up[G];  // swept backward
  const T* rdp[G];
  P dmin = splat<W>(T(1));
  unroll<G>([&](auto g) TINYBATCH_SIMD_AI {
    if constexpr (copy)
      transpose_into<Arch, T, N, K == solve_kind::getrs_t ? 0 : K == solve_kind::potrs_lower ? 1 : -1>(m.a[g], lda, at[g]);
    reciprocals<Arch, T, N>(m.a[g], lda, rd[g], dmin);
    rdp[g] = rd[g];
    lo[g] = K == solve_kind::getrs_n || K == solve_kind::potrs_lower ? m.a[g] : at[g];
    up[g] = K == solve_kind::getrs_n || K == solve_kind::potrs_upper ? m.a[g] : at[g];
  });
  least_to_first<W>(dmin, std::make_integer_sequence<int, W>{});
  if (dmin[0] < std::numeric_limits<T>::min()) return false;
  constexpr bool lo_copied = K == solve_kind::getrs_t || K == solve_kind::potrs_upper;
  constexpr bool up_copied = K == solve_kind::getrs_t || K == solve_kind::potrs_lower;
  const index_t ldlo = lo_copied ? N : lda, ldup = up_copied ? N : lda;
  // getrs: L has a unit diagonal (forward for no_trans, backward, as L^T, for trans).
  constexpr bool lo_unit = K == solve_kind::getrs_n, up_unit = K == solve_kind::getrs_t;
  int idx[G][getrs ? N : 1];
  if constexpr (getrs) unroll<G>([&](auto g) TINYBATCH_SIMD_AI { row_sources<N>(idx[g], m.ipiv[g]); });
  for (int c = 0; c < NRHS; ++c) {
    P x[G][V::NV];
    unroll<G>([&](auto g) TINYBATCH_SIMD_AI {
      const T* bc = m.b[g] + index_t(c) * m.ldb[g];
      if constexpr (K == solve_kind::getrs_n) {  // x = P b, gathered into registers
        unroll<V::NV>([&](auto v) TINYBATCH_SIMD_AI {
          gather_pack<V::tiling::offset(v)>(x[g][v], bc, idx[g], std::make_integer_sequence<int, W>{});
        });
      } else {
        unroll<V::NV>([&](auto v) TINYBATCH_SIMD_AI { x[g][v] = load<W>(bc + V::tiling::offset(v)); });
      }
    });
    sweep_columns<Arch, T, N, true, lo_unit>(lo, ldlo, x, rdp);
    sweep_columns<Arch, T, N, false, up_unit>(up, ldup, x, rdp);
    unroll<G>([&](auto g) TINYBATCH_SIMD_AI {
      T* bc = m.b[g] + index_t(c) * m.ldb[g];
      if constexpr (K == solve_kind::getrs_t) {  // x = P^T z, scattered from registers
        alignas(64) T z[N];
        unroll<V::NV>([&](auto v) TINYBATCH_SIMD_AI { store<W>(z + V::tiling::offset(v), x[g][v]); });
        for (int i = 0; i < N; ++i) bc[idx[g][i]] = z[i];
      } else {
        unroll<V::NV>([&](auto v) TINYBATCH_SIMD_AI { store<W>(bc + V::tiling::offset(v), x[g][v]); });
      }
    });
  }
  return true;
}

/// The solves of a group's first n matrices by the reference kernels, which divide by the
/// diagonal as LAPACK's trsm does: for the groups solve_group refuses (a diagonal entry below
/// the smallest normal number). Out of line with a run-time order, so compiled once per type,
/// kind and group size rather than once per order: compile time is what the tests have least
/// of (docs/cpu-backend.md, Tests).
template <solve_kind K, class T, int G>
[[gnu::noinline, gnu::cold]] void solve_dividing(const group<T, G>& m, int n, int order, int nrhs, index_t lda) {
  for (int g = 0; g < n; ++g) {
    const matrix_ref<const T> A(m.a[g], int(lda), order, order);
    const matrix_ref<T> B(m.b[g], int(m.ldb[g]), order, nrhs);
    if constexpr (K == solve_kind::getrs_n || K == solve_kind::getrs_t)
      tinybatch::reference::getrs(K == solve_kind::getrs_n ? op::no_trans : op::trans, A, m.ipiv[g], B);
    else
      tinybatch::reference::potrs(K == solve_kind::potrs_lower ? uplo::lower : uplo::upper, A, B);
  }
}

/// Software prefetching: each matrix added to a group prefetches the factor and its
/// right-hand sides (every line; until 2026-11-25 only the first and last line of each
/// right-hand side) and its pivots, of the matrix this many bytes of factors ahead. Without it
/// the streaming solves ran at half the copy bandwidth, as the staged ones do (development
/// program, 256 MiB, 2 threads, GB/s of factor, pivots and B read and B written, none /
/// 4 / 8 / 16 KiB ahead, copy bandwidth 49 - 59 GB/s): getrs double n=8 20 / 39 / 41 / 36,
/// n=16 21 - 26 / 38 / 44 / 34, n=32 22 - 32 / 32 / 32 / 33; potrs double n=8 28 / 40 - 55 /
/// 58 / 49, n=16 29 / 42 / 48 / 42, n=32 21 - 24 / 24 / 24 / 24. Runs differ by up to 20%.
inline constexpr std::size_t prefetch_ahead_bytes = 8192;

template <class T, int N, int NRHS, bool Pivots>
TINYBATCH_SIMD_INLINE void prefetch_matrix(const matrix_starts<T>& A, const pivot_view& ipiv,
                                           const matrix_starts<T>& B, index_t k, std::size_t span_a) {
  const char* a = reinterpret_cast<const char*>(A[k]);
  if (A.ld == N) {  // one run: a prefetch per line
    for (std::size_t o = 0; o < span_a; o += 64) __builtin_prefetch(a + o, 0, 3);
    __builtin_prefetch(a + span_a - 1, 0, 3);
  } else {  // column by column (the gaps of a large leading dimension are not read)
    for (int j = 0; j < N; ++j) {
      const char* c = a + std::size_t(j) * A.ld * sizeof(T);
      for (std::size_t o = 0; o < N * sizeof(T); o += 64) __builtin_prefetch(c + o, 0, 3);
      __builtin_prefetch(c + N * sizeof(T) - 1, 0, 3);
    }
  }
  if constexpr (Pivots) __builtin_prefetch(ipiv[k], 0, 3);
  const char* b = reinterpret_cast<const char*>(B[k]);
  for (int c = 0; c < NRHS; ++c) {
    const char* bc = b + std::size_t(c) * B.ld * sizeof(T);
    for (std::size_t o = 0; o < N * sizeof(T); o += 64) __builtin_prefetch(bc + o, 1, 3);
    __builtin_prefetch(bc + N * sizeof(T) - 1, 1, 3);
  }
}

/// Matrices per group: enough independent chains to cover one step's latency, as many as the
/// registers hold (G * NV packs of right-hand side; host/tuning.hpp). Under AddressSanitizer
/// one matrix per group from n = 9: the unrolled group kernel's compile time grows faster
/// than G (potrs, double, n = 32, -O1 with ASan + UBSan: G = 1 306 s, 2 906 s, 4 over 45
/// minutes), and the sanitized potrs test took 32 minutes to compile with G = 4 (5 with
/// G = 1). n <= 8 keep their G, so the sanitized tests still run the padding of partial
/// groups.
template <class Arch, class T, int N>
constexpr int group_size() {
  constexpr int nv = vec<Arch, T, N>::NV;
#if defined(__SANITIZE_ADDRESS__)
  if (N > 8) return 1;
#endif
  return nv * 4 <= Arch::registers / 2 ? 4 : 2;
}

/// Matrices [k0, k1) in groups of G, each matrix that joins a group prefetching the one
/// ahead_bytes of factors later (at least the next); those with info[k] != 0 are skipped (B untouched). A last, partial
/// group is padded with copies of its first matrix solving into a local scratch.
template <class Arch, int N, int NRHS, solve_kind K, int G, class T>
TINYBATCH_SIMD_INLINE void solve_groups(const matrix_starts<T>& A, const pivot_view& ipiv, const matrix_starts<T>& B,
                                        const int* info, index_t k0, index_t k1, std::size_t ahead_bytes) {
  constexpr bool getrs = K == solve_kind::getrs_n || K == solve_kind::getrs_t;
  group<T, G> m;
  alignas(64) T pad[N * NRHS];
  const std::size_t span_a = (std::size_t(A.ld) * (N - 1) + N) * sizeof(T);
  const index_t ahead = index_t((ahead_bytes + span_a - 1) / span_a);
  index_t k = k0;
  while (true) {
    int n = 0;
    for (; k < k1 && n < G; ++k) {
      if (k + ahead < k1) prefetch_matrix<T, N, NRHS, getrs>(A, ipiv, B, k + ahead, span_a);
      if (!info || info[k] == 0) m.a[n] = A[k], m.ipiv[n] = getrs ? ipiv[k] : nullptr, m.b[n] = B[k], m.ldb[n++] = B.ld;
    }
    if (n == 0) break;
    if (n < G) {  // one call site: the kernel is large
      for (int c = 0; c < NRHS; ++c)
        for (int i = 0; i < N; ++i) pad[i + c * N] = m.b[0][i + index_t(c) * m.ldb[0]];
      for (int g = n; g < G; ++g) m.a[g] = m.a[0], m.ipiv[g] = m.ipiv[0], m.b[g] = pad, m.ldb[g] = N;
    }
    if (!solve_group<Arch, T, N, NRHS, K, G>(m, A.ld)) solve_dividing<K>(m, n, N, NRHS, A.ld);  // rare
  }
}

/// Matrices [k0, k1) of the batch with instruction set s: in groups of group_size(),
/// prefetching prefetch_ahead_bytes of factors ahead; or, streaming (the call outgrows the
/// last-level cache, tuning::streaming_min_bytes) where tuning::streams_one_at_a_time says so,
/// one matrix at a time with the next prefetched. G interleaved factors are G streams, and
/// with four of them the double solves read memory at half the rate of one (tuning.hpp).
template <int N, int NRHS, solve_kind K, class T>
void solve_range(isa s, const matrix_starts<T>& A, const pivot_view& ipiv, const matrix_starts<T>& B,
                 const int* info, index_t k0, index_t k1, bool streaming) {
  with_isa(s, [&](auto arch) __attribute__((always_inline)) {
    using Arch = decltype(arch);
    if (streaming && tuning::streams_one_at_a_time(sizeof(T) == 8, N))
      solve_groups<Arch, N, NRHS, K, 1>(A, ipiv, B, info, k0, k1, 1);  // 1 byte: the next matrix
    else
      solve_groups<Arch, N, NRHS, K, group_size<Arch, T, N>()>(A, ipiv, B, info, k0, k1, prefetch_ahead_bytes);
  });
}

}  // namespace tinybatch::detail::simd::direct

#pragma GCC diagnostic pop

#endif  // TINYBATCH_HOST_SIMD
