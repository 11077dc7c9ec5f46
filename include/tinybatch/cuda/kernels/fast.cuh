// The fast kernels' entry points: overloads of cuda::fast::OP that the CUDA backend asks
// before its generic kernels (backend.cuh). Each covers fixed-size strided and pointer-array
// views (compile-time sizes) of float or double with n <= 32; anything else falls through
// to the catch-alls, which return false. Launch sizes come from tuning.hpp.
#pragma once

#include "../../core/enums.hpp"
#include "../../core/pivots.hpp"
#include "../error.hpp"
#include "gemm.cuh"
#include "getrf.cuh"
#include "inverse.cuh"
#include "potrf.cuh"
#include "solve.cuh"

namespace tinybatch::cuda::fast {

namespace k = fast_kernels;

namespace detail_fast {
/// The getrf kernel with launch shape S and pivot search PM (tuning.hpp's, or others:
/// bench/gpu/sweep_part.cu).
template <k::launch_shape S, k::pivot_method PM = S.pivot, class V>
void getrf_with(CUstream_st* stream, const V& A, const pivot_view& ipiv, int* info) {
  using T = typename V::value_type;
  constexpr int n = V::static_rows, w = k::seg_width((n + S.rows - 1) / S.rows);
  constexpr int threads = k::fit_threads(S.threads, w, int(sizeof(T)) * 2 * k::vec_stride<T>(n));
  if constexpr (S.rows == 1)
    k::getrf_kernel<T, n, threads, S.min_blocks, PM, S.rcp_fast>
        <<<k::grid_for(A.count(), threads / w), threads, 0, stream>>>(k::at_of(A), A.count(), ipiv, info);
  else
    k::getrf_rows_kernel<T, n, S.rows, threads, S.min_blocks>
        <<<k::grid_for(A.count(), threads / w), threads, 0, stream>>>(k::at_of(A), A.count(), ipiv, info);
  check_launch("tinybatch::cuda getrf (fast)");
}
}  // namespace detail_fast

template <k::small_square V>
bool getrf(CUstream_st* stream, const V& A, const pivot_view& ipiv, int* info) {
  using T = typename V::value_type;
  detail_fast::getrf_with<k::tuned(k::fast_op::getrf, sizeof(T), V::static_rows)>(stream, A, ipiv, info);
  return true;
}

namespace detail_fast {
/// The inverse kernel with launch shape S (tuning.hpp's, or another one: bench/gpu/sweep.cu).
template <k::launch_shape S, k::pivot_method PM = S.pivot, class VA, class VX>
void inverse_with(CUstream_st* stream, const VA& A, const VX& X, int* info) {
  using T = typename VX::value_type;
  constexpr int n = VA::static_rows, w = k::seg_width(n);
  if constexpr (S.rows > 1) {
    constexpr int wr = k::seg_width((n + S.rows - 1) / S.rows);
    constexpr int threads = k::fit_threads(S.threads, wr, int(sizeof(T)) * 2 * k::vec_stride<T>(n) + 4 * n);
    k::inverse_rows_kernel<T, n, S.rows, threads, S.min_blocks>
        <<<k::grid_for(A.count(), threads / wr), threads, 0, stream>>>(k::at_of(A), k::at_of(X), A.count(), info);
    check_launch("tinybatch::cuda inverse (fast, rows)");
  } else if constexpr (S.per_matrix) {
    k::inverse_thread_kernel<T, n, S.threads>
        <<<k::grid_for(A.count(), S.threads), S.threads, 0, stream>>>(k::at_of(A), k::at_of(X), A.count(), info);
    check_launch("tinybatch::cuda inverse (fast, one thread per matrix)");
  } else {
    constexpr int threads = k::fit_threads(S.threads, w, int(sizeof(T)) * 2 * k::vec_stride<T>(n) + 4 * w);
    k::inverse_kernel<T, n, threads, S.min_blocks, PM>
        <<<k::grid_for(A.count(), threads / w), threads, 0, stream>>>(k::at_of(A), k::at_of(X), A.count(), info);
    check_launch("tinybatch::cuda inverse (fast)");
  }
}
}  // namespace detail_fast

template <k::small_square VA, k::small_square VX>
  requires(VA::static_rows == VX::static_rows)
bool inverse(CUstream_st* stream, const VA& A, const VX& X, int* info) {
  using T = typename VX::value_type;
  detail_fast::inverse_with<k::tuned(k::fast_op::inverse, sizeof(T), VA::static_rows)>(stream, A, X, info);
  return true;
}

namespace detail_fast {
/// The potrf kernel with launch shape S (tuning.hpp's, or others: bench/gpu/sweep_part.cu).
template <k::launch_shape S, class V>
void potrf_with(CUstream_st* stream, uplo u, const V& A, int* info) {
  using T = typename V::value_type;
  constexpr int n = V::static_rows, w = k::seg_width(n);
  constexpr int threads = k::fit_threads(S.threads, w, int(sizeof(T)) * 2 * k::vec_stride<T>(n)), mb = S.min_blocks;
  const unsigned grid = k::grid_for(A.count(), threads / w);
  if (u == uplo::upper)
    k::potrf_kernel<T, n, threads, mb, true, S.opaque_ld><<<grid, threads, 0, stream>>>(k::at_of(A), A.count(), info);
  else
    k::potrf_kernel<T, n, threads, mb, false, S.opaque_ld><<<grid, threads, 0, stream>>>(k::at_of(A), A.count(), info);
  check_launch("tinybatch::cuda potrf (fast)");
}
}  // namespace detail_fast

template <k::small_square V>
bool potrf(CUstream_st* stream, uplo u, const V& A, int* info) {
  using T = typename V::value_type;
  detail_fast::potrf_with<k::tuned(k::fast_op::potrf, sizeof(T), V::static_rows)>(stream, u, A, info);
  return true;
}

namespace detail_fast {
/// The solve kernel for kind K on A (n x n) and B (n x NRHS), NRHS <= 32, at launch shape S
/// (tuning.hpp's, or others: bench/gpu/sweep_part.cu).
template <k::launch_shape S, k::solve_kind K, class VA, class VB>
void solve_with(CUstream_st* stream, const VA& A, const pivot_view& ipiv, const VB& B, const int* info,
                const char* what) {
  using T = typename VB::value_type;
  constexpr int n = VA::static_rows, nrhs = VB::static_cols, w = k::seg_width(n);
  if constexpr (S.pipelined && w == 32) {
    // Two slots per warp; as many blocks as fit on the device at once (the warps loop).
    constexpr int threads = k::fit_threads(S.threads, 32, 2 * int(sizeof(k::solve_slot<T, n, nrhs>)));
    const auto kernel = k::solve_pipelined_kernel<T, n, nrhs, threads, S.min_blocks, K, decltype(k::at_of(A)),
                                                  decltype(k::at_of(B))>;
    const unsigned grid = k::resident_grid(kernel, threads, k::grid_for(B.count(), threads / 32));
    kernel<<<grid, threads, 0, stream>>>(k::at_of(A), ipiv, k::at_of(B), B.count(), info);
  } else {
    constexpr int bytes = S.transpose ? int(sizeof(T)) * k::solve_tile_stride(n) : 0;
    constexpr int threads = k::fit_threads(S.threads, w, bytes);
    k::solve_kernel<T, n, nrhs, threads, S.min_blocks, K, S.transpose, S.opaque_ld>
        <<<k::grid_for(B.count(), threads / w), threads, 0, stream>>>(k::at_of(A), ipiv, k::at_of(B),
                                                                      B.count(), info);
  }
  check_launch(what);
}

template <k::solve_kind K, class VA, class VB>
void solve(CUstream_st* stream, const VA& A, const pivot_view& ipiv, const VB& B, const int* info,
           const char* what) {
  constexpr bool lu = K == k::solve_kind::getrs_n || K == k::solve_kind::getrs_t;
  constexpr auto shape = k::tuned(lu ? k::fast_op::getrs : k::fast_op::potrs,
                                  sizeof(typename VB::value_type), VA::static_rows);
  solve_with<shape, K>(stream, A, ipiv, B, info, what);
}

/// A small square factor and an n x NRHS right-hand side of the same type, NRHS <= 32, n at
/// least where the fast kernel measured faster than the generic one (tuning.hpp).
template <k::fast_op Op, class VA, class VB>
concept small_solve = k::small_square<VA> && k::fixed_view<VB> &&
                      std::is_same_v<typename VA::value_type, typename VB::value_type> &&
                      VB::static_rows == VA::static_rows && VB::static_cols <= 32 &&
                      VA::static_rows >= k::solve_fast_min_n(Op, int(sizeof(typename VA::value_type)));

/// The gemm kernel for op(A) op(B) at launch shape S (tuning.hpp's, or others:
/// bench/gpu/sweep_part.cu): S.per_matrix, one thread per matrix; otherwise the tiled kernel.
template <k::launch_shape S, bool TA, bool TB, class T, class VA, class VB, class VC>
bool gemm_with(CUstream_st* stream, T alpha, const VA& A, const VB& B, T beta, const VC& C) {
  constexpr int M = VC::static_rows, N = VC::static_cols;
  constexpr int MA = TA ? VA::static_cols : VA::static_rows, KA = TA ? VA::static_rows : VA::static_cols;
  constexpr int KB = TB ? VB::static_cols : VB::static_rows, NB = TB ? VB::static_rows : VB::static_cols;
  if constexpr (MA != M || NB != N || KA != KB) {
    return false;  // never called: the front end checked the shapes
  } else if constexpr (S.per_matrix) {
    k::gemm_thread_kernel<T, M, N, KA, TA, TB, S.threads>
        <<<k::grid_for(C.count(), S.threads), S.threads, 0, stream>>>(k::at_of(A), k::at_of(B), k::at_of(C),
                                                                     C.count(), alpha, beta);
    check_launch("tinybatch::cuda gemm (fast, one thread per matrix)");
    return true;
  } else {
    constexpr int K = KA, w = k::seg_width(M);
    constexpr int bp = k::row_pitch<T>(N), ma = k::gemm_a_pitch(M, TA);
    constexpr int bytes = int(sizeof(T)) * (k::tile_stride(ma * K, w) + k::vec_stride<T>(K * bp));
    constexpr int threads = k::fit_threads(S.threads, w, bytes);
    k::gemm_kernel<T, M, N, K, TA, TB, threads, S.min_blocks, S.packed>
        <<<k::grid_for(C.count(), threads / w), threads, 0, stream>>>(
            k::at_of(A), k::at_of(B), k::at_of(C), C.count(), alpha, beta);
    check_launch("tinybatch::cuda gemm (fast)");
    return true;
  }
}

template <bool TA, bool TB, class T, class VA, class VB, class VC>
bool gemm_as(CUstream_st* stream, T alpha, const VA& A, const VB& B, T beta, const VC& C) {
  constexpr int M = VC::static_rows, N = VC::static_cols, K = TA ? VA::static_rows : VA::static_cols;
  constexpr int n = M > N ? (M > K ? M : K) : (N > K ? N : K);  // the largest dimension
  return gemm_with<k::tuned(k::fast_op::gemm, sizeof(T), n), TA, TB>(stream, alpha, A, B, beta, C);
}
}  // namespace detail_fast

/// The fast solves take every call on these views: the backend then does not instantiate
/// its generic kernel for them (fully unrolled reference loops: most of the compile time).
template <class VA, class VB>
inline constexpr bool getrs_always = detail_fast::small_solve<k::fast_op::getrs, VA, VB>;
template <class VA, class VB>
inline constexpr bool potrs_always = detail_fast::small_solve<k::fast_op::potrs, VA, VB>;

template <class VA, class VB>
  requires detail_fast::small_solve<k::fast_op::getrs, VA, VB>
bool getrs(CUstream_st* stream, op t, const VA& A, const pivot_view& ipiv, const VB& B, const int* info) {
  if (t == op::no_trans)
    detail_fast::solve<k::solve_kind::getrs_n>(stream, A, ipiv, B, info, "tinybatch::cuda getrs (fast)");
  else  // trans and conj_trans (real types)
    detail_fast::solve<k::solve_kind::getrs_t>(stream, A, ipiv, B, info, "tinybatch::cuda getrs (fast)");
  return true;
}

template <class VA, class VB>
  requires detail_fast::small_solve<k::fast_op::potrs, VA, VB>
bool potrs(CUstream_st* stream, uplo u, const VA& A, const VB& B, const int* info) {
  if (u == uplo::upper)
    detail_fast::solve<k::solve_kind::potrs_u>(stream, A, pivot_view{}, B, info, "tinybatch::cuda potrs (fast)");
  else
    detail_fast::solve<k::solve_kind::potrs_l>(stream, A, pivot_view{}, B, info, "tinybatch::cuda potrs (fast)");
  return true;
}

template <class T, k::fixed_view VA, k::fixed_view VB, k::fixed_view VC>
  requires(std::is_same_v<typename VA::value_type, T> && std::is_same_v<typename VB::value_type, T> &&
           std::is_same_v<typename VC::value_type, T> && VA::static_rows <= 32 &&
           VA::static_cols <= 32 && VB::static_rows <= 32 && VB::static_cols <= 32 &&
           VC::static_rows <= 32 && VC::static_cols <= 32)
bool gemm(CUstream_st* stream, op ta, op tb, T alpha, const VA& A, const VB& B, T beta, const VC& C) {
  const bool tA = ta != op::no_trans, tB = tb != op::no_trans;
  if (!tA && !tB) return detail_fast::gemm_as<false, false>(stream, alpha, A, B, beta, C);
  if (!tA && tB) return detail_fast::gemm_as<false, true>(stream, alpha, A, B, beta, C);
  if (tA && !tB) return detail_fast::gemm_as<true, false>(stream, alpha, A, B, beta, C);
  return detail_fast::gemm_as<true, true>(stream, alpha, A, B, beta, C);
}

}  // namespace tinybatch::cuda::fast
