// CUDA errors as exceptions: every failed CUDA runtime, cuBLAS or cuSOLVER call becomes a
// tinybatch::cuda_error whose message names the call, e.g.
//   "cudaMalloc(&p, 4096) failed: out of memory (code 2)".
// Header-only and free of kernels: plain C++ compilers (g++) can include it. Only the CUDA
// runtime is linked for it; the cuBLAS and cuSOLVER status names are spelled out here so that
// checking their statuses needs neither library at link time.
#pragma once

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cusolver_common.h>

#include <string>

#include "../core/error.hpp"

namespace tinybatch::cuda {

namespace detail {

inline const char* status_text(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "cuBLAS not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "cuBLAS allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "cuBLAS invalid value";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "cuBLAS architecture mismatch";
    case CUBLAS_STATUS_MAPPING_ERROR: return "cuBLAS mapping error";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "cuBLAS execution failed";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "cuBLAS internal error";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "cuBLAS not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "cuBLAS license error";
    default: return "unknown cuBLAS status";
  }
}

inline const char* status_text(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "success";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "cuSOLVER not initialized";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "cuSOLVER allocation failed";
    case CUSOLVER_STATUS_INVALID_VALUE: return "cuSOLVER invalid value";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "cuSOLVER architecture mismatch";
    case CUSOLVER_STATUS_MAPPING_ERROR: return "cuSOLVER mapping error";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "cuSOLVER execution failed";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "cuSOLVER internal error";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "cuSOLVER matrix type not supported";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "cuSOLVER not supported";
    case CUSOLVER_STATUS_ZERO_PIVOT: return "cuSOLVER zero pivot";
    case CUSOLVER_STATUS_INVALID_LICENSE: return "cuSOLVER invalid license";
    case CUSOLVER_STATUS_INVALID_WORKSPACE: return "cuSOLVER invalid workspace";
    default: return "cuSOLVER status (see cusolver_common.h)";
  }
}

}  // namespace detail

/// Throws cuda_error naming `call` unless `e` is cudaSuccess.
inline void check(cudaError_t e, const std::string& call) {
  if (e == cudaSuccess) return;
  // A failed runtime call also records itself as the thread's "last error". Clear it here
  // (it is being reported now), or the next kernel launch check would report it again under
  // the kernel's name. Sticky errors (a crashed context) stay; cudaGetLastError cannot clear
  // them and every later call reports them anyway.
  (void)cudaGetLastError();
  throw cuda_error(call, int(e), cudaGetErrorString(e));
}

inline void check(cublasStatus_t s, const std::string& call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw cuda_error(call, int(s), detail::status_text(s));
}

inline void check(cusolverStatus_t s, const std::string& call) {
  if (s != CUSOLVER_STATUS_SUCCESS) throw cuda_error(call, int(s), detail::status_text(s));
}

/// After a kernel launch: throws cuda_error naming the kernel if the launch failed (bad
/// configuration, no kernel image for this GPU, ...). Errors while the kernel runs surface
/// later, at the next synchronizing call that is checked.
inline void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw cuda_error(std::string("launch of kernel ") + kernel, int(e), cudaGetErrorString(e));
}

}  // namespace tinybatch::cuda

/// TINYBATCH_CUDA_CHECK(cudaMemcpy(...)): throws tinybatch::cuda_error whose message is the
/// call as written, the error text and its code. Works for cudaError_t, cublasStatus_t and
/// cusolverStatus_t. A macro only to capture the call's source text.
#define TINYBATCH_CUDA_CHECK(...) ::tinybatch::cuda::check((__VA_ARGS__), #__VA_ARGS__)
