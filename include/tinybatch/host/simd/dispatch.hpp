// The host backend's fast path: for fixed sizes up to 32 and `kernels::automatic`, each
// operation runs its SIMD kernel, with the instruction set chosen once per call from the CPU
// (isa_cap() lowers it for tests) and the batch split into one contiguous range per thread.
// Every function returns false when it does not apply, and the backend then runs the
// reference kernels.
#pragma once

#include "arch.hpp"

#if !TINYBATCH_HOST_SIMD

namespace tinybatch::detail::simd {
// No SIMD kernels in this compilation (nvcc, another compiler or architecture): the backend
// always runs the reference.
inline bool gemm(const auto&...) { return false; }
inline bool getrf(const auto&...) { return false; }
inline bool potrf(const auto&...) { return false; }
}  // namespace tinybatch::detail::simd

#else

#include <type_traits>

#include "../../core/enums.hpp"
#include "../../core/pivots.hpp"
#include "../../core/views.hpp"
#include "../../policy.hpp"
#include "../ranges.hpp"
#include "gemm.hpp"
#include "getrf.hpp"
#include "potrf.hpp"

namespace tinybatch::detail::simd {

template <class V>
concept fixed_small_view = V::uniform && V::static_rows != dynamic && V::static_cols != dynamic &&
                           V::static_rows <= 32 && V::static_cols <= 32 &&
                           (std::is_same_v<typename V::value_type, float> ||
                            std::is_same_v<typename V::value_type, double>);

/// `kernels::simd` always takes the SIMD kernel; `kernels::automatic` only where it is the
/// faster one (ByDefault). Measured 2026-11-22 (one thread, 20000 matrices, double, ns per
/// matrix, SIMD vs reference): getrf n=2 41 vs 20, n=8 572 vs 423, n=32 10290 vs 6751;
/// potrf n=2 17 vs 5, n=8 250 vs 78, n=32 2291 vs 3410. So for now only gemm is taken by
/// default; getrf and potrf wait for the interleaved layout (issue 3).
template <class Policy, bool ByDefault, class... V>
inline constexpr bool applies =
    (std::is_same_v<typename Policy::kernels, kernels::simd> ||
     (ByDefault && std::is_same_v<typename Policy::kernels, kernels::automatic>)) &&
    (fixed_small_view<V> && ...);

/// Runs body(isa, k0, k1) over the batch with the active instruction set.
template <class Policy, class Body>
bool run(const Policy& policy, index_t count, Body&& body) {
  const isa s = active_isa();
  if (s == isa::none) return false;
  for_each_range(policy, count, [&](index_t k0, index_t k1) { body(s, k0, k1); });
  return true;
}

template <class P, class T, class VA, class VB, class VC>
bool gemm(const P& p, op ta, op tb, T alpha, const VA& A, const VB& B, T beta, const VC& C) {
  if constexpr (applies<P, true, VA, VB, VC>) {
    if (alpha == T(0)) return false;  // the BLAS reads neither A nor B then; rare, reference
    constexpr int M = VC::static_rows, N = VC::static_cols;
    const bool tB = tb != op::no_trans;
    auto go = [&](auto ta_c) {
      constexpr bool TA = decltype(ta_c)::value;
      constexpr int K = TA ? VA::static_rows : VA::static_cols;
      const auto a = starts_of(A), b = starts_of(B), c = starts_of(C);
      return run(p, C.count(), [&](isa s, index_t k0, index_t k1) {
        gemm_range<M, N, K, TA>(s, tB, alpha, a, b, beta, c, k0, k1);
      });
    };
    return ta == op::no_trans ? go(std::false_type{}) : go(std::true_type{});
  } else {
    return false;
  }
}

template <class P, class VA>
bool getrf(const P& p, const VA& A, const pivot_view& ipiv, int* info) {
  if constexpr (applies<P, false, VA>) {
    constexpr int M = VA::static_rows, N = VA::static_cols;
    const auto a = starts_of(A);
    return run(p, A.count(), [&](isa s, index_t k0, index_t k1) {
      getrf_range<M, N>(s, a, ipiv, info, k0, k1);
    });
  } else {
    return false;
  }
}

template <class P, class VA>
bool potrf(const P& p, uplo ul, const VA& A, int* info) {
  if constexpr (applies<P, false, VA>) {
    constexpr int N = VA::static_rows;
    if constexpr (VA::static_cols != N) {
      return false;
    } else {
      const auto a = starts_of(A);
      return run(p, A.count(), [&](isa s, index_t k0, index_t k1) {
        if (ul == uplo::lower)
          potrf_range<N, false>(s, a, info, k0, k1);
        else
          potrf_range<N, true>(s, a, info, k0, k1);
      });
    }
  } else {
    return false;
  }
}

}  // namespace tinybatch::detail::simd

#endif  // TINYBATCH_HOST_SIMD
