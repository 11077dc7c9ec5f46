// Execution policies: the first argument of every front-end call, and the only thing that
// decides which backend runs it. Tuning knobs are template parameters with defaults.
#pragma once

#include <type_traits>

namespace tinybatch {

/// Which kernels a backend may use. `automatic` lets the backend pick its fastest kernel for
/// the sizes at hand; `reference` forces the generic reference loops (the test oracle of
/// every fast kernel).
namespace kernels {
struct automatic {};
struct reference {};
/// The host SIMD kernels wherever one exists, also where `automatic` does not pick it
/// because it measured slower than the reference (tests and benchmarks of those kernels).
struct simd {};

/// The GPU's blocked Cholesky (orders beyond the register kernels, and every variable-size
/// batch): how idle work leaves and when each matrix of a variable-size batch starts.
/// classic: thread blocks with nothing to do leave; aggressive: idle warps of live blocks
/// leave too. greedy: every matrix starts at the first panel step; lazy: each starts so
/// that all finish at the last. inclusive: one launch for the whole factorization instead
/// of one per panel. `automatic` uses blocked<> (the measured best).
enum class early_exit { classic, aggressive };
enum class start { greedy, lazy };
template <early_exit E = early_exit::aggressive, start S = start::lazy, bool Inclusive = false>
struct blocked {
  static constexpr early_exit early = E;
  static constexpr start when = S;
  static constexpr bool inclusive = Inclusive;
};
}  // namespace kernels

/// One host thread, matrices one after another.
template <class Kernels = kernels::automatic>
struct sequential_policy {
  using kernels = Kernels;
};

/// Host threads (OpenMP) across the matrices of the batch. threads == 0: OpenMP's default.
/// A call too small to be worth a team's fork and join runs on the calling thread (under
/// 24 KiB + 2 KiB per thread of a factorization's operands, more for the solves and gemm:
/// host/tuning.hpp parallel_min_bytes, a run-time value). Without OpenMP at compile time it
/// runs sequentially.
template <class Kernels = kernels::automatic>
struct parallel_policy {
  using kernels = Kernels;
  int threads = 0;
};

inline constexpr sequential_policy<> seq{};
inline constexpr parallel_policy<> par{};

}  // namespace tinybatch

// cudaStream_t is CUstream_st*: declaring the struct lets CUDA policies be built and passed
// around in translation units that do not include the CUDA headers.
struct CUstream_st;

namespace tinybatch::cuda {

/// Runs on the current CUDA device, asynchronously on `stream` (0: the legacy default stream).
/// The batches, pivots and info arrays passed with it must be device-accessible.
template <class Kernels = kernels::automatic>
struct policy {
  using kernels = Kernels;
  CUstream_st* stream = nullptr;
};

/// cuda::on(stream): a CUDA policy on that stream.
inline policy<> on(CUstream_st* stream) { return policy<>{stream}; }

}  // namespace tinybatch::cuda

namespace tinybatch {

template <class P>
struct is_host_policy : std::false_type {};
template <class K>
struct is_host_policy<sequential_policy<K>> : std::true_type {};
template <class K>
struct is_host_policy<parallel_policy<K>> : std::true_type {};

template <class P>
struct is_cuda_policy : std::false_type {};
template <class K>
struct is_cuda_policy<cuda::policy<K>> : std::true_type {};

template <class P>
concept execution_policy =
    is_host_policy<std::remove_cvref_t<P>>::value || is_cuda_policy<std::remove_cvref_t<P>>::value;

namespace detail {
template <class>
inline constexpr bool always_false = false;

/// backend<Policy> holds one static function per operation. Host policies get the host
/// backend (host/backend.hpp); the CUDA policy's lives in cuda/backend.cuh.
template <class Policy>
struct backend {
  static_assert(always_false<Policy>,
                "tinybatch: no backend for this policy here. A CUDA policy needs the calling "
                "translation unit compiled by nvcc with <tinybatch/cuda.hpp> included.");
};
}  // namespace detail

}  // namespace tinybatch
