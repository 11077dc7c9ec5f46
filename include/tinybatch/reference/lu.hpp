// Reference LU (getrf, getrs, getri, inverse) with LAPACK's semantics, any size, host and
// device. Pivots are 1-based and chosen as LAPACK's idamax chooses them: the first entry of
// largest magnitude.
#pragma once

#include <cfloat>
#include <cmath>
#include <limits>
#include <type_traits>

#include "blas.hpp"

namespace tinybatch::reference {

/// std::numeric_limits<T>::min() (the smallest normal number), spelled so that device code
/// gets it without nvcc's --expt-relaxed-constexpr: numeric_limits is host-only constexpr.
template <class T>
TINYBATCH_HD constexpr T smallest_normal() {
  if constexpr (std::is_same_v<T, float>)
    return FLT_MIN;
  else if constexpr (std::is_same_v<T, double>)
    return DBL_MIN;
  else
    return std::numeric_limits<T>::min();
}

template <class MA>
TINYBATCH_HD void swap_rows(const MA& A, int r1, int r2) {
  for (int c = 0; c < A.cols(); ++c) {
    auto t = A(r1, c);
    A(r1, c) = A(r2, c);
    A(r2, c) = t;
  }
}

/// P A = L U in place for an m x n A (LAPACK dgetf2's right-looking order). ipiv[0..min(m,n))
/// receives the 1-based pivot rows. Returns info: 0, or k for the first exactly zero U(k, k);
/// the factorization is completed anyway, as in LAPACK.
template <class MA>
TINYBATCH_HD int getrf(const MA& A, int* ipiv) {
  using T = typename MA::value_type;
  const int m = A.rows(), n = A.cols(), mn = m < n ? m : n;
  const T sfmin = smallest_normal<T>();
  int info = 0;
  for (int j = 0; j < mn; ++j) {
    int p = j;
    T amax = std::abs(A(j, j));
    for (int i = j + 1; i < m; ++i)
      if (std::abs(A(i, j)) > amax) amax = std::abs(A(i, j)), p = i;
    ipiv[j] = p + 1;
    if (A(p, j) != T(0)) {
      if (p != j) swap_rows(A, p, j);
      // LAPACK multiplies by the reciprocal unless that would overflow.
      if (std::abs(A(j, j)) >= sfmin) {
        const T r = T(1) / A(j, j);
        for (int i = j + 1; i < m; ++i) A(i, j) *= r;
      } else {
        for (int i = j + 1; i < m; ++i) A(i, j) /= A(j, j);
      }
    } else if (info == 0) {
      info = j + 1;
    }
    for (int c = j + 1; c < n; ++c) {
      const T t = A(j, c);
      for (int i = j + 1; i < m; ++i) A(i, c) -= A(i, j) * t;
    }
  }
  return info;
}

/// Applies the row interchanges of ipiv to B, forward (k = 0..n-1) or backward.
template <class MB>
TINYBATCH_HD void laswp(const MB& B, const int* ipiv, int n, bool forward) {
  for (int s = 0; s < n; ++s) {
    const int i = forward ? s : n - 1 - s;
    const int p = ipiv[i] - 1;
    if (p != i) swap_rows(B, i, p);
  }
}

/// Solves op(A) X = B with the LU factors and pivots of getrf; B is overwritten with X.
template <class MA, class MB>
TINYBATCH_HD void getrs(op ta, const MA& LU, const int* ipiv, const MB& B) {
  using T = typename MB::value_type;
  const int n = LU.rows();
  if (ta == op::no_trans) {
    laswp(B, ipiv, n, true);
    trsm(side::left, uplo::lower, op::no_trans, diag::unit, T(1), LU, B);
    trsm(side::left, uplo::upper, op::no_trans, diag::non_unit, T(1), LU, B);
  } else {
    trsm(side::left, uplo::upper, op::trans, diag::non_unit, T(1), LU, B);
    trsm(side::left, uplo::lower, op::trans, diag::unit, T(1), LU, B);
    laswp(B, ipiv, n, false);
  }
}

/// inv(A) in place from getrf's LU and pivots (LAPACK dgetri, unblocked): inv(U), then
/// inv(A) L = inv(U), then the column interchanges in reverse. `work` holds n elements.
/// Returns info = k for the first zero U(k, k), leaving A untouched, as LAPACK's dtrtri does.
template <class MA>
TINYBATCH_HD int getri(const MA& A, const int* ipiv, typename MA::value_type* work) {
  using T = typename MA::value_type;
  const int n = A.rows();
  for (int j = 0; j < n; ++j)
    if (A(j, j) == T(0)) return j + 1;
  for (int j = 0; j < n; ++j) {  // inv(U), column by column (dtrti2)
    A(j, j) = T(1) / A(j, j);
    const T ajj = -A(j, j);
    for (int i = 0; i < j; ++i) {  // x := triu(A(0:j, 0:j)) x, ascending i reads only old x
      T s = 0;
      for (int l = i; l < j; ++l) s += A(i, l) * A(l, j);
      A(i, j) = s * ajj;
    }
  }
  for (int j = n - 1; j >= 0; --j) {  // solve inv(A) L = inv(U), right to left
    for (int i = j + 1; i < n; ++i) work[i] = A(i, j), A(i, j) = T(0);
    for (int l = j + 1; l < n; ++l)
      for (int i = 0; i < n; ++i) A(i, j) -= A(i, l) * work[l];
  }
  for (int j = n - 2; j >= 0; --j) {
    const int p = ipiv[j] - 1;
    if (p != j)
      for (int i = 0; i < n; ++i) {
        T t = A(i, j);
        A(i, j) = A(i, p);
        A(i, p) = t;
      }
  }
  return 0;
}

/// Out-of-place inverse: X := inv(A), A untouched. Uses getrf + getri on X with scratch
/// `ipiv` (n ints) and `work` (n elements). For a singular A the info of getrf is returned
/// and X holds the LU factors, as LAPACK's getrf followed by getri would leave it.
template <class MA, class MX>
TINYBATCH_HD int inverse(const MA& A, const MX& X, int* ipiv, typename MX::value_type* work) {
  const int n = A.rows();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) X(i, j) = A(i, j);
  const int info = getrf(X, ipiv);
  return info != 0 ? info : getri(X, ipiv, work);
}

}  // namespace tinybatch::reference
