// Where getrf writes its pivots and getrs/getri read them: one int buffer with a fixed
// stride between matrices (packed: min(m, n), as cuBLAS lays them out), or an array of
// per-matrix pointers (as MAGMA's vbatched routines take them).
#pragma once

#include <ranges>
#include <span>
#include <type_traits>

#include "config.hpp"

namespace tinybatch {

class pivot_view {
 public:
  pivot_view() = default;
  /// A contiguous int buffer (std::vector<int>, std::span<int>, ...): packed, stride min(m, n).
  template <std::ranges::contiguous_range R>
    requires std::is_same_v<std::ranges::range_value_t<R>, int> &&
             (!std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>)
  pivot_view(R&& r) : data_(std::ranges::data(r)), size_(index_t(std::ranges::size(r))) {}
  /// A buffer with an explicit stride between matrices.
  pivot_view(int* data, index_t size, index_t stride) : data_(data), size_(size), stride_(stride) {}
  /// One pointer per matrix.
  pivot_view(int* const* ptrs, index_t count) : ptrs_(ptrs), size_(count) {}

  bool is_pointer_array() const { return ptrs_ != nullptr; }
  int* data() const { return data_; }
  int* const* pointers() const { return ptrs_; }
  index_t size() const { return size_; }
  index_t stride() const { return stride_; }  ///< -1: packed, decided by the front end
  void set_stride(index_t s) { stride_ = s; }

  TINYBATCH_HD int* operator[](index_t k) const { return ptrs_ ? ptrs_[k] : data_ + k * stride_; }

 private:
  int* data_ = nullptr;
  int* const* ptrs_ = nullptr;
  index_t size_ = 0;
  index_t stride_ = -1;
};

}  // namespace tinybatch
