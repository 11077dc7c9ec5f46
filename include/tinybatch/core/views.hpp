// Non-owning batch views: the three ways users already hold batches of matrices.
//
//  strided_view<T, M, N>  one buffer, matrix k at data + k * stride   (cuBLAS "strided batched")
//  pointer_view<T, M, N>  an array of pointers, one per matrix         (cuBLAS "batched")
//  vbatch_view<T>         per-matrix m, n, ld and pointer              (MAGMA "vbatched")
//
// Rows and columns are template parameters (or `dynamic`); leading dimension and stride are
// run-time values, packed by default. Every view answers count() and operator[](k), which
// returns the matrix_ref of matrix k: backends are written against that interface only.
#pragma once

#include <concepts>
#include <span>
#include <string>
#include <type_traits>

#include "config.hpp"
#include "error.hpp"
#include "matrix_ref.hpp"

namespace tinybatch {

/// Leading dimension and stride by name, for the views that know their buffer:
/// `strided_view<double, 6, 6>(buf, count, {.stride = 40})`; -1 = packed (ld = rows,
/// stride = ld * cols).
struct strides {
  int ld = -1;
  index_t stride = -1;
};

namespace detail {
/// A view over a known buffer: its last element must lie inside it. Compiled once.
inline void check_buffer(const char* routine, std::size_t size, int rows, int cols, index_t count, int ld,
                         index_t stride) {
  require(rows >= 0 && cols >= 0 && count >= 0, routine, [&] {
    return "negative size: " + std::to_string(rows) + " x " + std::to_string(cols) + ", count " + std::to_string(count);
  });
  require(ld >= (rows > 1 ? rows : 1) && stride >= 0, routine, [&] {
    return "leading dimension " + std::to_string(ld) + " < rows " + std::to_string(rows) + " or stride " +
           std::to_string(stride) + " < 0";
  });
  if (count == 0 || rows == 0 || cols == 0) return;
  const index_t need = (count - 1) * stride + index_t(cols - 1) * ld + rows;
  require(index_t(size) >= need, routine, [&] {
    return std::to_string(count) + " matrices of " + std::to_string(rows) + " x " + std::to_string(cols) +
           " with ld " + std::to_string(ld) + " and stride " + std::to_string(stride) + " need " +
           std::to_string(need) + " elements; the buffer has " + std::to_string(size);
  });
}
}  // namespace detail

template <class T, int M = dynamic, int N = dynamic>
class strided_view : detail::extents<M, N> {
  using ext = detail::extents<M, N>;

 public:
  using value_type = std::remove_const_t<T>;
  using element_type = T;
  using matrix_type = matrix_ref<T, M, N>;
  static constexpr int static_rows = M;
  static constexpr int static_cols = N;
  static constexpr bool uniform = true;

  constexpr strided_view() = default;

  /// Fixed sizes: `count` matrices, leading dimension `ld` (default M), `stride` elements
  /// from one matrix to the next (default ld * N).
  constexpr strided_view(T* data, index_t count, int ld = (M > 0 ? M : 1), index_t stride = -1)
    requires(M != dynamic && N != dynamic)
      : ext(M, N), data_(data), count_(count), ld_(ld),
        stride_(stride < 0 ? index_t(ld) * N : stride) {}

  /// Run-time sizes: `count` matrices of m x n.
  constexpr strided_view(T* data, int m, int n, index_t count, int ld = -1, index_t stride = -1)
    requires(M == dynamic || N == dynamic)
      : ext(m, n), data_(data), count_(count), ld_(ld < 0 ? (m > 0 ? m : 1) : ld),
        stride_(stride < 0 ? index_t(ld_) * n : stride) {}

  /// Over a buffer that knows its size (std::vector, std::span, std::array; an Eigen object
  /// as std::span(x.data(), x.size())), ld and stride by name: throws invalid_argument where
  /// the last matrix would end past the buffer.
  strided_view(std::span<T> buf, index_t count, strides s = {})
    requires(M != dynamic && N != dynamic)
      : strided_view(buf.data(), count, s.ld < 0 ? (M > 0 ? M : 1) : s.ld, s.stride) {
    detail::check_buffer("strided_view", buf.size(), M, N, count_, ld_, stride_);
  }
  strided_view(std::span<T> buf, int m, int n, index_t count, strides s = {})
    requires(M == dynamic || N == dynamic)
      : strided_view(buf.data(), m, n, count, s.ld, s.stride) {
    detail::check_buffer("strided_view", buf.size(), m, n, count_, ld_, stride_);
  }

  TINYBATCH_HD constexpr T* data() const { return data_; }
  TINYBATCH_HD constexpr index_t count() const { return count_; }
  using ext::cols;
  using ext::rows;
  TINYBATCH_HD constexpr int ld() const { return ld_; }
  TINYBATCH_HD constexpr index_t stride() const { return stride_; }

  TINYBATCH_HD constexpr matrix_type operator[](index_t k) const {
    return matrix_type(data_ + k * stride_, ld_, rows(), cols());
  }
  /// Extents and leading dimension of every matrix, without touching memory.
  TINYBATCH_HD constexpr matrix_type shape() const { return matrix_type(nullptr, ld_, rows(), cols()); }

  // Templates, so that a view of const T has no conversion operator to itself (nvcc's
  // warning #554 even for a constrained non-template one).
  template <class U>
    requires(std::is_same_v<U, const T> && !std::is_const_v<T>)
  constexpr operator strided_view<U, M, N>() const {
    return strided_view<U, M, N>::make(data_, count_, ld_, stride_, rows(), cols());
  }

  static constexpr strided_view make(T* d, index_t c, int ld, index_t s, int m, int n) {
    strided_view v;
    static_cast<ext&>(v) = ext(m, n);
    v.data_ = d, v.count_ = c, v.ld_ = ld, v.stride_ = s;
    return v;
  }

 private:
  T* data_ = nullptr;
  index_t count_ = 0;
  int ld_ = 1;
  index_t stride_ = 0;
};

template <class T, int M = dynamic, int N = dynamic>
class pointer_view : detail::extents<M, N> {
  using ext = detail::extents<M, N>;

 public:
  using value_type = std::remove_const_t<T>;
  using element_type = T;
  using matrix_type = matrix_ref<T, M, N>;
  static constexpr int static_rows = M;
  static constexpr int static_cols = N;
  static constexpr bool uniform = true;

  constexpr pointer_view() = default;

  /// Fixed sizes: ptrs[k] is matrix k, all with leading dimension `ld` (default M).
  constexpr pointer_view(T* const* ptrs, index_t count, int ld = (M > 0 ? M : 1))
    requires(M != dynamic && N != dynamic)
      : ext(M, N), ptrs_(ptrs), count_(count), ld_(ld) {}

  /// Run-time sizes.
  constexpr pointer_view(T* const* ptrs, int m, int n, index_t count, int ld = -1)
    requires(M == dynamic || N == dynamic)
      : ext(m, n), ptrs_(ptrs), count_(count), ld_(ld < 0 ? (m > 0 ? m : 1) : ld) {}

  TINYBATCH_HD constexpr T* const* pointers() const { return ptrs_; }
  TINYBATCH_HD constexpr index_t count() const { return count_; }
  using ext::cols;
  using ext::rows;
  TINYBATCH_HD constexpr int ld() const { return ld_; }

  TINYBATCH_HD constexpr matrix_type operator[](index_t k) const {
    return matrix_type(ptrs_[k], ld_, rows(), cols());
  }
  TINYBATCH_HD constexpr matrix_type shape() const { return matrix_type(nullptr, ld_, rows(), cols()); }

  // An array of T* is not an array of const T*, but reading through it as one is fine.
  template <class U>
    requires(std::is_same_v<U, const T> && !std::is_const_v<T>)
  constexpr operator pointer_view<U, M, N>() const {
    return pointer_view<U, M, N>::make(const_cast<const T* const*>(ptrs_), count_, ld_, rows(),
                                       cols());
  }

  static constexpr pointer_view make(T* const* p, index_t c, int ld, int m, int n) {
    pointer_view v;
    static_cast<ext&>(v) = ext(m, n);
    v.ptrs_ = p, v.count_ = c, v.ld_ = ld;
    return v;
  }

 private:
  T* const* ptrs_ = nullptr;
  index_t count_ = 0;
  int ld_ = 1;
};

/// Variable-size batch: matrix k is m[k] x n[k] with leading dimension ld[k] at ptrs[k].
/// With the CUDA policy all four arrays must be device-accessible.
template <class T>
class vbatch_view {
 public:
  using value_type = std::remove_const_t<T>;
  using element_type = T;
  using matrix_type = matrix_ref<T, dynamic, dynamic>;
  static constexpr int static_rows = dynamic;
  static constexpr int static_cols = dynamic;
  static constexpr bool uniform = false;

  constexpr vbatch_view() = default;
  constexpr vbatch_view(T* const* ptrs, const int* m, const int* n, const int* ld, index_t count)
      : ptrs_(ptrs), m_(m), n_(n), ld_(ld), count_(count) {}

  TINYBATCH_HD constexpr index_t count() const { return count_; }
  TINYBATCH_HD constexpr T* const* pointers() const { return ptrs_; }
  TINYBATCH_HD constexpr const int* rows_array() const { return m_; }
  TINYBATCH_HD constexpr const int* cols_array() const { return n_; }
  TINYBATCH_HD constexpr const int* ld_array() const { return ld_; }

  TINYBATCH_HD constexpr matrix_type operator[](index_t k) const {
    return matrix_type(ptrs_[k], ld_[k], m_[k], n_[k]);
  }

  template <class U>
    requires(std::is_same_v<U, const T> && !std::is_const_v<T>)
  constexpr operator vbatch_view<U>() const {
    return {const_cast<const T* const*>(ptrs_), m_, n_, ld_, count_};
  }

 private:
  T* const* ptrs_ = nullptr;
  const int* m_ = nullptr;
  const int* n_ = nullptr;
  const int* ld_ = nullptr;
  index_t count_ = 0;
};

/// What the front end accepts as a batch after as_view(): any of the three views above.
template <class V>
concept batch_view = requires(const V& v, index_t k) {
  typename V::value_type;
  typename V::matrix_type;
  { V::static_rows } -> std::convertible_to<int>;
  { V::static_cols } -> std::convertible_to<int>;
  { V::uniform } -> std::convertible_to<bool>;
  { v.count() } -> std::convertible_to<index_t>;
  { v[k] } -> std::same_as<typename V::matrix_type>;
};

namespace detail {
template <class X>
concept has_view = requires(X& x) {
  { x.view() } -> batch_view;
};
}  // namespace detail

/// Owning batches expose view(); views are their own view.
template <class X>
constexpr decltype(auto) as_view(X&& x) {
  if constexpr (batch_view<std::remove_cvref_t<X>>)
    return std::remove_cvref_t<X>(x);
  else
    return x.view();
}

template <class X>
using view_t = std::remove_cvref_t<decltype(as_view(std::declval<X>()))>;

/// Anything the front end takes as a batch argument.
template <class X>
concept batch_like = batch_view<std::remove_cvref_t<X>> || detail::has_view<std::remove_cvref_t<X>>;

/// View a batch of run-time size as fixed-size M x N (the dispatcher's use); throws if the
/// run-time extents differ.
template <int M, int N, class T>
strided_view<T, M, N> fixed_extents(const strided_view<T, dynamic, dynamic>& v);
template <int M, int N, class T>
pointer_view<T, M, N> fixed_extents(const pointer_view<T, dynamic, dynamic>& v);

}  // namespace tinybatch
