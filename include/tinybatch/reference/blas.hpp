// Reference per-matrix BLAS kernels (gemm, trsm): plain loops with run-time bounds, any size,
// host and device. Fast kernels are tested against these; sizes no fast kernel covers run them.
#pragma once

#include "../core/config.hpp"
#include "../core/enums.hpp"

namespace tinybatch::reference {

/// Element (i, j) of op(A).
template <class MA>
TINYBATCH_HD auto op_at(const MA& A, bool transposed, int i, int j) {
  return transposed ? A(j, i) : A(i, j);
}

/// C := alpha op(A) op(B) + beta C. As in the BLAS, beta == 0 means C is not read and
/// alpha == 0 means A and B are not read.
template <class T, class MA, class MB, class MC>
TINYBATCH_HD void gemm(op ta, op tb, T alpha, const MA& A, const MB& B, T beta, const MC& C) {
  const bool tA = ta != op::no_trans, tB = tb != op::no_trans;
  const int m = C.rows(), n = C.cols(), k = tA ? A.rows() : A.cols();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      T s = 0;
      if (alpha != T(0))
        for (int l = 0; l < k; ++l) s += op_at(A, tA, i, l) * op_at(B, tB, l, j);
      C(i, j) = beta == T(0) ? alpha * s : alpha * s + beta * C(i, j);
    }
}

/// B := alpha op(A)^{-1} B (side left) or alpha B op(A)^{-1} (side right), A triangular.
/// Only the `ul` triangle of A is read; with diag::unit its diagonal is not read either.
template <class T, class MA, class MB>
TINYBATCH_HD void trsm(side sd, uplo ul, op ta, diag dg, T alpha, const MA& A, const MB& B) {
  const bool tA = ta != op::no_trans, unit = dg == diag::unit;
  const bool lower_eff = (ul == uplo::lower) != tA;  // is op(A) lower triangular?
  const int m = B.rows(), n = B.cols();
  if (alpha == T(0)) {
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) B(i, j) = T(0);
    return;
  }
  if (sd == side::left) {  // op(A) X = alpha B, column by column of B
    for (int j = 0; j < n; ++j) {
      for (int s = 0; s < m; ++s) {
        const int i = lower_eff ? s : m - 1 - s;
        T x = alpha * B(i, j);
        if (lower_eff)
          for (int l = 0; l < i; ++l) x -= op_at(A, tA, i, l) * B(l, j);
        else
          for (int l = i + 1; l < m; ++l) x -= op_at(A, tA, i, l) * B(l, j);
        B(i, j) = unit ? x : x / op_at(A, tA, i, i);
      }
    }
  } else {  // X op(A) = alpha B, row by row of B
    for (int r = 0; r < m; ++r) {
      for (int s = 0; s < n; ++s) {
        const int j = lower_eff ? n - 1 - s : s;
        T x = alpha * B(r, j);
        if (lower_eff)
          for (int l = j + 1; l < n; ++l) x -= B(r, l) * op_at(A, tA, l, j);
        else
          for (int l = 0; l < j; ++l) x -= B(r, l) * op_at(A, tA, l, j);
        B(r, j) = unit ? x : x / op_at(A, tA, j, j);
      }
    }
  }
}

}  // namespace tinybatch::reference
