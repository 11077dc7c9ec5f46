// Hybrid CALU on a CUDA GPU: the schedule of hybrid.hpp (the seed paper's asynchronous
// CALU: panels on the CPU cores, the first d block columns on the CPU, the others on the GPU)
// run on three CUDA streams (copies in, updates, copies out) ordered by events, with cuBLAS
// TRSM / GEMM and a row-interchange kernel. d comes from the model d / N = P g1 / (P g1 + g2)
// (hybrid.hpp, model_d) with g1 (one core's GEMM rate) and g2 (the GPU's) measured by a
// short calibration before the factorization, or given; options::d overrides it.
//
//   tinybatch::calu::hybrid_options o;                           // b, d, g1, g2, trace ...
//   int info = tinybatch::calu::hybrid_getrf(m, n, A, lda, ipiv, o);  // A on the host or the GPU
//
// nvcc only (kernels): plain C++ compilers stop at the #error below.
#pragma once

#ifndef __CUDACC__
#error "tinybatch/tasks/calu_cuda.cuh holds CUDA kernels: include it from a file compiled by nvcc"
#endif

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "../cuda/error.hpp"
#include "hybrid.hpp"
#include "tslu_cuda.cuh"

namespace tinybatch::calu {

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
/// B = B U^-1 (U upper, non-unit): the panel's rows below its diagonal block.
inline cublasStatus_t trsm_right_upper(cublasHandle_t h, int m, int n, const double* a, int lda, double* b, int ldb) {
  const double one = 1;
  return cublasDtrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, m, n, &one, a,
                     lda, b, ldb);
}
inline cublasStatus_t trsm_right_upper(cublasHandle_t h, int m, int n, const float* a, int lda, float* b, int ldb) {
  const float one = 1;
  return cublasStrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, m, n, &one, a,
                     lda, b, ldb);
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

}  // namespace cuda_detail

/// The CUDA device of hybrid_schedule (its interface: hybrid.hpp): three streams, a cuBLAS
/// handle, events and allocations. Kept between calls (hybrid_getrf's last argument) it is
/// a workspace: begin() hands its pinned and device blocks and its events out again, so a
/// second factorization of the same size allocates nothing (pinning 1 GiB of host memory
/// takes longer than the LU of a 400000 x 512 matrix on the GPU). One factorization at a
/// time per object. Everything is released by the destructor, whatever happened.
template <class T>
class cuda_device {
 public:
  using event = cudaEvent_t;
  cuda_device() {
    TINYBATCH_CUDA_CHECK(cudaGetDevice(&device_id_));
    for (cudaStream_t& s : q_) TINYBATCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    TINYBATCH_CUDA_CHECK(cublasCreate(&blas_));
    TINYBATCH_CUDA_CHECK(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));  // no TF32 for float
    TINYBATCH_CUDA_CHECK(cublasSetStream(blas_, q_[1]));
  }
  cuda_device(const cuda_device&) = delete;
  cuda_device& operator=(const cuda_device&) = delete;
  ~cuda_device() {  // nothing to report to from a destructor
    for (cudaStream_t s : q_)
      if (s) (void)cudaStreamSynchronize(s);
    for (cudaEvent_t e : events_[0]) (void)cudaEventDestroy(e);
    for (cudaEvent_t e : events_[1]) (void)cudaEventDestroy(e);
    if (blas_) (void)cublasDestroy(blas_);
    if (panel_blas_) (void)cublasDestroy(panel_blas_);
    if (solver_) (void)cusolverDnDestroy(solver_);
    for (cudaStream_t s : q_)
      if (s) (void)cudaStreamDestroy(s);
    for (block& b : pinned_) (void)cudaFreeHost(b.p);
    for (block& b : device_) (void)cudaFree(b.p);
  }

  /// A new factorization: every block and event may be handed out again.
  void begin() {
    for (block& b : pinned_) b.used = false;
    for (block& b : device_) b.used = false;
    next_event_[0] = next_event_[1] = 0;
  }
  event make_event(bool timing) {
    std::vector<cudaEvent_t>& pool = events_[timing];
    std::size_t& next = next_event_[timing];
    if (next == pool.size()) {
      cudaEvent_t e = nullptr;
      TINYBATCH_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
      pool.push_back(e);
    }
    return pool[next++];
  }
  T* pinned(std::size_t count) { return static_cast<T*>(take(pinned_, sizeof(T) * count, true)); }
  int* pinned_ints(std::size_t count) { return static_cast<int*>(take(pinned_, sizeof(int) * count, true)); }
  T* device(std::size_t count) { return static_cast<T*>(take(device_, sizeof(T) * count, false)); }
  int* device_ints(std::size_t count) { return static_cast<int*>(take(device_, sizeof(int) * count, false)); }

  void copy_to_device(int q, T* d, long long ldd, const T* h, long long ldh, int rows, int cols) {
    if (rows > 0 && cols > 0)
      TINYBATCH_CUDA_CHECK(cudaMemcpy2DAsync(d, sizeof(T) * ldd, h, sizeof(T) * ldh, sizeof(T) * rows, cols,
                                             cudaMemcpyHostToDevice, q_[q]));
  }
  void copy_to_host(int q, T* h, long long ldh, const T* d, long long ldd, int rows, int cols) {
    if (rows > 0 && cols > 0)
      TINYBATCH_CUDA_CHECK(cudaMemcpy2DAsync(h, sizeof(T) * ldh, d, sizeof(T) * ldd, sizeof(T) * rows, cols,
                                             cudaMemcpyDeviceToHost, q_[q]));
  }
  void copy_ints_to_device(int q, int* d, const int* h, int count) {
    if (count > 0) TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(d, h, sizeof(int) * count, cudaMemcpyHostToDevice, q_[q]));
  }
  void record(event e, int q) { TINYBATCH_CUDA_CHECK(cudaEventRecord(e, q_[q])); }
  void wait(int q, event e) { TINYBATCH_CUDA_CHECK(cudaStreamWaitEvent(q_[q], e, 0)); }
  void synchronize(event e) { TINYBATCH_CUDA_CHECK(cudaEventSynchronize(e)); }
  void synchronize_queue(int q) { TINYBATCH_CUDA_CHECK(cudaStreamSynchronize(q_[q])); }
  void bind_thread() { TINYBATCH_CUDA_CHECK(cudaSetDevice(device_id_)); }

  void laswp(int q, int ncols, T* a, long long lda, int k1, int k2, const int* ipiv) {
    if (ncols <= 0 || k2 <= k1) return;
    cuda_detail::laswp_kernel<<<(ncols + 127) / 128, 128, 0, q_[q]>>>(ncols, a, lda, k1, k2, ipiv);
    tinybatch::cuda::check_launch("calu laswp_kernel");
  }
  void left_swaps(int q, int ncols, T* a, long long lda, int b, int mn, const int* ipiv) {
    if (ncols <= 0) return;
    cuda_detail::left_swaps_kernel<<<(ncols + 127) / 128, 128, 0, q_[q]>>>(ncols, a, lda, b, mn, ipiv);
    tinybatch::cuda::check_launch("calu left_swaps_kernel");
  }
  void trsm(int q, int m, int n, const T* a, long long lda, T* b, long long ldb) {
    (void)q;  // the handle is bound to the update stream, the only one that computes
    if (m > 0 && n > 0) TINYBATCH_CUDA_CHECK(cuda_detail::trsm(blas_, m, n, a, int(lda), b, int(ldb)));
  }
  void gemm_minus(int q, int m, int n, int k, const T* a, long long lda, const T* b, long long ldb, T* c,
                  long long ldc) {
    (void)q;
    if (m > 0 && n > 0 && k > 0)
      TINYBATCH_CUDA_CHECK(cuda_detail::gemm_minus(blas_, m, n, k, a, int(lda), b, int(ldb), c, int(ldc)));
  }
  // The GPU panel (tslu_cuda.cuh): a cuBLAS and a cuSOLVER handle on queue 0, made on first
  // use; the raw streams.
  cudaStream_t stream(int q) const { return q_[q]; }
  cublasHandle_t panel_blas() {
    if (!panel_blas_) {
      TINYBATCH_CUDA_CHECK(cublasCreate(&panel_blas_));
      TINYBATCH_CUDA_CHECK(cublasSetMathMode(panel_blas_, CUBLAS_DEFAULT_MATH));
      TINYBATCH_CUDA_CHECK(cublasSetStream(panel_blas_, q_[0]));
    }
    return panel_blas_;
  }
  cusolverDnHandle_t panel_solver() {
    if (!solver_) {
      TINYBATCH_CUDA_CHECK(cusolverDnCreate(&solver_));
      TINYBATCH_CUDA_CHECK(cusolverDnSetStream(solver_, q_[0]));
    }
    return solver_;
  }
  void* device_bytes(std::size_t bytes) { return take(device_, bytes, false); }
  double seconds_between(event a, event b) {
    float ms = 0;
    TINYBATCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1e-3;
  }

 private:
  struct block {
    void* p;
    std::size_t bytes;
    bool used;
  };
  /// The smallest free block that fits, or a new one.
  void* take(std::vector<block>& pool, std::size_t bytes, bool pinned) {
    bytes = std::max<std::size_t>(bytes, 1);
    block* best = nullptr;
    for (block& b : pool)
      if (!b.used && b.bytes >= bytes && (!best || b.bytes < best->bytes)) best = &b;
    if (!best) {
      void* p = nullptr;
      if (pinned)
        TINYBATCH_CUDA_CHECK(cudaMallocHost(&p, bytes));
      else
        TINYBATCH_CUDA_CHECK(cudaMalloc(&p, bytes));
      pool.push_back({p, bytes, false});
      best = &pool.back();
    }
    best->used = true;
    return best->p;
  }
  int device_id_ = 0;
  cudaStream_t q_[3] = {nullptr, nullptr, nullptr};
  cublasHandle_t blas_ = nullptr, panel_blas_ = nullptr;
  cusolverDnHandle_t solver_ = nullptr;
  std::vector<cudaEvent_t> events_[2];
  std::size_t next_event_[2] = {0, 0};
  std::vector<block> pinned_, device_;
};

namespace cuda_detail {
inline bool is_device_pointer(const void* p) {
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    (void)cudaGetLastError();  // a plain host pointer on old runtimes
    return false;
  }
  return at.type == cudaMemoryTypeDevice || at.type == cudaMemoryTypeManaged;
}

/// The hybrid with its panels on the GPU (panel_location::gpu): every step on the GPU, two
/// queues ordered by events. Queue 0 factors panel K + 1 (TSLU's tournament, tslu_cuda.cuh;
/// the chosen rows as interchanges; the unpivoted LU of the panel: its diagonal block and the
/// rows below, by tslu_cuda.cuh's kernels up to 64 columns, cuSOLVER and cuBLAS wider) while queue 1 updates the rest of step K's trailing matrix; queue 1
/// updates block column K + 1 first (the look-ahead column). The host computes each panel's
/// interchanges from the tournament's jb rows (it waits for them, an event, while queue 1
/// runs the big update) and reads every info once at the end. options::row_blocks >= 2: the
/// tournament; for panels of at most 64 columns one launch of tournament_panel with
/// row_blocks leaves (at most m / jb and 4096), wider ones (or tournament_cublas) a launch
/// per level of 2b-row nodes whatever the count says; 1: every panel by cuSOLVER's partial
/// pivoting, and the host waits for nothing; 0 (the default): the tournament with a leaf an
/// SM where gpu_tournament_default (m >= 64 n), partial pivoting otherwise (docs/calu.md);
/// with b 0 too, below m = 4 n (gpu_whole_getrf_default) cuSOLVER's getrf of the whole matrix.
template <class T>
int gpu_panel_schedule(cuda_device<T>& dev, int m, int n, T* host_a, int lda, T* dA, long long ldda, int* ipiv,
                       const hybrid_options& opt, hybrid_report* report) {
  enum { pq = 0, uq = 1 };
  if (opt.row_blocks == 0 && opt.b == 0 && gpu_whole_getrf_default(m, n)) {
    // cuSOLVER's getrf of the whole matrix (gpu_whole_getrf_default: faster than the panel
    // schedule on square shapes), on the panel queue; the same ipiv and info.
    const int mn = std::min(m, n);
    if (host_a) {
      dA = dev.device(std::size_t(m) * n);
      ldda = m;
      dev.copy_to_device(pq, dA, ldda, host_a, lda, m, n);
    }
    cusolverDnHandle_t solver = dev.panel_solver();
    int lwork = 0;
    TINYBATCH_CUDA_CHECK(getrf_buffer(solver, m, n, dA, int(ldda), &lwork));
    T* work = dev.device(std::max(1, lwork));
    int* ipiv_d = dev.device_ints(mn + 1);  // then info
    int* ipiv_h = dev.pinned_ints(mn + 1);
    TINYBATCH_CUDA_CHECK(getrf(solver, m, n, dA, int(ldda), work, ipiv_d, ipiv_d + mn));
    TINYBATCH_CUDA_CHECK(
        cudaMemcpyAsync(ipiv_h, ipiv_d, sizeof(int) * (mn + 1), cudaMemcpyDeviceToHost, dev.stream(pq)));
    if (host_a) dev.copy_to_host(pq, host_a, lda, dA, ldda, m, n);
    dev.synchronize_queue(pq);
    std::memcpy(ipiv, ipiv_h, sizeof(int) * mn);
    if (report) {
      report->b = n, report->d = 0, report->nb = 1;
      report->events.clear();
      report->host_wait = 0;
    }
    return ipiv_h[mn];
  }
  // row_blocks 0: the tournament with a leaf an SM on tall matrices (gpu_tournament_default;
  // a leaf holds a whole SM's registers), cuSOLVER's partial pivoting per panel otherwise.
  int rb = opt.row_blocks;
  if (rb == 0 && gpu_tournament_default(m, n)) {
    int id = 0, sms = 0;
    TINYBATCH_CUDA_CHECK(cudaGetDevice(&id));
    TINYBATCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, id));
    rb = sms;
  }
  const int b = opt.b ? std::min(opt.b, n) : gpu_panel_block(m, n, rb);
  const int nb = (n + b - 1) / b, mn = std::min(m, n);
  const int jb_last = mn - (nb - 1) * b;
  const cudaStream_t ps = dev.stream(pq);
  if (host_a) {
    dA = dev.device(std::size_t(m) * n);
    ldda = m;
    dev.copy_to_device(uq, dA, ldda, host_a, lda, m, n);
  }
  auto dcol = [&](int J) { return dA + std::size_t(J) * b * ldda; };
  auto width = [&](int J) { return std::min(b, n - J * b); };
  // The tournament's buffers, for the widest level 0 of any panel (jb = b, or the last one's).
  std::size_t node_elems = 0, max_nodes = 1;
  for (int jb : {b, jb_last}) {
    const int h = 2 * jb;
    const std::size_t nodes = (std::size_t(m) + h - 1) / h;
    node_elems = std::max(node_elems, nodes * h * h);
    max_nodes = std::max(max_nodes, nodes);
  }
  T* blocks = dev.device(node_elems);
  int* ids = dev.device_ints(2 * std::size_t(m) + 4 * b);  // a level's nodes x h rows: at most m + h
  int* piv = dev.device_ints(2 * std::size_t(m) + 4 * b);
  int* cand = dev.device_ints(max_nodes * b);
  int* cand2 = dev.device_ints(max_nodes * b);  // the level after (tournament_level)
  int smem_max = 0;
  {
    int id = 0;
    TINYBATCH_CUDA_CHECK(cudaGetDevice(&id));
    TINYBATCH_CUDA_CHECK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, id));
    smem_max -= 1024;  // the kernel's static shared memory
  }
  auto level_bytes = [](int jb) { return std::size_t(2 * jb) * jb * sizeof(T) + std::size_t(2 * jb) * sizeof(int); };
  if (!opt.tournament_cublas)
    TINYBATCH_CUDA_CHECK(
        cudaFuncSetAttribute(tournament_level<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
  // tournament_panel's nodes (jb <= 64): leaves and tree nodes, 64 candidates each.
  const std::size_t tp_nodes = 2 * std::size_t(tournament_max_leaves) + 64;
  int* tp_cand = dev.device_ints(tp_nodes * 64);
  int* tp_counts = dev.device_ints(tp_nodes);
  auto* tp_arrivals = reinterpret_cast<unsigned*>(dev.device_ints(tp_nodes));
  TINYBATCH_CUDA_CHECK(cudaMemsetAsync(tp_arrivals, 0, sizeof(unsigned) * tp_nodes, ps));
  // Per panel of the one-launch tournament: its interchanges as row pairs (permute_rows), and
  // the root's L \ U of the diagonal block of the panel being factored (ld 64).
  int* pairs_h = dev.pinned_ints(std::size_t(nb) * 4 * b);
  int* pairs_d = dev.device_ints(std::size_t(nb) * 4 * b);
  std::vector<int> pair_count(nb, -1);  // -1: the panel's interchanges by laswp_kernel
  T* root_lu = dev.device(64 * 64);
  int* node_info = dev.device_ints(max_nodes);
  int* flags = dev.device_ints(nb);
  int* panel_info = dev.device_ints(nb);
  int* ipiv_d = dev.device_ints(mn);
  int* ipiv_h = dev.pinned_ints(mn);
  int* sel_h = dev.pinned_ints(std::size_t(nb) * b + nb);  // each panel's root rows, then its flag
  int* info_h = dev.pinned_ints(nb);
  // Pointer arrays of the batched LU, one per node height (b, and the last panel's).
  T** ptrs_h = reinterpret_cast<T**>(dev.pinned_ints(4 * max_nodes));
  T** ptrs_d = static_cast<T**>(dev.device_bytes(sizeof(T*) * 2 * max_nodes));
  for (int k = 0; k < 2; ++k) {
    const int h = 2 * (k ? jb_last : b);
    for (std::size_t i = 0; i < max_nodes; ++i) ptrs_h[k * max_nodes + i] = blocks + i * h * h;
  }
  TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(ptrs_d, ptrs_h, sizeof(T*) * 2 * max_nodes, cudaMemcpyHostToDevice, ps));
  TINYBATCH_CUDA_CHECK(cudaMemsetAsync(flags, 0, sizeof(int) * nb, ps));
  TINYBATCH_CUDA_CHECK(cudaMemsetAsync(panel_info, 0, sizeof(int) * nb, ps));
  cusolverDnHandle_t solver = dev.panel_solver();
  cublasHandle_t pblas = dev.panel_blas();
  int lwork = 0;
  TINYBATCH_CUDA_CHECK(getrf_buffer(solver, m, b, dA, int(ldda), &lwork));
  T* work = dev.device(std::max(1, lwork));
  dev.synchronize_queue(uq);  // the matrix is on the device

  std::vector<cudaEvent_t> panel_done, column_ready;
  for (int K = 0; K < nb; ++K) panel_done.push_back(dev.make_event(false)), column_ready.push_back(dev.make_event(false));
  cudaEvent_t root_ready = dev.make_event(false);
  // The interchanges' bookkeeping, as in tslu.hpp: where[original row] = its position,
  // at[position] = the original row there; identity between panels (each panel resets the
  // entries it touched: O(jb) a panel, not O(m), which cost ~0.1 ms a panel on the host).
  std::vector<int> where(m), at(m), touched;
  std::iota(where.begin(), where.end(), 0);
  std::iota(at.begin(), at.end(), 0);
  double panel_wait = 0;
  // options::trace: intervals between timing events on the two queues (thread -2 the panels',
  // -1 the updates'), read once at the end.
  struct span {
    const char* what;
    int K, J, q;
    cudaEvent_t e0, e1;
  };
  std::vector<span> spans;
  const cudaEvent_t base = opt.trace ? dev.make_event(true) : nullptr;
  if (opt.trace) dev.record(base, uq);
  auto mark = [&](int q) -> cudaEvent_t {
    if (!opt.trace) return nullptr;
    const cudaEvent_t e = dev.make_event(true);
    dev.record(e, q);
    return e;
  };
  auto span_end = [&](const char* what, int K, int J, int q, cudaEvent_t e0) {
    if (opt.trace) spans.push_back({what, K, J, q, e0, mark(q)});
  };

  // Panel K's interchanges (as row pairs) on ncols columns from block column J, queue q.
  auto permute = [&](int q, int K, int J, int ncols) {
    if (pair_count[K] <= 0 || ncols <= 0) return;
    permute_rows<<<(ncols + 7) / 8, 256, 0, dev.stream(q)>>>(ncols, dcol(J), ldda, K * b,
                                                             pairs_d + std::size_t(K) * 4 * b, pair_count[K]);
    tinybatch::cuda::check_launch("calu permute_rows");
  };
  auto factor_panel = [&](int K) {  // on queue 0
    const int k0 = K * b, jb = std::min(b, mn - k0), mp = m - k0, h = 2 * jb;
    T* a = dcol(K) + k0;
    T* const* ptrs = ptrs_d + (jb == b ? 0 : max_nodes);
    auto partial_pivoting = [&] {
      const cudaEvent_t e0 = mark(pq);
      TINYBATCH_CUDA_CHECK(getrf(solver, mp, jb, a, int(ldda), work, ipiv_d + k0, panel_info + K));
      offset_pivots<><<<(jb + 127) / 128, 128, 0, ps>>>(ipiv_d + k0, jb, k0);
      tinybatch::cuda::check_launch("calu offset_pivots");
      span_end("panel_getrf", K, K, pq, e0);
    };
    int nodes = (mp + h - 1) / h;
    if (nodes == 1 || rb < 2) {  // one leaf: the tournament is partial pivoting
      partial_pivoting();
      return;
    }
    const dim3 grid_rows(1, (h + 127) / 128);
    const cudaEvent_t tournament_start = mark(pq);
    bool first = true;
    int prev = 0;
    const bool one_launch = !opt.tournament_cublas && jb <= 64;
    if (one_launch) {  // row_blocks leaves
      const int leaves = std::min({rb, mp / jb, tournament_max_leaves});
      if (leaves < 2) {
        partial_pivoting();
        return;
      }
      launch_tournament_panel<T>(ps, mp, jb, a, ldda, leaves, tp_cand, tp_counts, tp_arrivals, cand, flags + K,
                                 root_lu);
    } else if (!opt.tournament_cublas && level_bytes(jb) <= std::size_t(smem_max)) {
      int *from = cand, *to = cand2;
      while (true) {
        tournament_level<T><<<nodes, 256, level_bytes(jb), ps>>>(first, from, prev, jb, h, mp, a, ldda, to, flags + K);
        tinybatch::cuda::check_launch("calu tournament_level");
        std::swap(from, to);
        if (nodes == 1) break;
        first = false, prev = nodes, nodes = (nodes + 1) / 2;
      }
      if (from != cand)
        TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(cand, from, sizeof(int) * jb, cudaMemcpyDeviceToDevice, ps));
    } else {
      while (true) {
        tournament_gather<<<dim3(nodes, grid_rows.y), 128, 0, ps>>>(first, cand, prev, jb, h, mp, a, ldda, blocks, ids);
        tinybatch::cuda::check_launch("calu tournament_gather");
        TINYBATCH_CUDA_CHECK(getrf_batched(pblas, h, ptrs, h, piv, node_info, nodes));
        tournament_collect<><<<(nodes + 127) / 128, 128, 0, ps>>>(nodes, jb, h, ids, piv, node_info, cand, flags + K);
        tinybatch::cuda::check_launch("calu tournament_collect");
        if (nodes == 1) break;
        first = false, prev = nodes, nodes = (nodes + 1) / 2;
      }
    }
    int* sel = sel_h + std::size_t(K) * b;
    TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(sel, cand, sizeof(int) * jb, cudaMemcpyDeviceToHost, ps));
    TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(sel_h + std::size_t(nb) * b + K, flags + K, sizeof(int), cudaMemcpyDeviceToHost, ps));
    span_end("tournament", K, K, pq, tournament_start);
    dev.record(root_ready, pq);
    const double w0 = detail::now();
    dev.synchronize(root_ready);
    panel_wait += detail::now() - w0;
    if (sel_h[std::size_t(nb) * b + K]) {  // a zero pivot in the tournament
      partial_pivoting();
      return;
    }
    // Row i swaps with wherever chosen row i is by then (panel-relative rows).
    touched.clear();
    for (int i = 0; i < jb; ++i) {
      const int p = where[sel[i]];
      ipiv_h[k0 + i] = k0 + p + 1;
      const int ri = at[i];
      at[p] = ri, where[ri] = p;
      at[i] = sel[i], where[sel[i]] = i;
      touched.insert(touched.end(), {p, i, ri, sel[i]});
    }
    auto reset_bookkeeping = [&] {
      for (int x : touched) where[x] = x, at[x] = x;
    };
    const cudaEvent_t lu_start = mark(pq);
    dev.copy_ints_to_device(pq, ipiv_d + k0, ipiv_h + k0, jb);
    if (one_launch) {
      // The interchanges' net effect: the positions they moved (all among the touched
      // entries), row r then holding what row at[r] held.
      std::sort(touched.begin(), touched.end());
      touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
      int* pr = pairs_h + std::size_t(K) * 4 * b;
      int count = 0;
      for (int r : touched)
        if (at[r] != r) pr[count++] = r;
      for (int i = 0; i < count; ++i) pr[count + i] = at[pr[i]];
      pair_count[K] = count;
      reset_bookkeeping();
      dev.copy_ints_to_device(pq, pairs_d + std::size_t(K) * 4 * b, pr, 2 * count);
      permute(pq, K, K, jb);
      launch_panel_lu<T>(ps, mp, jb, a, ldda, root_lu);
      span_end("panel_lu", K, K, pq, lu_start);
      return;
    }
    reset_bookkeeping();
    dev.laswp(pq, jb, dcol(K), ldda, k0, k0 + jb, ipiv_d);
    // The unpivoted LU of the panel: its jb x jb block by cuSOLVER, the rows below by one
    // TRSM (BLAS 3; cuSOLVER's getrf of the whole m x jb panel runs column by column).
    TINYBATCH_CUDA_CHECK(getrf(solver, jb, jb, a, int(ldda), work, nullptr, panel_info + K));
    if (mp > jb) TINYBATCH_CUDA_CHECK(trsm_right_upper(pblas, mp - jb, jb, a, int(ldda), a + jb, int(ldda)));
    span_end("panel_lu", K, K, pq, lu_start);
  };
  auto update = [&](int K, int c, int w) {  // columns c .. c + w - 1 by panel K, queue 1
    const int k0 = K * b, jb = std::min(b, mn - k0), below = m - k0 - jb;
    const T* l11 = dcol(K) + k0;
    T* u = dA + std::size_t(c) * ldda + k0;
    dev.trsm(uq, jb, w, l11, ldda, u, ldda);
    if (below > 0) dev.gemm_minus(uq, below, w, jb, l11 + jb, ldda, u, ldda, u + jb, ldda);
  };

  factor_panel(0);
  dev.record(panel_done[0], pq);
  for (int K = 0; K < nb; ++K) {
    const int k0 = K * b, jb = std::min(b, mn - k0);
    if (K + 1 >= nb) break;
    const int c1 = (K + 1) * b;
    dev.wait(uq, panel_done[K]);
    const cudaEvent_t e0 = mark(uq);
    if (pair_count[K] < 0)
      dev.laswp(uq, n - c1, dcol(K + 1), ldda, k0, k0 + jb, ipiv_d);
    else
      permute(uq, K, K + 1, n - c1);
    update(K, c1, width(K + 1));
    span_end("lookahead", K, K + 1, uq, e0);
    dev.record(column_ready[K + 1], uq);
    if (K + 2 < nb) {  // queued before the host waits below
      const cudaEvent_t e1 = mark(uq);
      update(K, c1 + b, n - c1 - b);
      span_end("gpu_update", K, K + 2, uq, e1);
    }
    dev.wait(pq, column_ready[K + 1]);
    factor_panel(K + 1);
    dev.record(panel_done[K + 1], pq);
  }
  dev.wait(uq, panel_done[nb - 1]);
  if (nb > 1) dev.left_swaps(uq, (nb - 1) * b, dA, ldda, b, mn, ipiv_d);
  TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(ipiv_h, ipiv_d, sizeof(int) * mn, cudaMemcpyDeviceToHost, dev.stream(uq)));
  TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(info_h, panel_info, sizeof(int) * nb, cudaMemcpyDeviceToHost, dev.stream(uq)));
  if (host_a) dev.copy_to_host(uq, host_a, lda, dA, ldda, m, n);
  dev.synchronize_queue(uq);
  dev.synchronize_queue(pq);
  std::memcpy(ipiv, ipiv_h, sizeof(int) * mn);
  int info = 0;
  for (int K = 0; K < nb && !info; ++K)
    if (info_h[K]) info = K * b + info_h[K];
  if (report) {
    report->b = b, report->d = 0, report->nb = nb;
    report->events.clear();
    report->host_wait = panel_wait;
    for (const span& x : spans)
      report->events.push_back({x.what, x.K, x.J, x.q == pq ? -2 : -1, dev.seconds_between(base, x.e0),
                                dev.seconds_between(base, x.e1)});
  }
  return info;
}

}  // namespace cuda_detail

/// The rates of the d model, each measured where it is <= 0: g1, one CPU core's GEMM
/// (detail::cpu_core_rate), and g2, the GPU's on a rank-b update of 8192 x 8192 (the best of
/// four runs after a first one that loads cuBLAS's kernels).
template <class T>
void calibrate(int b, double& g1, double& g2) {
  if (g1 <= 0) g1 = detail::cpu_core_rate<T>(b);
  if (g2 > 0) return;
  const int m = 8192;
  cuda_device<T> dev;
  T* a = dev.device(std::size_t(m) * b * 2);
  T* c = dev.device(std::size_t(m) * m);
  TINYBATCH_CUDA_CHECK(cudaMemset(a, 0, sizeof(T) * std::size_t(m) * b * 2));
  TINYBATCH_CUDA_CHECK(cudaMemset(c, 0, sizeof(T) * std::size_t(m) * m));
  cudaEvent_t e0 = dev.make_event(true), e1 = dev.make_event(true);
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    dev.record(e0, 1);
    dev.gemm_minus(1, m, m, b, a, m, a + std::size_t(m) * b, b, c, m);
    dev.record(e1, 1);
    dev.synchronize(e1);
    if (r > 0) best = std::min(best, dev.seconds_between(e0, e1));
  }
  g2 = 2.0 * m * m * b / best;
}

/// The hybrid LU with tournament pivoting of an m x n matrix (m >= n), column-major with
/// leading dimension lda, in place. `a` may be a host or a device pointer (the result is
/// where the matrix was); ipiv (min(m, n) entries, host) and info as calu::getrf's. Uses the
/// current device. d: opt.d, or the model's from opt.g1 / opt.g2 / opt.gp (measured where 0).
/// workspace: a cuda_device kept between calls (its buffers are reused), or null (one is
/// made for this call).
/// Throws tinybatch::invalid_argument on bad arguments, tinybatch::cuda_error naming the
/// call on a CUDA or cuBLAS failure.
template <class T>
int hybrid_getrf(int m, int n, T* a, int lda, int* ipiv, const hybrid_options& opt = {},
                 hybrid_report* report = nullptr, cuda_device<T>* workspace = nullptr) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "calu::hybrid_getrf: float or double");
  detail::check_getrf("calu::hybrid_getrf", m, n, a, lda, ipiv, opt);
  tinybatch::detail::require(m >= n, "calu::hybrid_getrf", [&] {
    return "m = " + std::to_string(m) + " < n = " + std::to_string(n) + " (wide matrices: calu::getrf)";
  });
  if (n == 0) return 0;
  const double start = detail::now();
  if (opt.panel == panel_location::gpu) {
    std::unique_ptr<cuda_device<T>> own;
    if (!workspace) own = std::make_unique<cuda_device<T>>();
    cuda_device<T>& dev = workspace ? *workspace : *own;
    dev.begin();
    const bool on_device = cuda_detail::is_device_pointer(a);
    const int info = cuda_detail::gpu_panel_schedule(dev, m, n, on_device ? nullptr : a, lda, on_device ? a : nullptr,
                                                     lda, ipiv, opt, report);
    if (report) report->model_d = 0, report->g1 = report->g2 = 0, report->seconds = detail::now() - start;
    return info;
  }
  const detail::plan p = detail::make_plan(m, n, opt);
  double g1 = opt.g1, g2 = opt.g2, gp = opt.gp;
  int model = 0;
  if (!opt.d || g1 > 0 || g2 > 0) {  // d given and no rates: no calibration
    calibrate<T>(p.b, g1, g2);
    if (gp == 0) gp = detail::cpu_panel_rate<T>(m, p.b, p.threads, p.row_blocks, p.leaf_rows);
    model = model_d(m, n, p.b, p.threads, g1, g2, gp);
  }
  const int d = opt.d ? opt.d : model;
  std::unique_ptr<cuda_device<T>> own;
  if (!workspace) own = std::make_unique<cuda_device<T>>();
  cuda_device<T>& dev = workspace ? *workspace : *own;
  dev.begin();
  const bool on_device = cuda_detail::is_device_pointer(a);
  const int info = detail::hybrid_schedule(dev, m, n, on_device ? nullptr : a, lda, on_device ? a : nullptr,
                                           lda, ipiv, opt, d, report);
  if (report) {
    report->model_d = model, report->g1 = g1, report->g2 = g2, report->gp = gp > 0 ? gp : 0;
    report->seconds = detail::now() - start;
  }
  return info;
}

/// hybrid_getrf, then the solve with it on the host (calu::getrs) when info == 0 (B
/// untouched otherwise). A and B on the host.
template <class T>
int hybrid_gesv(int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb, const hybrid_options& opt = {}) {
  tinybatch::detail::require(nrhs >= 0 && ldb >= std::max(1, n) && (b || n == 0 || nrhs == 0), "calu::hybrid_gesv",
                             "nrhs must be >= 0, ldb >= max(1, n), B not null");
  const int info = hybrid_getrf(n, n, a, lda, ipiv, opt);
  if (info == 0) getrs('N', n, nrhs, a, lda, ipiv, b, ldb);
  return info;
}

}  // namespace tinybatch::calu
