// trsm: B := alpha op(A)^{-1} B (left) or alpha B op(A)^{-1} (right), A triangular.
#pragma once

#include "common.hpp"

namespace tinybatch {

namespace detail {
template <class S, class A, class B>
concept trsm_shapes =
    square_if_static<A> &&
    (!is_constant_v<S> ||
     ext_compatible(A::static_rows,
                    std::remove_cvref_t<S>::value == side::left ? B::static_rows : B::static_cols));
}

template <execution_policy Policy, enum_arg<side> S, enum_arg<uplo> U, enum_arg<op> O,
          enum_arg<diag> D, batch_like XA, batch_like XB>
  requires detail::same_scalar<view_t<XA>, view_t<XB>> && detail::writable<view_t<XB>> &&
           detail::trsm_shapes<S, view_t<XA>, view_t<XB>>
void trsm(Policy&& policy, S sd, U ul, O ta, D dg,
          std::type_identity_t<detail::scalar_of<view_t<XB>>> alpha, XA&& A, XB&& B) {
  constexpr const char* routine = "trsm";
  auto a = as_view(A);
  auto b = as_view(B);
  detail::check_view(routine, "A", a, false);
  detail::check_view(routine, "B", b, true);
  detail::check_count(routine, "A", a.count(), b.count());
  const side s = sd;
  detail::check_matrices(
      routine, policy,
      [&](const auto& ma, const auto& mb) -> const char* {
        if (ma.rows() != ma.cols()) return "A is not square";
        if (ma.rows() != (s == side::left ? mb.rows() : mb.cols()))
          return s == side::left ? "order of A differs from rows of B"
                                 : "order of A differs from cols of B";
        return nullptr;
      },
      a, b);
  detail::check_distinct_outputs(routine, policy, "B", b);
  detail::check_disjoint(routine, policy, "B", b, "A", a);
  if (b.count() == 0) return;
  detail::backend_t<Policy>::trsm(policy, s, uplo(ul), op(ta), diag(dg), alpha, a, b);
}

}  // namespace tinybatch
