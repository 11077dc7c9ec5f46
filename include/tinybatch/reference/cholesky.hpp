// Reference Cholesky (potrf, potrs, posv) with LAPACK's semantics, any size, host and device.
#pragma once

#include <cmath>

#include "blas.hpp"

namespace tinybatch::reference {

/// A = L L^T (lower) or U^T U (upper), in place; only the `ul` triangle is read or written.
/// Returns LAPACK's info: 0, or k when the leading minor of order k is not positive definite
/// (a NaN diagonal counts as not positive, as in LAPACK's DISNAN test). Column order and the
/// point where it stops are those of LAPACK's unblocked dpotf2.
template <class MA>
TINYBATCH_HD int potrf(uplo ul, const MA& A) {
  using T = typename MA::value_type;
  const int n = A.rows();
  const bool lo = ul == uplo::lower;
  // a(i, j) for i >= j addresses the factor's triangle whichever way it is stored.
  auto a = [&](int i, int j) -> T& { return lo ? A(i, j) : A(j, i); };
  for (int j = 0; j < n; ++j) {
    T ajj = a(j, j);
    for (int k = 0; k < j; ++k) ajj -= a(j, k) * a(j, k);
    if (!(ajj > T(0))) {
      a(j, j) = ajj;
      return j + 1;
    }
    ajj = std::sqrt(ajj);
    a(j, j) = ajj;
    const T r = T(1) / ajj;
    for (int i = j + 1; i < n; ++i) {
      T s = a(i, j);
      for (int k = 0; k < j; ++k) s -= a(i, k) * a(j, k);
      a(i, j) = s * r;
    }
  }
  return 0;
}

/// Solves A X = B with A's Cholesky factor from potrf; B is overwritten with X.
template <class MA, class MB>
TINYBATCH_HD void potrs(uplo ul, const MA& A, const MB& B) {
  using T = typename MB::value_type;
  if (ul == uplo::lower) {
    trsm(side::left, uplo::lower, op::no_trans, diag::non_unit, T(1), A, B);
    trsm(side::left, uplo::lower, op::trans, diag::non_unit, T(1), A, B);
  } else {
    trsm(side::left, uplo::upper, op::trans, diag::non_unit, T(1), A, B);
    trsm(side::left, uplo::upper, op::no_trans, diag::non_unit, T(1), A, B);
  }
}

}  // namespace tinybatch::reference
