// Cholesky of one matrix of any order on the host, blocked, for the orders beyond the SIMD
// lane kernels (n > 32): left-looking by panels of `nb` columns, the panel's update by a
// real BLAS's SYRK and GEMM where one is there, its diagonal block by the reference dpotf2
// (so info is exactly LAPACK's, NaN pivots included, which OpenBLAS's own potrf does not
// report alike) and its rows below by TRSM. Level-3 products, in order of preference:
//   CBLAS (OpenBLAS) when TINYBATCH_USE_CBLAS is defined and the program links it (the
//     Meson dependency and the pkg-config file set both where OpenBLAS was found);
//   Eigen's blocked products when <Eigen/Core> is on the include path;
//   otherwise the reference loops, matrix by matrix (correct, unblocked).
// Left-looking, as the GPU's kernel: the columns right of a failed panel keep their input.
#pragma once

#include <algorithm>
#include <cmath>

#include "../../core/enums.hpp"
#include "../../core/matrix_ref.hpp"
#include "../../reference/cholesky.hpp"

#if defined(TINYBATCH_USE_CBLAS) && !defined(TINYBATCH_NO_CBLAS)
#include <cblas.h>
#define TINYBATCH_BLOCKED_CBLAS 1
#else
#define TINYBATCH_BLOCKED_CBLAS 0
#endif
#include "blas_threads.hpp"
#if !TINYBATCH_BLOCKED_CBLAS && !defined(TINYBATCH_NO_EIGEN_BLAS) && __has_include(<Eigen/Core>)
#include <Eigen/Core>
#define TINYBATCH_BLOCKED_EIGEN 1
#else
#define TINYBATCH_BLOCKED_EIGEN 0
#endif

namespace tinybatch::host::blocked {

/// Whether this build has a level-3 provider (else blocked::potrf is not used).
inline constexpr bool available = TINYBATCH_BLOCKED_CBLAS || TINYBATCH_BLOCKED_EIGEN;
inline constexpr const char* provider = TINYBATCH_BLOCKED_CBLAS ? "cblas" : TINYBATCH_BLOCKED_EIGEN ? "eigen" : "none";

/// Panel width; orders up to it run the reference dpotf2 at once.
inline constexpr int cholesky_nb = 32;

namespace detail {

#if TINYBATCH_BLOCKED_CBLAS
inline void syrk(CBLAS_UPLO u, CBLAS_TRANSPOSE t, int n, int k, const double* a, int lda, double* c, int ldc) {
  cblas_dsyrk(CblasColMajor, u, t, n, k, -1.0, a, lda, 1.0, c, ldc);
}
inline void syrk(CBLAS_UPLO u, CBLAS_TRANSPOSE t, int n, int k, const float* a, int lda, float* c, int ldc) {
  cblas_ssyrk(CblasColMajor, u, t, n, k, -1.0f, a, lda, 1.0f, c, ldc);
}
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const double* a, int lda,
                 const double* b, int ldb, double* c, int ldc) {
  cblas_dgemm(CblasColMajor, ta, tb, m, n, k, -1.0, a, lda, b, ldb, 1.0, c, ldc);
}
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const float* a, int lda,
                 const float* b, int ldb, float* c, int ldc) {
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, -1.0f, a, lda, b, ldb, 1.0f, c, ldc);
}
inline void trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, int m, int n, const double* a, int lda, double* b,
                 int ldb) {
  cblas_dtrsm(CblasColMajor, s, u, t, CblasNonUnit, m, n, 1.0, a, lda, b, ldb);
}
inline void trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, int m, int n, const float* a, int lda, float* b,
                 int ldb) {
  cblas_strsm(CblasColMajor, s, u, t, CblasNonUnit, m, n, 1.0f, a, lda, b, ldb);
}
#endif

#if TINYBATCH_BLOCKED_EIGEN
template <class T>
using map = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>, 0, Eigen::OuterStride<>>;
#endif

/// The diagonal block's dpotf2 (lower storage): the reference's arithmetic, operation for
/// operation in the same order (so the same bits and the same info), but with the column's
/// update as axpys down contiguous columns (the reference walks rows of L, ld apart). The
/// pivot is formed and tested first, so a failing column keeps its rows below, as dpotf2's.
/// Upper storage keeps the reference: its inner products already run down columns of U.
/// The axpys are `omp simd` loops where OpenMP is on: GCC's -O2 does not vectorize a loop of
/// run-time length otherwise.
#if defined(_OPENMP)
#define TINYBATCH_AXPY_LOOP _Pragma("omp simd")
#else
#define TINYBATCH_AXPY_LOOP
#endif
template <class T>
int potf2_lower(T* a, index_t ld, int n) {
  for (int j = 0; j < n; ++j) {
    T* const cj = a + index_t(j) * ld;
    T ajj = cj[j];
    for (int k = 0; k < j; ++k) ajj -= a[j + index_t(k) * ld] * a[j + index_t(k) * ld];
    if (!(ajj > T(0))) {
      cj[j] = ajj;
      return j + 1;
    }
    ajj = std::sqrt(ajj);
    cj[j] = ajj;
    for (int k = 0; k < j; ++k) {
      const T t = a[j + index_t(k) * ld];
      const T* const ck = a + index_t(k) * ld;
TINYBATCH_AXPY_LOOP
      for (int i = j + 1; i < n; ++i) cj[i] -= ck[i] * t;
    }
    const T r = T(1) / ajj;
TINYBATCH_AXPY_LOOP
    for (int i = j + 1; i < n; ++i) cj[i] *= r;
  }
  return 0;
}
#undef TINYBATCH_AXPY_LOOP

}  // namespace detail

/// A = L L^T (lower) or U^T U (upper) of one n x n matrix in place, only that triangle read
/// or written; LAPACK's info. Needs `available`.
template <class T>
int potrf(uplo ul, matrix_ref<T> A, int nb = cholesky_nb) {
  const int n = A.rows(), ld = A.ld;
  const bool lo = ul == uplo::lower;
  T* const a = A.data;
  auto at = [&](int i, int j) { return a + i + index_t(j) * ld; };
  for (int j = 0; j < n; j += nb) {
    const int jb = std::min(nb, n - j), r = n - j - jb;
    // The panel's update by the factored columns left of it (rows of U above it).
    if (j > 0) {
#if TINYBATCH_BLOCKED_CBLAS
      using namespace detail;
      if (lo) {
        syrk(CblasLower, CblasNoTrans, jb, j, at(j, 0), ld, at(j, j), ld);
        if (r > 0) gemm(CblasNoTrans, CblasTrans, r, jb, j, at(j + jb, 0), ld, at(j, 0), ld, at(j + jb, j), ld);
      } else {
        syrk(CblasUpper, CblasTrans, jb, j, at(0, j), ld, at(j, j), ld);
        if (r > 0) gemm(CblasTrans, CblasNoTrans, jb, r, j, at(0, j), ld, at(0, j + jb), ld, at(j, j + jb), ld);
      }
#elif TINYBATCH_BLOCKED_EIGEN
      detail::map<T> M(a, n, n, Eigen::OuterStride<>(ld));
      if (lo) {
        M.block(j, j, jb, jb).template selfadjointView<Eigen::Lower>().rankUpdate(M.block(j, 0, jb, j), T(-1));
        if (r > 0) M.block(j + jb, j, r, jb).noalias() -= M.block(j + jb, 0, r, j) * M.block(j, 0, jb, j).transpose();
      } else {
        M.block(j, j, jb, jb).template selfadjointView<Eigen::Upper>().rankUpdate(M.block(0, j, j, jb).transpose(), T(-1));
        if (r > 0) M.block(j, j + jb, jb, r).noalias() -= M.block(0, j, j, jb).transpose() * M.block(0, j + jb, j, r);
      }
#endif
    }
    const int info = lo ? detail::potf2_lower(at(j, j), ld, jb) : reference::potrf(ul, matrix_ref<T>(at(j, j), ld, jb, jb));
    // The rows below (columns right of) the diagonal block, for the columns it completed.
    const int done = info == 0 ? jb : info - 1;
    if (r > 0 && done > 0) {
#if TINYBATCH_BLOCKED_CBLAS
      using namespace detail;
      if (lo)
        trsm(CblasRight, CblasLower, CblasTrans, r, done, at(j, j), ld, at(j + jb, j), ld);
      else
        trsm(CblasLeft, CblasUpper, CblasTrans, done, r, at(j, j), ld, at(j, j + jb), ld);
#elif TINYBATCH_BLOCKED_EIGEN
      detail::map<T> M(a, n, n, Eigen::OuterStride<>(ld));
      if (lo)
        M.block(j, j, done, done).template triangularView<Eigen::Lower>().transpose().template solveInPlace<Eigen::OnTheRight>(
            M.block(j + jb, j, r, done));
      else
        M.block(j, j, done, done).template triangularView<Eigen::Upper>().transpose().solveInPlace(M.block(j, j + jb, done, r));
#endif
    }
    if (info != 0) return j + info;
  }
  return 0;
}

/// Solves A X = B with potrf's factor, by two triangular solves (TRSM) of all of B at once.
template <class T>
void potrs(uplo ul, matrix_ref<const T> A, matrix_ref<T> B) {
  const int n = A.rows(), nrhs = B.cols();
  if (n == 0 || nrhs == 0) return;
#if TINYBATCH_BLOCKED_CBLAS
  using namespace detail;
  if (ul == uplo::lower) {
    trsm(CblasLeft, CblasLower, CblasNoTrans, n, nrhs, A.data, A.ld, B.data, B.ld);
    trsm(CblasLeft, CblasLower, CblasTrans, n, nrhs, A.data, A.ld, B.data, B.ld);
  } else {
    trsm(CblasLeft, CblasUpper, CblasTrans, n, nrhs, A.data, A.ld, B.data, B.ld);
    trsm(CblasLeft, CblasUpper, CblasNoTrans, n, nrhs, A.data, A.ld, B.data, B.ld);
  }
#elif TINYBATCH_BLOCKED_EIGEN
  Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>, 0, Eigen::OuterStride<>> M(A.data, n, n,
                                                                                               Eigen::OuterStride<>(A.ld));
  detail::map<T> X(B.data, n, nrhs, Eigen::OuterStride<>(B.ld));
  if (ul == uplo::lower) {
    M.template triangularView<Eigen::Lower>().solveInPlace(X);
    M.transpose().template triangularView<Eigen::Upper>().solveInPlace(X);
  } else {
    M.transpose().template triangularView<Eigen::Lower>().solveInPlace(X);
    M.template triangularView<Eigen::Upper>().solveInPlace(X);
  }
#else
  reference::potrs(ul, A, B);
#endif
}

}  // namespace tinybatch::host::blocked
