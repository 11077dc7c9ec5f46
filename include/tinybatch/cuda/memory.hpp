// Device memory for the CUDA backend: a memory space for owning batches
// (tinybatch::batch<T, M, N, cuda::device_space>, alias cuda::device_batch), a small owning
// array for pivots, info and pointer arrays (cuda::device_array), and cuda::copy between
// host and device.
//
// Kernel-free: plain C++ compilers (g++) can include this header, so .cpp files can allocate
// and fill device memory and hand it to code nvcc compiled. Link the CUDA runtime (cudart).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "../core/batch.hpp"
#include "../core/error.hpp"
#include "../core/views.hpp"
#include "../policy.hpp"
#include "error.hpp"

namespace tinybatch::cuda {

/// Device memory from cudaMalloc (256-byte aligned). Allocation failures throw cuda_error.
struct device_space {
  static constexpr std::size_t alignment = 256;
  static void* allocate(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc(&p, " + std::to_string(bytes) + ")");
    return p;
  }
  // Errors are dropped: a destructor cannot throw, and a failed cudaFree means the context is
  // already broken, which the next checked call reports.
  static void deallocate(void* p) noexcept {
    if (p) (void)cudaFree(p);
  }
};

/// An owning batch in device memory. Element access from the host (operator[]) is not
/// possible; move data with cuda::copy.
template <class T, int M = dynamic, int N = dynamic>
using device_batch = batch<T, M, N, device_space>;

/// An owning, move-only array of `size()` T in device memory: pivots, info, pointer arrays.
/// It is a contiguous range, so it converts to std::span<T> (the front end's info argument)
/// and to pivot_view; the span then holds a device pointer, which only the CUDA policy reads.
template <class T>
class device_array {
  static_assert(std::is_trivially_copyable_v<T>, "device arrays hold trivially copyable values");

 public:
  using value_type = T;

  device_array() = default;
  explicit device_array(std::size_t n) : n_(n) {
    tinybatch::detail::require(n <= std::numeric_limits<std::size_t>::max() / sizeof(T),
                               "cuda::device_array", "size overflows the address space");
    p_ = static_cast<T*>(device_space::allocate(n * sizeof(T)));
  }
  /// A device copy of host data, complete on return (the host data may go away).
  explicit device_array(std::span<const T> host) : device_array(host.size()) {
    if (n_ == 0) return;
    check(cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice),
          "cudaMemcpy(device_array, host, " + std::to_string(n_ * sizeof(T)) + ")");
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  device_array(device_array&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  device_array& operator=(device_array&& o) noexcept {
    if (this != &o) {
      device_space::deallocate(p_);
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  ~device_array() { device_space::deallocate(p_); }

  T* data() const noexcept { return p_; }
  std::size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  T* begin() const noexcept { return p_; }
  T* end() const noexcept { return p_ + n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

namespace detail {
using tinybatch::detail::require;

template <class V>
concept strided = requires(const V& v) { v.stride(); v.data(); };

inline void check_copy(cudaError_t e, const char* call, std::size_t bytes) {
  check(e, std::string(call) + " in cuda::copy (" + std::to_string(bytes) + " bytes per piece)");
}
}  // namespace detail

/// Copies a contiguous range (std::vector, std::span, device_array, ...) into another of the
/// same size, in whichever direction the two pointers call for (host or device, found
/// through unified addressing). Asynchronous on `stream`: synchronize before reading host
/// data copied from the device.
template <std::ranges::contiguous_range D, std::ranges::contiguous_range S>
  requires std::ranges::sized_range<D> && std::ranges::sized_range<S> &&
           std::is_same_v<std::ranges::range_value_t<D>, std::ranges::range_value_t<S>> &&
           (!std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<D>>>)
void copy(D&& dst, S&& src, CUstream_st* stream = nullptr) {
  using T = std::ranges::range_value_t<D>;
  const std::size_t n = std::ranges::size(src);
  detail::require(std::size_t(std::ranges::size(dst)) == n, "cuda::copy",
                  "destination has " + std::to_string(std::ranges::size(dst)) +
                      " elements, source " + std::to_string(n));
  if (n == 0) return;
  detail::check_copy(cudaMemcpyAsync(std::ranges::data(dst), std::ranges::data(src), n * sizeof(T),
                                     cudaMemcpyDefault, stream),
                     "cudaMemcpyAsync", n * sizeof(T));
}

/// Copies the matrices of one strided batch (owning batch or strided_view, host or device)
/// into another of the same rows, cols and count, touching only matrix elements: padding
/// rows (ld > rows) and gaps between matrices are neither read nor written, so the two
/// sides may have different leading dimensions and strides. Asynchronous on `stream`.
///
/// Cost: one copy call when both sides are packed alike or their columns are evenly spaced
/// (stride == ld * cols); otherwise one 2D copy per matrix, which is slow for millions of
/// matrices.
template <batch_like D, batch_like S>
  requires detail::strided<view_t<D>> && detail::strided<view_t<S>> &&
           std::is_same_v<typename view_t<D>::value_type, typename view_t<S>::value_type> &&
           (!std::is_const_v<typename view_t<D>::element_type>)
void copy(D&& dst, S&& src, CUstream_st* stream = nullptr) {
  using T = typename view_t<D>::value_type;
  const auto d = as_view(dst);
  const auto s = as_view(src);
  detail::require(d.rows() == s.rows() && d.cols() == s.cols() && d.count() == s.count(),
                  "cuda::copy",
                  "shapes differ: destination " + std::to_string(d.count()) + " x " +
                      std::to_string(d.rows()) + "x" + std::to_string(d.cols()) + ", source " +
                      std::to_string(s.count()) + " x " + std::to_string(s.rows()) + "x" +
                      std::to_string(s.cols()));
  const int m = d.rows(), n = d.cols();
  const index_t count = d.count();
  if (count == 0 || m == 0 || n == 0) return;
  const std::size_t e = sizeof(T), mn = std::size_t(m) * std::size_t(n);
  const bool ld_packed = d.ld() == m && s.ld() == m;
  if (ld_packed && d.stride() == index_t(mn) && s.stride() == index_t(mn)) {
    // Both fully packed: one contiguous block.
    const std::size_t bytes = mn * std::size_t(count) * e;
    detail::check_copy(cudaMemcpyAsync(d.data(), s.data(), bytes, cudaMemcpyDefault, stream),
                       "cudaMemcpyAsync", bytes);
  } else if (ld_packed && d.stride() >= index_t(mn) && s.stride() >= index_t(mn)) {
    // Each matrix contiguous, gaps between them: a 2D copy whose rows are whole matrices.
    detail::check_copy(cudaMemcpy2DAsync(d.data(), std::size_t(d.stride()) * e, s.data(),
                                         std::size_t(s.stride()) * e, mn * e, std::size_t(count),
                                         cudaMemcpyDefault, stream),
                       "cudaMemcpy2DAsync", mn * e);
  } else if (d.stride() == index_t(d.ld()) * n && s.stride() == index_t(s.ld()) * n) {
    // Columns evenly spaced through the whole batch: a 2D copy whose rows are columns.
    detail::check_copy(cudaMemcpy2DAsync(d.data(), std::size_t(d.ld()) * e, s.data(),
                                         std::size_t(s.ld()) * e, std::size_t(m) * e,
                                         std::size_t(n) * std::size_t(count), cudaMemcpyDefault,
                                         stream),
                       "cudaMemcpy2DAsync", std::size_t(m) * e);
  } else {
    // Irregular (padded columns and gaps, or a shared source matrix with stride 0).
    for (index_t k = 0; k < count; ++k)
      detail::check_copy(cudaMemcpy2DAsync(d.data() + k * d.stride(), std::size_t(d.ld()) * e,
                                           s.data() + k * s.stride(), std::size_t(s.ld()) * e,
                                           std::size_t(m) * e, std::size_t(n), cudaMemcpyDefault,
                                           stream),
                         "cudaMemcpy2DAsync", std::size_t(m) * e);
  }
}

}  // namespace tinybatch::cuda
