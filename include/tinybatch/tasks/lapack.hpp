// The BLAS and LAPACK calls of the CALU task graph, one name per operation for float and
// double (a traits struct instead of s/d copies of every task). Column-major only. Needs
// CBLAS and LAPACKE at link time (OpenBLAS: `pkg-config openblas lapacke`).
#pragma once

#include <cblas.h>
#include <lapacke.h>

#include "../host/blocked/blas_threads.hpp"

#include <type_traits>

namespace tinybatch::calu::detail {

template <class T>
struct lapack;

template <>
struct lapack<double> {
  // The _work variants: LAPACKE's plain ones scan the whole input for NaN first (an extra
  // pass over a panel, and an error code instead of a factorization).
  static int getrf(int m, int n, double* a, int lda, int* ipiv) {
    return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
  }
  static int getrs(char trans, int n, int nrhs, const double* a, int lda, const int* ipiv, double* b,
                   int ldb) {
    return LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, trans, n, nrhs, a, lda, ipiv, b, ldb);
  }
  /// Row interchanges k1..k2 (1-based, as LAPACK's dlaswp) of ipiv on n columns.
  static void laswp(int n, double* a, int lda, int k1, int k2, const int* ipiv) {
    LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, n, a, lda, k1, k2, ipiv, 1);
  }
  static void trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, double alpha,
                   const double* a, int lda, double* b, int ldb) {
    cblas_dtrsm(CblasColMajor, s, u, t, d, m, n, alpha, a, lda, b, ldb);
  }
  static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha, const double* a,
                   int lda, const double* b, int ldb, double beta, double* c, int ldc) {
    cblas_dgemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  /// Inverse of an upper triangular matrix in place (non-unit diagonal).
  static int trtri_upper(int n, double* a, int lda) { return LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, 'U', 'N', n, a, lda); }
};

template <>
struct lapack<float> {
  static int getrf(int m, int n, float* a, int lda, int* ipiv) {
    return LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
  }
  static int getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b,
                   int ldb) {
    return LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, trans, n, nrhs, a, lda, ipiv, b, ldb);
  }
  static void laswp(int n, float* a, int lda, int k1, int k2, const int* ipiv) {
    LAPACKE_slaswp_work(LAPACK_COL_MAJOR, n, a, lda, k1, k2, ipiv, 1);
  }
  static void trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, float alpha,
                   const float* a, int lda, float* b, int ldb) {
    cblas_strsm(CblasColMajor, s, u, t, d, m, n, alpha, a, lda, b, ldb);
  }
  static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* a,
                   int lda, const float* b, int ldb, float beta, float* c, int ldc) {
    cblas_sgemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  static int trtri_upper(int n, float* a, int lda) { return LAPACKE_strtri_work(LAPACK_COL_MAJOR, 'U', 'N', n, a, lda); }
};

/// OpenBLAS's own threads off while the task graph runs (host/blocked/blas_threads.hpp).
using blas_single_threaded = host::blocked::blas_single_threaded;

}  // namespace tinybatch::calu::detail
