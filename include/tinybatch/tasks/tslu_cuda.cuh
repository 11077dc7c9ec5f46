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

#include <type_traits>

#include "../cuda/error.hpp"

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

/// One tournament level in one kernel, a thread block per node: the node's h x jb block
/// (rows as tournament_gather picks them, no padding columns) in shared memory, its partial-
/// pivoting LU column by column (the largest |entry|, the first of equals, as idamax), the
/// node's jb rows in the chosen order to cand_out. The LU's factors are dropped: only the
/// order of the rows is the tournament's result. Dynamic shared memory: h jb T + h int.
template <class T>
__global__ void tournament_level(bool leaves, const int* cand, int nprev, int jb, int h, int mp, const T* panel,
                                 long long ldp, int* cand_out, int* flag) {
  extern __shared__ unsigned char smem[];
  T* s = reinterpret_cast<T*>(smem);
  int* id = reinterpret_cast<int*>(s + h * jb);
  __shared__ T best_v[32];
  __shared__ int best_i[32];
  __shared__ int real;
  const int node = blockIdx.x, tid = threadIdx.x, nt = blockDim.x, lane = tid % 32, warp = tid / 32;
  if (tid == 0) real = 0;
  __syncthreads();
  int mine = 0;
  for (int r = tid; r < h; r += nt) {
    int v;
    if (leaves) {
      v = node * h + r < mp ? node * h + r : -1;
    } else {
      const int child = 2 * node + (r >= jb), k = r - (r >= jb ? jb : 0);
      v = child < nprev ? cand[child * jb + k] : -1;
    }
    id[r] = v;
    mine += v >= 0;
  }
  atomicAdd(&real, mine);
  __syncthreads();
  for (int e = tid; e < h * jb; e += nt) {
    const int r = e % h, c = e / h;
    s[e] = id[r] >= 0 ? panel[id[r] + c * ldp] : T(0);
  }
  __syncthreads();
  const int limit = min(jb, real);
  bool deficient = false;  // the same in every thread
  for (int j = 0; j < jb; ++j) {
    T v = T(-1);
    int bi = h;
    for (int r = j + tid; r < h; r += nt) {
      const T a = fabs(s[r + j * h]);
      if (a > v) v = a, bi = r;
    }
    for (int o = 16; o > 0; o /= 2) {
      const T ov = __shfl_down_sync(0xffffffffu, v, o);
      const int oi = __shfl_down_sync(0xffffffffu, bi, o);
      if (ov > v || (ov == v && oi < bi)) v = ov, bi = oi;
    }
    if (lane == 0) best_v[warp] = v, best_i[warp] = bi;
    __syncthreads();
    if (warp == 0) {
      v = lane < nt / 32 ? best_v[lane] : T(-1);
      bi = lane < nt / 32 ? best_i[lane] : h;
      for (int o = 16; o > 0; o /= 2) {
        const T ov = __shfl_down_sync(0xffffffffu, v, o);
        const int oi = __shfl_down_sync(0xffffffffu, bi, o);
        if (ov > v || (ov == v && oi < bi)) v = ov, bi = oi;
      }
      if (lane == 0) best_v[0] = v, best_i[0] = bi;
    }
    __syncthreads();
    const T pv = best_v[0];
    const int p = best_i[0];
    __syncthreads();  // best_v / best_i are written again by the next column
    if (!(pv > T(0))) {  // a zero column below j: no interchange, nothing to eliminate
      if (j < limit) deficient = true;
      continue;
    }
    if (p != j) {
      for (int c = tid; c < jb; c += nt) {
        const T t = s[j + c * h];
        s[j + c * h] = s[p + c * h];
        s[p + c * h] = t;
      }
      if (tid == 0) {
        const int t = id[j];
        id[j] = id[p];
        id[p] = t;
      }
    }
    __syncthreads();
    const T inv = T(1) / s[j + j * h];
    const int rows = h - j - 1, cols = jb - j - 1;
    for (int r = j + 1 + tid; r < h; r += nt) s[r + j * h] *= inv;
    __syncthreads();
    for (int e = tid; e < rows * cols; e += nt) {
      const int r = j + 1 + e % rows, c = j + 1 + e / rows;
      s[r + c * h] -= s[r + j * h] * s[j + c * h];
    }
    __syncthreads();
  }
  for (int i = tid; i < jb; i += nt) cand_out[node * jb + i] = id[i];
  if (deficient && tid == 0) atomicOr(flag, 1);
}

/// Threads of tournament_panel's blocks: one candidate row each.
inline constexpr int tournament_threads = 256;
/// The most leaves tournament_panel is given (its node buffers are sized for this).
inline constexpr int tournament_max_leaves = 4096;

/// |a|'s bits, monotonic in |a| (sign bit 0, then exponent and mantissa), in the top of 64.
__device__ inline unsigned long long magnitude_bits(double a) { return (unsigned long long)__double_as_longlong(fabs(a)); }
__device__ inline unsigned long long magnitude_bits(float a) { return (unsigned long long)__float_as_uint(fabsf(a)) << 32; }

/// v[i] for a run-time i < N by a tree of selects (depth log2 N; a chain of N selects was
/// the slowest part of a column step).
template <class T, int N>
__device__ T pick(const T (&v)[N], int i) {
  T s[N];
#pragma unroll
  for (int k = 0; k < N; ++k) s[k] = v[k];
#pragma unroll
  for (int w = 1, bit = 0; w < N; w *= 2, ++bit) {
    const bool hi = (i >> bit) & 1;
#pragma unroll
    for (int k = 0; k + w < N; k += 2 * w) s[k] = hi ? s[k + w] : s[k];
  }
  return s[0];
}

/// Eight consecutive values between registers and shared memory, in 16-byte accesses (the
/// address 16-byte aligned).
template <class T>
__device__ inline void store8(T* d, const T (&s)[8]) {
  if constexpr (sizeof(T) == 8) {
#pragma unroll
    for (int q = 0; q < 4; ++q) reinterpret_cast<double2*>(d)[q] = make_double2(s[2 * q], s[2 * q + 1]);
  } else {
#pragma unroll
    for (int q = 0; q < 2; ++q)
      reinterpret_cast<float4*>(d)[q] = make_float4(s[4 * q], s[4 * q + 1], s[4 * q + 2], s[4 * q + 3]);
  }
}
template <class T>
__device__ inline void load8(T (&d)[8], const T* s) {
  if constexpr (sizeof(T) == 8) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const double2 x = reinterpret_cast<const double2*>(s)[q];
      d[2 * q] = x.x, d[2 * q + 1] = x.y;
    }
  } else {
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const float4 x = reinterpret_cast<const float4*>(s)[q];
      d[4 * q] = x.x, d[4 * q + 1] = x.y, d[4 * q + 2] = x.z, d[4 * q + 3] = x.w;
    }
  }
}

/// The partial-pivoting LU of one tournament node: up to 256 rows of the panel (`row`: this
/// thread's panel row, -1 none), jb <= JB columns, each thread's row in registers. Only the
/// order in which rows become pivots is kept (the factors are dropped), so a chosen row is
/// not moved: it leaves the elimination instead. `chosen` (shared, JB) gets the pivot rows in
/// order; returns how many (min(jb, rows)). A zero (or NaN) pivot sets `deficient`; a row is
/// still chosen for that column, without elimination, so the list stays distinct real rows.
///
/// One barrier a column: every warp's best row writes itself (the columns still to be
/// eliminated) to that warp's slot of shared memory before the barrier, so after it every
/// thread knows the winner and reads its row at once (double-buffered by the column's parity).
/// The columns go by chunks of 8: a rolled loop over chunks, the chunk's columns picked out of
/// the registers once (pick()) and its 8 steps unrolled, so a step reads the pivot column at a
/// compile-time index and updates only the chunks not yet eliminated (branches uniform across
/// the block). Fully unrolled, the column loop was 10^4 instructions run once per node and
/// bound by instruction fetch; rolled a column at a time, a step paid a 64-way select and two
/// barriers (about 1.4 us a column step on an H100).
///
/// The search compares 64-bit keys: |entry|'s bits without their lowest 8 (ties below 2^-44
/// relative in double, none in float), + 1 so that every row left is above 0 (no row), and
/// 255 - thread in the low 8 bits (ties: the lowest thread). A warp reduces them with two
/// __reduce_max_sync (high word, then low word among the lanes holding the high maximum).
template <class T, int JB>
__device__ int tournament_node_lu(const T* __restrict__ panel, long long ldp, int jb, int row, int* chosen,
                                  bool& deficient, T* lu = nullptr) {
  constexpr int NT = tournament_threads, NW = NT / 32, W = 8, C = JB / W;
  static_assert(NT <= 256, "the thread's number fits the key's low 8 bits");
  static_assert(JB % W == 0, "whole chunks");
  __shared__ __align__(16) T prow[2][NW][JB];  // each warp's best row, by the column's parity
  __shared__ __align__(16) unsigned long long wk[2][NW];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  T v[JB];
#pragma unroll
  for (int k = 0; k < JB; ++k) v[k] = row >= 0 && k < jb ? panel[row + k * ldp] : T(0);
  bool live = row >= 0, over = false;
  int count = 0, mine = -1;  // the column this thread's row was chosen for
#pragma unroll 1
  for (int c = 0; c * W < jb && !over; ++c) {
    T w[W];  // chunk c of the row
#pragma unroll
    for (int i = 0; i < W; ++i) {
      T s[C];
#pragma unroll
      for (int cc = 0; cc < C; ++cc) s[cc] = v[cc * W + i];
      w[i] = pick(s, c);
    }
#pragma unroll
    for (int i = 0; i < W; ++i) {
      const int j = c * W + i, buf = i & 1;
      if (j >= jb) break;
      const unsigned long long key = live ? (((magnitude_bits(w[i]) >> 8) + 1) << 8) | unsigned(NT - 1 - t) : 0ull;
      const unsigned hi = unsigned(key >> 32), mh = __reduce_max_sync(0xffffffffu, hi);
      const unsigned ml = __reduce_max_sync(0xffffffffu, hi == mh ? unsigned(key) : 0u);
      const unsigned long long mk = (static_cast<unsigned long long>(mh) << 32) | ml;
      if (lane == 0) wk[buf][warp] = mk;
      if (live && key == mk) {  // this warp's best row: its columns from chunk c on
        T* d = prow[buf][warp];
        store8(d + c * W, w);
#pragma unroll
        for (int cc = 1; cc < C; ++cc)
          if (cc > c) {
            T x[W];
#pragma unroll
            for (int ii = 0; ii < W; ++ii) x[ii] = v[cc * W + ii];
            store8(d + cc * W, x);
          }
      }
      __syncthreads();
      unsigned long long best = wk[buf][0];
#pragma unroll
      for (int q = 1; q < NW; ++q) best = max(best, wk[buf][q]);
      if (best == 0) {  // no rows left: fewer rows than columns
        over = true;
        break;
      }
      const int bi = NT - 1 - int(best & 0xff);
      if (t == bi) {
        chosen[j] = row;
        live = false;
        mine = j;
      }
      count = j + 1;
      const T* u = prow[buf][bi >> 5];
      T uc[W];
      load8(uc, u + c * W);
      const T p = uc[i];
      if (!(fabs(p) > T(0))) {
        deficient = true;
      } else if (live) {
        const T l = w[i] / p;
        w[i] = l;  // the multiplier, kept for `lu`
#pragma unroll
        for (int ii = i + 1; ii < W; ++ii) w[ii] -= l * uc[ii];
#pragma unroll
        for (int cc = 1; cc < C; ++cc)
          if (cc > c) {
            T x[W];
            load8(x, u + cc * W);
#pragma unroll
            for (int ii = 0; ii < W; ++ii) v[cc * W + ii] -= l * x[ii];
          }
      }
    }
    if (lu) {  // chunk c back into the row (multipliers and U), for the chosen rows' output
#pragma unroll
      for (int cc = 0; cc < C; ++cc)
#pragma unroll
        for (int ii = 0; ii < W; ++ii) v[cc * W + ii] = cc == c ? w[ii] : v[cc * W + ii];
    }
  }
  if (lu && mine >= 0)  // row `mine` of L \ U (ld 64), every chosen row at once
#pragma unroll
    for (int k = 0; k < JB; ++k)
      if (k < jb) lu[mine + k * 64] = v[k];
  __syncthreads();  // chosen[] complete for every thread
  return count;
}

/// A whole tournament in one launch, a thread block per leaf (tslu.hpp's structure: leaves,
/// then a reduction tree). Leaf i holds the panel rows [mp i / leaves, mp (i + 1) / leaves)
/// and runs through them in runs of 256 - (its candidates so far) rows, each run's LU on the
/// candidates carried over the new rows (a flat tree, as tslu.hpp's leaf_candidates). The tree
/// merges F = 256 / JB nodes at a time (their jb candidates each fill one node), and the
/// last block to finish among a parent's children does the parent (a counter per node,
/// reset by that block): no grid-wide barrier and no launch per level. The root's rows go to
/// `root`, and the root's elimination (L \ U of the panel's diagonal block once its rows are
/// interchanged: the same rows eliminated in the same order) to `lu` (jb x jb, ld 64); a
/// deficient node sets *flag. cand / counts / arrivals: at least 2 leaves + 64 nodes (cand JB
/// ints each); arrivals zero before the first launch.
///
/// Why: the level-per-launch tournament (tournament_level) ran log2(m / 2b) launches of
/// 2b-row nodes in shared memory per panel and lost 2 - 3x to cuSOLVER's per-panel getrf
/// (docs/calu.md); here the nodes are 256 rows in registers, F-way merges and one launch.
template <class T, int JB>
__global__ void __launch_bounds__(tournament_threads)
    tournament_panel(int mp, int jb, const T* __restrict__ panel, long long ldp, int leaves, int* cand, int* counts,
                     unsigned* arrivals, int* root, int* flag, T* lu) {
  constexpr int NT = tournament_threads, F = NT / JB;
  __shared__ int chosen[JB];
  __shared__ bool last;
  const int t = threadIdx.x, leaf = blockIdx.x;
  const int r1 = int((long long)mp * (leaf + 1) / leaves);
  int next = int((long long)mp * leaf / leaves);
  bool deficient = false;
  int c = 0;  // candidates carried in chosen[]
  do {
    const int row = t < c ? chosen[t] : (next + t - c < r1 ? next + t - c : -1);
    __syncthreads();  // chosen[] read by all before the LU writes it
    next += min(NT - c, r1 - next);
    c = tournament_node_lu<T, JB>(panel, ldp, jb, row, chosen, deficient);
  } while (next < r1);
  int node = leaf, nodes = leaves, base = 0;  // node's index in its level, the level's size and offset
  while (nodes > 1) {
    if (deficient && t == 0) atomicOr(flag, 1);
    const int g = base + node;
    if (t < c) cand[g * JB + t] = chosen[t];
    if (t == 0) counts[g] = c;
    __threadfence();  // the candidates visible before the arrival is counted
    __syncthreads();
    const int parent = node / F, pbase = base + nodes, kids = min(F, nodes - parent * F);
    if (t == 0) {
      last = atomicAdd(&arrivals[pbase + parent], 1u) == unsigned(kids - 1);
      if (last) arrivals[pbase + parent] = 0;  // ready for the next panel
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    int row = -1;
    const int child = parent * F + t / JB, k = t % JB;
    if (child < nodes && k < __ldcg(&counts[base + child])) row = __ldcg(&cand[(base + child) * JB + k]);
    deficient = false;
    const bool is_root = (nodes + F - 1) / F == 1;
    c = tournament_node_lu<T, JB>(panel, ldp, jb, row, chosen, deficient, is_root ? lu : nullptr);
    node = parent, base = pbase, nodes = (nodes + F - 1) / F;
  }
  if (deficient && t == 0) atomicOr(flag, 1);
  if (t < c) root[t] = chosen[t];
}

/// Launches tournament_panel for jb <= 64 columns (JB the next of 8, 16, 32, 64).
template <class T>
void launch_tournament_panel(cudaStream_t s, int mp, int jb, const T* panel, long long ldp, int leaves, int* cand,
                             int* counts, unsigned* arrivals, int* root, int* flag, T* lu) {
  const dim3 grid(leaves), block(tournament_threads);
  if (jb <= 8)
    tournament_panel<T, 8><<<grid, block, 0, s>>>(mp, jb, panel, ldp, leaves, cand, counts, arrivals, root, flag, lu);
  else if (jb <= 16)
    tournament_panel<T, 16><<<grid, block, 0, s>>>(mp, jb, panel, ldp, leaves, cand, counts, arrivals, root, flag, lu);
  else if (jb <= 32)
    tournament_panel<T, 32><<<grid, block, 0, s>>>(mp, jb, panel, ldp, leaves, cand, counts, arrivals, root, flag, lu);
  else
    tournament_panel<T, 64><<<grid, block, 0, s>>>(mp, jb, panel, ldp, leaves, cand, counts, arrivals, root, flag, lu);
  tinybatch::cuda::check_launch("calu tournament_panel");
}

/// The panel's interchanges as one permutation of the rows they touch: row k0 + dst[i] gets
/// what row k0 + src[i] held (pairs: count dst, then count src, count <= 2 jb), on ncols
/// columns. Every block reads its columns' source rows, then writes them: 8 columns a block,
/// the pairs across its threads. Why: applying jb interchanges in order is jb dependent
/// steps a column (laswp_kernel: 28 - 53 us for 64 interchanges on an H100); their net
/// effect moves at most 2 jb rows at once.
template <class T>
__global__ void __launch_bounds__(256) permute_rows(int ncols, T* a, long long lda, int k0, const int* pairs, int count) {
  __shared__ T tmp[8 * 128];
  const int c0 = blockIdx.x * 8, cols = min(8, ncols - c0);
  for (int e = threadIdx.x; e < count * cols; e += blockDim.x) {
    const int i = e % count, c = e / count;
    tmp[c * 128 + i] = a[k0 + pairs[count + i] + (c0 + c) * lda];
  }
  __syncthreads();
  for (int e = threadIdx.x; e < count * cols; e += blockDim.x) {
    const int i = e % count, c = e / count;
    a[k0 + pairs[i] + (c0 + c) * lda] = tmp[c * 128 + i];
  }
}

/// The panel's LU without pivoting once its interchanges are applied, from the tournament
/// root's elimination (`lu`: L \ U of the jb x jb diagonal block, ld 64; tournament_panel):
/// the panel's first jb rows get `lu`, and every row below solves x U11 = a (L21 =
/// A21 U11^-1) by forward substitution, a thread per row, the row in registers and U11 in
/// shared memory, each column of the result written as soon as it is known. The columns go
/// by chunks of 8 as in tournament_node_lu (a rolled loop over chunks, the chunk picked out of
/// the registers once, its steps unrolled, only the chunks to the right updated).
///
/// Why: the root's LU already is the diagonal block's (the same rows, eliminated in the same
/// order), so the block needs no second factorization; a separate one-block LU and triangular
/// inverse of a 64 x 64 block took 71 us on an H100, as long as the rows below. cuBLAS's TRSM
/// on a 100000 x 64 panel took 244 us, five times the panel's memory traffic.
template <class T, int JB>
__global__ void __launch_bounds__(256) panel_lower_from_root(int mp, int jb, T* a, long long lda, const T* lu) {
  constexpr int W = 8, C = JB / W;
  __shared__ __align__(16) T u[JB][JB];  // u[k][c] = U11(k, c), zero elsewhere
  __shared__ T rd[JB];                   // 1 / U11(k, k)
  for (int e = threadIdx.x; e < JB * JB; e += blockDim.x) {
    const int k = e / JB, c = e % JB;
    u[k][c] = k < jb && c < jb && k <= c ? lu[k + c * 64] : T(0);
  }
  if (threadIdx.x < JB) rd[threadIdx.x] = int(threadIdx.x) < jb ? T(1) / lu[threadIdx.x * 65] : T(0);
  __syncthreads();
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= mp) return;
  if (r < jb) {  // the diagonal block
    for (int k = 0; k < jb; ++k) a[r + k * lda] = lu[r + k * 64];
    return;
  }
  T x[JB];
#pragma unroll
  for (int k = 0; k < JB; ++k) x[k] = k < jb ? a[r + k * lda] : T(0);
#pragma unroll 1
  for (int c = 0; c * W < jb; ++c) {
    T w[W];  // chunk c of the row
#pragma unroll
    for (int i = 0; i < W; ++i) {
      T s[C];
#pragma unroll
      for (int cc = 0; cc < C; ++cc) s[cc] = x[cc * W + i];
      w[i] = pick(s, c);
    }
#pragma unroll
    for (int i = 0; i < W; ++i) {
      const int k = c * W + i;
      if (k >= jb) break;
      T y[W];
      load8(y, u[k] + c * W);
      const T xk = w[i] * rd[k];
      a[r + k * lda] = xk;
#pragma unroll
      for (int ii = i + 1; ii < W; ++ii) w[ii] -= xk * y[ii];
#pragma unroll
      for (int cc = 1; cc < C; ++cc)
        if (cc > c) {
          load8(y, u[k] + cc * W);
#pragma unroll
          for (int ii = 0; ii < W; ++ii) x[cc * W + ii] -= xk * y[ii];
        }
    }
  }
}

/// panel_lower_from_root on a panel of mp x jb (jb <= 64; JB as launch_tournament_panel's).
template <class T>
void launch_panel_lu(cudaStream_t s, int mp, int jb, T* a, long long lda, const T* lu) {
  const int blocks = (mp + 255) / 256;
  if (jb <= 8)
    panel_lower_from_root<T, 8><<<blocks, 256, 0, s>>>(mp, jb, a, lda, lu);
  else if (jb <= 16)
    panel_lower_from_root<T, 16><<<blocks, 256, 0, s>>>(mp, jb, a, lda, lu);
  else if (jb <= 32)
    panel_lower_from_root<T, 32><<<blocks, 256, 0, s>>>(mp, jb, a, lda, lu);
  else
    panel_lower_from_root<T, 64><<<blocks, 256, 0, s>>>(mp, jb, a, lda, lu);
  tinybatch::cuda::check_launch("calu panel_lower_from_root");
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
