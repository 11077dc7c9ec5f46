// getrf for fixed M x N <= 32: LAPACK's right-looking dgetf2 on a copy of the matrix in L1
// whose columns are whole SIMD packs, with pivoting done lazily.
//
// Lazy pivoting: rows never move while the factorization runs. pos[r] is the logical row
// (LAPACK's row index after the interchanges so far) of physical row r, kept as a vector
// beside the column, so the pivot search, the "rows below the diagonal" mask and the
// bookkeeping of an interchange are a few compares and blends per pack, with no shuffles.
// The rows are put in their LAPACK order once, when the factors are written back. Ties in
// |a| go to the smallest logical row, which is idamax's "first largest", and NaNs are never
// chosen over a number, so ipiv is exactly LAPACK's.
#pragma once

#include "arch.hpp"

#if TINYBATCH_HOST_SIMD

#include <cstring>
#include <limits>
#include <utility>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace tinybatch::detail::simd {

/// Columns of M rows padded to whole packs of width W (the smallest power of two covering M,
/// at most one register).
template <class Arch, class T, int M>
struct padded_column {
  static constexpr int width = lanes<Arch, T> < bit_ceil(M) ? lanes<Arch, T> : bit_ceil(M);
  static constexpr int count = (M + width - 1) / width;
  static constexpr int rows = count * width;
};

/// Butterfly reductions: after log2(W) shuffle-and-compare steps every lane holds the
/// maximum (minimum) of all lanes, already broadcast for the compares that follow.
template <int S, class P, std::size_t... I>
TINYBATCH_SIMD_INLINE void reduce_step(P& v, bool take_max, std::index_sequence<I...>) {
  const P u = __builtin_shufflevector(v, v, int(I ^ S)...);
  v = take_max ? (u > v ? u : v) : (u < v ? u : v);
}
template <int W, class P>
TINYBATCH_SIMD_INLINE void all_lanes_reduce(P& v, bool take_max) {
  if constexpr (W >= 16) reduce_step<8>(v, take_max, std::make_index_sequence<W>{});
  if constexpr (W >= 8) reduce_step<4>(v, take_max, std::make_index_sequence<W>{});
  if constexpr (W >= 4) reduce_step<2>(v, take_max, std::make_index_sequence<W>{});
  if constexpr (W >= 2) reduce_step<1>(v, take_max, std::make_index_sequence<W>{});
}

/// Copies column-major M x N `a` into `w` (leading dimension MP), zeroing the padding rows.
template <int M, int N, int MP, class T>
TINYBATCH_SIMD_INLINE void load_padded(T* w, const T* a, int lda) {
#pragma GCC unroll 32
  for (int c = 0; c < N; ++c) {
    std::memcpy(w + c * MP, a + index_t(c) * lda, sizeof(T) * M);
    if constexpr (MP > M) std::memset(static_cast<void*>(w + c * MP + M), 0, sizeof(T) * (MP - M));
  }
}

template <class Arch, class T, int M, int N>
TINYBATCH_SIMD_INLINE int getrf_one(T* a, int lda, int* ipiv) {
  using col = padded_column<Arch, T, M>;
  constexpr int W = col::width, NV = col::count, MP = col::rows, MN = M < N ? M : N;
  using P = pack<T, W>;
  alignas(64) T w[N * MP];
  load_padded<M, N, MP>(w, a, lda);

  P pos[NV];  // logical row of each physical row; -1 marks padding rows, never candidates
  unroll<NV>([&](auto v) { pos[v] = iota<W>(v * W, M, T(-1)); });
  int perm[M];  // physical row of each logical row
#pragma GCC unroll 32
  for (int i = 0; i < M; ++i) perm[i] = i;

  int info = 0;
  const T sfmin = std::numeric_limits<T>::min();
  for (int j = 0; j < MN; ++j) {
    T* wj = w + j * MP;
    P x[NV];
    unroll<NV>([&](auto v) { x[v] = load<W>(wj + v * W); });
    const P jv = splat<W>(T(j));

    // Pivot: the first (smallest logical row) largest |a| among logical rows >= j, where a NaN
    // is never chosen unless it sits on the diagonal (idamax starts from there).
    const int q = perm[j];
    int lp = j;
    if (j + 1 < M && wj[q] == wj[q]) {  // the last row has nothing to compare with
      P best = splat<W>(T(-1));
      P key[NV];
      unroll<NV>([&](auto v) {
        const P ax = x[v] < P{} ? -x[v] : x[v];
        key[v] = (pos[v] >= jv && ax == ax) ? ax : splat<W>(T(-1));
        best = key[v] > best ? key[v] : best;
      });
      all_lanes_reduce<W>(best, true);  // the largest |a| in every lane
      P first = splat<W>(T(M));
      unroll<NV>([&](auto v) {
        const P cand = key[v] == best ? pos[v] : splat<W>(T(M));
        first = cand < first ? cand : first;
      });
      all_lanes_reduce<W>(first, false);
      lp = int(first[0]);
    }
    const int p = perm[lp];
    ipiv[j] = lp + 1;
    // Interchange logical rows j and lp: bookkeeping only, and without a branch (whether the
    // pivot moves is a coin toss on random data: a branch on it is mispredicted half the time).
    perm[lp] = q;
    perm[j] = p;
    const P lpv = splat<W>(T(lp));
    unroll<NV>([&](auto v) { pos[v] = pos[v] == jv ? lpv : (pos[v] == lpv ? jv : pos[v]); });

    const T piv = wj[p];
    if (piv != T(0)) {
      // LAPACK multiplies by the reciprocal unless that would overflow.
      if ((piv < T(0) ? -piv : piv) >= sfmin) {
        const T r = T(1) / piv;
        unroll<NV>([&](auto v) { x[v] = pos[v] > jv ? x[v] * r : x[v]; });
      } else {
        unroll<NV>([&](auto v) { x[v] = pos[v] > jv ? x[v] / piv : x[v]; });
      }
      unroll<NV>([&](auto v) { store<W>(wj + v * W, x[v]); });
    } else if (info == 0) {
      info = j + 1;
    }
    // Rank-1 update of the rows below the pivot (logical rows > j), column by column.
    for (int c = j + 1; c < N; ++c) {
      T* wc = w + c * MP;
      const T t = wc[p];
      unroll<NV>([&](auto v) {
        const P y = load<W>(wc + v * W);
        P d;
        product_as_reference(d, x[v], t);
        store<W>(wc + v * W, pos[v] > jv ? y - d : y);
      });
    }
  }
  // Write the factors back with the rows in LAPACK's order.
#pragma GCC unroll 4
  for (int c = 0; c < N; ++c)
#pragma GCC unroll 32
    for (int i = 0; i < M; ++i) a[i + index_t(c) * lda] = w[c * MP + perm[i]];
  return info;
}

/// Matrices [k0, k1) of the batch, with instruction set `s`; ipiv(k) gives matrix k's pivots.
template <int M, int N, class T, class Pivots>
void getrf_range(isa s, matrix_starts<T> A, const Pivots& ipiv, int* info, index_t k0, index_t k1) {
  with_isa(s, [&](auto arch) __attribute__((always_inline)) {
    for (index_t k = k0; k < k1; ++k) info[k] = getrf_one<decltype(arch), T, M, N>(A[k], A.ld, ipiv[k]);
  });
}

}  // namespace tinybatch::detail::simd

#pragma GCC diagnostic pop

#endif  // TINYBATCH_HOST_SIMD
