// The hybrid CALU's schedule, the seed paper's asynchronous CALU (Algorithm 2), written
// against a device interface so that it is plain C++: calu_cuda.cuh runs it on a CUDA GPU
// (streams, events, cuBLAS, a laswp kernel); the CPU tests run it on an emulated device
// whose queues are host threads (tests/calu_emulated_device.hpp), so the schedule's data
// flow and its synchronisation are tested where there is no GPU.
//
// The first d block columns live on the CPU (pinned buffers), the others on the device.
// Per step K:
//
//   CPU     panel K (TSLU, tslu.hpp) -> send: block column K and its pivots to the device
//   device  waits for the panel (event), interchanges its rows, updates block column K + d
//           first (TRSM + GEMM) and copies it to the CPU (the column that keeps the CPU's
//           share at d), then updates the rest of its columns
//   CPU     updates its columns K + 1 .. K + d - 1 (look-ahead: column K + 1, panel K + 1,
//           then the others), the arriving column K + d from the next step on
//
// When fewer than d block columns remain they are all on the CPU and the device only
// receives the finished columns. The CPU's tasks are OpenMP tasks with depend clauses (one
// dependence object per block column, one for the device queue so that its calls keep their
// order, one per send for the receive that waits on it); the device's queues are three
// (copies in, updates, copies out) ordered by events: no device-wide synchronisation, and
// the host waits only for the column it needs next.
//
// The device interface (Dev, for scalar T; queues 0 copies in, 1 updates, 2 copies out):
//   event make_event(bool timing); T* pinned(size_t); int* pinned_ints(size_t);
//   T* device(size_t); int* device_ints(size_t)          (owned by the device object)
//   copy_to_device(q, T* d, ldd, const T* h, ldh, rows, cols), copy_to_host(q, h, ldh, d, ldd, rows, cols),
//   copy_ints_to_device(q, int* d, const int* h, count)   (asynchronous in queue q)
//   record(event, q), wait(q, event), synchronize(event), synchronize_queue(q), bind_thread()
//   laswp(q, ncols, a, lda, k1, k2, ipiv_d)               rows k1 .. k2 - 1 (0-based), ipiv 1-based
//   left_swaps(q, ncols, a, lda, b, mn, ipiv_d)           column c: rows (c / b + 1) b .. mn - 1
//   trsm(q, m, n, a, lda, b, ldb)                         B := L^-1 B, L unit lower m x m
//   gemm_minus(q, m, n, k, a, lda, b, ldb, c, ldc)        C -= A B
//   double seconds_between(event, event)
#pragma once

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "calu.hpp"

namespace tinybatch::calu {

/// Where the hybrid factors its panels: TSLU on the CPU cores (the seed's schedule, d block
/// columns on the CPU), or on the GPU (calu_cuda.cuh: the whole factorization stays on the
/// GPU in a look-ahead schedule, d and the rates are unused; options::row_blocks 1: each
/// panel by cuSOLVER's partial pivoting, >= 2: TSLU's tournament with that many leaves,
/// tslu_cuda.cuh; 0: the tournament on very tall matrices, gpu_tournament_default, else 1).
/// The GPU is the default: on the H100 machine (16 Xeon cores) it ran 1.4 - 15x the CPU
/// panels' schedule at its best d on every shape measured (docs/calu.md).
enum class panel_location { cpu, gpu };

/// Options of the hybrid factorization: the CPU ones, the rates of the d model, the panel's
/// place.
struct hybrid_options : options {
  panel_location panel = panel_location::gpu;  ///< the panels on the GPU (default) or on the CPU
  /// GPU panels: the tournament's node LUs by tinybatch's one-kernel-per-level (where a
  /// 2b x b node fits in shared memory; cuBLAS otherwise) or by cublas<t>getrfBatched.
  bool tournament_cublas = false;
  double g1 = 0;       ///< GEMM flop/s of one CPU core (0: measured before the factorization)
  double g2 = 0;       ///< GEMM flop/s of the GPU (0: measured)
  /// Flop/s of TSLU on a panel on the CPU threads (0: measured; < 0: not used, the panel
  /// counted at the cores' GEMM rate as in the seed's model).
  double gp = 0;
  // options::trace: every task's interval in hybrid_report::events ("panel", "update",
  // "send", "wait" on the CPU, "gpu_update" on the device; with the panels on the GPU the
  // device's two queues: "tournament", "panel_lu", "panel_getrf" on thread -2, "lookahead"
  // and "gpu_update" on thread -1).
};

/// What the hybrid factorization chose and measured.
struct hybrid_report {
  int b = 0, d = 0, model_d = 0, nb = 0;
  double g1 = 0, g2 = 0;  // the rates the model used (0 where d was given and none measured)
  double gp = 0;          // the panel rate the model used (0: none)
  double seconds = 0;     // the whole call
  double host_wait = 0;   // GPU panels: the host's waits for the tournaments' chosen rows
  std::vector<trace_event> events;
};

/// The model's d for an m x n matrix in block columns of b, P cores of g1 flop/s each and a
/// device of g2: T1 = T2 (the CPU's panel and d - 1 updates against the device's N - d
/// updates) with the panel's work (m - b/3) b^2 against an update's m b^2 (the seed's
/// section 4 before its asymptotic simplification d / N = P g1 / (P g1 + g2)); at least 1
/// (the CPU holds the panel), at most the number of block columns.
inline int model_d(int m, int n, int b, int P, double g1, double g2) {
  const int nb = (n + b - 1) / b;
  const double pg1 = P * g1, r = (m - b / 3.0) / m;
  const double d = (pg1 * nb + g2) / (pg1 + g2) - r * g2 / (pg1 + g2);
  return std::max(1, std::min(nb, int(std::lround(d))));
}

/// The model's d with the panel at its own rate: gp, TSLU's flop/s on the P cores, where the
/// seed's model counts the panel's work at P g1. Step K (m_K = m - K b rows, N_K = nb - K
/// block columns left, u_K = 2 m_K b^2 the flops of one block column's update) takes the
/// longer of the CPU's part (its panel, m_K b^2 - b^3 / 3 flops at gp, and min(d, N_K) - 1
/// updates at P g1) and the device's (N_K - d updates at g2); d is the one of 1 .. nb whose
/// steps sum to the least time (the smallest such). d is fixed for the whole factorization
/// while the device's share shrinks with N_K and m_K and the panel's only with m_K, so a
/// balance of the first step alone (the seed's argument) overestimates d: on the H100
/// machine's rates it gave d = 3 at 32768^2 where d = 1 ran 23% faster. gp <= 0: the seed's
/// model.
inline int model_d(int m, int n, int b, int P, double g1, double g2, double gp) {
  if (gp <= 0) return model_d(m, n, b, P, g1, g2);
  const int nb = (n + b - 1) / b;
  const double pg1 = P * g1;
  int best_d = 1;
  double best = 0;
  for (int d = 1; d <= nb; ++d) {
    double t = 0;
    for (int K = 0; K < nb && double(m) - double(K) * b > 0; ++K) {
      const double mk = double(m) - double(K) * b, u = 2.0 * mk * b * b;
      const double tp = (mk * b * b - double(b) * b * b / 3) / gp;
      const int left = nb - K, cpu_cols = std::min(d, left);
      t += std::max(tp + (cpu_cols - 1) * u / pg1, (left - cpu_cols) * u / g2);
    }
    if (d == 1 || t < best) best = t, best_d = d;
  }
  return best_d;
}

namespace detail {

/// GEMM flop/s of one CPU core on a rank-b update of a 2048 x 512 block (the shape of the
/// CPU's updates), the best of four runs.
template <class T>
double cpu_core_rate(int b) {
  blas_single_threaded one;
  const int m = 2048, n = 512;
  std::vector<T> a(std::size_t(m) * b, T(0.5)), bb(std::size_t(b) * n, T(0.25)), c(std::size_t(m) * n, T(0));
  double best = 1e30;
  for (int r = 0; r < 4; ++r) {
    const double t0 = now();
    lapack<T>::gemm(CblasNoTrans, CblasNoTrans, m, n, b, T(-1), a.data(), m, bb.data(), b, T(1), c.data(), m);
    best = std::min(best, now() - t0);
  }
  return 2.0 * m * n * b / best;
}

/// Flop/s of TSLU (m b^2 - b^3 / 3) on an m x b panel of random entries on `threads` OpenMP
/// threads with `row_blocks` leaves, the best of three runs after a first; m is capped at 32768
/// rows (the calibration's memory; taller panels run faster, so the rate errs low).
template <class T>
double cpu_panel_rate(int m, int b, int threads, int row_blocks, int leaf_rows = 0) {
  blas_single_threaded one;
  m = std::max(b, std::min(m, 32768));
  std::vector<T> a0(std::size_t(m) * b), a(a0.size());
  unsigned x = 12345;
  for (T& v : a0) {
    x = x * 1664525u + 1013904223u;
    v = T(double(x >> 8) / double(1u << 24) - 0.5);
  }
  std::vector<int> ipiv(static_cast<std::size_t>(b));
  double best = 1e30;
  for (int r = 0; r < 4; ++r) {
    std::copy(a0.begin(), a0.end(), a.begin());
    const double t0 = now();
#pragma omp parallel num_threads(threads)
#pragma omp single
    tslu(m, b, a.data(), m, ipiv.data(), row_blocks, leaf_rows);
    if (r > 0) best = std::min(best, now() - t0);
  }
  return (double(m) * b * b - double(b) * b * b / 3) / best;
}

/// The schedule (see the top of this file). host_a: the matrix on the host (lda), copied
/// to the device's dA (ldda, allocated here) and back at the end; or null: the matrix is dA
/// on the device. d already resolved (1 <= d <= nb). ipiv, info as calu::getrf's.
template <class T, class Dev>
int hybrid_schedule(Dev& dev, int m, int n, T* host_a, int lda, T* dA, long long ldda, int* ipiv,
                    const hybrid_options& opt, int d, hybrid_report* report) {
  enum { in = 0, comp = 1, out = 2 };
  const plan p = make_plan(m, n, opt);
  const int b = p.b, threads = p.threads, row_blocks = p.row_blocks, nb = p.nb, mn = p.mn;
  d = std::max(1, std::min(d, nb));
  const int slots = std::min(nb, d + 2);  // d columns, the one arriving, the one leaving
  const std::size_t slot_elems = std::size_t(m) * b;
  T* window = dev.pinned(slot_elems * slots);
  int* ipiv_h = dev.pinned_ints(mn);
  int* ipiv_d = dev.device_ints(mn);
  if (host_a) {
    dA = dev.device(std::size_t(m) * n);
    ldda = m;
  }
  auto slot = [&](int J) { return window + std::size_t(J % slots) * slot_elems; };
  auto width = [&](int J) { return std::min(b, n - J * b); };
  auto dcol = [&](int J) { return dA + std::size_t(J) * b * ldda; };

  // Block columns 0 .. d - 1 to the CPU's buffers, the others to the device (host matrix).
  for (int J = 0; J < d; ++J) {
    if (host_a)
      for (int j = 0; j < width(J); ++j)
        std::memcpy(slot(J) + std::size_t(j) * m, host_a + (std::size_t(J) * b + j) * lda, sizeof(T) * m);
    else
      dev.copy_to_host(out, slot(J), m, dcol(J), ldda, m, width(J));
  }
  if (host_a && d < nb) dev.copy_to_device(in, dcol(d), ldda, host_a + std::size_t(d) * b * lda, lda, m, n - d * b);
  dev.synchronize_queue(out);
  dev.synchronize_queue(in);

  using event = typename Dev::event;
  std::vector<event> panel_on_device, column_ready, column_on_cpu, upd0, upd1;
  for (int J = 0; J < nb; ++J) {
    panel_on_device.push_back(dev.make_event(false));
    column_ready.push_back(dev.make_event(false));
    column_on_cpu.push_back(dev.make_event(false));
    if (opt.trace) upd0.push_back(dev.make_event(true)), upd1.push_back(dev.make_event(true));
  }
  event base = dev.make_event(true);
  dev.record(base, comp);
  dev.synchronize(base);
  tracer trace(threads);  // its clock starts here, with the device's queue idle
  auto record = [&](const char* what, int K, int J, double s) {
    if (opt.trace) trace.add(what, K, J, s);
  };

  // Dependence objects: block columns, the device queue, one per send, and a spare.
  std::vector<char> deps(2 * std::size_t(nb) + 2);
  char* col = deps.data();
  char* sent = col + nb;
  char* queue = col + 2 * nb;
  char* spare = queue + 1;
  int info = 0;
  blas_single_threaded one_thread_blas;
  // An exception must not leave a task: the first is kept, the tasks after it do nothing,
  // and it is rethrown after the parallel region.
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
      const int pinfo = factor_panel(m, slot(K), m, ipiv_h, k0, jb, row_blocks, p.leaf_rows);
      if (pinfo && !info) info = pinfo;  // panels run one after the other
      record("panel", K, K, s);
    });
  };
  // Column K and its pivots to the device; the device's step K; block column K + d back.
  // inout on the column whose buffer the arriving column K + d takes (K + d - slots, that is
  // K - 2): its CPU readers (step K - 2's updates) must be done before the copy is queued.
  auto send = [&](int K) {
    const int previous = K + d - slots;
    char* old = previous >= 0 && K + d < nb ? &col[previous] : spare;
    (void)old;  // read by the depend clause only (nvcc's front end warns otherwise)
#pragma omp task default(shared) firstprivate(K, old) depend(in : col[K]) depend(inout : old[0]) depend(inout : queue[0]) depend(out : sent[K])
    guard([&] {
      const double s = now();
      dev.bind_thread();
      const int k0 = K * b, jb = std::min(b, mn - k0), next = K + d;
      // Only the rows the CPU changed: from the first panel it applied to this column on.
      const int r0 = std::max(0, (K - d + 1) * b);
      dev.copy_to_device(in, dcol(K) + r0, ldda, slot(K) + r0, m, m - r0, width(K));
      dev.copy_ints_to_device(in, ipiv_d + k0, ipiv_h + k0, jb);
      dev.record(panel_on_device[K], in);
      if (next < nb) {
        dev.wait(comp, panel_on_device[K]);
        if (opt.trace) dev.record(upd0[K], comp);
        const int c0 = next * b;
        dev.laswp(comp, n - c0, dcol(next), ldda, k0, k0 + jb, ipiv_d);
        const T* l11 = dcol(K) + k0;
        const int below = m - k0 - jb;
        auto device_update = [&](int c, int w) {
          T* u = dA + std::size_t(c) * ldda + k0;
          dev.trsm(comp, jb, w, l11, ldda, u, ldda);
          if (below > 0) dev.gemm_minus(comp, below, w, jb, l11 + jb, ldda, u, ldda, u + jb, ldda);
        };
        device_update(c0, width(next));  // the column the CPU needs next, first
        dev.record(column_ready[next], comp);
        dev.wait(out, column_ready[next]);
        // Rows above the next panel are final (U): the CPU neither reads nor changes them.
        const int r1 = k0 + b;
        dev.copy_to_host(out, slot(next) + r1, m, dcol(next) + r1, ldda, m - r1, width(next));
        dev.record(column_on_cpu[next], out);
        if (next + 1 < nb) device_update(c0 + b, n - c0 - b);
        if (opt.trace) dev.record(upd1[K], comp);
      }
      record("send", K, K, s);
    });
  };
  // The block column the device sent: the host waits for that copy only.
  auto receive = [&](int J) {
    char* from = &sent[J - d];
    (void)from;
#pragma omp task default(shared) firstprivate(J, from) depend(in : from[0]) depend(inout : col[J])
    guard([&] {
      const double s = now();
      dev.synchronize(column_on_cpu[J]);
      record("wait", J - d, J, s);
    });
  };
  auto update = [&](int K, int J) {
#pragma omp task default(shared) firstprivate(K, J) depend(in : col[K]) depend(inout : col[J])
    guard([&] {
      const double s = now();
      const int k0 = K * b, jb = std::min(b, mn - k0);
      update_block_column(m, slot(K), m, slot(J), m, ipiv_h, k0, jb, width(J), threads);
      record("update", K, J, s);
    });
  };
  auto next_panel = [&](int K) {  // panel K + 1 and what follows it
    panel(K + 1);
    send(K + 1);
    if (K + 1 + d < nb) receive(K + 1 + d);
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
        const bool ahead = opt.lookahead && K + 1 < last;
        if (ahead) {
          update(K, K + 1);
          next_panel(K);
          first = K + 2;
        }
        for (int J = first; J < last; ++J) update(K, J);
        if (!ahead && K + 1 < nb) next_panel(K);
      }
    } catch (...) {
#pragma omp critical(tinybatch_calu_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);

  // L's columns get the later panels' interchanges, then the matrix goes home if it came
  // from the host.
  dev.synchronize_queue(in);
  dev.wait(comp, panel_on_device[nb - 1]);
  if (nb > 1) dev.left_swaps(comp, (nb - 1) * b, dA, ldda, b, mn, ipiv_d);
  if (host_a) dev.copy_to_host(comp, host_a, lda, dA, ldda, m, n);
  dev.synchronize_queue(comp);
  dev.synchronize_queue(out);
  std::memcpy(ipiv, ipiv_h, sizeof(int) * mn);

  if (report) {
    report->b = b, report->d = d, report->nb = nb;
    trace.collect(report->events);
    if (opt.trace)
      for (int K = 0; K + d < nb; ++K)
        report->events.push_back({"gpu_update", K, K + d, -1, dev.seconds_between(base, upd0[K]),
                                  dev.seconds_between(base, upd1[K])});
  }
  return info;
}

}  // namespace detail
}  // namespace tinybatch::calu
