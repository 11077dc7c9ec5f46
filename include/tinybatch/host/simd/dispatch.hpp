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
inline bool getrs(const auto&...) { return false; }
inline bool potrs(const auto&...) { return false; }
inline bool trsm(const auto&...) { return false; }
inline bool getri(const auto&...) { return false; }
inline bool inverse(const auto&...) { return false; }
}  // namespace tinybatch::detail::simd

#else

#include <type_traits>

#include "../../core/enums.hpp"
#include "../../core/pivots.hpp"
#include "../../core/views.hpp"
#include "../../policy.hpp"
#include "../ranges.hpp"
#include "../tuning.hpp"
#include "../compact/staged.hpp"
#include "../compiled.hpp"
#include "gemm.hpp"
#include "solve.hpp"

namespace tinybatch::detail::simd {

template <class V>
concept fixed_small_view = V::uniform && V::static_rows != dynamic && V::static_cols != dynamic &&
                           V::static_rows <= 32 && V::static_cols <= 32 &&
                           (std::is_same_v<typename V::value_type, float> ||
                            std::is_same_v<typename V::value_type, double>);

/// `kernels::simd` always takes the SIMD kernel; `kernels::automatic` only where it is the
/// faster one (ByDefault, from the table in host/tuning.hpp).
template <class Policy, bool ByDefault, class... V>
inline constexpr bool applies =
    (std::is_same_v<typename Policy::kernels, kernels::simd> ||
     (ByDefault && std::is_same_v<typename Policy::kernels, kernels::automatic>)) &&
    (fixed_small_view<V> && ...);

/// The staged kernels see a policy only for its threads: every host policy reaches them as
/// one type, `par` with its team (`seq`: a team of one, which opens no OpenMP region), so that
/// `seq` and `par`, `kernels::automatic` and `kernels::simd` calls of one size share one
/// instantiation (a second policy type compiled every kernel again: test_simd_getrf of the
/// few set 36.9 -> 26.6 s at -O2 on the 2-core EPYC VM).
template <class K>
constexpr parallel_policy<kernels::simd> canonical(const sequential_policy<K>&) {
  return {1};
}
template <class K>
constexpr parallel_policy<kernels::simd> canonical(const parallel_policy<K>& p) {
  return {p.threads};
}

/// Whether a call goes to the compiled kernel library (host/compiled.hpp): run-time extents,
/// float or double, a policy that runs the SIMD kernels, a program that links the library.
template <class Policy, class... V>
inline constexpr bool runs_compiled =
    TINYBATCH_USES_KERNEL_LIBRARY &&
    (std::is_same_v<typename Policy::kernels, kernels::simd> ||
     std::is_same_v<typename Policy::kernels, kernels::automatic>) &&
    ((V::uniform && (V::static_rows == dynamic || V::static_cols == dynamic) &&
      (std::is_same_v<typename V::value_type, float> || std::is_same_v<typename V::value_type, double>)) &&
     ...);

/// The team a call asks for: 1 for `seq`, `threads` of `par` (0: OpenMP's default).
template <class K>
constexpr int team(const sequential_policy<K>&) {
  return 1;
}
template <class K>
constexpr int team(const parallel_policy<K>& p) {
  return p.threads;
}

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
      // Prefetching and streaming stores (gemm.hpp) where the call outgrows the last-level cache.
      const std::size_t footprint = std::size_t(C.count()) * sizeof(T) * std::size_t(M * K + K * N + M * N);
      const bool streaming = tuning::streams(footprint);
      return run(p, C.count(), [&](isa s, index_t k0, index_t k1) {
        gemm_range<M, N, K, TA>(s, tB, alpha, a, b, beta, c, k0, k1, streaming);
      });
    };
    return ta == op::no_trans ? go(std::false_type{}) : go(std::true_type{});
  } else {
    return false;
  }
}

// The factorizations and solves run the compact lane kernels on staged groups of the
// ordinary layout (host/compact/staged.hpp).
namespace st = compact::staged;

template <class P, class VA>
bool getrf(const P& p, const VA& A, const pivot_view& ipiv, int* info) {
  constexpr int M = VA::static_rows, N = VA::static_cols;
  if constexpr (runs_compiled<P, VA>)
    return compiled::getrf(team(p), starts_of(A), A.rows(), A.cols(), A.count(), ipiv, info);
  else if constexpr (applies<P, tuning::staged<typename VA::value_type>(tuning::op::getrf, M < N ? N : M), VA>)
    return st::getrf<M, N>(canonical(p), starts_of(A), A.count(), ipiv, info);
  else
    return false;
}

template <class P, class VA>
bool potrf(const P& p, uplo ul, const VA& A, int* info) {
  constexpr int N = VA::static_rows;
  if constexpr (runs_compiled<P, VA>) {
    return A.rows() == A.cols() && compiled::potrf(team(p), ul == uplo::lower, starts_of(A), A.rows(), A.count(), info);
  } else if constexpr (applies<P, tuning::staged<typename VA::value_type>(tuning::op::potrf, N), VA>) {
    const auto a = starts_of(A);
    return ul == uplo::lower ? st::potrf<N, true>(canonical(p), a, A.count(), info)
                             : st::potrf<N, false>(canonical(p), a, A.count(), info);
  } else {
    return false;
  }
}

/// Whether a direct solve of `count` matrices outgrows the last-level cache (factors and
/// right-hand sides; host/simd/solve.hpp solve_range then takes one matrix at a time).
template <class T, int N, int NRHS>
bool solve_streams(index_t count) {
  return tuning::streams(std::size_t(count) * sizeof(T) * std::size_t(N * N + N * NRHS));
}

template <class P, class VA, class VB>
bool getrs(const P& p, op t, const VA& A, const pivot_view& ipiv, const VB& B, const int* info) {
  constexpr int N = VA::static_rows, NRHS = VB::static_cols;
  using T = typename VA::value_type;
  // Direct (host/simd/solve.hpp) or staged, per transpose: only the kernels taken are built.
  constexpr bool dn = tuning::direct<T>(tuning::op::getrs, N), dt = tuning::direct<T>(tuning::op::getrs, N, true);
  if constexpr (runs_compiled<P, VA, VB>) {
    return compiled::getrs(team(p), t != op::no_trans, starts_of(A), ipiv, starts_of(B), A.rows(), B.cols(), B.count(),
                           info);
  } else if constexpr (applies<P, tuning::staged<T>(tuning::op::getrs, N) || dn || dt, VA, VB>) {
    const auto a = starts_of(A), b = starts_of(B);
    const bool streaming = solve_streams<T, N, NRHS>(B.count());
    using K = direct::solve_kind;
    if (t == op::no_trans) {
      if constexpr (dn)
        return run(p, B.count(), [&](isa s, index_t k0, index_t k1) {
          direct::solve_range<N, NRHS, K::getrs_n>(s, a, ipiv, b, info, k0, k1, streaming);
        });
      else
        return st::getrs<N, NRHS, false>(canonical(p), a, ipiv, b, B.count(), info);
    }
    if constexpr (dt)
      return run(p, B.count(), [&](isa s, index_t k0, index_t k1) {
        direct::solve_range<N, NRHS, K::getrs_t>(s, a, ipiv, b, info, k0, k1, streaming);
      });
    else
      return st::getrs<N, NRHS, true>(canonical(p), a, ipiv, b, B.count(), info);
  } else {
    return false;
  }
}

template <class P, class VA, class VB>
bool potrs(const P& p, uplo ul, const VA& A, const VB& B, const int* info) {
  constexpr int N = VA::static_rows, NRHS = VB::static_cols;
  using T = typename VA::value_type;
  constexpr bool d = tuning::direct<T>(tuning::op::potrs, N);
  if constexpr (runs_compiled<P, VA, VB>) {
    return compiled::potrs(team(p), ul == uplo::lower, starts_of(A), starts_of(B), A.rows(), B.cols(), B.count(), info);
  } else if constexpr (applies<P, tuning::staged<T>(tuning::op::potrs, N) || d, VA, VB>) {
    const auto a = starts_of(A), b = starts_of(B);
    if constexpr (d) {
      const bool streaming = solve_streams<T, N, NRHS>(B.count());
      return run(p, B.count(), [&](isa s, index_t k0, index_t k1) {
        using K = direct::solve_kind;
        ul == uplo::lower ? direct::solve_range<N, NRHS, K::potrs_lower>(s, a, {}, b, info, k0, k1, streaming)
                          : direct::solve_range<N, NRHS, K::potrs_upper>(s, a, {}, b, info, k0, k1, streaming);
      });
    } else {
      return ul == uplo::lower ? st::potrs<N, NRHS, true>(canonical(p), a, b, B.count(), info)
                               : st::potrs<N, NRHS, false>(canonical(p), a, b, B.count(), info);
    }
  } else {
    return false;
  }
}

template <class P, class T, class VA, class VB>
bool trsm(const P& p, side sd, uplo ul, op t, diag dg, T alpha, const VA& A, const VB& B) {
  constexpr int M = VB::static_rows, N = VB::static_cols;
  if constexpr (applies<P, tuning::staged<T>(tuning::op::trsm, M < N ? N : M), VA, VB>) {
    const auto a = starts_of(A), b = starts_of(B);
    bool done = false;
    auto b2 = [](bool x, auto f) { x ? f(std::true_type{}) : f(std::false_type{}); };
    b2(sd == side::left, [&](auto L) {
      // The front end checked that A is K x K; only that side's shape is instantiated.
      if constexpr ((decltype(L)::value ? M : N) == VA::static_rows) {
        b2(ul == uplo::lower, [&](auto Lo) {
          b2(t != op::no_trans, [&](auto Tr) {
            b2(dg == diag::unit, [&](auto U) {
              done = st::trsm<M, N, decltype(L)::value, decltype(Lo)::value, decltype(Tr)::value,
                              decltype(U)::value>(canonical(p), alpha, a, b, B.count());
            });
          });
        });
      }
    });
    return done;
  } else {
    return false;
  }
}

template <class P, class VA>
bool getri(const P& p, const VA& A, const pivot_view& ipiv, int* info) {
  constexpr int N = VA::static_rows;
  if constexpr (applies<P, tuning::staged<typename VA::value_type>(tuning::op::getri, N), VA>)
    return st::getri<N>(canonical(p), starts_of(A), ipiv, A.count(), info);
  else
    return false;
}

template <class P, class VA, class VX>
bool inverse(const P& p, const VA& A, const VX& X, int* info) {
  constexpr int N = VA::static_rows;
  if constexpr (applies<P, tuning::staged<typename VA::value_type>(tuning::op::inverse, N), VA, VX>)
    return st::inverse<N>(canonical(p), starts_of(A), starts_of(X), A.count(), info);
  else
    return false;
}

}  // namespace tinybatch::detail::simd

#endif  // TINYBATCH_HOST_SIMD
