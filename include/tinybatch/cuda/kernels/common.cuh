// Building blocks of the fast CUDA kernels for n <= 32: one thread per matrix row
// with the row in registers, a power-of-two segment of lanes per matrix (so warp shuffles
// with a width reduce within one matrix), several matrices per thread block, and matrices
// moved between global and shared memory by the whole block with coalesced accesses.
#pragma once

#include <cuda_runtime.h>

#include <cfloat>
#include <type_traits>

#include "../../core/config.hpp"
#include "../../core/views.hpp"
#include "tuning.hpp"

namespace tinybatch::cuda::fast_kernels {

/// Lanes per matrix: the next power of two >= n (shuffles with that width stay inside it).
TINYBATCH_HD constexpr int seg_width(int n) {
  int w = 1;
  while (w < n) w *= 2;
  return w;
}

/// Elements between two matrices' tiles in shared memory: at least `size`; when several
/// matrices share a warp, congruent to the segment width modulo 32 so that lane r of
/// segment s (reading element r + c * n of its tile) hits bank (s * w + r) mod 32: no
/// conflicts.
TINYBATCH_HD constexpr int tile_stride(int size, int w) {
  if (w >= 32) return (size + 3) / 4 * 4;
  int s = size;
  while (s % 32 != w % 32) ++s;
  return s;
}

/// Elements per 16-byte vector.
template <class T>
inline constexpr int vec_width = int(16 / sizeof(T));

template <class T>
using vec_t = std::conditional_t<std::is_same_v<T, float>, float4, double2>;

/// A 16-byte vector into its elements t[0, vec_width), and back: every 16-byte load and store
/// of the kernels goes through these.
__device__ __forceinline__ void unpack(const float4& w, float* t) { t[0] = w.x, t[1] = w.y, t[2] = w.z, t[3] = w.w; }
__device__ __forceinline__ void unpack(const double2& w, double* t) { t[0] = w.x, t[1] = w.y; }
__device__ __forceinline__ float4 pack(const float* t) { return float4{t[0], t[1], t[2], t[3]}; }
__device__ __forceinline__ double2 pack(const double* t) { return double2{t[0], t[1]}; }

/// Elements between two segments' broadcast rows: a whole number of 16-byte vectors, an odd
/// number of them, so that the segments of one warp read their rows from different banks.
template <class T>
TINYBATCH_HD constexpr int vec_stride(int size) {
  constexpr int v = vec_width<T>;
  int q = (size + v - 1) / v;
  if (q % 2 == 0) ++q;
  return q * v;
}

/// Smallest normal number, as reference::getrf uses it.
template <class T>
__device__ constexpr T sfmin() {
  if constexpr (std::is_same_v<T, float>)
    return FLT_MIN;
  else
    return DBL_MIN;
}

/// Whether 1 / d takes the fast path of nvcc's own correctly rounded reciprocal (rcp.rn):
/// d normal and far enough from the top of the range that 1 / d is normal too (float: biased
/// exponent 1..252, nvcc's own test; double: 1..2040, inside nvcc's test's range).
template <class T>
__device__ __forceinline__ bool rcp_fast_range(T d) {
  if constexpr (sizeof(T) == 4)
    return ((__float_as_uint(d) + 0x1800000u) & 0x7f800000u) > 0x1ffffffu;
  else
    return unsigned((__double2hiint(d) >> 20) & 0x7ff) - 1u < 2040u;
}

/// 1 / d correctly rounded for d with rcp_fast_range(d): the instructions of rcp.rn's fast
/// path (MUFU.RCP, then Newton steps by fused multiply-adds, as nvcc emits them), without its
/// range checks and the branch to its slow path (a call), which cost a step of getrf as much
/// as the reciprocal itself. Same bits as T(1) / d there (checked on every float and on
/// random doubles: tests/cuda).
template <class T>
__device__ __forceinline__ T rcp_fast(T d) {
  if constexpr (sizeof(T) == 4) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
    return fmaf(r, fmaf(-d, r, 1.0f), r);
  } else {
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(d));
    double e = fma(-d, r, 1.0);
    e = fma(e, e, e);
    r = fma(r, e, r);
    return fma(r, fma(-d, r, 1.0), r);
  }
}

/// 1 / d as T(1) / d computes it: rcp_fast in the common range, the division elsewhere.
template <class T>
__device__ __forceinline__ T rcp_rn(T d) {
  if (rcp_fast_range(d)) [[likely]]
    return rcp_fast(d);
  return T(1) / d;
}

/// reference::getrf's multiplier of a row: x * (1 / d) where |d| >= sfmin, x / d below it
/// (d != 0), x itself where d == 0; the common case by rcp_fast with no branch.
template <class T>
__device__ __forceinline__ T pivot_scale(T x, T d) {
  if (rcp_fast_range(d)) [[likely]]
    return x * rcp_fast(d);
  if (d == T(0)) return x;
  return fabs(d) >= sfmin<T>() ? x * (T(1) / d) : x / d;
}

/// pivot_scale with rcp = rcp_rn(d) already at hand (the inverse needs it for the pivot row).
template <class T>
__device__ __forceinline__ T pivot_scale(T x, T d, T rcp) {
  if (rcp_fast_range(d)) [[likely]]
    return x * rcp;
  if (d == T(0)) return x;
  return fabs(d) >= sfmin<T>() ? x * rcp : x / d;
}

// ---- where matrix k lives -----------------------------------------------------------------

/// `x`, unknown to the optimizer from here on. The row-per-thread kernels read a row at
/// element offsets c * ld and, after the n steps, write it (or read it again) at the same
/// offsets; nvcc then keeps the loads' n 64-bit offsets live across every step, which under
/// the tuned register caps spills (potrf float n = 32 at 102 registers: 92 bytes of spill
/// stores, 172 of loads). Addresses formed from opaque(ld) are recomputed where they are
/// used (a multiply-add each) and those spills go, but where no cap binds the kernel may
/// take more registers instead (potrf float n = 16: 56 -> 77), so it is a tuned choice
/// (launch_shape::opaque_ld; bench/results/h200/gpu-h200-18b075f-dirty-ab-opaque-ld.txt). The
/// solves' loads alike: without it nvcc hoists their n offsets out of the loop over matrices
/// and holds them for the whole kernel (solve.cuh).
__device__ __forceinline__ int opaque(int x) {
  asm("" : "+r"(x));
  return x;
}
template <class E>
__device__ __forceinline__ E* opaque(E* x) {
  asm("" : "+l"(x));
  return x;
}
/// opaque(x) where ON, else x.
template <bool ON, class X>
__device__ __forceinline__ X opaque_if(X x) {
  if constexpr (ON) return opaque(x);
  else return x;
}

/// Strided batch: matrix k at data + k * stride, leading dimension ld.
template <class E>
struct strided_at {
  E* data;
  index_t stride;
  int ld;
  __device__ E* operator()(index_t k) const { return data + k * stride; }
};
/// Pointer-array batch: matrix k at ptrs[k].
template <class E>
struct pointer_at {
  E* const* ptrs;
  int ld;
  __device__ E* operator()(index_t k) const { return ptrs[k]; }
};

template <class E, int M, int N>
strided_at<E> at_of(const strided_view<E, M, N>& v) {
  return {v.data(), v.stride(), v.ld()};
}
template <class E, int M, int N>
pointer_at<E> at_of(const pointer_view<E, M, N>& v) {
  return {v.pointers(), v.ld()};
}

/// Fixed-size strided or pointer-array view of float or double.
template <class V>
struct is_fixed_view : std::false_type {};
template <class E, int M, int N>
struct is_fixed_view<strided_view<E, M, N>> : std::bool_constant<(M > 0 && N > 0)> {};
template <class E, int M, int N>
struct is_fixed_view<pointer_view<E, M, N>> : std::bool_constant<(M > 0 && N > 0)> {};

template <class V>
concept fixed_view = is_fixed_view<V>::value &&
                     (std::is_same_v<typename V::value_type, float> ||
                      std::is_same_v<typename V::value_type, double>);

/// A fixed-size square view of order 1..32.
template <class V>
concept small_square = fixed_view<V> && V::static_rows == V::static_cols &&
                       V::static_rows <= 32;

// ---- block-wide moves between global and shared memory -----------------------------------

/// Which elements of an M x N matrix a move touches.
enum class part { all, lower, upper };

template <part P>
__device__ constexpr bool in_part(int i, int j) {
  if constexpr (P == part::lower)
    return i >= j;
  else if constexpr (P == part::upper)
    return i <= j;
  else
    return true;
}

/// Loads in flight per thread while staging matrices (registers: two per element).
inline constexpr int stage_group = 8;

/// Copies matrices k0 .. k0 + NB - 1 (those < count) from global memory into their tiles:
/// element (i, j) of the M x N matrix m to tile[m * TS + i * RS + j * CS] (RS = 1, CS = M:
/// column-major; RS = N, CS = 1: transposed). Consecutive threads read consecutive elements
/// of a column: coalesced for packed batches. Every load of the thread is issued before the
/// first store to shared memory (a generic pointer might alias the tile, so the compiler
/// would not hoist them): many loads in flight per thread.
template <class At>
inline constexpr bool is_strided_at = false;
template <class E>
inline constexpr bool is_strided_at<strided_at<E>> = true;

/// to_tiles for a whole block of matrices that lie back to back in global memory (packed
/// strided batch: stride M * N, ld M) from a 16-byte aligned address: 16-byte loads (four
/// floats or two doubles per instruction), each element scattered to the tile position
/// to_tiles gives it.
template <int THREADS, int NB, int M, int N, int TS, int RS, int CS, part P, class T>
__device__ __forceinline__ void to_tiles_packed(T* tile, const T* base) {
  constexpr int v = vec_width<T>, MN = M * N, total = NB * MN;
  static_assert(total % v == 0);
  constexpr int nvec = total / v, per = (nvec + THREADS - 1) / THREADS;
  // Four vectors in flight per thread: with eight, ptxas spilled in the gemm of double n = 8
  // under its register cap.
  constexpr int G = per < 4 ? per : 4;
  using V = vec_t<T>;
#pragma unroll 1
  for (int q0 = 0; q0 < per; q0 += G) {
    V t[G];
#pragma unroll
    for (int q = 0; q < G; ++q) {
      const int e = int(threadIdx.x) + (q0 + q) * THREADS;
      if (q0 + q < per && e < nvec) t[q] = reinterpret_cast<const V*>(base)[e];
    }
#pragma unroll
    for (int q = 0; q < G; ++q) {
      const int e0 = (int(threadIdx.x) + (q0 + q) * THREADS) * v;
      T x[v];
      unpack(t[q], x);
#pragma unroll
      for (int u = 0; u < v; ++u) {
        const int e = e0 + u;
        const int m = e / MN, w = e - m * MN, j = w / M, i = w - j * M;
        if (q0 + q < per && e < total && in_part<P>(i, j)) tile[m * TS + i * RS + j * CS] = x[u];
      }
    }
  }
}

/// With PACKED, a block whose matrices are a whole, packed, 16-byte aligned run of a strided
/// batch takes to_tiles_packed (a uniform branch per block; the rest take the loop below).
template <int THREADS, int NB, int M, int N, int TS, int RS, int CS, part P, bool PACKED = false, class T,
          class At>
__device__ __forceinline__ void to_tiles(T* tile, const At& at, index_t k0, index_t count) {
  if constexpr (PACKED && is_strided_at<At> && NB * M * N % vec_width<T> == 0) {
    const T* base = at.data + k0 * at.stride;
    if (at.stride == index_t(M) * N && at.ld == M && k0 + NB <= count &&
        (reinterpret_cast<unsigned long long>(base) & 15u) == 0) {
      to_tiles_packed<THREADS, NB, M, N, TS, RS, CS, P>(tile, base);
      return;
    }
  }
  constexpr int total = NB * M * N, per = (total + THREADS - 1) / THREADS;
  constexpr int G = per < stage_group ? per : stage_group;
#pragma unroll 1
  for (int q0 = 0; q0 < per; q0 += G) {
    T v[G];
#pragma unroll
    for (int q = 0; q < G; ++q) {
      const int e = int(threadIdx.x) + (q0 + q) * THREADS;
      const int m = e / (M * N), w = e - m * (M * N), j = w / M, i = w - j * M;
      if (q0 + q < per && e < total && k0 + m < count && in_part<P>(i, j))
        v[q] = at(k0 + m)[i + index_t(j) * at.ld];
    }
#pragma unroll
    for (int q = 0; q < G; ++q) {
      const int e = int(threadIdx.x) + (q0 + q) * THREADS;
      const int m = e / (M * N), w = e - m * (M * N), j = w / M, i = w - j * M;
      if (q0 + q < per && e < total && k0 + m < count && in_part<P>(i, j))
        tile[m * TS + i * RS + j * CS] = v[q];
    }
  }
}

/// The reverse of to_tiles (every shared-memory load before the first global store).
template <int THREADS, int NB, int M, int N, int TS, int RS, int CS, part P, class T, class At>
__device__ __forceinline__ void from_tiles(const T* tile, const At& at, index_t k0, index_t count) {
  constexpr int total = NB * M * N, per = (total + THREADS - 1) / THREADS;
  constexpr int G = per < stage_group ? per : stage_group;
#pragma unroll 1
  for (int q0 = 0; q0 < per; q0 += G) {
    T v[G];
#pragma unroll
    for (int q = 0; q < G; ++q) {
      const int e = int(threadIdx.x) + (q0 + q) * THREADS;
      const int m = e / (M * N), w = e - m * (M * N), j = w / M, i = w - j * M;
      if (q0 + q < per && e < total) v[q] = tile[m * TS + i * RS + j * CS];
    }
#pragma unroll
    for (int q = 0; q < G; ++q) {
      const int e = int(threadIdx.x) + (q0 + q) * THREADS;
      const int m = e / (M * N), w = e - m * (M * N), j = w / M, i = w - j * M;
      if (q0 + q < per && e < total && k0 + m < count && in_part<P>(i, j))
        at(k0 + m)[i + index_t(j) * at.ld] = v[q];
    }
  }
}

// ---- rows through shared memory -----------------------------------------------------------

/// Writes x[b, end) to buf (16-byte vectors, whole vectors from the one holding b). Called in
/// fully unrolled loops, where b is a constant and x stays in registers.
template <int E, class T>
__device__ __forceinline__ void put_row(T* buf, int b, const T (&x)[E], int end = E) {
  constexpr int v = vec_width<T>;
  using V = vec_t<T>;
#pragma unroll
  for (int q = b / v; q * v < end; ++q) {
    T t[v];
#pragma unroll
    for (int e = 0; e < v; ++e) t[e] = q * v + e < E ? x[q * v + e] : T(0);
    reinterpret_cast<V*>(buf)[q] = pack(t);
  }
}

/// Reads buf[b, end) into y[b, end) (16-byte vectors).
template <int E, class T>
__device__ __forceinline__ void get_row(const T* buf, int b, T (&y)[E], int end = E) {
  constexpr int v = vec_width<T>;
  using V = vec_t<T>;
#pragma unroll
  for (int q = b / v; q * v < end; ++q) {
    T t[v];
    unpack(reinterpret_cast<const V*>(buf)[q], t);
#pragma unroll
    for (int e = 0; e < v; ++e)
      if (q * v + e >= b && q * v + e < end) y[q * v + e] = t[e];
  }
}

/// y[c] -= m * buf[c] for c in [b, E), buf read in 16-byte vectors right where they are used
/// (the broadcast row never sits in registers whole: fewer registers, more warps per SM).
/// Same operations in the same order as `get_row` then the loop.
template <int E, class T>
__device__ __forceinline__ void sub_row(T (&y)[E], T m, const T* buf, int b) {
  constexpr int v = vec_width<T>;
  using V = vec_t<T>;
#pragma unroll
  for (int q = b / v; q * v < E; ++q) {
    T t[v];
    unpack(reinterpret_cast<const V*>(buf)[q], t);
#pragma unroll
    for (int e = 0; e < v; ++e)
      if (q * v + e >= b && q * v + e < E) y[q * v + e] -= m * t[e];
  }
}

// ---- whole small matrices in one thread's registers --------------------------------------

/// Loads the R x C column-major matrix at p (leading dimension ld) into x (column-major,
/// packed): by 16-byte vectors where it is one aligned run (ld == R), else element by element.
template <int R, int C, class T>
__device__ __forceinline__ void load_small(T (&x)[R * C], const T* p, int ld) {
  constexpr int v = vec_width<T>;
  if constexpr (R * C % v == 0) {
    if (ld == R && (reinterpret_cast<unsigned long long>(p) & 15u) == 0) {
      using V = vec_t<T>;
#pragma unroll
      for (int q = 0; q < R * C / v; ++q) {
        unpack(reinterpret_cast<const V*>(p)[q], x + v * q);
      }
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < C; ++j)
#pragma unroll
    for (int i = 0; i < R; ++i) x[i + j * R] = p[i + index_t(j) * ld];
}

/// The reverse of load_small.
template <int R, int C, class T>
__device__ __forceinline__ void store_small(const T (&x)[R * C], T* p, int ld) {
  constexpr int v = vec_width<T>;
  if constexpr (R * C % v == 0) {
    if (ld == R && (reinterpret_cast<unsigned long long>(p) & 15u) == 0) {
      using V = vec_t<T>;
#pragma unroll
      for (int q = 0; q < R * C / v; ++q) {
        reinterpret_cast<V*>(p)[q] = pack(x + v * q);
      }
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < C; ++j)
#pragma unroll
    for (int i = 0; i < R; ++i) p[i + index_t(j) * ld] = x[i + j * R];
}

/// Minimum blocks per SM for __launch_bounds__ (tuning.hpp's 0 means none, i.e. 1).
TINYBATCH_HD constexpr int min_blocks_of(int m) { return m > 0 ? m : 1; }

/// Elements between rows staged for 16-byte broadcasts: n rounded up to whole vectors, an
/// odd number of them, so that a transposing block-wide store (consecutive threads writing
/// one column) spreads over the banks instead of hitting one (ncu: 17.5-way conflicts on
/// gemm n=32 double with rows 32 apart).
template <class T>
TINYBATCH_HD constexpr int row_pitch(int n) {
  constexpr int v = vec_width<T>;
  int q = (n + v - 1) / v;
  if (q % 2 == 0) ++q;
  return q * v;
}

/// Blocks for `count` matrices, NB per block (grid-stride loops cover the rest).
inline unsigned grid_for(index_t count, int nb) {
  const index_t blocks = (count + nb - 1) / nb;
  return unsigned(blocks < 2147483647 ? blocks : 2147483647);
}

/// `blocks`, capped at the blocks of `kernel` (`threads` each) that fit on the current
/// device at once: for kernels whose warps loop over matrices (solve_pipelined_kernel).
/// The last answer is kept per thread (the occupancy query costs microseconds).
template <class Kernel>
unsigned resident_grid(Kernel* kernel, int threads, unsigned blocks) {
  thread_local const void* last_kernel = nullptr;
  thread_local int last_dev = -1, last_threads = 0, fit = 0;
  int d = 0;
  if (cudaGetDevice(&d) != cudaSuccess) return blocks;
  const void* kp = reinterpret_cast<const void*>(kernel);
  if (kp != last_kernel || d != last_dev || threads != last_threads) {
    int sms = 0, per_sm = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) != cudaSuccess)
      return blocks;
    last_kernel = kp, last_dev = d, last_threads = threads, fit = sms * (per_sm > 0 ? per_sm : 1);
  }
  return blocks < unsigned(fit) ? blocks : unsigned(fit);
}

}  // namespace tinybatch::cuda::fast_kernels

namespace tinybatch::cuda::fast_kernels {

/// cp.async of 4 or 8 bytes from global to shared memory (sm_80+), bypassing registers.
template <class T>
__device__ __forceinline__ void copy_async(T* smem, const T* gmem) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  const unsigned s = unsigned(__cvta_generic_to_shared(smem));
  if constexpr (sizeof(T) == 8)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(s), "l"(gmem) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/// Waits until at most `Pending` of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

/// cp.async of one element, or zeros where `valid` is false (no bytes read: the source size
/// is 0, and gmem need only be some valid address).
template <class T>
__device__ __forceinline__ void copy_async_or_zero(T* smem, const T* gmem, bool valid) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  const unsigned s = unsigned(__cvta_generic_to_shared(smem));
  const int bytes = valid ? int(sizeof(T)) : 0;
  if constexpr (sizeof(T) == 8)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes) : "memory");
}

/// Thread-block size for a kernel that keeps `bytes_per_matrix` bytes of static shared
/// memory per matrix (segments of w lanes): the tuned size, cut (by whole warps) until the
/// block's matrices fit in 48 KiB.
TINYBATCH_HD constexpr int fit_threads(int tuned_threads, int w, int bytes_per_matrix) {
  int t = tuned_threads;
  while (t > 32 && (t / w) * bytes_per_matrix > 48 * 1024) t -= 32;
  return t;
}

}  // namespace tinybatch::cuda::fast_kernels
