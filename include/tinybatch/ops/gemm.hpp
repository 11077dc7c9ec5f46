// gemm: C := alpha op(A) op(B) + beta C for every matrix of the batch.
#pragma once

#include "common.hpp"

namespace tinybatch {

namespace detail {
template <class OA, class OB, class A, class B, class C>
concept gemm_shapes = ext_compatible(static_op_rows<OA, A>(), C::static_rows) &&
                      ext_compatible(static_op_cols<OA, A>(), static_op_rows<OB, B>()) &&
                      ext_compatible(static_op_cols<OB, B>(), C::static_cols);
}

/// `ta`, `tb`: tinybatch::no_trans / trans / conj_trans (checked at compile time against fixed
/// sizes) or a run-time tinybatch::op. As in the BLAS, C is not read when beta == 0.
template <execution_policy Policy, enum_arg<op> OA, enum_arg<op> OB, batch_like XA,
          batch_like XB, batch_like XC>
  requires detail::same_scalar<view_t<XA>, view_t<XB>, view_t<XC>> &&
           detail::writable<view_t<XC>> &&
           detail::gemm_shapes<OA, OB, view_t<XA>, view_t<XB>, view_t<XC>>
void gemm(Policy&& policy, OA ta, OB tb, std::type_identity_t<detail::scalar_of<view_t<XC>>> alpha,
          XA&& A, XB&& B, std::type_identity_t<detail::scalar_of<view_t<XC>>> beta, XC&& C) {
  constexpr const char* routine = "gemm";
  auto a = as_view(A);
  auto b = as_view(B);
  auto c = as_view(C);
  detail::check_view(routine, "A", a, false);
  detail::check_view(routine, "B", b, false);
  detail::check_view(routine, "C", c, true);
  detail::check_count(routine, "A", a.count(), c.count());
  detail::check_count(routine, "B", b.count(), c.count());
  const op oa = ta, ob = tb;
  detail::check_matrices(
      routine, policy,
      [&](const auto& ma, const auto& mb, const auto& mc) -> const char* {
        const int ar = oa == op::no_trans ? ma.rows() : ma.cols();
        const int ac = oa == op::no_trans ? ma.cols() : ma.rows();
        const int br = ob == op::no_trans ? mb.rows() : mb.cols();
        const int bc = ob == op::no_trans ? mb.cols() : mb.rows();
        if (ar != mc.rows()) return "rows of op(A) differ from rows of C";
        if (ac != br) return "cols of op(A) differ from rows of op(B)";
        if (bc != mc.cols()) return "cols of op(B) differ from cols of C";
        return nullptr;
      },
      a, b, c);
  // C may share memory with neither A nor B (with run-time sizes C = A gave wrong results).
  detail::check_distinct_outputs(routine, policy, "C", c);
  detail::check_disjoint(routine, policy, "C", c, "A", a);
  detail::check_disjoint(routine, policy, "C", c, "B", b);
  if (c.count() == 0) return;
  detail::backend_t<Policy>::gemm(policy, oa, ob, alpha, a, b, beta, c);
}

/// C := A B.
template <execution_policy Policy, batch_like XA, batch_like XB, batch_like XC>
  requires requires(Policy&& p, XA&& a, XB&& b, XC&& c) {
    gemm(p, no_trans, no_trans, 1, a, b, 0, c);
  }
void gemm(Policy&& policy, XA&& A, XB&& B, XC&& C) {
  gemm(policy, no_trans, no_trans, 1, A, B, 0, C);
}

}  // namespace tinybatch
