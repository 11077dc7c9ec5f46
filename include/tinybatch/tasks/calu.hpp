// CALU on the CPU cores: the LU with tournament pivoting of a large m x n column-major
// matrix (square, tall-skinny or wide), with LAPACK's ipiv and info. The panels are TSLU
// (tslu.hpp); the trailing updates are CBLAS TRSM and GEMM; the schedule is a graph of
// OpenMP tasks whose `depend` clauses name block columns, so the order is the data's:
//
//   panel K        inout(col K)
//   update (K, J)  in(col K) inout(col J)     J > K: swaps, TRSM on U(K, J), GEMM below
//
// and the tasks are created in look-ahead order (the seed paper's): update (K, K + 1), then
// panel K + 1, then updates (K, K + 2 ...), so the next panel is on the critical path's
// front while the rest of step K is still being updated.
//
// The hybrid CPU + GPU schedule is calu_cuda.cuh (nvcc only). Docs: docs/calu.md.
//
//   int info = tinybatch::calu::getrf(m, n, A, lda, ipiv);        // A = P L U
//   tinybatch::calu::getrs('N', n, nrhs, A, lda, ipiv, B, ldb);   // solves with it
//   info = tinybatch::calu::gesv(n, nrhs, A, lda, ipiv, B, ldb);  // both
#pragma once

#include <omp.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../core/error.hpp"
#include "lapack.hpp"
#include "trace.hpp"
#include "tslu.hpp"

namespace tinybatch::calu {

/// The factorization's parameters; 0 means "choose" (default_block, omp_get_max_threads).
struct options {
  int b = 0;           ///< panel width (block column width; 0: cpu_block, the hybrid default_block)
  int row_blocks = 0;  ///< P_r: row blocks of TSLU's tournament (0: the thread count)
  int leaf_rows = 0;   ///< rows of each LU inside a TSLU leaf (0: about 2 MiB of the panel)
  int threads = 0;     ///< OpenMP threads of the task graph (0: omp_get_max_threads())
  bool lookahead = true;  ///< create update (K, K+1) and panel K+1 before the rest of step K
  /// With lookahead: the rest of step K (block columns K + 2 ..) as one update whose GEMM
  /// tiles span up to all those columns rather than one update per block column. 1 on, 0
  /// off, -1: wide_update_default.
  int wide_update = -1;
  /// TSLU's rows below the diagonal block by GEMMs with U11^-1 (1) or by TRSM (0); -1:
  /// detail::panel_inverse_default.
  int panel_inverse = -1;
  /// The columns halved recursively (1 on, 0 off, -1: recursive_default): the left half
  /// factored, the right half updated by one TRSM and one GEMM of rank up to n / 2, then
  /// factored; column blocks of at most leaf_width columns by the blocked look-ahead graph.
  int recursive = -1;
  int leaf_width = 0;  ///< with recursive: the widest block of the blocked graph (0: 4 b)
  int d = 0;           ///< hybrid only: block columns on the CPU (0: the model's d)
  bool trace = false;  ///< record every task's interval in the report's events
};

/// What a CPU factorization measured (getrf's last argument).
struct report {
  double seconds = 0;              // the task graph, first task to last
  std::vector<trace_event> events;  // options::trace: every task, in no particular order
};

/// The default panel width: wide enough that the updates are BLAS-3 bound, narrow enough
/// that small matrices still have several panels.
inline int default_block(int m, int n) {
  const int mn = std::min(m, n);
  if (mn <= 256) return 32;
  if (mn <= 2048) return 64;
  return 128;
}

/// The CPU mode's default panel width (calu::getrf; the hybrid keeps default_block): 64 up to
/// min(m, n) = 4096 where default_block gives 128 from 2049. On the H100 machine's 16 Xeon
/// cores (OpenMP priorities on, seconds, best of 2; bench/results/h100/calu-b-2fe6bcf-{B,C}-*.csv,
/// two calls on one lease, B and C): 4096^2 at b = 64 0.100 (B), 0.105 (C), at 128 0.152 (B);
/// 8192^2 at 64 0.665 (B), 0.816 (C), at 128 0.729 (B): a tie within the runs' spread, so 128
/// stays there. The tall shapes (min(m, n) <= 2048) already take 64, measured faster than 128
/// in an earlier lease (calu-rec-2fe6bcf-*.csv: 0.301 against 0.354 s at 100000 x 1024).
inline int cpu_block(int m, int n) {
  const int mn = std::min(m, n);
  if (mn <= 256) return 32;
  if (mn <= 4096) return 64;
  return 128;
}

/// Whether getrf takes the wide update by default (options::wide_update = -1).
inline bool wide_update_default(int m, int n) {
  (void)m, (void)n;
  return false;
}

/// Whether getrf halves the columns recursively by default (options::recursive = -1).
inline bool recursive_default(int m, int n) {
  (void)m, (void)n;
  return false;
}

/// Whether the hybrid's GPU-panel schedule runs the tournament when row_blocks is 0 (the
/// default): on tall matrices, m >= 64 n, where its 64-column panels with a leaf an SM beat
/// cuSOLVER's getrf per panel. H100 machine, seconds, the same call
/// (bench/results/h100/calu-tc-71eb95c-{132,default}.csv; tournament b 64, 132 leaves against
/// the per-panel getrf at its default width): 100000 x 1024 (m = 98 n) 0.0145 against 0.0161,
/// 200000 x 1024 0.0254 against 0.0268, 400000 x 512 0.0181 against 0.0246 (the tournament at
/// b 32 with 264 leaves: 0.0196); at 100000 x 2048 (m = 49 n) the per-panel getrf led, 0.0367
/// against 0.0396.
inline bool gpu_tournament_default(int m, int n) { return (long long)m >= 64LL * n; }

/// Whether the hybrid's GPU-panel schedule, given neither b nor row_blocks, hands the whole
/// matrix to cuSOLVER's getrf: where m < 4 n. There the CPU cores cannot add to the GPU (16
/// Xeon cores hold 1/20 - 1/55 of its update rate) and the panel-by-panel schedule ran below
/// cuSOLVER's own LU on every square shape measured: 0.70 - 0.78x at b 128 on the H200
/// (4096^2 - 32768^2), 0.88x at b 512 on the H100 (16384^2: 0.1602 s against 0.1412,
/// calu-split-3f1d9ad-tc_default.csv). From 4 n the panel-by-panel schedule (per-panel
/// getrf, or the tournament from 64 n) runs as before: 1.04x at 100000 x 2048 (49 n).
inline bool gpu_whole_getrf_default(int m, int n) { return (long long)m < 4LL * n; }

/// The panel width of the hybrid's GPU-panel schedule (calu_cuda.cuh), for the schedule that
/// runs (tournament: row_blocks >= 2, or 0 where gpu_tournament_default holds).
/// - cuSOLVER's partial pivoting per panel: the panel chain is the critical path, and a
///   wider panel shortens it while cuBLAS's GEMMs of higher rank run at least as fast; on
///   tall matrices (m >= 4 n) n / 8 within [64, 256], on large square ones (min(m, n) >=
///   16384) 512, else default_block. H100 machine, seconds, b = 64 | 128 | 256, the same
///   call (calu-tp-30f2453-base.csv): 100000 x 1024 0.0182 | **0.0161** | 0.0162, 200000 x
///   1024 0.0300 | **0.0268** | 0.0299, 100000 x 2048 0.0480 | 0.0385 | **0.0365**, 400000 x
///   512 **0.0246** | 0.0275 | 0.0386, 16384^2 0.270 | 0.196 | 0.168 (512: 0.160 in
///   calu-51a7978-gpu-panel-b.csv, cuSOLVER dgetrf 0.141 - 0.142).
/// - The tournament: 64 columns, tournament_panel's widest (calu-tc-71eb95c-132.csv: b 64 led
///   b 32 on every shape, 1.07 - 1.5x).
inline int gpu_panel_block(int m, int n, int row_blocks) {
  const bool tournament = row_blocks >= 2 || (row_blocks == 0 && gpu_tournament_default(m, n));
  if (tournament) return std::min(n, 64);
  if (std::min(m, n) >= 16384) return 512;
  if ((long long)m >= 4LL * n) return std::clamp(n / 8, 64, 256);
  return default_block(m, n);
}

namespace detail {

inline void check_getrf(const char* routine, int m, int n, const void* a, int lda, const int* ipiv,
                        const options& o) {
  using tinybatch::detail::require;
  require(m >= 0, routine, [&] { return "m = " + std::to_string(m) + " < 0"; });
  require(n >= 0, routine, [&] { return "n = " + std::to_string(n) + " < 0"; });
  require(lda >= std::max(1, m), routine,
          [&] { return "lda = " + std::to_string(lda) + " < max(1, m = " + std::to_string(m) + ")"; });
  require(a || m == 0 || n == 0, routine, "A is null");
  require(ipiv || std::min(m, n) == 0, routine, "ipiv is null");
  require(o.b >= 0 && o.row_blocks >= 0 && o.leaf_rows >= 0 && o.threads >= 0 && o.d >= 0 && o.leaf_width >= 0,
          routine, "options: b, row_blocks, leaf_rows, threads, leaf_width and d must be >= 0");
}

/// Panel K's interchanges on one block column (w columns at `col`, rows 0..m), U(K, J) =
/// L(K, K)^-1 A(K, J), and the GEMM below it in row chunks (child tasks: a tall-skinny matrix
/// has few block columns, so the rows are where the parallelism is). `panel` is block column
/// K from row 0; both columns hold the matrix's global rows (so do the hybrid's buffers).
template <class T>
void update_block_column(int m, const T* panel, int ldp, T* col, int ldc, const int* ipiv, int k0, int jb,
                         int w, int threads, tracer* tr = nullptr, int K = 0, int J = 0, int prio = 0) {
  using L = lapack<T>;
  const double s = trace_start(tr);
  L::laswp(w, col, ldc, k0 + 1, k0 + jb, ipiv);
  const T* l11 = panel + k0;
  L::trsm(CblasLeft, CblasLower, CblasNoTrans, CblasUnit, jb, w, T(1), l11, ldp, col + k0, ldc);
  if (tr) tr->add("update", K, J, s);
  const int rows = m - k0 - jb;
  if (rows <= 0) return;
  const int chunks = std::max(1, std::min(threads, rows / 1024));
  for (int c = 0; c < chunks; ++c) {
#pragma omp task default(none) shared(ldp, ldc, col, l11, tr) firstprivate(c, chunks, rows, k0, jb, w, K, J) if (chunks > 1) priority(prio)
    {
      const double s = trace_start(tr);
      const int r0 = int((long long)rows * c / chunks), r1 = int((long long)rows * (c + 1) / chunks);
      L::gemm(CblasNoTrans, CblasNoTrans, r1 - r0, w, jb, T(-1), l11 + jb + r0, ldp, col + k0, ldc, T(1),
              col + k0 + jb + r0, ldc);
      if (tr) tr->add("gemm", K, J, s);
    }
  }
#pragma omp taskwait
}

/// Panel K in place (`panel` is block column K from row 0): TSLU of rows k0.., ipiv made
/// global (1-based). Returns the first zero pivot (global, 1-based), 0 if none.
template <class T>
int factor_panel(int m, T* panel, int ld, int* ipiv, int k0, int jb, int row_blocks, int leaf_rows,
                 tracer* tr = nullptr, int K = 0, int inverse = -1) {
  const int pinfo = tslu(m - k0, jb, panel + k0, ld, ipiv + k0, row_blocks, leaf_rows, tr, K, inverse);
  for (int i = 0; i < jb; ++i) ipiv[k0 + i] += k0;
  return pinfo ? k0 + pinfo : 0;
}

/// The rest of step K in one task (options::wide_update): the interchanges and TRSM on column
/// chunks of at least 64, one a thread (the recursive halving's TRSM is up to n / 2 deep),
/// then the GEMM in tiles of up to the whole width w, so the GEMMs have up to w columns
/// instead of b (a rank-b update of b columns packs its operands for 2 b^2
/// flops a row; of w columns, 2 b w), and L(K)'s rows are read once per tile column instead
/// of once per block column. Child tasks of the caller's task.
template <class T>
void update_wide(int m, const T* panel, int ldp, T* col, int ldc, const int* ipiv, int k0, int jb, int w,
                 int threads, tracer* tr = nullptr, int K = 0, int J = 0) {
  using L = lapack<T>;
  const T* l11 = panel + k0;
  const int cchunks = std::max(1, std::min(threads, w / 64));
  for (int c = 0; c < cchunks; ++c) {
#pragma omp task default(none) shared(ldp, ldc, col, l11, ipiv, tr) firstprivate(c, cchunks, w, k0, jb, K, J) if (cchunks > 1)
    {
      const double s = trace_start(tr);
      const int c0 = int((long long)w * c / cchunks), c1 = int((long long)w * (c + 1) / cchunks);
      T* cc = col + std::size_t(c0) * ldc;
      L::laswp(c1 - c0, cc, ldc, k0 + 1, k0 + jb, ipiv);
      L::trsm(CblasLeft, CblasLower, CblasNoTrans, CblasUnit, jb, c1 - c0, T(1), l11, ldp, cc + k0, ldc);
      if (tr) tr->add("update", K, J, s);
    }
  }
#pragma omp taskwait
  const int rows = m - k0 - jb;
  if (rows <= 0) return;
  // About 4 tiles a thread, so a thread busy with the next panel (the look-ahead) leaves a
  // small tail rather than a whole chunk; columns cut at ~512 (each tile's GEMM packs its
  // columns of U again), rows at ~256.
  const int tiles = std::max(1, std::min(4 * threads, int((long long)rows * w / (256 * 256))));
  const int tc = std::max(1, std::min(tiles, w / 512)), nr = std::max(1, std::min(rows / 256, tiles / tc));
  for (int t = 0; t < nr * tc; ++t) {
#pragma omp task default(none) shared(ldp, ldc, col, l11, tr) firstprivate(t, nr, tc, rows, k0, jb, w, K, J) if (nr * tc > 1)
    {
      const double s = trace_start(tr);
      const int rc = t % nr, cc = t / nr;
      const int r0 = int((long long)rows * rc / nr), r1 = int((long long)rows * (rc + 1) / nr);
      const int c0 = int((long long)w * cc / tc), c1 = int((long long)w * (cc + 1) / tc);
      L::gemm(CblasNoTrans, CblasNoTrans, r1 - r0, c1 - c0, jb, T(-1), l11 + jb + r0, ldp,
              col + k0 + std::size_t(c0) * ldc, ldc, T(1), col + k0 + jb + r0 + std::size_t(c0) * ldc, ldc);
      if (tr) tr->add("gemm", K, J, s);
    }
  }
#pragma omp taskwait
}

/// Resolved parameters of one factorization.
struct plan {
  int mn, b, threads, row_blocks, leaf_rows, nb, np;
};

/// The recursive halving's widest leaf: options::leaf_width, 0 for 4 b, at least b.
inline int leaf_width(const plan& p, const options& opt) {
  return std::max(p.b, opt.leaf_width ? opt.leaf_width : 4 * p.b);
}

/// cpu: calu::getrf's plan (cpu_block), else the hybrid's (default_block).
inline plan make_plan(int m, int n, const options& opt, bool cpu = false) {
  plan p;
  p.mn = std::min(m, n);
  p.b = std::max(1, std::min(opt.b ? opt.b : cpu ? cpu_block(m, n) : default_block(m, n), p.mn));
  p.threads = opt.threads ? opt.threads : omp_get_max_threads();
  p.row_blocks = opt.row_blocks ? opt.row_blocks : p.threads;
  p.leaf_rows = opt.leaf_rows;
  p.nb = (n + p.b - 1) / p.b;
  p.np = (p.mn + p.b - 1) / p.b;
  return p;
}

/// The blocked factorization: one task graph over all block columns (getrf's arguments,
/// checked).
template <class T>
int getrf_blocked(int m, int n, T* a, int lda, int* ipiv, const options& opt, report* rep) {
  if (rep) rep->seconds = 0, rep->events.clear();
  if (std::min(m, n) == 0) return 0;
  const detail::plan p = detail::make_plan(m, n, opt, true);
  const int mn = p.mn, b = p.b, threads = p.threads, row_blocks = p.row_blocks, leaf_rows = p.leaf_rows,
            nb = p.nb, np = p.np;
  std::vector<char> deps(nb + 1);  // one dependence object per block column, one for the rests
  char* col = deps.data();
  int info = 0;
  detail::blas_single_threaded one_thread_blas;
  const double start = detail::now();
  std::optional<detail::tracer> traced;
  if (opt.trace && rep) traced.emplace(threads);
  detail::tracer* tr = traced ? &*traced : nullptr;

  const int inverse = opt.panel_inverse;
  auto panel = [&](int K) {
#pragma omp task default(none) shared(info, a, ipiv, tr) firstprivate(K, m, n, lda, mn, b, row_blocks, leaf_rows, inverse) depend(inout : col[K]) priority(detail::panel_priority)
    {
      const int k0 = K * b, jb = std::min(b, mn - k0);
      T* pc = a + std::size_t(k0) * lda;
      const int pinfo = detail::factor_panel(m, pc, lda, ipiv, k0, jb, row_blocks, leaf_rows, tr, K, inverse);
      // A wide matrix's last block column: the columns right of the panel.
      const int rest = std::min(b, n - k0) - jb;
      if (rest > 0)
        detail::update_block_column(m, pc, lda, pc + std::size_t(jb) * lda, lda, ipiv, k0, jb, rest, 1, tr, K, K,
                                    detail::panel_priority);
      // Panels run one after the other (panel K + 1 waits on update (K, K + 1)).
      if (pinfo && !info) info = pinfo;
    }
  };
  const bool wide = opt.lookahead && (opt.wide_update >= 0 ? opt.wide_update > 0 : wide_update_default(m, n));
  // Block columns K + 2 .. of step K in one task (wide). Its dependence objects: col[K + 2]
  // (so update (K + 1, K + 2) waits for it) stands for all those columns, and col[nb] chains
  // the steps' rests (each writes the columns of the next one's). Every later reader of a
  // column J > K + 2 waits on col[J], written by a later rest or update of the chain.
  auto update_rest = [&](int K) {
#pragma omp task default(none) shared(a, ipiv, tr, col) firstprivate(K, m, n, lda, mn, b, nb, threads) depend(in : col[K]) depend(inout : col[K + 2], col[nb])
    {
      const int k0 = K * b, jb = std::min(b, mn - k0), c0 = (K + 2) * b;
      detail::update_wide(m, a + std::size_t(k0) * lda, lda, a + std::size_t(c0) * lda, lda, ipiv, k0, jb, n - c0,
                          threads, tr, K, K + 2);
    }
  };
  auto update = [&](int K, int J) {
    const int prio = J == K + 1 ? 1 : 0;  // the next panel's column: on the critical path
#pragma omp task default(none) shared(a, ipiv, tr) firstprivate(K, J, m, n, lda, mn, b, threads, prio) depend(in : col[K]) depend(inout : col[J]) priority(prio)
    {
      const int k0 = K * b, jb = std::min(b, mn - k0), c0 = J * b;
      detail::update_block_column(m, a + std::size_t(k0) * lda, lda, a + std::size_t(c0) * lda, lda, ipiv, k0,
                                  jb, std::min(b, n - c0), threads, tr, K, J, prio);
    }
  };

#pragma omp parallel num_threads(threads)
#pragma omp single
  {
    panel(0);
    for (int K = 0; K < np; ++K) {
      int first = K + 1;
      if (opt.lookahead && K + 1 < nb) {
        update(K, K + 1);
        if (K + 1 < np) panel(K + 1);
        first = K + 2;
      }
      if (wide && first == K + 2 && first < nb)
        update_rest(K);
      else
        for (int J = first; J < nb; ++J) update(K, J);
      if (!opt.lookahead && K + 1 < np) panel(K + 1);
    }
    // The later panels' interchanges on the columns left of them (L's columns), as getrf:
    // after the last panel (which follows every earlier one) and after the updates that
    // read column J. Ordered by dependences, not by a taskwait: the thread that made the
    // graph then waits at the region's barrier, where it runs any task. In a taskwait (or at
    // a taskgroup's end) libgomp's thread runs only its own children and sleeps until one
    // of them ends, so it could not take the panels' leaves and TRSMs or the GEMM chunks
    // (a trace on 2 threads: one thread idle for the whole first panel and most of the last
    // four).
    for (int J = 0; J + 1 < np; ++J) {
#pragma omp task default(none) shared(a, ipiv, tr) firstprivate(J, lda, mn, b) depend(in : col[np - 1]) depend(inout : col[J])
      {
        const double s = detail::trace_start(tr);
        detail::lapack<T>::laswp(b, a + std::size_t(J) * b * lda, lda, (J + 1) * b + 1, mn, ipiv);
        if (tr) tr->add("laswp", J, -1, s);
      }
    }
  }
  if (rep) {
    rep->seconds = detail::now() - start;
    if (tr) tr->collect(rep->events);
  }
  return info;
}

/// Interchanges k1..k2 (1-based, global ipiv) on w columns, in column chunks on the
/// threads: the left half's columns take the right half's pivots, up to n / 2 of them.
template <class T>
void laswp_columns(int w, T* a, int lda, int k1, int k2, const int* ipiv, int threads) {
  const int chunks = std::max(1, std::min(threads, w / 32));
#pragma omp parallel for num_threads(chunks) schedule(static, 1) if (chunks > 1)
  for (int c = 0; c < chunks; ++c) {
    const int c0 = int((long long)w * c / chunks), c1 = int((long long)w * (c + 1) / chunks);
    lapack<T>::laswp(c1 - c0, a + std::size_t(c0) * lda, lda, k1, k2, ipiv);
  }
}

/// The rest of one halving: block column [k0, k0 + jb) factored, its pivots applied to the w
/// columns at `col` with U = L11^-1 A12 and the GEMM below (update_wide's tiles), on the
/// threads of one parallel region.
template <class T>
void update_halves(int m, const T* panel, int lda, T* col, const int* ipiv, int k0, int jb, int w, int threads,
                   tracer* tr, int K, int J) {
#pragma omp parallel num_threads(threads)
#pragma omp single
  update_wide(m, panel, lda, col, lda, ipiv, k0, jb, w, threads, tr, K, J);
}

/// Recursive CALU of the columns [c0, c0 + w) (rows c0.., every update from the columns left
/// of c0 applied): the left half (a multiple of b columns) factored, the right half updated
/// with rank w1 and factored, the right half's pivots applied to the left half's columns.
/// Blocks of at most leaf_w columns: the blocked graph. Returns the first zero pivot (global,
/// 1-based), 0 if none. Traced: tr records the halving's own tasks, events collects the
/// leaves' (their panels renumbered as the whole matrix's, their times from origin).
template <class T>
int getrf_halves(int m, T* a, int lda, int* ipiv, int c0, int w, int b, int leaf_w, int threads,
                 const options& leaf_opt, tracer* tr, double origin, std::vector<trace_event>* events) {
  if (w <= leaf_w) {
    report lr;
    const double s = now();
    const int info = getrf_blocked(m - c0, w, a + c0 + std::size_t(c0) * lda, lda, ipiv + c0, leaf_opt,
                                   events ? &lr : nullptr);
    for (int i = 0; i < w; ++i) ipiv[c0 + i] += c0;
    if (events)
      for (trace_event e : lr.events) {
        e.K += c0 / b;  // block columns of the whole matrix; J is one for updates only
        if (e.J >= 0 && (std::string_view(e.what) == "update" || std::string_view(e.what) == "gemm")) e.J += c0 / b;
        e.t0 += s - origin, e.t1 += s - origin;
        events->push_back(e);
      }
    return info ? c0 + info : 0;
  }
  const int w1 = std::max(b, (w / b + 1) / 2 * b), w2 = w - w1;
  const int info1 = getrf_halves(m, a, lda, ipiv, c0, w1, b, leaf_w, threads, leaf_opt, tr, origin, events);
  update_halves(m, a + std::size_t(c0) * lda, lda, a + std::size_t(c0 + w1) * lda, ipiv, c0, w1, w2, threads, tr,
                c0 / b, (c0 + w1) / b);
  const int info2 = getrf_halves(m, a, lda, ipiv, c0 + w1, w2, b, leaf_w, threads, leaf_opt, tr, origin, events);
  const double s = trace_start(tr);
  laswp_columns(w1, a + std::size_t(c0) * lda, lda, c0 + w1 + 1, c0 + w, ipiv, threads);
  if (tr) tr->add("laswp", c0 / b, -1, s);
  return info1 ? info1 : info2;
}

/// The recursive factorization (options::recursive): getrf_halves over the first min(m, n)
/// columns, then a wide matrix's columns right of them (interchanges and U only).
template <class T>
int getrf_recursive(int m, int n, T* a, int lda, int* ipiv, const options& opt, report* rep) {
  if (rep) rep->seconds = 0, rep->events.clear();
  const plan p = make_plan(m, n, opt, true);
  const int leaf_w = leaf_width(p, opt);
  options leaf = opt;
  leaf.recursive = 0, leaf.b = p.b, leaf.threads = p.threads, leaf.row_blocks = p.row_blocks;
  blas_single_threaded one_thread_blas;
  const double start = now();
  std::optional<tracer> traced;
  if (opt.trace && rep) traced.emplace(p.threads);
  tracer* tr = traced ? &*traced : nullptr;
  std::vector<trace_event> leaf_events;
  int info = getrf_halves(m, a, lda, ipiv, 0, p.mn, p.b, leaf_w, p.threads, leaf, tr, start,
                          tr ? &leaf_events : nullptr);
  if (n > p.mn)
    update_halves(m, a, lda, a + std::size_t(p.mn) * lda, ipiv, 0, p.mn, n - p.mn, p.threads, tr, 0, p.np);
  if (rep) {
    rep->seconds = now() - start;
    if (tr) {
      tr->collect(rep->events);
      rep->events.insert(rep->events.end(), leaf_events.begin(), leaf_events.end());
    }
  }
  return info;
}

}  // namespace detail

/// LU with tournament pivoting: A = P L U, L unit lower (m x min(m, n)), U upper. ipiv
/// (min(m, n) entries) as LAPACK's getrf: row i was interchanged with row ipiv[i] (1-based).
/// Returns info as getrf: 0, or i > 0 when U(i, i) is exactly zero (the first such), the
/// factorization completed all the same. Throws tinybatch::invalid_argument on bad arguments.
/// rep (optional): the factorization's time, and with options::trace every task's interval.
/// The pivots are the tournament's of each b-wide panel after every update from its left,
/// the same with options::recursive on or off (up to rounding in near ties).
template <class T>
int getrf(int m, int n, T* a, int lda, int* ipiv, const options& opt = {}, report* rep = nullptr) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "calu::getrf: float or double");
  detail::check_getrf("calu::getrf", m, n, a, lda, ipiv, opt);
  const int mn = std::min(m, n);
  if (mn == 0) {
    if (rep) rep->seconds = 0, rep->events.clear();
    return 0;
  }
  const detail::plan p = detail::make_plan(m, n, opt, true);
  const bool rec = opt.recursive >= 0 ? opt.recursive > 0 : recursive_default(m, n);
  if (rec && mn > detail::leaf_width(p, opt))
    return detail::getrf_recursive(m, n, a, lda, ipiv, opt, rep);
  return detail::getrf_blocked(m, n, a, lda, ipiv, opt, rep);
}

/// Solves op(A) X = B with getrf's result (A n x n); trans 'N', 'T' or 'C'.
template <class T>
void getrs(char trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb) {
  using tinybatch::detail::require;
  require(trans == 'N' || trans == 'T' || trans == 'C', "calu::getrs", "trans must be 'N', 'T' or 'C'");
  require(n >= 0 && nrhs >= 0, "calu::getrs", "n and nrhs must be >= 0");
  require(lda >= std::max(1, n) && ldb >= std::max(1, n), "calu::getrs", "lda and ldb must be >= max(1, n)");
  require((a && ipiv && b) || n == 0 || nrhs == 0, "calu::getrs", "A, ipiv or B is null");
  if (n == 0 || nrhs == 0) return;
  detail::lapack<T>::getrs(trans, n, nrhs, a, lda, ipiv, b, ldb);
}

/// getrf, then getrs when info == 0 (B untouched otherwise, as LAPACK's gesv). Returns info.
template <class T>
int gesv(int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb, const options& opt = {}) {
  using tinybatch::detail::require;
  require(nrhs >= 0 && ldb >= std::max(1, n) && (b || n == 0 || nrhs == 0), "calu::gesv",
          "nrhs must be >= 0, ldb >= max(1, n), B not null");
  const int info = getrf(n, n, a, lda, ipiv, opt);
  if (info == 0) getrs('N', n, nrhs, a, lda, ipiv, b, ldb);
  return info;
}

}  // namespace tinybatch::calu
