// potrf: Cholesky factorization of symmetric positive definite matrices.
#pragma once

#include "common.hpp"

namespace tinybatch {

namespace detail {
template <class Policy, class VA>
void potrf_checked(Policy& policy, uplo ul, const VA& a, std::span<int> info, int max_n) {
  constexpr const char* routine = "potrf";
  check_view(routine, "A", a, true);
  check_info(routine, info, a.count());
  check_matrices(routine, policy, [](const auto& m) { return square_dims(m); }, a);
  check_distinct_outputs(routine, policy, "A", a);
  require(max_n >= -1, routine, [&] { return "max_n " + std::to_string(max_n) + " is negative"; });
  if (a.count() == 0) return;
  backend_t<Policy>::potrf(policy, ul, a, info.data(), max_n);
}
}  // namespace detail

/// A = L L^T (lower) or U^T U (upper) in place; only that triangle is read or written.
/// info[k] = 0, or j when the leading minor of order j of matrix k is not positive definite
/// (its factorization stops there, as LAPACK's); the other matrices are unaffected.
/// Any order and every view; variable-size batches too (vbatch_view: every matrix its own
/// order and leading dimension).
template <execution_policy Policy, enum_arg<uplo> U, batch_like XA>
  requires detail::writable<view_t<XA>> && detail::square_if_static<view_t<XA>>
void potrf(Policy&& policy, U ul, XA&& A, std::span<int> info) {
  detail::potrf_checked(policy, uplo(ul), as_view(A), info, -1);
}

/// A variable-size batch whose largest order the caller knows (max_n >= every n[k]): on the
/// GPU the call then never waits for the host (without it, one small reduction reads the
/// orders from the device first). The host backends ignore it.
template <execution_policy Policy, enum_arg<uplo> U, class T>
  requires(!std::is_const_v<T>)
void potrf(Policy&& policy, U ul, vbatch_view<T> A, std::span<int> info, int max_n) {
  detail::potrf_checked(policy, uplo(ul), A, info, max_n);
}

}  // namespace tinybatch
