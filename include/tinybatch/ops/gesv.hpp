// gesv: A X = B through getrf and getrs.
#pragma once

#include "common.hpp"

namespace tinybatch {

/// A is overwritten with its LU factors, ipiv with the pivots, B with X. Where info[k] > 0
/// (U(j, j) exactly zero), B[k] is left untouched, as LAPACK's gesv leaves it.
template <execution_policy Policy, batch_like XA, batch_like XB>
  requires detail::same_scalar<view_t<XA>, view_t<XB>> && detail::writable<view_t<XA>> &&
           detail::writable<view_t<XB>> && detail::solve_shapes<view_t<XA>, view_t<XB>>
void gesv(Policy&& policy, XA&& A, pivot_view ipiv, XB&& B, std::span<int> info) {
  constexpr const char* routine = "gesv";
  auto a = as_view(A);
  auto b = as_view(B);
  detail::check_view(routine, "A", a, true);
  detail::check_view(routine, "B", b, true);
  detail::check_count(routine, "B", b.count(), a.count());
  detail::check_info(routine, info, a.count());
  ipiv = detail::check_pivots(routine, ipiv, a);
  detail::check_pivot_room(routine, policy, ipiv, a);
  detail::check_matrices(
      routine, policy, [](const auto& ma, const auto& mb) { return detail::solve_dims(ma, mb); }, a, b);
  detail::check_distinct_outputs(routine, policy, "A", a);
  detail::check_distinct_outputs(routine, policy, "B", b);
  detail::check_disjoint(routine, policy, "B", b, "A", a);
  if (a.count() == 0) return;
  detail::backend_t<Policy>::getrf(policy, a, ipiv, info.data());
  detail::backend_t<Policy>::getrs(policy, op::no_trans, a, ipiv, b, info.data());
}

}  // namespace tinybatch
