// getri: inv(A) in place from the LU factors and pivots of getrf.
#pragma once

#include "common.hpp"

namespace tinybatch {

/// info[k] = j for the first zero U(j, j) of matrix k, which is then left untouched (LAPACK).
template <execution_policy Policy, batch_like XA>
  requires detail::writable<view_t<XA>> && detail::square_if_static<view_t<XA>>
void getri(Policy&& policy, XA&& A, pivot_view ipiv, std::span<int> info) {
  constexpr const char* routine = "getri";
  auto a = as_view(A);
  detail::check_view(routine, "A", a, true);
  detail::check_info(routine, info, a.count());
  ipiv = detail::check_pivots(routine, ipiv, a);
  detail::check_pivot_room(routine, policy, ipiv, a);
  detail::check_matrices(routine, policy, [](const auto& m) { return detail::square_dims(m); }, a);
  detail::check_distinct_outputs(routine, policy, "A", a);
  if (a.count() == 0) return;
  detail::backend_t<Policy>::getri(policy, a, ipiv, info.data());
}

}  // namespace tinybatch
