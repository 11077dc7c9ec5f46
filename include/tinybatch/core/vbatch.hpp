// Owning variable-size batch in host memory: matrix k is m[k] x n[k], packed (ld = m[k]),
// each matrix starting on a 64-byte boundary. The storage starts zeroed, as batch's does.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "error.hpp"
#include "memory.hpp"
#include "views.hpp"

namespace tinybatch {

template <class T>
class vbatch {
 public:
  using value_type = T;
  vbatch() = default;
  vbatch(std::vector<int> m, std::vector<int> n) : m_(std::move(m)), n_(std::move(n)) {
    detail::require(m_.size() == n_.size(), "vbatch", [&] {
      return "m and n have different lengths (" + std::to_string(m_.size()) + " and " +
             std::to_string(n_.size()) + ")";
    });
    const std::size_t per_line = host_space::alignment / sizeof(T);
    std::vector<std::size_t> offset(m_.size());
    std::size_t total = 0;
    ld_.resize(m_.size());
    for (std::size_t k = 0; k < m_.size(); ++k) {
      detail::require(m_[k] >= 0 && n_[k] >= 0, "vbatch", [&] {
        return "negative matrix size " + std::to_string(m_[k]) + " x " + std::to_string(n_[k]) +
               " (matrix " + std::to_string(k) + ")";
      });
      ld_[k] = m_[k] > 0 ? m_[k] : 1;
      offset[k] = total;
      total += (std::size_t(ld_[k]) * n_[k] + per_line - 1) / per_line * per_line;
    }
    mem_.reset(static_cast<T*>(host_space::allocate(sizeof(T) * total)));
    std::fill_n(mem_.get(), total, T(0));
    ptrs_.resize(m_.size());
    for (std::size_t k = 0; k < m_.size(); ++k) ptrs_[k] = mem_.get() + offset[k];
  }

  index_t count() const { return index_t(m_.size()); }
  vbatch_view<T> view() { return {ptrs_.data(), m_.data(), n_.data(), ld_.data(), count()}; }
  vbatch_view<const T> view() const {
    return {const_cast<const T* const*>(ptrs_.data()), m_.data(), n_.data(), ld_.data(), count()};
  }
  matrix_ref<T> operator[](index_t k) { return view()[k]; }
  matrix_ref<const T> operator[](index_t k) const { return view()[k]; }

 private:
  struct deleter {
    void operator()(T* p) const noexcept { host_space::deallocate(p); }
  };
  std::vector<int> m_, n_, ld_;
  std::vector<T*> ptrs_;
  std::unique_ptr<T, deleter> mem_;
};

}  // namespace tinybatch
