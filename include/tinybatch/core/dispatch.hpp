// Run-time size -> compile-time instantiation. Users whose n is known only at run time call
// dispatch_size(n, f): f receives std::integral_constant<int, n> for n in 1..MaxN (so every
// kernel it calls is instantiated for that size and unrolls), and
// std::integral_constant<int, dynamic> otherwise.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "error.hpp"
#include "views.hpp"

namespace tinybatch {

inline constexpr int max_fixed_size = 32;

namespace detail {
inline std::string extents_differ(int m, int n, int fm, int fn) {
  return "run-time extents " + std::to_string(m) + " x " + std::to_string(n) +
         " differ from the requested fixed extents " + std::to_string(fm) + " x " + std::to_string(fn);
}

template <class F, int... I>
decltype(auto) dispatch_impl(int n, F&& f, std::integer_sequence<int, I...>) {
  using R = decltype(f(std::integral_constant<int, dynamic>{}));
  if constexpr (std::is_void_v<R>) {
    bool done = ((n == I + 1 ? (f(std::integral_constant<int, I + 1>{}), true) : false) || ...);
    if (!done) f(std::integral_constant<int, dynamic>{});
  } else {
    R r{};
    bool done = ((n == I + 1 ? (r = f(std::integral_constant<int, I + 1>{}), true) : false) || ...);
    if (!done) r = f(std::integral_constant<int, dynamic>{});
    return r;
  }
}
}  // namespace detail

template <int MaxN = max_fixed_size, class F>
decltype(auto) dispatch_size(int n, F&& f) {
  return detail::dispatch_impl(n, std::forward<F>(f), std::make_integer_sequence<int, MaxN>{});
}

template <int M, int N, class T>
strided_view<T, M, N> fixed_extents(const strided_view<T, dynamic, dynamic>& v) {
  detail::require(v.rows() == M && v.cols() == N, "fixed_extents",
                  [&] { return detail::extents_differ(v.rows(), v.cols(), M, N); });
  return strided_view<T, M, N>::make(v.data(), v.count(), v.ld(), v.stride(), M, N);
}

template <int M, int N, class T>
pointer_view<T, M, N> fixed_extents(const pointer_view<T, dynamic, dynamic>& v) {
  detail::require(v.rows() == M && v.cols() == N, "fixed_extents",
                  [&] { return detail::extents_differ(v.rows(), v.cols(), M, N); });
  return pointer_view<T, M, N>::make(v.pointers(), v.count(), v.ld(), M, N);
}

}  // namespace tinybatch
