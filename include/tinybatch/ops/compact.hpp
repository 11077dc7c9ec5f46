// Front end of the compact layout (core/compact.hpp): conversions from and to the ordinary
// layout, and the operations on compact batches, with the semantics of their ordinary-layout
// namesakes (LAPACK's pivots and info, BLAS alpha/beta rules). Host policies only.
#pragma once

#include <cstdint>
#include <span>

#include "../core/compact.hpp"
#include "../host/compact/backend.hpp"
#include "common.hpp"
#include "gemm.hpp"
#include "trsm.hpp"

namespace tinybatch {

namespace detail {

template <class Policy>
constexpr void require_host_policy() {
  static_assert(is_host_policy<std::remove_cvref_t<Policy>>::value,
                "compact batches live in host memory: use tinybatch::seq or tinybatch::par");
}

/// Compiled once, not per compact view type (see view_facts).
inline void check_compact_facts(const char* routine, const char* name, index_t count, const void* data) {
  const auto msg = [name](const char* what) { return std::string(name) + what; };
  require(count >= 0, routine, [&] { return msg(": negative batch count"); });
  if (count == 0) return;
  require(data != nullptr, routine, [&] { return msg(": null data pointer with a non-zero count"); });
  require(reinterpret_cast<std::uintptr_t>(data) % 64 == 0, routine,
          [&] { return msg(": compact data must be 64-byte aligned"); });
}
template <class C>
void check_compact(const char* routine, const char* name, const C& c) {
  check_compact_facts(routine, name, c.count(), c.data());
}
/// An output's whole groups may not overlap another argument's (compact batches interleave
/// G matrices, so any overlap of storage is an overlap of matrices).
template <class C>
index_t compact_bytes(const C& c) {
  using T = std::remove_const_t<typename C::value_type>;
  constexpr index_t g = compact_width<T>;
  return (c.count() + g - 1) / g * g * C::static_rows * C::static_cols * index_t(sizeof(T));
}
template <class CX, class CY>
void check_compact_disjoint(const char* routine, const char* xn, const CX& x, const char* yn, const CY& y) {
  if (boxes_overlap(reinterpret_cast<std::uintptr_t>(x.data()), compact_bytes(x),
                    reinterpret_cast<std::uintptr_t>(y.data()), compact_bytes(y)))
    overlap_failed(routine, xn, yn, -1);
}

template <class T, int M, int N>
compact_view<const T, M, N> as_const(const compact_view<T, M, N>& v) {
  return v;
}
template <class T, int M, int N>
compact_view<const T, M, N> as_const(const compact_view<const T, M, N>& v) {
  return v;
}

template <class C>
concept writable_compact = !std::is_const_v<typename C::element_type>;

template <class A, class B>
concept same_compact_scalar = std::is_same_v<typename A::value_type, typename B::value_type>;

}  // namespace detail

/// dst := src, matrix by matrix, into the compact layout (the padding lanes of the last group
/// become identities).
template <execution_policy Policy, batch_like XS, compact_like XD>
  requires std::is_same_v<detail::scalar_of<view_t<XS>>, typename compact_t<XD>::value_type> &&
           detail::writable_compact<compact_t<XD>> &&
           (detail::ext_compatible(view_t<XS>::static_rows, compact_t<XD>::static_rows) &&
            detail::ext_compatible(view_t<XS>::static_cols, compact_t<XD>::static_cols))
void to_compact(Policy&& policy, XS&& src, XD&& dst) {
  detail::require_host_policy<Policy>();
  constexpr const char* routine = "to_compact";
  auto s = as_view(src);
  auto d = as_compact(dst);
  detail::check_view(routine, "src", s, false);
  detail::check_compact(routine, "dst", d);
  detail::check_count(routine, "dst", d.count(), s.count());
  detail::check_matrices(
      routine, policy,
      [&](const auto& ms) -> const char* {
        return ms.rows() != d.rows() || ms.cols() != d.cols() ? "src differs in size from dst" : nullptr;
      },
      s);
  if (d.count() == 0) return;
  detail::compact::backend::to_compact(policy, s, d);
}

/// dst := src, matrix by matrix, back into the ordinary layout.
template <execution_policy Policy, compact_like XS, batch_like XD>
  requires std::is_same_v<typename compact_t<XS>::value_type, detail::scalar_of<view_t<XD>>> &&
           detail::writable<view_t<XD>> &&
           (detail::ext_compatible(view_t<XD>::static_rows, compact_t<XS>::static_rows) &&
            detail::ext_compatible(view_t<XD>::static_cols, compact_t<XS>::static_cols))
void from_compact(Policy&& policy, XS&& src, XD&& dst) {
  detail::require_host_policy<Policy>();
  constexpr const char* routine = "from_compact";
  auto s = as_compact(src);
  auto d = as_view(dst);
  detail::check_compact(routine, "src", s);
  detail::check_view(routine, "dst", d, true);
  detail::check_count(routine, "dst", d.count(), s.count());
  detail::check_matrices(
      routine, policy,
      [&](const auto& md) -> const char* {
        return md.rows() != s.rows() || md.cols() != s.cols() ? "dst differs in size from src" : nullptr;
      },
      d);
  if (d.count() == 0) return;
  detail::compact::backend::from_compact(policy, detail::as_const(s), d);
}

/// getrf on a compact batch: ipiv and info as for the ordinary layout.
template <execution_policy Policy, compact_like XA>
  requires detail::writable_compact<compact_t<XA>>
void getrf(Policy&& policy, XA&& A, pivot_view ipiv, std::span<int> info) {
  detail::require_host_policy<Policy>();
  constexpr const char* routine = "getrf";
  auto a = as_compact(A);
  detail::check_compact(routine, "A", a);
  detail::check_info(routine, info, a.count());
  ipiv = detail::check_pivots(routine, ipiv, a);
  if (a.count() == 0) return;
  detail::compact::backend::getrf(policy, a, ipiv, info.data());
}

/// getrs on compact batches: op(A) X = B with getrf's factors and pivots, B overwritten.
template <execution_policy Policy, enum_arg<op> O, compact_like XA, compact_like XB>
  requires detail::same_compact_scalar<compact_t<XA>, compact_t<XB>> &&
           detail::writable_compact<compact_t<XB>> &&
           (compact_t<XA>::static_rows == compact_t<XA>::static_cols) &&
           (compact_t<XA>::static_rows == compact_t<XB>::static_rows)
void getrs(Policy&& policy, O ta, XA&& A, pivot_view ipiv, XB&& B) {
  detail::require_host_policy<Policy>();
  constexpr const char* routine = "getrs";
  auto a = as_compact(A);
  auto b = as_compact(B);
  detail::check_compact(routine, "A", a);
  detail::check_compact(routine, "B", b);
  detail::check_count(routine, "B", b.count(), a.count());
  ipiv = detail::check_pivots(routine, ipiv, a);
  detail::check_compact_disjoint(routine, "B", b, "A", a);
  if (b.count() == 0) return;
  detail::compact::backend::getrs(policy, op(ta), detail::as_const(a), ipiv, b);
}

/// potrf on a compact batch: info as for the ordinary layout; only the `ul` triangle is read
/// or written.
template <execution_policy Policy, enum_arg<uplo> U, compact_like XA>
  requires detail::writable_compact<compact_t<XA>> &&
           (compact_t<XA>::static_rows == compact_t<XA>::static_cols)
void potrf(Policy&& policy, U ul, XA&& A, std::span<int> info) {
  detail::require_host_policy<Policy>();
  constexpr const char* routine = "potrf";
  auto a = as_compact(A);
  detail::check_compact(routine, "A", a);
  detail::check_info(routine, info, a.count());
  if (a.count() == 0) return;
  detail::compact::backend::potrf(policy, uplo(ul), a, info.data());
}

/// potrs on compact batches: A X = B with potrf's factor, B overwritten.
template <execution_policy Policy, enum_arg<uplo> U, compact_like XA, compact_like XB>
  requires detail::same_compact_scalar<compact_t<XA>, compact_t<XB>> &&
           detail::writable_compact<compact_t<XB>> &&
           (compact_t<XA>::static_rows == compact_t<XA>::static_cols) &&
           (compact_t<XA>::static_rows == compact_t<XB>::static_rows)
void potrs(Policy&& policy, U ul, XA&& A, XB&& B) {
  detail::require_host_policy<Policy>();
  constexpr const char* routine = "potrs";
  auto a = as_compact(A);
  auto b = as_compact(B);
  detail::check_compact(routine, "A", a);
  detail::check_compact(routine, "B", b);
  detail::check_count(routine, "B", b.count(), a.count());
  detail::check_compact_disjoint(routine, "B", b, "A", a);
  if (b.count() == 0) return;
  detail::compact::backend::potrs(policy, uplo(ul), detail::as_const(a), b);
}

/// trsm on compact batches (same arguments and rules as the ordinary trsm).
template <execution_policy Policy, enum_arg<side> S, enum_arg<uplo> U, enum_arg<op> O,
          enum_arg<diag> D, compact_like XA, compact_like XB>
  requires detail::same_compact_scalar<compact_t<XA>, compact_t<XB>> &&
           detail::writable_compact<compact_t<XB>> &&
           detail::trsm_shapes<S, compact_t<XA>, compact_t<XB>>
void trsm(Policy&& policy, S sd, U ul, O ta, D dg,
          std::type_identity_t<typename compact_t<XB>::value_type> alpha, XA&& A, XB&& B) {
  detail::require_host_policy<Policy>();
  constexpr const char* routine = "trsm";
  auto a = as_compact(A);
  auto b = as_compact(B);
  detail::check_compact(routine, "A", a);
  detail::check_compact(routine, "B", b);
  detail::check_count(routine, "A", a.count(), b.count());
  const side s = sd;
  detail::require(a.rows() == (s == side::left ? b.rows() : b.cols()), routine, [&] {
    return std::string(s == side::left ? "order of A differs from rows of B" : "order of A differs from cols of B") +
           " (A " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + ", B " +
           std::to_string(b.rows()) + " x " + std::to_string(b.cols()) + ")";
  });
  detail::check_compact_disjoint(routine, "B", b, "A", a);
  if (b.count() == 0) return;
  detail::compact::backend::trsm(policy, s, uplo(ul), op(ta), diag(dg), alpha, detail::as_const(a), b);
}

/// gemm on compact batches (same arguments and rules as the ordinary gemm).
template <execution_policy Policy, enum_arg<op> OA, enum_arg<op> OB, compact_like XA,
          compact_like XB, compact_like XC>
  requires detail::same_compact_scalar<compact_t<XA>, compact_t<XC>> &&
           detail::same_compact_scalar<compact_t<XB>, compact_t<XC>> &&
           detail::writable_compact<compact_t<XC>> &&
           detail::gemm_shapes<OA, OB, compact_t<XA>, compact_t<XB>, compact_t<XC>>
void gemm(Policy&& policy, OA ta, OB tb, std::type_identity_t<typename compact_t<XC>::value_type> alpha,
          XA&& A, XB&& B, std::type_identity_t<typename compact_t<XC>::value_type> beta, XC&& C) {
  detail::require_host_policy<Policy>();
  constexpr const char* routine = "gemm";
  auto a = as_compact(A);
  auto b = as_compact(B);
  auto c = as_compact(C);
  detail::check_compact(routine, "A", a);
  detail::check_compact(routine, "B", b);
  detail::check_compact(routine, "C", c);
  detail::check_count(routine, "A", a.count(), c.count());
  detail::check_count(routine, "B", b.count(), c.count());
  const op oa = ta, ob = tb;
  const int ar = oa == op::no_trans ? a.rows() : a.cols(), ac = oa == op::no_trans ? a.cols() : a.rows();
  const int br = ob == op::no_trans ? b.rows() : b.cols(), bc = ob == op::no_trans ? b.cols() : b.rows();
  const auto sizes = [&](const char* why) {
    return std::string(why) + " (op(A) " + std::to_string(ar) + " x " + std::to_string(ac) + ", op(B) " +
           std::to_string(br) + " x " + std::to_string(bc) + ", C " + std::to_string(c.rows()) + " x " +
           std::to_string(c.cols()) + ")";
  };
  detail::require(ar == c.rows(), routine, [&] { return sizes("rows of op(A) differ from rows of C"); });
  detail::require(ac == br, routine, [&] { return sizes("cols of op(A) differ from rows of op(B)"); });
  detail::require(bc == c.cols(), routine, [&] { return sizes("cols of op(B) differ from cols of C"); });
  detail::check_compact_disjoint(routine, "C", c, "A", a);
  detail::check_compact_disjoint(routine, "C", c, "B", b);
  if (c.count() == 0) return;
  detail::compact::backend::gemm(policy, oa, ob, alpha, detail::as_const(a), detail::as_const(b), beta, c);
}

/// X := inv(A) on compact batches (info and singular matrices as the ordinary inverse).
template <execution_policy Policy, compact_like XA, compact_like XX>
  requires detail::same_compact_scalar<compact_t<XA>, compact_t<XX>> &&
           detail::writable_compact<compact_t<XX>> &&
           (compact_t<XA>::static_rows == compact_t<XA>::static_cols) &&
           std::is_same_v<typename compact_t<XX>::value_type, typename compact_t<XA>::value_type> &&
           (compact_t<XX>::static_rows == compact_t<XA>::static_rows) &&
           (compact_t<XX>::static_cols == compact_t<XA>::static_cols)
void inverse(Policy&& policy, XA&& A, XX&& X, std::span<int> info) {
  detail::require_host_policy<Policy>();
  constexpr const char* routine = "inverse";
  auto a = as_compact(A);
  auto x = as_compact(X);
  detail::check_compact(routine, "A", a);
  detail::check_compact(routine, "X", x);
  detail::check_count(routine, "X", x.count(), a.count());
  detail::check_info(routine, info, a.count());
  detail::check_compact_disjoint(routine, "X", x, "A", a);  // out of place, as on the ordinary layout
  if (a.count() == 0) return;
  detail::compact::backend::inverse(policy, detail::as_const(a), x, info.data());
}

}  // namespace tinybatch
