// TSLU on the GPU: the tournament of tslu.hpp (leaves, then a binary tree of merges) as
// batched LUs, so that a panel of the hybrid CALU never leaves the GPU.
//
// Every tournament node is an h x jb block (h = 2 jb): a leaf holds h consecutive rows of
// the panel, a merge the jb candidates of each of two nodes. Its partial-pivoting LU is one
// matrix of cublas<t>getrfBatched, the block padded to h x h with zero columns (the pivots of
// the first jb columns do not depend on the columns after them) and, for the last leaf, with
// zero rows (a zero row is never a pivot while a nonzero one is left). One level of the tree
// is one gather kernel, one batched LU, one collect kernel: a panel of m rows costs about
// 3 log2(m / h) launches, whatever its height.
//
// A node whose LU meets a zero pivot within its real rows' first min(jb, rows) columns sets
// the panel's flag; the panel is then factored with partial pivoting instead (cuSOLVER getrf),
// as tslu.hpp does when its root meets one.
#pragma once

#ifndef __CUDACC__
#error "tinybatch/tasks/tslu_cuda.cuh holds CUDA kernels: include it from a file compiled by nvcc"
#endif

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

namespace tinybatch::calu::cuda_detail {

/// The blocks of one tournament level, h x h each (leading dimension h), from the panel's
/// rows (mp x jb at `panel`, leading dimension ldp): a leaf's rows are node * h + r; a merge
/// node's are the jb candidates of nodes 2 node and 2 node + 1 of the level before (cand,
/// nprev nodes). ids gets each block row's panel row (-1: padding, a zero row).
template <class T>
__global__ void tournament_gather(bool leaves, const int* cand, int nprev, int jb, int h, int mp, const T* panel,
                                  long long ldp, T* blocks, int* ids) {
  const int node = blockIdx.x, r = blockIdx.y * blockDim.x + threadIdx.x;
  if (r >= h) return;
  int id;
  if (leaves) {
    id = node * h + r < mp ? node * h + r : -1;
  } else {
    const int child = 2 * node + (r >= jb), k = r - (r >= jb ? jb : 0);
    id = child < nprev ? cand[child * jb + k] : -1;
  }
  ids[node * h + r] = id;
  T* blk = blocks + (long long)node * h * h;
  for (int c = 0; c < h; ++c) blk[r + (long long)c * h] = c < jb && id >= 0 ? panel[id + c * ldp] : T(0);
}

/// After a level's batched LU: each node's first jb rows in the order its LU chose them
/// become its candidates; a zero pivot among its real rows' first min(jb, rows) columns sets
/// *flag. One thread per node (jb interchanges, in order: they do not commute).
template <class = void>  // a template: the header may be in many translation units
__global__ void tournament_collect(int nodes, int jb, int h, int* ids, const int* piv, const int* info,
                                          int* cand, int* flag) {
  const int node = blockIdx.x * blockDim.x + threadIdx.x;
  if (node >= nodes) return;
  int* id = ids + node * h;
  int real = 0;
  for (int r = 0; r < h; ++r) real += id[r] >= 0;
  const int inf = info[node];
  if (inf > 0 && inf <= min(jb, real)) atomicOr(flag, 1);
  const int* p = piv + node * h;
  for (int i = 0; i < jb; ++i) {
    const int j = p[i] - 1;
    if (j != i && j >= 0 && j < h) {
      const int t = id[i];
      id[i] = id[j];
      id[j] = t;
    }
    cand[node * jb + i] = id[i];
  }
}

/// cuSOLVER's panel pivots are relative to the panel's first row: make them global.
template <class = void>
__global__ void offset_pivots(int* ipiv, int count, int k0) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) ipiv[i] += k0;
}

inline cublasStatus_t getrf_batched(cublasHandle_t h, int n, double* const a[], int lda, int* p, int* info, int count) {
  return cublasDgetrfBatched(h, n, a, lda, p, info, count);
}
inline cublasStatus_t getrf_batched(cublasHandle_t h, int n, float* const a[], int lda, int* p, int* info, int count) {
  return cublasSgetrfBatched(h, n, a, lda, p, info, count);
}
inline cusolverStatus_t getrf_buffer(cusolverDnHandle_t h, int m, int n, double* a, int lda, int* lwork) {
  return cusolverDnDgetrf_bufferSize(h, m, n, a, lda, lwork);
}
inline cusolverStatus_t getrf_buffer(cusolverDnHandle_t h, int m, int n, float* a, int lda, int* lwork) {
  return cusolverDnSgetrf_bufferSize(h, m, n, a, lda, lwork);
}
/// cuSOLVER getrf; ipiv null: without pivoting.
inline cusolverStatus_t getrf(cusolverDnHandle_t h, int m, int n, double* a, int lda, double* w, int* ipiv, int* info) {
  return cusolverDnDgetrf(h, m, n, a, lda, w, ipiv, info);
}
inline cusolverStatus_t getrf(cusolverDnHandle_t h, int m, int n, float* a, int lda, float* w, int* ipiv, int* info) {
  return cusolverDnSgetrf(h, m, n, a, lda, w, ipiv, info);
}

}  // namespace tinybatch::calu::cuda_detail
