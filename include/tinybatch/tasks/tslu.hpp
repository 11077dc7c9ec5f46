// TSLU: the LU of one tall panel with tournament pivoting (CALU's panel). The panel's rows
// are split into row blocks; each block's partial-pivoting LU (on a copy) nominates b
// candidate rows; a binary tree of LUs on the stacked candidates of two nodes keeps b of
// them, level by level, until the root holds the b pivot rows. Those rows are then brought
// to the top by LAPACK row interchanges and the panel is factored without pivoting: the
// b x b block by a recursive unpivoted LU, the rows below by one triangular solve.
//
// Why: partial pivoting searches every column of the panel over all its rows, one column
// after the other (b reductions over the whole height); the tournament searches each row
// block independently and meets only log2(P_r) times, so the panel's rows are read in
// parallel by P_r cores and the panel costs a few BLAS-3 calls per core.
//
// Runs inside an OpenMP parallel region (the leaves and the tree levels are tasks, waited
// for with taskwait), or outside one, where the tasks run at once on the calling thread.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

#include "lapack.hpp"
#include "trace.hpp"

namespace tinybatch::calu::detail {

/// Unpivoted LU of the n x n block a (recursive: halves until 16 columns, so the work is in
/// TRSM and GEMM). Returns the first zero pivot (1-based), 0 if none; a zero pivot's column
/// is left unscaled, as LAPACK's getf2 does.
template <class T>
int getrf_nopiv(int n, T* a, int lda) {
  using L = lapack<T>;
  if (n <= 16) {
    int info = 0;
    for (int j = 0; j < n; ++j) {
      const T p = a[j + std::size_t(j) * lda];
      if (p == T(0)) {
        if (!info) info = j + 1;
      } else {
        const T r = T(1) / p;
        for (int i = j + 1; i < n; ++i) a[i + std::size_t(j) * lda] *= r;
      }
      for (int k = j + 1; k < n; ++k) {
        const T u = a[j + std::size_t(k) * lda];
        if (u == T(0)) continue;
        T* c = a + std::size_t(k) * lda;
        const T* l = a + std::size_t(j) * lda;
        for (int i = j + 1; i < n; ++i) c[i] -= l[i] * u;
      }
    }
    return info;
  }
  const int n1 = n / 2, n2 = n - n1;
  T* a12 = a + std::size_t(n1) * lda;
  T* a21 = a + n1;
  T* a22 = a12 + n1;
  int info = getrf_nopiv(n1, a, lda);
  L::trsm(CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n1, n2, T(1), a, lda, a12, lda);
  L::trsm(CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, n2, n1, T(1), a, lda, a21, lda);
  L::gemm(CblasNoTrans, CblasNoTrans, n2, n2, n1, T(-1), a21, lda, a12, lda, T(1), a22, lda);
  const int info2 = getrf_nopiv(n2, a22, lda);
  if (!info && info2) info = n1 + info2;
  return info;
}

/// The candidates of one tournament node: panel rows (0-based), best first.
struct candidates {
  std::vector<int> rows;
  int info = 0;  // the node's LU met a zero pivot (its rows are rank deficient)
};

/// Partial-pivoting LU of the panel's `rows` (gathered into a copy), the first min(count, jb)
/// rows in the order the LU chose them.
template <class T>
candidates tournament_node(const T* a, int lda, int jb, std::vector<int> rows, bool contiguous) {
  const int c = int(rows.size());
  // One buffer per thread, kept between panels: fresh memory costs a page fault per 4 KiB
  // at first touch (on a VM that made the gather 4x slower than the LU it feeds).
  thread_local std::vector<T> buffer;
  if (buffer.size() < std::size_t(c) * jb) buffer.resize(std::size_t(c) * jb);
  T* w = buffer.data();
  for (int j = 0; j < jb; ++j) {
    const T* src = a + std::size_t(j) * lda;
    T* dst = w + std::size_t(j) * c;
    if (contiguous && c > 0)  // a leaf: one range of rows
      std::copy(src + rows[0], src + rows[0] + c, dst);
    else
      for (int i = 0; i < c; ++i) dst[i] = src[rows[i]];
  }
  const int k = std::min(c, jb);
  std::vector<int> piv(std::max(k, 1));
  candidates out;
  out.info = lapack<T>::getrf(c, jb, w, std::max(c, 1), piv.data());
  for (int i = 0; i < k; ++i) std::swap(rows[i], rows[piv[i] - 1]);
  rows.resize(k);
  out.rows = std::move(rows);
  return out;
}

/// OpenMP task priority of the panel's tasks (leaves, tree, TRSM) and of the panel task
/// itself; the update of the next panel's column runs at 1, the other updates at 0. The panel
/// is the critical path, and without priorities its tasks, created when it starts, queue
/// behind the GEMM chunks of the step's other updates (libgomp runs one priority's tasks in
/// creation order): on 16 Xeon cores the tall shapes ran panels and updates in lockstep.
/// libgomp honours priorities only up to OMP_MAX_TASK_PRIORITY (an environment variable,
/// default 0: all equal), so the program's user sets it (2) to get the look-ahead.
inline constexpr int panel_priority = 2;

/// Rows of one LU inside a leaf (leaf_rows = 0 in tslu): about 2 MiB of the panel (the EPYC
/// VM's L2 per core), and at least 4 jb so the carried candidates stay a small part of each
/// LU. A single-threaded getrf of a 100000 x 128 leaf ran at 26 GFLOP/s on the EPYC VM, at
/// 34 - 35 on the same rows as LUs of 2048 - 4096 rows, and 29 at 512. On the 16 Xeon cores
/// of the H100 machine single panels ran 26% faster to 9% slower, whole factorizations the
/// same within their noise (bench/results/h100/calu-51a7978-xeon-stdout.txt).
template <class T>
int default_leaf_rows(int jb) {
  return std::max(4 * jb, int((std::size_t(2) << 20) / (sizeof(T) * std::size_t(std::max(jb, 1)))));
}

/// The candidates of the panel rows [r0, r1) (a leaf): a flat tree over runs of `chunk`
/// rows, each LU on the candidates so far stacked over the next run. Why: a getrf of the
/// whole leaf streams it from memory once per column block; a run of ~2 MiB stays in the
/// core's cache.
template <class T>
candidates leaf_candidates(const T* a, int lda, int jb, int r0, int r1, int chunk) {
  if (r1 - r0 <= chunk + chunk / 2) {
    std::vector<int> rows(r1 - r0);
    std::iota(rows.begin(), rows.end(), r0);
    return tournament_node(a, lda, jb, std::move(rows), true);
  }
  candidates c;
  for (int s = r0; s < r1;) {
    const int e = r1 - s <= chunk + chunk / 2 ? r1 : s + chunk;  // no short last run
    std::vector<int> rows = std::move(c.rows);
    rows.reserve(rows.size() + std::size_t(e - s));
    for (int i = s; i < e; ++i) rows.push_back(i);
    c = tournament_node(a, lda, jb, std::move(rows), false);
    s = e;
  }
  return c;
}

/// Whether TSLU's rows below the diagonal block are solved by a GEMM with U11^-1 (tslu's
/// `inverse` = -1). Why try: the traces on 16 Xeon cores put a third of a tall factorization
/// in those TRSMs (400000 x 512 on the H200 machine: 2.27 of 6.2 busy core-seconds, about
/// 12 GFLOP/s a core, against 38 for the updates' GEMMs); the GEMM does twice TRSM's
/// flops, so it wins only at more than twice TRSM's rate. On the 2-core EPYC VM it does
/// not (one 400000 x 128 panel: 0.20 - 0.25 s by TRSM, 0.27 by GEMM, 0.24 by TRMM with
/// U11^-1). Nor on 16 Xeon cores (H100 machine, bench/results/h100/calu-panel-inv*-24e7d22.csv):
/// one 400000 x 128 panel 0.0505 s by TRSM, 0.0658 by GEMM; whole tall factorizations 2 - 9%
/// longer. Off.
inline bool panel_inverse_default(int mp, int jb) {
  (void)mp, (void)jb;
  return false;
}

/// L21 = A21 U11^-1 on rows [r0, r1) of the panel's rows below the diagonal block, by GEMMs
/// with `uinv` (U11^-1, jb x jb) on runs of rows copied to a buffer (GEMM is not in place).
template <class T>
void solve_rows_by_inverse(T* a, int lda, int jb, const T* uinv, int r0, int r1) {
  using L = lapack<T>;
  constexpr int run = 1024;  // rows per GEMM: the run's copy (1 MiB at jb = 128) stays in cache
  thread_local std::vector<T> buf;
  buf.resize(std::size_t(run) * jb);
  for (int s = r0; s < r1; s += run) {
    const int rows = std::min(run, r1 - s);
    T* const src = a + jb + s;
    for (int c = 0; c < jb; ++c)
      std::copy(src + std::size_t(c) * lda, src + std::size_t(c) * lda + rows, buf.data() + std::size_t(c) * rows);
    L::gemm(CblasNoTrans, CblasNoTrans, rows, jb, jb, T(1), buf.data(), rows, uinv, jb, T(0), src, lda);
  }
}

/// The tournament's row interchanges and the panel's LU, in place: a is mp x jb (mp >= jb),
/// ipiv gets jb LAPACK interchanges (1-based, relative to the panel's first row). Returns
/// the first zero pivot (1-based, relative), 0 if none. row_blocks is P_r: at most that many
/// leaves, each of at least jb rows; leaf_rows: rows of each LU inside a leaf (0: default_leaf_rows;
/// mp or more: one LU per leaf). tr, K: the trace, if any, and the panel's number in it.
/// inverse: the rows below the diagonal block by GEMMs with U11^-1 (1), by TRSM (0), or
/// panel_inverse_default (-1); TRSM where U11 has a zero pivot.
template <class T>
int tslu(int mp, int jb, T* a, int lda, int* ipiv, int row_blocks, int leaf_rows = 0, tracer* tr = nullptr,
         int K = 0, int inverse = -1) {
  using L = lapack<T>;
  if (jb <= 0) return 0;
  const int leaves = std::max(1, std::min(row_blocks, mp / jb));
  const int chunk = std::max(2 * jb, leaf_rows > 0 ? leaf_rows : default_leaf_rows<T>(jb));
  // One leaf is partial pivoting itself (row_blocks = 1 asks for exactly that).
  if (leaves == 1) {
    const double s = trace_start(tr);
    const int info = L::getrf(mp, jb, a, lda, ipiv);
    if (tr) tr->add("panel_getrf", K, -1, s);
    return info;
  }

  std::vector<candidates> node(leaves);
  for (int i = 0; i < leaves; ++i) {
#pragma omp task default(none) shared(node, a, lda, jb, mp, leaves, chunk, tr) firstprivate(i, K) priority(panel_priority)
    {
      const double s = trace_start(tr);
      const int r0 = int((long long)mp * i / leaves), r1 = int((long long)mp * (i + 1) / leaves);
      node[i] = leaf_candidates(a, lda, jb, r0, r1, chunk);
      if (tr) tr->add("leaf", K, i, s);
    }
  }
#pragma omp taskwait
  // The binary reduction tree, one level at a time: node i meets node i + step.
  for (int step = 1; step < leaves; step *= 2) {
    for (int i = 0; i + step < leaves; i += 2 * step) {
#pragma omp task default(none) shared(node, a, lda, jb, tr) firstprivate(i, step, K) priority(panel_priority)
      {
        const double s = trace_start(tr);
        std::vector<int> rows = std::move(node[i].rows);
        rows.insert(rows.end(), node[i + step].rows.begin(), node[i + step].rows.end());
        node[i] = tournament_node(a, lda, jb, std::move(rows), false);
        if (tr) tr->add("tree", K, i, s);
      }
    }
#pragma omp taskwait
  }
  // A zero pivot at the root: the panel is rank deficient within the candidates, and the
  // unpivoted LU would divide by zero below them. Partial pivoting there instead, which
  // leaves the multipliers finite and gives getrf's info.
  if (node[0].info) {
    const double s = trace_start(tr);
    const int info = L::getrf(mp, jb, a, lda, ipiv);
    if (tr) tr->add("panel_getrf", K, -1, s);
    return info;
  }
  const double s = trace_start(tr);

  // The chosen rows as interchanges: row i swaps with wherever chosen row i is by then.
  const std::vector<int>& sel = node[0].rows;
  thread_local std::vector<int> where, at;  // kept between panels, as the node buffers
  where.resize(mp), at.resize(mp);
  std::iota(where.begin(), where.end(), 0);
  std::iota(at.begin(), at.end(), 0);
  for (int i = 0; i < jb; ++i) {
    const int p = where[sel[i]];
    ipiv[i] = p + 1;
    const int ri = at[i];
    at[p] = ri;
    where[ri] = p;
    at[i] = sel[i];
    where[sel[i]] = i;
  }
  L::laswp(jb, a, lda, 1, jb, ipiv);
  const int info = getrf_nopiv(jb, a, lda);
  if (tr) tr->add("panel_lu", K, -1, s);
  // L21 = A21 U11^-1, one task per row block.
  const int below = mp - jb;
  const int chunks = std::max(1, std::min(leaves, below / std::max(jb, 64)));
  std::vector<T> uinv;
  if (info == 0 && below > 0 && (inverse >= 0 ? inverse > 0 : panel_inverse_default(mp, jb))) {
    uinv.assign(std::size_t(jb) * jb, T(0));
    for (int c = 0; c < jb; ++c)
      std::copy(a + std::size_t(c) * lda, a + std::size_t(c) * lda + c + 1, uinv.data() + std::size_t(c) * jb);
    if (L::trtri_upper(jb, uinv.data(), jb) != 0) uinv.clear();
  }
  const T* const ui = uinv.empty() ? nullptr : uinv.data();
  for (int c = 0; c < chunks; ++c) {
#pragma omp task default(none) shared(a, lda, jb, below, chunks, tr) firstprivate(c, K, ui) priority(panel_priority)
    {
      const double s = trace_start(tr);
      const int r0 = int((long long)below * c / chunks), r1 = int((long long)below * (c + 1) / chunks);
      if (r1 > r0 && ui)
        solve_rows_by_inverse(a, lda, jb, ui, r0, r1);
      else if (r1 > r0)
        L::trsm(CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, r1 - r0, jb, T(1), a, lda,
                a + jb + r0, lda);
      if (tr) tr->add("panel_trsm", K, c, s);
    }
  }
#pragma omp taskwait
  return info;
}

}  // namespace tinybatch::calu::detail
