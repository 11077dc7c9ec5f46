// getrs: solves op(A) X = B with the LU factors and pivots of getrf.
#pragma once

#include "common.hpp"

namespace tinybatch {

namespace detail {
template <class Policy, class VA, class VB>
void getrs_checked(const char* routine, Policy& policy, op ta, const VA& a, pivot_view ipiv,
                   const VB& b, const int* info_in) {
  check_view(routine, "A", a, false);
  check_view(routine, "B", b, true);
  check_count(routine, "A", a.count(), b.count());
  ipiv = check_pivots(routine, ipiv, a, true);  // read only: stride 0 shares one factor's pivots
  check_pivot_room(routine, policy, ipiv, a);
  check_matrices(routine, policy, [](const auto& ma, const auto& mb) { return solve_dims(ma, mb); },
                 a, b);
  check_distinct_outputs(routine, policy, "B", b);
  check_disjoint(routine, policy, "B", b, "A", a);
  if (b.count() == 0) return;
  backend_t<Policy>::getrs(policy, ta, a, ipiv, b, info_in);
}
}  // namespace detail

/// B is overwritten with X.
template <execution_policy Policy, enum_arg<op> O, batch_like XA, batch_like XB>
  requires detail::same_scalar<view_t<XA>, view_t<XB>> && detail::writable<view_t<XB>> &&
           detail::solve_shapes<view_t<XA>, view_t<XB>>
void getrs(Policy&& policy, O ta, XA&& A, pivot_view ipiv, XB&& B) {
  detail::getrs_checked("getrs", policy, op(ta), as_view(A), ipiv, as_view(B), nullptr);
}

/// As above, skipping (leaving B untouched for) every matrix whose getrf info is non-zero.
template <execution_policy Policy, enum_arg<op> O, batch_like XA, batch_like XB>
  requires detail::same_scalar<view_t<XA>, view_t<XB>> && detail::writable<view_t<XB>> &&
           detail::solve_shapes<view_t<XA>, view_t<XB>>
void getrs(Policy&& policy, O ta, XA&& A, pivot_view ipiv, XB&& B, std::span<const int> info) {
  auto a = as_view(A);
  detail::check_info("getrs", info, a.count());
  detail::getrs_checked("getrs", policy, op(ta), a, ipiv, as_view(B), info.data());
}

}  // namespace tinybatch
