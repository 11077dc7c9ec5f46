// inverse: out of place, X := inv(A) with A left as it was.
#pragma once

#include "common.hpp"

namespace tinybatch {

namespace detail {
template <class A, class X>
concept inverse_shapes = square_if_static<A> && square_if_static<X> &&
                         ext_compatible(A::static_rows, X::static_rows);
}

/// info[k] = 0, or j when U(j, j) of matrix k is exactly zero (singular); X[k] then holds
/// the LU factors of A[k], as LAPACK's getrf followed by getri would leave them, and every
/// other matrix is inverted correctly.
template <execution_policy Policy, batch_like XA, batch_like XX>
  requires detail::same_scalar<view_t<XA>, view_t<XX>> && detail::writable<view_t<XX>> &&
           detail::inverse_shapes<view_t<XA>, view_t<XX>>
void inverse(Policy&& policy, XA&& A, XX&& X, std::span<int> info) {
  constexpr const char* routine = "inverse";
  auto a = as_view(A);
  auto x = as_view(X);
  detail::check_view(routine, "A", a, false);
  detail::check_view(routine, "X", x, true);
  detail::check_count(routine, "X", x.count(), a.count());
  detail::check_info(routine, info, a.count());
  detail::check_matrices(
      routine, policy,
      [](const auto& ma, const auto& mx) -> const char* {
        if (ma.rows() != ma.cols()) return "A is not square";
        if (mx.rows() != ma.rows() || mx.cols() != ma.cols()) return "X differs in size from A";
        return nullptr;
      },
      a, x);
  // Out of place on both layouts (getri inverts in place).
  detail::check_distinct_outputs(routine, policy, "X", x);
  detail::check_disjoint(routine, policy, "X", x, "A", a);
  if (a.count() == 0) return;
  detail::backend_t<Policy>::inverse(policy, a, x, info.data());
}

}  // namespace tinybatch
