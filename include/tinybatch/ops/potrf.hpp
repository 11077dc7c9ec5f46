// potrf: Cholesky factorization of symmetric positive definite matrices.
#pragma once

#include "common.hpp"

namespace tinybatch {

/// A = L L^T (lower) or U^T U (upper) in place; only that triangle is read or written.
/// info[k] = 0, or j when the leading minor of order j of matrix k is not positive definite
/// (its factorization stops there, as LAPACK's); the other matrices are unaffected.
template <execution_policy Policy, enum_arg<uplo> U, batch_like XA>
  requires detail::writable<view_t<XA>> && detail::square_if_static<view_t<XA>>
void potrf(Policy&& policy, U ul, XA&& A, std::span<int> info) {
  constexpr const char* routine = "potrf";
  auto a = as_view(A);
  detail::check_view(routine, "A", a, true);
  detail::check_info(routine, info, a.count());
  detail::check_matrices(routine, policy, [](const auto& m) { return detail::square_dims(m); }, a);
  if (a.count() == 0) return;
  detail::backend_t<Policy>::potrf(policy, uplo(ul), a, info.data());
}

}  // namespace tinybatch
