// Owning batches: `count` column-major M x N matrices in one allocation of a memory space
// (host memory by default, device memory with tinybatch::cuda::device_space).
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "../host/ranges.hpp"
#include "error.hpp"
#include "memory.hpp"
#include "views.hpp"

namespace tinybatch {

template <class T, int M = dynamic, int N = dynamic, class Space = host_space>
class batch {
  static_assert(std::is_floating_point_v<T>, "tinybatch batches hold float or double");
  static_assert((M == dynamic || M > 0) && (N == dynamic || N > 0),
                "fixed extents must be positive");

 public:
  using value_type = T;
  using space_type = Space;
  static constexpr int static_rows = M;
  static constexpr int static_cols = N;

  batch() = default;

  /// `count` fixed-size matrices, packed; host memory starts zeroed, first touched by the
  /// threads that tinybatch::par will run each matrix on.
  explicit batch(index_t count)
    requires(M != dynamic && N != dynamic)
      : batch(M, N, count, 0) {}

  /// `count` m x n matrices, packed. With fixed extents m and n must equal them (this form
  /// lets generic code build either kind of batch).
  batch(int m, int n, index_t count) : batch(m, n, count, 0) {}

  int rows() const { return view_.rows(); }
  int cols() const { return view_.cols(); }
  int ld() const { return view_.ld(); }
  index_t stride() const { return view_.stride(); }
  index_t count() const { return view_.count(); }
  index_t size() const { return view_.stride() * view_.count(); }  ///< elements
  T* data() { return view_.data(); }
  const T* data() const { return view_.data(); }

  strided_view<T, M, N> view() { return view_; }
  strided_view<const T, M, N> view() const { return view_; }
  operator strided_view<T, M, N>() { return view_; }
  operator strided_view<const T, M, N>() const { return view_; }

  /// Matrix k (host memory only).
  matrix_ref<T, M, N> operator[](index_t k) { return view_[k]; }
  matrix_ref<const T, M, N> operator[](index_t k) const { return view()[k]; }

 private:
  struct deleter {
    void operator()(T* p) const noexcept { Space::deallocate(p); }
  };

  batch(int m, int n, index_t count, int) {
    detail::require(m >= 0 && n >= 0 && count >= 0, "batch", [&] {
      return "negative size: m = " + std::to_string(m) + ", n = " + std::to_string(n) +
             ", count = " + std::to_string(count);
    });
    if constexpr (M != dynamic)
      detail::require(m == M, "batch", [&] {
        return "rows " + std::to_string(m) + " differ from the fixed M = " + std::to_string(M);
      });
    if constexpr (N != dynamic)
      detail::require(n == N, "batch", [&] {
        return "cols " + std::to_string(n) + " differ from the fixed N = " + std::to_string(N);
      });
    int ld = m > 0 ? m : 1;
    index_t stride = index_t(ld) * n;
    mem_.reset(static_cast<T*>(Space::allocate(sizeof(T) * std::size_t(stride * count))));
    view_ = strided_view<T, M, N>::make(mem_.get(), count, ld, stride, m, n);
    if constexpr (std::is_same_v<Space, host_space>) first_touch(stride);
  }

  /// Zeroes the matrices from the threads that `par` gives them to (the same split over the
  /// batch, up to a 64-byte group of the SIMD kernels), so that on a NUMA machine each
  /// thread's matrices sit in its own node's memory: the operating system places a page
  /// where it is first written. Small batches (under 4 MiB) are zeroed by the calling thread.
  void first_touch(index_t stride) {
    T* p = mem_.get();
    const std::size_t bytes = sizeof(T) * std::size_t(stride * count());
    if (p == nullptr || bytes == 0) return;
    if (bytes < (std::size_t(4) << 20)) {
      std::memset(static_cast<void*>(p), 0, bytes);
      return;
    }
    detail::for_each_range(parallel_policy<>{}, count(), [&](index_t k0, index_t k1) {
      std::memset(static_cast<void*>(p + k0 * stride), 0, sizeof(T) * std::size_t((k1 - k0) * stride));
    });
  }

  std::unique_ptr<T, deleter> mem_;
  strided_view<T, M, N> view_;
};

}  // namespace tinybatch
