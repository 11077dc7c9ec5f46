// One column-major matrix inside a batch: pointer, leading dimension and extents, where an
// extent fixed at compile time costs no storage and folds into every index computation.
#pragma once

#include <type_traits>

#include "config.hpp"

namespace tinybatch {

namespace detail {
/// The extents of a matrix or of a uniform batch: an int for each extent known only at run
/// time, nothing for one fixed at compile time. Classes holding extents derive from it, so
/// fixed extents cost no storage through the empty-base optimisation, whose layout every
/// compiler of the Itanium C++ ABI (g++, clang, nvcc) agrees on; [[no_unique_address]]
/// members, which this replaces, are laid out differently by nvcc 13 and g++ in kernel
/// parameters.
template <int M, int N>
struct extents {
  constexpr extents() = default;  // defaulted: host and device alike, no annotation
  TINYBATCH_HD constexpr extents(int, int) {}
  TINYBATCH_HD static constexpr int rows() { return M; }
  TINYBATCH_HD static constexpr int cols() { return N; }
};
template <int N>
struct extents<dynamic, N> {
  int rows_ = 0;
  constexpr extents() = default;
  TINYBATCH_HD constexpr extents(int m, int) : rows_(m) {}
  TINYBATCH_HD constexpr int rows() const { return rows_; }
  TINYBATCH_HD static constexpr int cols() { return N; }
};
template <int M>
struct extents<M, dynamic> {
  int cols_ = 0;
  constexpr extents() = default;
  TINYBATCH_HD constexpr extents(int, int n) : cols_(n) {}
  TINYBATCH_HD static constexpr int rows() { return M; }
  TINYBATCH_HD constexpr int cols() const { return cols_; }
};
template <>
struct extents<dynamic, dynamic> {
  int rows_ = 0, cols_ = 0;
  constexpr extents() = default;
  TINYBATCH_HD constexpr extents(int m, int n) : rows_(m), cols_(n) {}
  TINYBATCH_HD constexpr int rows() const { return rows_; }
  TINYBATCH_HD constexpr int cols() const { return cols_; }
};
}  // namespace detail

/// A non-owning column-major M x N matrix (M, N may be `dynamic`): element (i, j) is
/// data[i + j * ld]. This is what every per-matrix kernel receives.
template <class T, int M = dynamic, int N = dynamic>
struct matrix_ref : detail::extents<M, N> {
  using value_type = std::remove_const_t<T>;
  static constexpr int static_rows = M;
  static constexpr int static_cols = N;

  T* data = nullptr;
  int ld = 0;

  constexpr matrix_ref() = default;
  TINYBATCH_HD constexpr matrix_ref(T* p, int ld_, int rows_ = M, int cols_ = N)
      : detail::extents<M, N>(rows_, cols_), data(p), ld(ld_) {}

  using detail::extents<M, N>::rows;
  using detail::extents<M, N>::cols;
  TINYBATCH_HD constexpr T& operator()(int i, int j) const { return data[i + index_t(j) * ld]; }

  // A template, so that matrix_ref<const T> has no conversion operator to itself (nvcc's
  // warning #554 even for a constrained non-template one).
  template <class U>
    requires(std::is_same_v<U, const T> && !std::is_const_v<T>)
  TINYBATCH_HD constexpr operator matrix_ref<U, M, N>() const {
    return {data, ld, this->rows(), this->cols()};
  }
};

}  // namespace tinybatch
