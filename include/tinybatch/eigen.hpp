// Eigen interop: matrix k of a batch as an Eigen::Map of the fixed-size (or dynamic) type,
// so users can hand single matrices to Eigen without copying.
#pragma once

#include <Eigen/Core>
#include <type_traits>

#include "core/matrix_ref.hpp"
#include "core/views.hpp"

namespace tinybatch {

namespace detail {
constexpr int eigen_extent(int e) { return e == dynamic ? Eigen::Dynamic : e; }
}  // namespace detail

template <class T, int M, int N>
using eigen_matrix_t = Eigen::Matrix<std::remove_const_t<T>, detail::eigen_extent(M),
                                     detail::eigen_extent(N), Eigen::ColMajor>;

/// Eigen::Map over one matrix_ref (const T gives a read-only map).
template <class T, int M, int N>
auto as_eigen(const matrix_ref<T, M, N>& m) {
  using Mat = std::conditional_t<std::is_const_v<T>, const eigen_matrix_t<T, M, N>, eigen_matrix_t<T, M, N>>;
  return Eigen::Map<Mat, Eigen::Unaligned, Eigen::OuterStride<>>(m.data, m.rows(), m.cols(),
                                                                  Eigen::OuterStride<>(m.ld));
}

/// Matrix k of a batch (view or owning, host memory) as an Eigen::Map.
template <batch_like X>
auto as_eigen(X&& batch, index_t k) {
  return as_eigen(as_view(batch)[k]);
}

}  // namespace tinybatch
