// One column-major matrix inside a batch: pointer, leading dimension and extents, where an
// extent fixed at compile time costs no storage and folds into every index computation.
#pragma once

#include <type_traits>

#include "config.hpp"

namespace tinybatch {

/// Stores a run-time extent, or nothing when the extent is a compile-time constant.
template <int E>
struct extent {
  constexpr extent() = default;  // defaulted: host and device alike, no annotation
  TINYBATCH_HD constexpr explicit extent(int) {}
  TINYBATCH_HD static constexpr int value() { return E; }
};
template <>
struct extent<dynamic> {
  int v = 0;
  constexpr extent() = default;  // defaulted: host and device alike, no annotation
  TINYBATCH_HD constexpr explicit extent(int e) : v(e) {}
  TINYBATCH_HD constexpr int value() const { return v; }
};

/// A non-owning column-major M x N matrix (M, N may be `dynamic`): element (i, j) is
/// data[i + j * ld]. This is what every per-matrix kernel receives.
template <class T, int M = dynamic, int N = dynamic>
struct matrix_ref {
  using value_type = std::remove_const_t<T>;
  static constexpr int static_rows = M;
  static constexpr int static_cols = N;

  T* data = nullptr;
  int ld = 0;
  [[no_unique_address]] extent<M> m{};
  [[no_unique_address]] extent<N> n{};

  constexpr matrix_ref() = default;
  TINYBATCH_HD constexpr matrix_ref(T* p, int ld_, int rows_ = M, int cols_ = N)
      : data(p), ld(ld_), m(rows_), n(cols_) {}

  TINYBATCH_HD constexpr int rows() const { return m.value(); }
  TINYBATCH_HD constexpr int cols() const { return n.value(); }
  TINYBATCH_HD constexpr T& operator()(int i, int j) const { return data[i + index_t(j) * ld]; }

  TINYBATCH_HD constexpr operator matrix_ref<const T, M, N>() const
    requires(!std::is_const_v<T>)
  {
    return {data, ld, rows(), cols()};
  }
};

}  // namespace tinybatch
