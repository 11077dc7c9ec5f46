// cuBLAS for the large sizes of the CUDA backend : strided gemm batches whose
// sizes are all at least the measured crossover (kernels/tuning.hpp, gemm_vendor_min_n) go
// to cublas<t>gemmStridedBatched, which is at the memory roofline there; smaller ones stay
// with the fast kernels. A cuBLAS handle per (thread, device), created on first use and
// destroyed when the thread ends; every failed cuBLAS call becomes a tinybatch::cuda_error
// naming the call (error.hpp). Needs libcublas at link time (tinybatch_dep links it when
// CUDA is enabled). Free of kernels: g++ may include it.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/enums.hpp"
#include "../core/views.hpp"
#include "error.hpp"
#include "kernels/tuning.hpp"

namespace tinybatch::cuda {

namespace detail {

/// This thread's cuBLAS handles, one per device, destroyed with the thread.
class cublas_handles {
 public:
  cublas_handles() = default;
  cublas_handles(const cublas_handles&) = delete;
  cublas_handles& operator=(const cublas_handles&) = delete;
  ~cublas_handles() {
    for (cublasHandle_t h : h_)
      if (h) (void)cublasDestroy(h);  // cannot throw here; nothing to report to
  }
  cublasHandle_t get(int device) {
    if (h_.size() <= std::size_t(device)) h_.resize(std::size_t(device) + 1, nullptr);
    if (!h_[device]) {
      cublasHandle_t h = nullptr;
      check(cublasCreate(&h), "cublasCreate(&handle) for device " + std::to_string(device));
      h_[device] = h;
      // Plain IEEE arithmetic in every precision (no TF32 for float, whatever the defaults).
      check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH)");
    }
    return h_[device];
  }

 private:
  std::vector<cublasHandle_t> h_;
};

/// The calling thread's handle for the current device, bound to `stream`.
inline cublasHandle_t cublas_handle(CUstream_st* stream) {
  thread_local cublas_handles handles;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice(&device)");
  cublasHandle_t h = handles.get(device);
  check(cublasSetStream(h, stream), "cublasSetStream(handle, stream)");
  return h;
}

inline cublasOperation_t cublas_op(op t) { return t == op::no_trans ? CUBLAS_OP_N : CUBLAS_OP_T; }

inline cublasStatus_t gemm_strided(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                   int n, int k, const float* alpha, const float* a, int lda,
                                   long long sa, const float* b, int ldb, long long sb,
                                   const float* beta, float* c, int ldc, long long sc, int count) {
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc,
                                   count);
}
inline cublasStatus_t gemm_strided(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                   int n, int k, const double* alpha, const double* a, int lda,
                                   long long sa, const double* b, int ldb, long long sb,
                                   const double* beta, double* c, int ldc, long long sc, int count) {
  return cublasDgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc,
                                   count);
}

}  // namespace detail

/// Which calls the backend gives cuBLAS instead of its own kernels. Catch-all: none.
namespace vendor {

template <class... A>
bool gemm(const A&...) {
  return false;
}

/// Strided batches of float or double (fixed or run-time sizes) whose m, n and k are all at
/// least gemm_vendor_min_n, alpha != 0 (with alpha == 0 the BLAS reads neither A nor B: the
/// own kernels do that without cuBLAS). Returns false where it does not apply.
template <class T, class EA, int MA, int NA, class EB, int MB, int NB, int MC, int NC>
  requires((std::is_same_v<T, float> || std::is_same_v<T, double>) &&
           std::is_same_v<std::remove_const_t<EA>, T> && std::is_same_v<std::remove_const_t<EB>, T>)
bool gemm(CUstream_st* stream, op ta, op tb, T alpha, const strided_view<EA, MA, NA>& A,
          const strided_view<EB, MB, NB>& B, T beta, const strided_view<T, MC, NC>& C) {
  const int m = C.rows(), n = C.cols(), k = ta == op::no_trans ? A.cols() : A.rows();
  constexpr bool fixed = MA > 0 && NA > 0 && MB > 0 && NB > 0 && MC > 0 && NC > 0;
  const int from = fast_kernels::gemm_vendor_min_n(int(sizeof(T)), fixed);
  if (alpha == T(0) || std::min(m, std::min(n, k)) < from) return false;
  cublasHandle_t h = detail::cublas_handle(stream);
  constexpr index_t chunk = 1 << 30;  // cuBLAS counts matrices in an int
  for (index_t k0 = 0; k0 < C.count(); k0 += chunk) {
    const int cnt = int(std::min<index_t>(chunk, C.count() - k0));
    check(detail::gemm_strided(h, detail::cublas_op(ta), detail::cublas_op(tb), m, n, k, &alpha,
                               A.data() + k0 * A.stride(), A.ld(), (long long)A.stride(),
                               B.data() + k0 * B.stride(), B.ld(), (long long)B.stride(), &beta,
                               C.data() + k0 * C.stride(), C.ld(), (long long)C.stride(), cnt),
          std::string(sizeof(T) == 4 ? "cublasSgemmStridedBatched" : "cublasDgemmStridedBatched") +
              "(m " + std::to_string(m) + ", n " + std::to_string(n) + ", k " + std::to_string(k) +
              ", count " + std::to_string(cnt) + ")");
  }
  return true;
}

}  // namespace vendor
}  // namespace tinybatch::cuda
