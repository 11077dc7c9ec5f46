// The interleaved ("compact") layout: matrices stored element by element across SIMD lanes.
//
// A group holds G = compact_width<T> matrices (64 bytes of each element: 8 doubles, 16
// floats, one AVX-512 register or two AVX2 ones). Element (i, j) of matrix k is at
//
//     data[(k / G) * (M * N * G) + (i + j * M) * G + k % G]
//
// so one aligned vector load gives the same element of G (or G / 2) matrices, and a kernel
// that factors one matrix with scalar code factors G of them with vector code: no shuffles,
// pivoting by compare and blend. For tiny n this is what beats one-matrix-at-a-time kernels
// (docs/design.md, CPU kernels). Storage always holds whole groups: the lanes past
// `count` in the last group are padding that the kernels compute on and never report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "../host/ranges.hpp"
#include "config.hpp"
#include "error.hpp"
#include "matrix_ref.hpp"
#include "memory.hpp"

namespace tinybatch {

/// Matrices per group of the compact layout: 64 bytes of each element.
template <class T>
inline constexpr int compact_width = int(64 / sizeof(T));

/// Non-owning view of `count` M x N matrices in the compact layout (fixed sizes only: the
/// layout exists for the unrolled kernels). `data` is 64-byte aligned and holds
/// ceil(count / G) whole groups.
template <class T, int M, int N>
class compact_view {
  using scalar = std::remove_const_t<T>;
  static_assert(std::is_same_v<scalar, float> || std::is_same_v<scalar, double>,
                "compact batches hold float or double");
  static_assert(M > 0 && N > 0 && M <= 32 && N <= 32, "compact batches are for fixed sizes up to 32");

 public:
  using value_type = scalar;
  using element_type = T;
  static constexpr int static_rows = M;
  static constexpr int static_cols = N;
  static constexpr bool uniform = true;
  static constexpr int width = compact_width<scalar>;
  static constexpr index_t group_size = index_t(M) * N * width;  ///< elements per group

  compact_view() = default;
  compact_view(T* data, index_t count) : data_(data), count_(count) {}
  /// A read-only view of a writable one.
  template <class U>
    requires(std::is_const_v<T> && std::is_same_v<const U, T>)
  compact_view(const compact_view<U, M, N>& v) : data_(v.data()), count_(v.count()) {}

  T* data() const { return data_; }
  index_t count() const { return count_; }
  index_t groups() const { return (count_ + width - 1) / width; }
  constexpr int rows() const { return M; }
  constexpr int cols() const { return N; }
  /// The extents, in the form the argument checks of ops/ read (no leading dimension here).
  constexpr matrix_ref<T, M, N> shape() const { return matrix_ref<T, M, N>(nullptr, M, M, N); }
  /// Element (i, j) of matrix k.
  T& operator()(index_t k, int i, int j) const {
    return data_[(k / width) * group_size + (i + index_t(j) * M) * width + k % width];
  }

 private:
  T* data_ = nullptr;
  index_t count_ = 0;
};

/// Owning compact batch in host memory (64-byte aligned). Padding lanes start as identity
/// matrices, so that no kernel ever divides by zero on them.
template <class T, int M, int N>
class compact_batch {
 public:
  using value_type = T;
  static constexpr int static_rows = M;
  static constexpr int static_cols = N;
  static constexpr int width = compact_width<T>;

  compact_batch() = default;
  /// Room for `count` matrices; the matrices themselves are zero, the padding identity.
  explicit compact_batch(index_t count) {
    detail::require(count >= 0, "compact_batch", "negative batch count");
    const index_t groups = (count + width - 1) / width;
    const index_t elems = groups * compact_view<T, M, N>::group_size;
    data_.reset(static_cast<T*>(host_space::allocate(std::size_t(elems) * sizeof(T))));
    view_ = compact_view<T, M, N>(data_.get(), count);
    // Zeroed by the threads that tinybatch::par gives each group to (the compact backend's
    // split), so that pages land on those threads' NUMA nodes.
    T* p = data_.get();
    constexpr index_t gs = compact_view<T, M, N>::group_size;
    if (std::size_t(elems) * sizeof(T) < (std::size_t(4) << 20))  // small: no threads
      std::fill_n(p, elems, T(0));
    else
      detail::for_each_range(parallel_policy<>{}, groups, [&](index_t g0, index_t g1) {
        std::fill_n(p + g0 * gs, (g1 - g0) * gs, T(0));
      });
    for (index_t k = count; k < groups * width; ++k)
      for (int d = 0; d < std::min(M, N); ++d) view_(k, d, d) = T(1);
  }

  index_t count() const { return view_.count(); }
  T* data() { return view_.data(); }
  const T* data() const { return view_.data(); }
  compact_view<T, M, N> view() { return view_; }
  compact_view<const T, M, N> view() const { return view_; }
  operator compact_view<T, M, N>() { return view_; }
  operator compact_view<const T, M, N>() const { return view_; }
  T& operator()(index_t k, int i, int j) { return view_(k, i, j); }
  const T& operator()(index_t k, int i, int j) const { return view_(k, i, j); }

 private:
  struct deleter {
    void operator()(T* p) const noexcept { host_space::deallocate(p); }
  };
  std::unique_ptr<T, deleter> data_;
  compact_view<T, M, N> view_;
};

template <class>
inline constexpr bool is_compact_view_v = false;
template <class T, int M, int N>
inline constexpr bool is_compact_view_v<compact_view<T, M, N>> = true;

/// A compact view, or an owning compact batch (taken through its view).
template <class X>
concept compact_like = is_compact_view_v<std::remove_cvref_t<X>> ||
                       requires(X&& x) { requires is_compact_view_v<decltype(x.view())>; };

template <class X>
auto as_compact(X&& x) {
  if constexpr (is_compact_view_v<std::remove_cvref_t<X>>)
    return x;
  else
    return x.view();
}
template <class X>
using compact_t = decltype(as_compact(std::declval<X>()));

}  // namespace tinybatch
