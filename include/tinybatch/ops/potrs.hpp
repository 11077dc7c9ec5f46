// potrs: solves A X = B with the Cholesky factors of potrf.
#pragma once

#include "common.hpp"

namespace tinybatch {

namespace detail {
template <class Policy, class VA, class VB>
void potrs_checked(const char* routine, Policy& policy, uplo ul, const VA& a, const VB& b,
                   const int* info_in) {
  check_view(routine, "A", a, false);
  check_view(routine, "B", b, true);
  check_count(routine, "A", a.count(), b.count());
  check_matrices(routine, policy, [](const auto& ma, const auto& mb) { return solve_dims(ma, mb); },
                 a, b);
  check_distinct_outputs(routine, policy, "B", b);
  check_disjoint(routine, policy, "B", b, "A", a);
  if (b.count() == 0) return;
  backend_t<Policy>::potrs(policy, ul, a, b, info_in);
}
}  // namespace detail

/// Solves A X = B with the Cholesky factors of potrf; B is overwritten with X.
template <execution_policy Policy, enum_arg<uplo> U, batch_like XA, batch_like XB>
  requires detail::same_scalar<view_t<XA>, view_t<XB>> && detail::writable<view_t<XB>> &&
           detail::solve_shapes<view_t<XA>, view_t<XB>>
void potrs(Policy&& policy, U ul, XA&& A, XB&& B) {
  detail::potrs_checked("potrs", policy, uplo(ul), as_view(A), as_view(B), nullptr);
}

/// As above, skipping (leaving B untouched for) every matrix whose potrf info is non-zero.
template <execution_policy Policy, enum_arg<uplo> U, batch_like XA, batch_like XB>
  requires detail::same_scalar<view_t<XA>, view_t<XB>> && detail::writable<view_t<XB>> &&
           detail::solve_shapes<view_t<XA>, view_t<XB>>
void potrs(Policy&& policy, U ul, XA&& A, XB&& B, std::span<const int> info) {
  auto a = as_view(A);
  detail::check_info("potrs", info, a.count());
  detail::potrs_checked("potrs", policy, uplo(ul), a, as_view(B), info.data());
}

}  // namespace tinybatch
