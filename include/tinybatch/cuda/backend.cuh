// CUDA backend: what tinybatch::cuda::policy runs. Same operations, argument types and
// semantics as the host backend (host/backend.hpp); every launch is asynchronous on the
// policy's stream, and every batch, pivot, info and pointer array must be device memory.
//
// Each operation has a generic path: one thread per matrix, executing the very per-matrix
// code of reference/ that the host runs, so GPU and host agree operation by operation. Fast
// kernels (register-resident kernels for n <= 32) plug in at cuda::fast below, and
// cuBLAS at cuda::vendor (cublas.hpp: gemm on large strided batches); the generic path stays
// as their fallback and oracle.
#pragma once

#if !defined(__CUDACC__)
#error "tinybatch/cuda/backend.cuh contains CUDA kernels: compile this file with nvcc"
#endif

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>
#include <utility>

#include "../core/pivots.hpp"
#include "../core/views.hpp"
#include "../policy.hpp"
#include "../reference/blas.hpp"
#include "../reference/cholesky.hpp"
#include "../reference/lu.hpp"
#include "cublas.hpp"
#include "error.hpp"

namespace tinybatch::cuda {

/// Dispatch point for the fast kernels. The backend asks `fast::OP(stream, args...)`
/// first (with the same arguments it gives the generic kernel) unless the policy's kernels
/// knob is kernels::reference. An overload that covers the call (its view types, sizes,
/// flags) launches its kernel and returns true; these catch-alls cover nothing, so every
/// call falls through to the generic kernels. The fast overloads live in kernels/fast.cuh,
/// included below (a qualified call finds only what is declared before the caller).
namespace fast {
template <class... A> bool gemm(const A&...) { return false; }
template <class... A> bool trsm(const A&...) { return false; }
template <class... A> bool potrf(const A&...) { return false; }
template <class... A> bool potrs(const A&...) { return false; }
template <class... A> bool getrf(const A&...) { return false; }
template <class... A> bool getrs(const A&...) { return false; }
template <class... A> bool getri(const A&...) { return false; }
template <class... A> bool inverse(const A&...) { return false; }
}  // namespace fast

}  // namespace tinybatch::cuda

#include "kernels/fast.cuh"
#include "kernels/potrf_blocked.cuh"

namespace tinybatch::cuda {

namespace detail {

template <class K>
inline constexpr bool try_fast = !std::is_same_v<K, kernels::reference>;

inline constexpr int threads_per_block = 128;
// Grid-x may hold 2^31 - 1 blocks; a grid-stride loop covers larger counts.
inline constexpr index_t max_blocks = 2147483647;

/// The generic kernel: thread k runs f(k), matrix by matrix.
template <class F>
__global__ void __launch_bounds__(threads_per_block) each_matrix(index_t count, F f) {
  const index_t step = index_t(gridDim.x) * blockDim.x;
  for (index_t k = index_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += step) f(k);
}

template <class F>
void launch_each_matrix(const char* kernel, CUstream_st* stream, index_t count, const F& f) {
  if (count <= 0) return;
  const index_t blocks = (count + threads_per_block - 1) / threads_per_block;
  const unsigned grid = unsigned(blocks < max_blocks ? blocks : max_blocks);
  each_matrix<<<grid, threads_per_block, 0, stream>>>(count, f);
  check_launch(kernel);
}

/// Views travel to the kernels by value, as they are: their extents live in an (empty when
/// fixed) base class, laid out alike by the host compiler and nvcc, and their operator[]
/// hands out the matrix_ref<T, M, N> whose fixed extents fold into the device code.
template <class V>
using kernel_view = V;
template <class V>
const V& kernel_view_of(const V& v) {
  return v;
}

// One functor per operation: what thread k does. Views and pivot_view travel to the kernel
// by value inside the functor.

template <class T, class KA, class KB, class KC>
struct gemm_fn {
  op ta, tb;
  T alpha;
  KA A;
  KB B;
  T beta;
  KC C;
  __device__ void operator()(index_t k) const {
    reference::gemm(ta, tb, alpha, A[k], B[k], beta, C[k]);
  }
};

template <class T, class KA, class KB>
struct trsm_fn {
  side s;
  uplo u;
  op t;
  diag d;
  T alpha;
  KA A;
  KB B;
  __device__ void operator()(index_t k) const { reference::trsm(s, u, t, d, alpha, A[k], B[k]); }
};

template <class KA>
struct potrf_fn {
  uplo u;
  KA A;
  int* info;
  __device__ void operator()(index_t k) const { info[k] = reference::potrf(u, A[k]); }
};

template <class KA, class KB>
struct potrs_fn {
  uplo u;
  KA A;
  KB B;
  const int* info;  // may be null: solve every matrix
  __device__ void operator()(index_t k) const {
    if (!info || info[k] == 0) reference::potrs(u, A[k], B[k]);
  }
};

template <class KA>
struct getrf_fn {
  KA A;
  pivot_view ipiv;
  int* info;
  __device__ void operator()(index_t k) const { info[k] = reference::getrf(A[k], ipiv[k]); }
};

template <class KA, class KB>
struct getrs_fn {
  op t;
  KA A;
  pivot_view ipiv;
  KB B;
  const int* info;  // may be null: solve every matrix
  __device__ void operator()(index_t k) const {
    if (!info || info[k] == 0) reference::getrs(t, A[k], ipiv[k], B[k]);
  }
};

/// Per-matrix scratch of getri and inverse: matrix k owns work[k * n, (k + 1) * n) and
/// piv[k * n, (k + 1) * n), n the largest order in the batch.
template <class T>
struct scratch_slices {
  T* work;
  int* piv;
  index_t n;
  __device__ T* work_of(index_t k) const { return work + k * n; }
  __device__ int* piv_of(index_t k) const { return piv + k * n; }
};

template <class KA>
struct getri_fn {
  KA A;
  pivot_view ipiv;
  int* info;
  scratch_slices<typename KA::value_type> scratch;
  __device__ void operator()(index_t k) const {
    info[k] = reference::getri(A[k], ipiv[k], scratch.work_of(k));
  }
};

template <class KA, class KX>
struct inverse_fn {
  KA A;
  KX X;
  int* info;
  scratch_slices<typename KX::value_type> scratch;
  __device__ void operator()(index_t k) const {
    info[k] = reference::inverse(A[k], X[k], scratch.piv_of(k), scratch.work_of(k));
  }
};

/// Device memory for one call, stream-ordered (cudaMallocAsync / cudaFreeAsync on the
/// policy's stream): the free is queued behind the kernels that use it, so the host never
/// waits, and the pool reuses the memory call after call.
class stream_scratch {
 public:
  stream_scratch(std::size_t bytes, CUstream_st* stream) : stream_(stream) {
    if (bytes > 0)
      check(cudaMallocAsync(&p_, bytes, stream),
            "cudaMallocAsync(&p, " + std::to_string(bytes) + ", stream)");
  }
  stream_scratch(const stream_scratch&) = delete;
  stream_scratch& operator=(const stream_scratch&) = delete;
  ~stream_scratch() {
    if (p_) (void)cudaFreeAsync(p_, stream_);  // cannot throw here; see device_space
  }
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  CUstream_st* stream_;
};

// A template (with one instantiation) rather than a plain __global__ function: a header
// may then be included by many translation units without duplicate kernel symbols.
template <class = void>
__global__ void max_rows_kernel(const int* rows, index_t count, int* result) {
  int m = 0;
  for (index_t k = index_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count;
       k += index_t(gridDim.x) * blockDim.x)
    m = rows[k] > m ? rows[k] : m;
  atomicMax(result, m);
}

/// Largest order in the batch. Uniform views know it on the host. A variable-size batch
/// keeps its sizes in device memory: a small reduction reads them, and the host waits for
/// it (the one point where the backend synchronizes the stream).
template <class V>
int max_order(const V& v, CUstream_st* stream) {
  if constexpr (V::uniform) {
    (void)stream;
    return v.shape().rows();
  } else {
    stream_scratch d(sizeof(int), stream);
    int* r = static_cast<int*>(d.get());
    check(cudaMemsetAsync(r, 0, sizeof(int), stream), "cudaMemsetAsync(max order)");
    const index_t blocks = (v.count() + threads_per_block - 1) / threads_per_block;
    const unsigned grid = unsigned(blocks < 65535 ? blocks : 65535);  // atomics: keep it small
    max_rows_kernel<void><<<grid, threads_per_block, 0, stream>>>(v.rows_array(), v.count(), r);
    check_launch("tinybatch::cuda::detail::max_rows_kernel");
    int h = 0;
    check(cudaMemcpyAsync(&h, r, sizeof(int), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync(&max order, device, 4)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(stream) after max_rows_kernel");
    return h;
  }
}

/// Scratch for getri / inverse: n elements and n ints per matrix.
template <class T>
struct call_scratch {
  stream_scratch mem;
  scratch_slices<T> slices;
  call_scratch(index_t count, int n, CUstream_st* stream)
      : mem(std::size_t(count) * std::size_t(n) * (sizeof(T) + sizeof(int)), stream),
        slices{static_cast<T*>(mem.get()),
               reinterpret_cast<int*>(static_cast<T*>(mem.get()) + std::size_t(count) * n), n} {}
};

}  // namespace detail
}  // namespace tinybatch::cuda

namespace tinybatch::detail {

/// The CUDA policy's backend. Each operation asks cuda::fast first (unless the policy's
/// kernels knob is kernels::reference), then launches the generic kernel.
template <class K>
struct backend<cuda::policy<K>> {
  using policy_type = cuda::policy<K>;
  template <class V>
  using kview = cuda::detail::kernel_view<V>;
  template <class V>
  static kview<V> kv(const V& v) {
    return cuda::detail::kernel_view_of(v);
  }

  template <class T, class VA, class VB, class VC>
  static void gemm(const policy_type& p, op ta, op tb, T alpha, const VA& A, const VB& B, T beta,
                   const VC& C) {
    if constexpr (cuda::detail::try_fast<K>) {
      // cuBLAS where it measured faster (large strided batches, cublas.hpp), else the fast
      // kernels for n <= 32.
      if (cuda::vendor::gemm(p.stream, ta, tb, alpha, A, B, beta, C)) return;
      if (cuda::fast::gemm(p.stream, ta, tb, alpha, A, B, beta, C)) return;
    }
    using F = cuda::detail::gemm_fn<T, kview<VA>, kview<VB>, kview<VC>>;
    cuda::detail::launch_each_matrix("tinybatch::cuda gemm (generic)", p.stream, C.count(),
                                     F{ta, tb, alpha, kv(A), kv(B), beta, kv(C)});
  }

  template <class T, class VA, class VB>
  static void trsm(const policy_type& p, side s, uplo u, op t, diag d, T alpha, const VA& A,
                   const VB& B) {
    if constexpr (cuda::detail::try_fast<K>)
      if (cuda::fast::trsm(p.stream, s, u, t, d, alpha, A, B)) return;
    using F = cuda::detail::trsm_fn<T, kview<VA>, kview<VB>>;
    cuda::detail::launch_each_matrix("tinybatch::cuda trsm (generic)", p.stream, B.count(),
                                     F{s, u, t, d, alpha, kv(A), kv(B)});
  }

  /// max_n: the largest order of a variable-size batch if the caller knows it (-1: read
  /// from the device once, the one wait of the call).
  template <class VA>
  static void potrf(const policy_type& p, uplo u, const VA& A, int* info, int max_n = -1) {
    if constexpr (cuda::detail::try_fast<K>) {
      // n <= 32 at compile time: the register kernels; everything else of float or double:
      // the fused left-looking blocked kernel.
      if (cuda::fast::potrf(p.stream, u, A, info)) return;
      if constexpr (cuda::blocked::supported_view<VA>) {
        int nmax = max_n;
        if constexpr (VA::uniform)
          nmax = A.shape().rows();
        else if (nmax < 0)
          nmax = cuda::detail::max_order(A, p.stream);
        cuda::blocked::potrf(p.stream, u, A, info, nmax, cuda::blocked::cholesky_options_of<K>());
        return;
      }
    }
    using F = cuda::detail::potrf_fn<kview<VA>>;
    cuda::detail::launch_each_matrix("tinybatch::cuda potrf (generic)", p.stream, A.count(),
                                     F{u, kv(A), info});
  }

  template <class VA, class VB>
  static void potrs(const policy_type& p, uplo u, const VA& A, const VB& B, const int* info) {
    if constexpr (cuda::detail::try_fast<K> && cuda::fast::potrs_always<VA, VB>) {
      cuda::fast::potrs(p.stream, u, A, B, info);
      return;
    } else {
      if constexpr (cuda::detail::try_fast<K>) {
        if (cuda::fast::potrs(p.stream, u, A, B, info)) return;
        // Orders beyond the register kernels and variable sizes: a thread block per matrix
        // and right-hand side (one thread per matrix is n^2 dependent steps).
        if constexpr (cuda::blocked::supported_view<VB>) {
          bool large = true;
          int nrhs = 1;
          if constexpr (VA::uniform) large = A.shape().rows() > 32;
          if constexpr (VB::uniform) nrhs = B.shape().cols();
          if (large) {
            cuda::blocked::potrs(p.stream, u, A, B, info, nrhs);
            return;
          }
        }
      }
    }
    using F = cuda::detail::potrs_fn<kview<VA>, kview<VB>>;
    cuda::detail::launch_each_matrix("tinybatch::cuda potrs (generic)", p.stream, B.count(),
                                     F{u, kv(A), kv(B), info});
  }

  template <class VA>
  static void getrf(const policy_type& p, const VA& A, const pivot_view& ipiv, int* info) {
    if constexpr (cuda::detail::try_fast<K>)
      if (cuda::fast::getrf(p.stream, A, ipiv, info)) return;
    using F = cuda::detail::getrf_fn<kview<VA>>;
    cuda::detail::launch_each_matrix("tinybatch::cuda getrf (generic)", p.stream, A.count(),
                                     F{kv(A), ipiv, info});
  }

  template <class VA, class VB>
  static void getrs(const policy_type& p, op t, const VA& A, const pivot_view& ipiv, const VB& B,
                    const int* info) {
    if constexpr (cuda::detail::try_fast<K> && cuda::fast::getrs_always<VA, VB>) {
      cuda::fast::getrs(p.stream, t, A, ipiv, B, info);
      return;
    } else {
      if constexpr (cuda::detail::try_fast<K>)
        if (cuda::fast::getrs(p.stream, t, A, ipiv, B, info)) return;
    }
    using F = cuda::detail::getrs_fn<kview<VA>, kview<VB>>;
    cuda::detail::launch_each_matrix("tinybatch::cuda getrs (generic)", p.stream, B.count(),
                                     F{t, kv(A), ipiv, kv(B), info});
  }

  template <class VA>
  static void getri(const policy_type& p, const VA& A, const pivot_view& ipiv, int* info) {
    if constexpr (cuda::detail::try_fast<K>)
      if (cuda::fast::getri(p.stream, A, ipiv, info)) return;
    using T = typename VA::value_type;
    using F = cuda::detail::getri_fn<kview<VA>>;
    cuda::detail::call_scratch<T> s(A.count(), cuda::detail::max_order(A, p.stream), p.stream);
    cuda::detail::launch_each_matrix("tinybatch::cuda getri (generic)", p.stream, A.count(),
                                     F{kv(A), ipiv, info, s.slices});
  }

  template <class VA, class VX>
  static void inverse(const policy_type& p, const VA& A, const VX& X, int* info) {
    if constexpr (cuda::detail::try_fast<K>)
      if (cuda::fast::inverse(p.stream, A, X, info)) return;
    using T = typename VX::value_type;
    using F = cuda::detail::inverse_fn<kview<VA>, kview<VX>>;
    cuda::detail::call_scratch<T> s(A.count(), cuda::detail::max_order(A, p.stream), p.stream);
    cuda::detail::launch_each_matrix("tinybatch::cuda inverse (generic)", p.stream, A.count(),
                                     F{kv(A), kv(X), info, s.slices});
  }
};

}  // namespace tinybatch::detail
