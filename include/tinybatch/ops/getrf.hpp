// getrf: P A = L U with partial pivoting, LAPACK's pivots (1-based, first largest magnitude).
#pragma once

#include "common.hpp"

namespace tinybatch {

/// In place; ipiv receives min(m, n) 1-based pivots per matrix (packed, stride min(m, n), as
/// LAPACK and cuBLAS write them). info[k] = 0, or j for the first exactly zero U(j, j) of
/// matrix k; that matrix is still factored completely, as LAPACK does.
template <execution_policy Policy, batch_like XA>
  requires detail::writable<view_t<XA>>
void getrf(Policy&& policy, XA&& A, pivot_view ipiv, std::span<int> info) {
  constexpr const char* routine = "getrf";
  auto a = as_view(A);
  detail::check_view(routine, "A", a, true);
  detail::check_info(routine, info, a.count());
  ipiv = detail::check_pivots(routine, ipiv, a);
  detail::check_pivot_room(routine, policy, ipiv, a);
  detail::check_matrices(routine, policy, [](const auto&) -> const char* { return nullptr; }, a);
  detail::check_distinct_outputs(routine, policy, "A", a);
  if (a.count() == 0) return;
  detail::backend_t<Policy>::getrf(policy, a, ipiv, info.data());
}

}  // namespace tinybatch
