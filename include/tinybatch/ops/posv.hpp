// posv: A X = B for symmetric positive definite A, through potrf and potrs.
#pragma once

#include "common.hpp"

namespace tinybatch {

/// Factors A (potrf) and solves A X = B (potrs) for every matrix whose info is 0; where
/// info[k] > 0, B[k] is left untouched, as LAPACK's posv leaves it.
template <execution_policy Policy, enum_arg<uplo> U, batch_like XA, batch_like XB>
  requires detail::same_scalar<view_t<XA>, view_t<XB>> && detail::writable<view_t<XA>> &&
           detail::writable<view_t<XB>> && detail::solve_shapes<view_t<XA>, view_t<XB>>
void posv(Policy&& policy, U ul, XA&& A, XB&& B, std::span<int> info) {
  constexpr const char* routine = "posv";
  auto a = as_view(A);
  auto b = as_view(B);
  // Check everything before potrf writes anything: bad input loses nothing.
  detail::check_view(routine, "A", a, true);
  detail::check_view(routine, "B", b, true);
  detail::check_count(routine, "B", b.count(), a.count());
  detail::check_info(routine, info, a.count());
  detail::check_matrices(
      routine, policy, [](const auto& ma, const auto& mb) { return detail::solve_dims(ma, mb); }, a, b);
  detail::check_distinct_outputs(routine, policy, "A", a);
  detail::check_distinct_outputs(routine, policy, "B", b);
  detail::check_disjoint(routine, policy, "B", b, "A", a);
  if (a.count() == 0) return;
  detail::backend_t<Policy>::potrf(policy, uplo(ul), a, info.data());
  detail::backend_t<Policy>::potrs(policy, uplo(ul), a, b, info.data());
}

}  // namespace tinybatch
