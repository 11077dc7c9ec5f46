// potrf for fixed n <= 32: right-looking Cholesky on a copy of the factor's triangle in L1,
// columns padded to whole SIMD packs. Every entry sees the same operations in the same order
// as LAPACK's dpotf2 (subtract L(i,k) L(j,k) for k = 0, 1, ..., then scale by 1 / L(j,j)),
// so it stops at the same column; only the `ul` triangle is read or written, and on failure
// only what dpotf2 would have written is (the finished columns and the failing diagonal).
#pragma once

#include "getrf.hpp"

#if TINYBATCH_HOST_SIMD

#include <cmath>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace tinybatch::detail::simd {

/// Upper: A = U^T U is factored as the lower L = U^T, whose column j is row j of U.
template <class Arch, class T, int N, bool Upper>
TINYBATCH_SIMD_INLINE int potrf_one(T* a, int lda) {
  using col = padded_column<Arch, T, N>;
  constexpr int W = col::width, NV = col::count, MP = col::rows;
  using P = pack<T, W>;
  alignas(64) T w[N * MP];
  std::memset(static_cast<void*>(w), 0, sizeof w);
#pragma GCC unroll 32
  for (int c = 0; c < N; ++c) {
    if constexpr (Upper) {
#pragma GCC unroll 32
      for (int r = c; r < N; ++r) w[c * MP + r] = a[c + index_t(r) * lda];
    } else {
      std::memcpy(w + c * MP + c, a + c + index_t(c) * lda, sizeof(T) * (N - c));
    }
  }
  P row[NV];  // row index of each lane
  unroll<NV>([&](auto v) { row[v] = iota<W>(v * W, MP, T(0)); });

  int info = 0, done = N;
  for (int j = 0; j < N; ++j) {
    T* wj = w + j * MP;
    const T ajj = wj[j];
    if (!(ajj > T(0))) {  // not positive, or NaN
      info = j + 1;
      done = j;
      break;
    }
    const T d = std::sqrt(ajj);
    const T r = T(1) / d;
    const P jv = splat<W>(T(j));
    P x[NV];
    unroll<NV>([&](auto v) {
      x[v] = row[v] > jv ? load<W>(wj + v * W) * r : P{};
      store<W>(wj + v * W, x[v]);
    });
    wj[j] = d;
    for (int c = j + 1; c < N; ++c) {
      T* wc = w + c * MP;
      const T t = wj[c];
      unroll<NV>([&](auto v) {
        P d;
        product_as_reference(d, x[v], t);
        store<W>(wc + v * W, load<W>(wc + v * W) - d);
      });
    }
  }
  const int ncols = info ? done + 1 : N;
#pragma GCC unroll 4
  for (int c = 0; c < ncols; ++c) {
    const int last = c < done ? N : c + 1;  // the failing column: its diagonal only
    if constexpr (Upper) {
      for (int r = c; r < last; ++r) a[c + index_t(r) * lda] = w[c * MP + r];
    } else {
      for (int r = c; r < last; ++r) a[r + index_t(c) * lda] = w[c * MP + r];
    }
  }
  return info;
}

/// Matrices [k0, k1) of the batch, with instruction set `s`.
template <int N, bool Upper, class T>
void potrf_range(isa s, matrix_starts<T> A, int* info, index_t k0, index_t k1) {
  with_isa(s, [&](auto arch) __attribute__((always_inline)) {
    for (index_t k = k0; k < k1; ++k) info[k] = potrf_one<decltype(arch), T, N, Upper>(A[k], A.ld);
  });
}

}  // namespace tinybatch::detail::simd

#pragma GCC diagnostic pop

#endif  // TINYBATCH_HOST_SIMD
