// Hybrid CALU: the CPU cores and one GPU factor a large m x n matrix (m >= n) together, as
// the seed paper's asynchronous CALU (Algorithm 2). The first d block columns live on the
// CPU (pinned buffers), the others on the GPU. Per step K:
//
//   CPU  panel K (TSLU, tslu.hpp) -> send: column K and its pivots to the GPU (async copy)
//   GPU  waits for the panel (event), interchanges its rows (laswp kernel), updates block
//        column K + d first (TRSM + GEMM) and sends it to the CPU (async copy, the block
//        column that keeps the CPU's share at d), then updates the rest of its columns
//   CPU  updates its columns K + 1 .. K + d - 1 (look-ahead: column K + 1, panel K + 1,
//        then the others), the arriving column K + d at the next step
//
// When fewer than d block columns remain they are all on the CPU and the GPU only receives
// the finished columns. The CPU's tasks are OpenMP tasks with depend clauses (one
// dependence object per block column, one for the GPU queue, so its calls keep their
// order); the GPU's queue is three streams (copies in, updates, copies out) ordered by
// events: no device-wide synchronisation, the host waits only for the column it needs next.
//
// d comes from the model d / N = P g1 / (P g1 + g2) (P cores of g1 flop/s each, a GPU of
// g2, both GEMM rates from a short calibration or given), computed before the
// factorization; options::d overrides it.
//
// nvcc only (kernels): plain C++ compilers stop at the #error below.
#pragma once

#ifndef __CUDACC__
#error "tinybatch/tasks/calu_cuda.cuh holds CUDA kernels: include it from a file compiled by nvcc"
#endif

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "../cuda/error.hpp"
#include "calu.hpp"

namespace tinybatch::calu {

/// Options of the hybrid factorization: the CPU ones, and the rates of the d model.
struct hybrid_options : options {
  double g1 = 0;        ///< GEMM flop/s of one CPU core (0: measured before the factorization)
  double g2 = 0;        ///< GEMM flop/s of the GPU (0: measured)
  bool trace = false;   ///< record every task's interval in hybrid_report::events
};

/// One interval of the trace: a CPU task (thread >= 0) or a GPU update (thread -1).
struct trace_event {
  const char* what;  // "panel", "update", "send", "wait", "gpu_update"
  int K, J, thread;
  double t0, t1;     // seconds from the start of the factorization
};

/// What the hybrid factorization chose and measured.
struct hybrid_report {
  int b = 0, d = 0, model_d = 0, nb = 0;
  double g1 = 0, g2 = 0;     // the rates the model used
  double seconds = 0;        // the factorization, host or device matrix to result in place
  std::vector<trace_event> events;
};

namespace cuda_detail {

/// Row interchanges k1 .. k2 - 1 (0-based) of ipiv (1-based, global rows) on ncols columns:
/// one thread per column walks the interchanges in order (they do not commute).
template <class T>
__global__ void laswp_kernel(int ncols, T* a, long long lda, int k1, int k2, const int* ipiv) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= ncols) return;
  T* col = a + c * lda;
  for (int i = k1; i < k2; ++i) {
    const int p = ipiv[i] - 1;
    if (p != i) {
      const T t = col[i];
      col[i] = col[p];
      col[p] = t;
    }
  }
}

/// The later panels' interchanges on L's columns: column c gets those of rows
/// (c / b + 1) b .. mn - 1, as getrf leaves them.
template <class T>
__global__ void left_swaps_kernel(int ncols, T* a, long long lda, int b, int mn, const int* ipiv) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= ncols) return;
  T* col = a + c * lda;
  for (int i = (c / b + 1) * b; i < mn; ++i) {
    const int p = ipiv[i] - 1;
    if (p != i) {
      const T t = col[i];
      col[i] = col[p];
      col[p] = t;
    }
  }
}

inline cublasStatus_t trsm(cublasHandle_t h, int m, int n, const double* a, int lda, double* b, int ldb) {
  const double one = 1;
  return cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, m, n, &one, a, lda,
                     b, ldb);
}
inline cublasStatus_t trsm(cublasHandle_t h, int m, int n, const float* a, int lda, float* b, int ldb) {
  const float one = 1;
  return cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, m, n, &one, a, lda,
                     b, ldb);
}
/// C -= A B.
inline cublasStatus_t gemm_minus(cublasHandle_t h, int m, int n, int k, const double* a, int lda, const double* b,
                                 int ldb, double* c, int ldc) {
  const double minus = -1, one = 1;
  return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &minus, a, lda, b, ldb, &one, c, ldc);
}
inline cublasStatus_t gemm_minus(cublasHandle_t h, int m, int n, int k, const float* a, int lda, const float* b,
                                 int ldb, float* c, int ldc) {
  const float minus = -1, one = 1;
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &minus, a, lda, b, ldb, &one, c, ldc);
}

/// The resources of one factorization, released whatever happens.
template <class T>
struct resources {
  cudaStream_t h2d = nullptr, comp = nullptr, d2h = nullptr;
  cublasHandle_t blas = nullptr;
  T* window = nullptr;      // pinned: slots block columns of m rows
  int* ipiv_h = nullptr;    // pinned
  int* ipiv_d = nullptr;
  T* owned = nullptr;       // the device copy of a host matrix
  std::vector<cudaEvent_t> events;
  cudaEvent_t make_event(bool timing) {
    cudaEvent_t e = nullptr;
    TINYBATCH_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
    events.push_back(e);
    return e;
  }
  ~resources() {  // errors here have nowhere to go: a destructor must not throw
    for (cudaEvent_t e : events) (void)cudaEventDestroy(e);
    if (blas) (void)cublasDestroy(blas);
    for (cudaStream_t s : {h2d, comp, d2h})
      if (s) (void)cudaStreamDestroy(s);
    if (window) (void)cudaFreeHost(window);
    if (ipiv_h) (void)cudaFreeHost(ipiv_h);
    if (ipiv_d) (void)cudaFree(ipiv_d);
    if (owned) (void)cudaFree(owned);
  }
};

inline bool is_device_pointer(const void* p) {
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    (void)cudaGetLastError();  // a plain host pointer on old runtimes
    return false;
  }
  return at.type == cudaMemoryTypeDevice || at.type == cudaMemoryTypeManaged;
}

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace cuda_detail

/// GEMM flop/s of one CPU core (a rank-b update of a 2048 x 512 block, the CPU's updates'
/// shape) and of the GPU (rank-b update of 8192 x 8192), each the best of a few runs.
template <class T>
void calibrate(int b, double& g1, double& g2) {
  if (g1 <= 0) {
    detail::blas_single_threaded one;
    const int m = 2048, n = 512;
    std::vector<T> a(std::size_t(m) * b, T(0.5)), bb(std::size_t(b) * n, T(0.25)), c(std::size_t(m) * n, T(0));
    double best = 1e30;
    for (int r = 0; r < 4; ++r) {
      const double t0 = cuda_detail::now();
      detail::lapack<T>::gemm(CblasNoTrans, CblasNoTrans, m, n, b, T(-1), a.data(), m, bb.data(), b, T(1), c.data(),
                              m);
      best = std::min(best, cuda_detail::now() - t0);
    }
    g1 = 2.0 * m * n * b / best;
  }
  if (g2 <= 0) {
    const int m = 8192;
    T *a = nullptr, *c = nullptr;
    cublasHandle_t h = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    TINYBATCH_CUDA_CHECK(cudaMalloc(&a, sizeof(T) * std::size_t(m) * b * 2));
    TINYBATCH_CUDA_CHECK(cudaMalloc(&c, sizeof(T) * std::size_t(m) * m));
    TINYBATCH_CUDA_CHECK(cudaMemset(a, 0, sizeof(T) * std::size_t(m) * b * 2));
    TINYBATCH_CUDA_CHECK(cudaMemset(c, 0, sizeof(T) * std::size_t(m) * m));
    TINYBATCH_CUDA_CHECK(cublasCreate(&h));
    TINYBATCH_CUDA_CHECK(cudaEventCreate(&e0));
    TINYBATCH_CUDA_CHECK(cudaEventCreate(&e1));
    float best = 1e30f;
    for (int r = 0; r < 5; ++r) {
      TINYBATCH_CUDA_CHECK(cudaEventRecord(e0, nullptr));
      TINYBATCH_CUDA_CHECK(cuda_detail::gemm_minus(h, m, m, b, a, m, a + std::size_t(m) * b, b, c, m));
      TINYBATCH_CUDA_CHECK(cudaEventRecord(e1, nullptr));
      TINYBATCH_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      TINYBATCH_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (r > 0) best = std::min(best, ms);  // the first run loads cuBLAS's kernels
    }
    g2 = 2.0 * m * m * b / (best * 1e-3);
    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
    (void)cublasDestroy(h);
    (void)cudaFree(a);
    (void)cudaFree(c);
  }
}

/// The model's d for an m x n matrix in block columns of b, P cores of g1 flop/s and a GPU of
/// g2: T1 = T2 at the first step with the panel's work (m - b/3) b^2 against an update's
/// m b^2 (the seed's section 4 before its asymptotic simplification), at least 1 (the CPU
/// holds the panel), at most the number of block columns.
inline int model_d(int m, int n, int b, int P, double g1, double g2) {
  const int nb = (n + b - 1) / b;
  const double pg1 = P * g1, r = (m - b / 3.0) / m;
  const double d = (pg1 * nb + g2) / (pg1 + g2) - r * g2 / (pg1 + g2);
  return std::max(1, std::min(nb, int(std::lround(d))));
}

/// The hybrid LU with tournament pivoting of an m x n matrix (m >= n), column-major with
/// leading dimension lda, in place. `a` may be a host or a device pointer (the result is
/// where the matrix was); ipiv (min(m, n) entries, host) and info as getrf's (calu.hpp).
/// Uses the current device. Throws tinybatch::invalid_argument on bad arguments and
/// tinybatch::cuda_error naming the call on a CUDA, cuBLAS failure.
template <class T>
int hybrid_getrf(int m, int n, T* a, int lda, int* ipiv, const hybrid_options& opt = {},
                 hybrid_report* report = nullptr) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "calu::hybrid_getrf: float or double");
  detail::check_getrf("calu::hybrid_getrf", m, n, a, lda, ipiv, opt);
  tinybatch::detail::require(m >= n, "calu::hybrid_getrf", [&] {
    return "m = " + std::to_string(m) + " < n = " + std::to_string(n) + " (wide matrices: calu::getrf)";
  });
  if (n == 0) return 0;
  using cuda_detail::now;
  const double t_start = now();
  const detail::plan p = detail::make_plan(m, n, opt);
  const int b = p.b, threads = p.threads, row_blocks = p.row_blocks, nb = p.nb, mn = p.mn;

  double g1 = opt.g1, g2 = opt.g2;
  int d = opt.d;
  const int chosen = [&] {
    if (opt.d && opt.g1 <= 0 && opt.g2 <= 0) return 0;  // d given: no calibration needed
    calibrate<T>(b, g1, g2);
    return model_d(m, n, b, threads, g1, g2);
  }();
  if (!d) d = chosen;
  d = std::max(1, std::min(d, nb));
  const int slots = std::min(nb, d + 2);  // d columns, the one arriving, and the one leaving

  int device = 0;
  TINYBATCH_CUDA_CHECK(cudaGetDevice(&device));
  cuda_detail::resources<T> r;
  TINYBATCH_CUDA_CHECK(cudaStreamCreateWithFlags(&r.h2d, cudaStreamNonBlocking));
  TINYBATCH_CUDA_CHECK(cudaStreamCreateWithFlags(&r.comp, cudaStreamNonBlocking));
  TINYBATCH_CUDA_CHECK(cudaStreamCreateWithFlags(&r.d2h, cudaStreamNonBlocking));
  TINYBATCH_CUDA_CHECK(cublasCreate(&r.blas));
  TINYBATCH_CUDA_CHECK(cublasSetMathMode(r.blas, CUBLAS_DEFAULT_MATH));
  TINYBATCH_CUDA_CHECK(cublasSetStream(r.blas, r.comp));
  const std::size_t slot_elems = std::size_t(m) * b;
  TINYBATCH_CUDA_CHECK(cudaMallocHost(&r.window, sizeof(T) * slot_elems * slots));
  TINYBATCH_CUDA_CHECK(cudaMallocHost(&r.ipiv_h, sizeof(int) * mn));
  TINYBATCH_CUDA_CHECK(cudaMalloc(&r.ipiv_d, sizeof(int) * mn));

  const bool on_device = cuda_detail::is_device_pointer(a);
  T* dA = a;
  long long ldda = lda;
  if (!on_device) {
    TINYBATCH_CUDA_CHECK(cudaMalloc(&r.owned, sizeof(T) * std::size_t(m) * n));
    dA = r.owned;
    ldda = m;
  }
  auto slot = [&](int J) { return r.window + std::size_t(J % slots) * slot_elems; };
  auto width = [&](int J) { return std::min(b, n - J * b); };
  auto dcol = [&](int J) { return dA + std::size_t(J) * b * ldda; };

  // Block columns 0 .. d - 1 to the CPU's buffers, the others to the GPU (host matrix).
  for (int J = 0; J < d; ++J) {
    if (on_device)
      TINYBATCH_CUDA_CHECK(cudaMemcpy2DAsync(slot(J), sizeof(T) * m, dcol(J), sizeof(T) * ldda, sizeof(T) * m,
                                             width(J), cudaMemcpyDeviceToHost, r.d2h));
    else
      for (int j = 0; j < width(J); ++j)
        std::memcpy(slot(J) + std::size_t(j) * m, a + (std::size_t(J) * b + j) * lda, sizeof(T) * m);
  }
  if (!on_device && d < nb)
    TINYBATCH_CUDA_CHECK(cudaMemcpy2DAsync(dcol(d), sizeof(T) * ldda, a + std::size_t(d) * b * lda, sizeof(T) * lda,
                                           sizeof(T) * m, n - d * b, cudaMemcpyHostToDevice, r.h2d));
  TINYBATCH_CUDA_CHECK(cudaStreamSynchronize(r.d2h));
  TINYBATCH_CUDA_CHECK(cudaStreamSynchronize(r.h2d));

  std::vector<cudaEvent_t> panel_on_gpu(nb), column_ready(nb), column_on_cpu(nb), upd0(nb), upd1(nb);
  for (int J = 0; J < nb; ++J) {
    panel_on_gpu[J] = r.make_event(false);
    column_ready[J] = r.make_event(false);
    column_on_cpu[J] = r.make_event(false);
    if (opt.trace) upd0[J] = r.make_event(true), upd1[J] = r.make_event(true);
  }
  cudaEvent_t base = r.make_event(true);
  TINYBATCH_CUDA_CHECK(cudaEventRecord(base, r.comp));
  TINYBATCH_CUDA_CHECK(cudaEventSynchronize(base));
  const double t0 = now();

  std::vector<std::vector<trace_event>> trace(threads);
  auto record = [&](const char* what, int K, int J, double s) {
    if (opt.trace) {
      const int t = omp_get_thread_num();
      trace[t].push_back({what, K, J, t, s - t0, now() - t0});
    }
  };

  // Dependence objects: block columns, the GPU queue (its calls in creation order), one per
  // send (what the matching receive waits for), and a spare.
  std::vector<char> deps(2 * nb + 2);
  char* col = deps.data();
  char* sent = deps.data() + nb;
  char* gpu = deps.data() + 2 * nb;
  char* spare = gpu + 1;
  int info = 0;
  detail::blas_single_threaded one_thread_blas;
  // An exception must not leave a task: the first one is kept, the remaining tasks do
  // nothing, and it is rethrown after the parallel region.
  std::exception_ptr failure;
  bool failed = false;
  auto guard = [&](auto&& body) {
    bool skip;
#pragma omp atomic read
    skip = failed;
    if (skip) return;
    try {
      body();
    } catch (...) {
#pragma omp critical(tinybatch_calu_failure)
      if (!failure) {
        failure = std::current_exception();
#pragma omp atomic write
        failed = true;
      }
    }
  };

  auto panel = [&](int K) {
#pragma omp task default(shared) firstprivate(K) depend(inout : col[K])
    guard([&] {
      const double s = now();
      const int k0 = K * b, jb = std::min(b, mn - k0);
      const int pinfo = detail::factor_panel(m, slot(K), m, r.ipiv_h, k0, jb, row_blocks);
      if (pinfo && !info) info = pinfo;
      record("panel", K, K, s);
    });
  };
  // Column K and its pivots to the GPU; the GPU's step K; block column K + d back.
  // inout col[K - 2]: the arriving column K + d takes the buffer of column K - 2, whose
  // CPU readers (step K - 2's updates) must be done.
  auto send = [&](int K) {
    char* old = K >= 2 ? &col[K - 2] : spare;
    (void)old;  // used in the depend clause only, which nvcc's front end does not read
#pragma omp task default(shared) firstprivate(K, old) depend(in : col[K]) depend(inout : old[0]) depend(inout : gpu[0]) depend(out : sent[K])
    guard([&] {
      const double s = now();
      TINYBATCH_CUDA_CHECK(cudaSetDevice(device));
      const int k0 = K * b, jb = std::min(b, mn - k0), next = K + d;
      TINYBATCH_CUDA_CHECK(cudaMemcpy2DAsync(dcol(K), sizeof(T) * ldda, slot(K), sizeof(T) * m, sizeof(T) * m,
                                             width(K), cudaMemcpyHostToDevice, r.h2d));
      TINYBATCH_CUDA_CHECK(
          cudaMemcpyAsync(r.ipiv_d + k0, r.ipiv_h + k0, sizeof(int) * jb, cudaMemcpyHostToDevice, r.h2d));
      TINYBATCH_CUDA_CHECK(cudaEventRecord(panel_on_gpu[K], r.h2d));
      if (next < nb) {
        TINYBATCH_CUDA_CHECK(cudaStreamWaitEvent(r.comp, panel_on_gpu[K], 0));
        if (opt.trace) TINYBATCH_CUDA_CHECK(cudaEventRecord(upd0[K], r.comp));
        const int c0 = next * b, cols = n - c0;
        cuda_detail::laswp_kernel<<<(cols + 127) / 128, 128, 0, r.comp>>>(cols, dcol(next), ldda, k0, k0 + jb,
                                                                           r.ipiv_d);
        tinybatch::cuda::check_launch("calu laswp_kernel");
        const T* l11 = dcol(K) + k0;
        const int below = m - k0 - jb;
        auto gpu_update = [&](int c, int w) {
          T* u = dA + std::size_t(c) * ldda + k0;
          TINYBATCH_CUDA_CHECK(cuda_detail::trsm(r.blas, jb, w, l11, int(ldda), u, int(ldda)));
          if (below > 0)
            TINYBATCH_CUDA_CHECK(
                cuda_detail::gemm_minus(r.blas, below, w, jb, l11 + jb, int(ldda), u, int(ldda), u + jb, int(ldda)));
        };
        gpu_update(c0, width(next));  // the column the CPU needs next, first
        TINYBATCH_CUDA_CHECK(cudaEventRecord(column_ready[next], r.comp));
        TINYBATCH_CUDA_CHECK(cudaStreamWaitEvent(r.d2h, column_ready[next], 0));
        TINYBATCH_CUDA_CHECK(cudaMemcpy2DAsync(slot(next), sizeof(T) * m, dcol(next), sizeof(T) * ldda,
                                               sizeof(T) * m, width(next), cudaMemcpyDeviceToHost, r.d2h));
        TINYBATCH_CUDA_CHECK(cudaEventRecord(column_on_cpu[next], r.d2h));
        if (next + 1 < nb) gpu_update(c0 + b, n - c0 - b);
        if (opt.trace) TINYBATCH_CUDA_CHECK(cudaEventRecord(upd1[K], r.comp));
      }
      record("send", K, K, s);
    });
  };
  // The block column the GPU sent: the host waits for that copy only.
  auto receive = [&](int J) {
    char* from = &sent[J - d];
    (void)from;
#pragma omp task default(shared) firstprivate(J, from) depend(in : from[0]) depend(inout : col[J])
    guard([&] {
      const double s = now();
      TINYBATCH_CUDA_CHECK(cudaEventSynchronize(column_on_cpu[J]));
      record("wait", J - d, J, s);
    });
  };
  auto update = [&](int K, int J) {
#pragma omp task default(shared) firstprivate(K, J) depend(in : col[K]) depend(inout : col[J])
    guard([&] {
      const double s = now();
      const int k0 = K * b, jb = std::min(b, mn - k0);
      detail::update_block_column(m, slot(K), m, slot(J), m, r.ipiv_h, k0, jb, width(J), threads);
      record("update", K, J, s);
    });
  };

#pragma omp parallel num_threads(threads)
#pragma omp single
  {
    try {
      panel(0);
      send(0);
      if (d < nb) receive(d);
      for (int K = 0; K < nb; ++K) {
        const int last = std::min(K + d, nb);  // the CPU's columns at step K: K .. last - 1
        int first = K + 1;
        if (opt.lookahead && K + 1 < last) {
          update(K, K + 1);
          panel(K + 1);
          send(K + 1);
          if (K + 1 + d < nb) receive(K + 1 + d);
          first = K + 2;
        }
        for (int J = first; J < last; ++J) update(K, J);
        if ((!opt.lookahead || K + 1 >= last) && K + 1 < nb) {
          panel(K + 1);
          send(K + 1);
          if (K + 1 + d < nb) receive(K + 1 + d);
        }
      }
    } catch (...) {
#pragma omp critical(tinybatch_calu_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);

  TINYBATCH_CUDA_CHECK(cudaStreamSynchronize(r.h2d));
  TINYBATCH_CUDA_CHECK(cudaStreamWaitEvent(r.comp, panel_on_gpu[nb - 1], 0));
  const int left = (nb - 1) * b;
  if (left > 0) {
    cuda_detail::left_swaps_kernel<<<(left + 127) / 128, 128, 0, r.comp>>>(left, dA, ldda, b, mn, r.ipiv_d);
    tinybatch::cuda::check_launch("calu left_swaps_kernel");
  }
  if (!on_device)
    TINYBATCH_CUDA_CHECK(cudaMemcpy2DAsync(a, sizeof(T) * lda, dA, sizeof(T) * ldda, sizeof(T) * m, n,
                                           cudaMemcpyDeviceToHost, r.comp));
  TINYBATCH_CUDA_CHECK(cudaStreamSynchronize(r.comp));
  TINYBATCH_CUDA_CHECK(cudaStreamSynchronize(r.d2h));
  std::memcpy(ipiv, r.ipiv_h, sizeof(int) * mn);

  if (report) {
    report->b = b, report->d = d, report->model_d = chosen, report->nb = nb;
    report->g1 = g1, report->g2 = g2;
    report->seconds = now() - t_start;
    report->events.clear();
    for (auto& v : trace) report->events.insert(report->events.end(), v.begin(), v.end());
    if (opt.trace)
      for (int K = 0; K < nb; ++K) {
        if (K + d >= nb) break;
        float e0 = 0, e1 = 0;
        TINYBATCH_CUDA_CHECK(cudaEventElapsedTime(&e0, base, upd0[K]));
        TINYBATCH_CUDA_CHECK(cudaEventElapsedTime(&e1, base, upd1[K]));
        report->events.push_back({"gpu_update", K, K + d, -1, e0 * 1e-3, e1 * 1e-3});
      }
  }
  return info;
}

/// hybrid_getrf, then the solve with it on the host (calu::getrs) when info == 0. A and B
/// on the host.
template <class T>
int hybrid_gesv(int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb, const hybrid_options& opt = {}) {
  tinybatch::detail::require(nrhs >= 0 && ldb >= std::max(1, n) && (b || n == 0 || nrhs == 0), "calu::hybrid_gesv",
                             "nrhs must be >= 0, ldb >= max(1, n), B not null");
  const int info = hybrid_getrf(n, n, a, lda, ipiv, opt);
  if (info == 0) getrs('N', n, nrhs, a, lda, ipiv, b, ldb);
  return info;
}

}  // namespace tinybatch::calu
