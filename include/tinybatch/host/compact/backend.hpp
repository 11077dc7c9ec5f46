// Host backend of the compact layout: splits the groups of a compact batch over the threads
// (one contiguous range each), picks the lanes once per range (AVX-512 or AVX2 vectors, or
// scalar lanes where there is no SIMD and for kernels::reference), and runs the lane kernels
// of kernels.inc on every W lanes of every group; the kernels write the per-matrix outputs
// (ipiv, info) of the lanes that hold matrices.
#pragma once

#include <cstddef>
#include <type_traits>

#include "../../core/compact.hpp"
#include "../../core/pivots.hpp"
#include "../../policy.hpp"
#include "../ranges.hpp"
#include "../tuning.hpp"
#include "kernels.hpp"

namespace tinybatch::detail::compact {

/// Calls f(lanes<P, Ops>{}) from inside a function compiled for the chosen instruction set.
template <class T, class Kernels, class F>
void with_lanes(F&& f) {
#if TINYBATCH_HOST_SIMD
  if constexpr (!std::is_same_v<Kernels, kernels::reference>) {
    const simd::isa s = simd::active_isa();
    if constexpr (simd::avx512_built) {
      if (s == simd::isa::avx512) {
        simd::run_avx512(f, lanes<simd::pack<T, simd::lanes<simd::avx512, T>>, avx512::ops>{});
        return;
      }
    }
    if (s == simd::isa::avx2) {
      simd::run_avx2(f, lanes<simd::pack<T, simd::lanes<simd::avx2, T>>, avx2::ops>{});
      return;
    }
  }
#endif
  f(lanes<T, generic::ops>{});
}

/// body(lanes, g, l0, k0) for every W lanes of every group of a batch of `count` matrices:
/// g the group, l0 the offset of the lanes in it, k0 the index of their first matrix.
/// after(lanes) runs once per thread, after its range (a fence for streaming stores).
template <class T, class Policy, class Body, class After>
void for_lanes(const Policy& policy, index_t count, Body&& body, After&& after) {
  constexpr int G = compact_width<T>;
  const index_t groups = (count + G - 1) / G;
  for_each_range(policy, groups, [&](index_t g0, index_t g1) {
    with_lanes<T, typename Policy::kernels>([&](auto tag) {
      constexpr int W = lane_traits<typename decltype(tag)::type>::width;
      for (index_t g = g0; g < g1; ++g)
        for (int l0 = 0; l0 < G; l0 += W) body(tag, g, l0, g * G + l0);
      after(tag);
    });
  });
}
template <class T, class Policy, class Body>
void for_lanes(const Policy& policy, index_t count, Body&& body) {
  for_lanes<T>(policy, count, body, [](auto) {});
}

/// Software prefetching of the operands' groups ahead of the one being computed: every line
/// of the group at least `prefetch_ahead_bytes` after the current one, when its first lanes
/// start (Write: for operands written). A group is one contiguous run, but the kernels walk
/// it by columns and panels, not in address order, and the hardware prefetchers stopped
/// following at the 4 KiB page boundaries inside it. Streaming potrf, double, 2 threads,
/// 256 MiB, GB/s without / with (development program, same run): n = 12 40 - 52 / 80 - 124,
/// 16 44 - 65 / 72 - 100, 24 48 - 65 / 70 - 82, 32 53 - 67 / 66 - 76.
///
/// trsm and gemm prefetch only where the
/// call's groups together take up to `prefetch_solve_max_bytes` (the factorizations at any
/// size): a solve does O(n^2) work on
/// its group and sweeps it in address order, which the hardware prefetchers follow, and a
/// prefetched group of 16 - 64 KiB pushes the current one out of L1 (gemm: not measured).
/// Compact potrs / getrs, double, GB/s without / with, same run:
/// n = 8 47 - 49 / 60 - 84 and 24 - 24 / 48 - 59; 16 63 - 64 / 55 - 63 and 43 - 45 / 39 - 42;
/// 24 60 - 67 / 43 - 48 and 46 - 54 / 41 - 44; 32 57 - 68 / 43 - 45 and 40 - 52 / 38 - 42.
///
/// getrs and potrs prefetch up to `prefetch_getrs_potrs_max_bytes` of lines per group, and
/// potrs only its triangle's lines (`prefetch_triangle`), which made them faster in streaming
/// at n = 12, 16 where the limit above left them to the hardware
/// (256 MiB, 2 threads, ns per matrix, getrs / potrs double; the Xeon AVX-512, then the Zen 3 VM):
/// n = 12 83 - 87 / 52 - 57 -> 61 - 68 / 41 - 43 and 93 - 96 / 64 - 70 -> 71 - 85 / 60 - 73;
/// n = 16 134 - 138 / 85 - 91 -> 107 - 113 / 70 - 75 and 142 - 155 / 104 - 108 -> 131 - 149 /
/// 97 - 113; the triangle alone at n = 8 potrs 25 - 26 -> 18 - 20 on the Xeon. Beyond the
/// limit (getrs from n = 24, potrs from 24: 19 KiB of triangle) the Xeon still gained up to 1.1x
/// but the VM, with 32 KiB of L1 to the Xeon's 48, lost up to 1.15x
/// (`bench/results/gpu-host-xeon/cpu-6fbd9ef-dev-solve-prefetch.txt`).
inline constexpr std::size_t prefetch_ahead_bytes = 4096;
/// The streaming compact inverse writes X by non-temporal stores from an L1 buffer up to
/// this many bytes of group (double n <= 11, float n <= 11 with AVX-512): above, the inverse
/// is bound by its arithmetic (O(n^3) on O(n^2) bytes), not by X's extra read, and the
/// buffer would crowd L1.
inline constexpr std::size_t inverse_stream_max_bytes = 8192;
inline constexpr std::size_t prefetch_solve_max_bytes = 8192;
inline constexpr std::size_t prefetch_getrs_potrs_max_bytes = 18432;
/// From this order a streaming compact getrs (not transposed; its looped sweeps, n > 8)
/// prefetches each column's upper part of the group's factor as its forward sweep passes the
/// column (compact_getrs_on's touch), so that A arrives in address order instead of the
/// backward sweep's, with the reciprocals of the diagonal formed in the same sweep. Zen 3 VMs,
/// 256 MiB, 2 threads, ns per matrix. A VM of 15 GB/s copy, 8 rounds,
/// medians, before / reciprocals in the sweep, no touch / and the touch from 12: double n = 12
/// 146 / 128 / 102, 16 247 / 242 / 217, 24 498 / 472 / 456, 32 775 / 849 / 799; float 12
/// 75 / 68 / 58, 16 131 / 116 / 105, 24 and 32 even within this VM's noise
/// (`bench/results/zen3-vm/cpu-e03dd38-zen3-dev-getrs-fold.txt`). An earlier Zen 3 VM, the
/// touch alone: double 32 431 - 446 -> 389 - 422, float 32 272 - 314 -> 221 - 243, a loss at
/// 12 (67 - 84 -> 82 - 103) (`bench/results/zen3-vm/cpu-a327b3b-zen3-dev-getrs-touch.txt`).
inline constexpr int getrs_touch_min_order = 12;

/// Bytes of one group of M x N matrices of T.
template <class T, int M, int N>
constexpr std::size_t group_bytes() {
  return std::size_t(compact_view<T, M, N>::group_size) * sizeof(T);
}

/// The group at least prefetch_ahead_bytes after group g, when group g's first lanes start;
/// null where there is none.
template <class T, int M, int N>
inline __attribute__((always_inline)) const char* group_ahead(const compact_view<T, M, N>& v, index_t g, int l0) {
  constexpr std::size_t bytes = group_bytes<T, M, N>();
  constexpr index_t ahead = bytes >= prefetch_ahead_bytes ? 1 : index_t((prefetch_ahead_bytes + bytes - 1) / bytes);
  if (l0 != 0 || g + ahead >= v.groups()) return nullptr;
  return reinterpret_cast<const char*>(v.data() + (g + ahead) * compact_view<T, M, N>::group_size);
}

template <bool Write, class T, int M, int N>
inline __attribute__((always_inline)) void prefetch_group(const compact_view<T, M, N>& v, index_t g, int l0) {
  if (const char* p = group_ahead(v, g, l0))
    for (std::size_t o = 0; o < group_bytes<T, M, N>(); o += 64) __builtin_prefetch(p + o, Write, 3);
}

/// Prefetches only the lines of the next group's triangle (Lower: i >= j, else i <= j) of an
/// N x N operand read that way (potrs): a compact group holds one element per 64-byte line, so
/// the other triangle's lines would be fetched for nothing.
template <bool Lower, class T, int N>
inline __attribute__((always_inline)) void prefetch_triangle(const compact_view<T, N, N>& v, index_t g, int l0) {
  static_assert(compact_width<std::remove_const_t<T>> * sizeof(T) == 64, "one element per line");
  if (const char* p = group_ahead(v, g, l0))
    for (int j = 0; j < N; ++j)
      for (int i = Lower ? j : 0; i < (Lower ? N : j + 1); ++i) __builtin_prefetch(p + std::size_t(i + j * N) * 64, 0, 3);
}

#define TINYBATCH_LANES_OF(tag) \
  using P = typename decltype(tag)::type; \
  using Ops = typename decltype(tag)::ops

struct backend {
  template <class Policy, class VS, class T, int M, int N>
  static void to_compact(const Policy& policy0, const VS& src, const compact_view<T, M, N>& dst) {
    const auto& policy = fit_threads(policy0, simd::tuning::op::convert, dst.count(), 2 * matrix_bytes(dst));
    constexpr int G = compact_width<T>;
    const index_t count = dst.count();
    for_each_range(policy, dst.groups(), [&](index_t g0, index_t g1) {
      for (index_t g = g0; g < g1; ++g)
        for (int l = 0; l < G; ++l) {
          const index_t k = g * G + l;
          T* d = dst.data() + g * dst.group_size + l;
          if (k < count) {
            const auto a = src[k];
            for (int j = 0; j < N; ++j)
              for (int i = 0; i < M; ++i) d[(i + j * M) * G] = a(i, j);
          } else {  // padding: the identity, on which every kernel is harmless
            for (int j = 0; j < N; ++j)
              for (int i = 0; i < M; ++i) d[(i + j * M) * G] = i == j ? T(1) : T(0);
          }
        }
    });
  }

  template <class Policy, class T, int M, int N, class VD>
  static void from_compact(const Policy& policy0, const compact_view<const T, M, N>& src, const VD& dst) {
    const auto& policy = fit_threads(policy0, simd::tuning::op::convert, src.count(), 2 * matrix_bytes(src));
    constexpr int G = compact_width<T>;
    const index_t count = src.count();
    for_each_range(policy, src.groups(), [&](index_t g0, index_t g1) {
      for (index_t g = g0; g < g1; ++g)
        for (int l = 0; l < G && g * G + l < count; ++l) {
          const auto a = dst[g * G + l];
          const T* s = src.data() + g * src.group_size + l;
          for (int j = 0; j < N; ++j)
            for (int i = 0; i < M; ++i) a(i, j) = s[(i + j * M) * G];
        }
    });
  }

  template <class Policy, class T, int M, int N>
  static void getrf(const Policy& policy0, const compact_view<T, M, N>& A, const pivot_view& ipiv, int* info) {
    const auto& policy = fit_threads(policy0, simd::tuning::op::getrf, A.count(), matrix_bytes(A));
    constexpr int G = compact_width<T>;
    const index_t count = A.count();
    for_lanes<T>(policy, count, [&](auto tag, index_t g, int l0, index_t k0) {
      TINYBATCH_LANES_OF(tag);
      prefetch_group<true>(A, g, l0);
      Ops::template getrf<P, M, N, G>(A.data() + g * A.group_size + l0, ipiv, info, k0, count);
    });
  }

  template <class Policy, class T, int N, int NRHS>
  static void getrs(const Policy& policy0, op ta, const compact_view<const T, N, N>& A,
                    const pivot_view& ipiv, const compact_view<T, N, NRHS>& B) {
    const auto& policy = fit_threads(policy0, simd::tuning::op::getrs, B.count(), matrix_bytes(A, B));
    constexpr int G = compact_width<T>;
    const index_t count = B.count();
    const bool streaming =
        simd::tuning::streams(std::size_t(A.groups()) * (group_bytes<T, N, N>() + group_bytes<T, N, NRHS>()));
    auto go = [&](auto trans) {
      for_lanes<T>(policy, count, [&](auto tag, index_t g, int l0, index_t k0) {
        TINYBATCH_LANES_OF(tag);
        constexpr bool no_trans = !std::decay_t<decltype(trans)>::value;
        if constexpr (no_trans && N >= getrs_touch_min_order && lane_traits<P>::width > 1) {
          if (streaming) {
            prefetch_group<true>(B, g, l0);
            const T* ag = A.data() + g * A.group_size + l0;
            Ops::template getrs<P, N, NRHS, G, false>(ag, ipiv, B.data() + g * B.group_size + l0, k0, count,
                                                      l0 == 0 ? reinterpret_cast<const char*>(ag) : nullptr);
            return;
          }
        }
        if constexpr (group_bytes<T, N, N>() + group_bytes<T, N, NRHS>() <= prefetch_getrs_potrs_max_bytes) {
          prefetch_group<false>(A, g, l0);
          prefetch_group<true>(B, g, l0);
        }
        Ops::template getrs<P, N, NRHS, G, decltype(trans)::value>(
            A.data() + g * A.group_size + l0, ipiv, B.data() + g * B.group_size + l0, k0, count);
      });
    };
    if (ta == op::no_trans)
      go(std::false_type{});
    else
      go(std::true_type{});
  }

  template <class Policy, class T, int N>
  static void potrf(const Policy& policy0, uplo ul, const compact_view<T, N, N>& A, int* info) {
    const auto& policy = fit_threads(policy0, simd::tuning::op::potrf, A.count(), matrix_bytes(A));
    constexpr int G = compact_width<T>;
    const index_t count = A.count();
    auto go = [&](auto lower) {
      for_lanes<T>(policy, count, [&](auto tag, index_t g, int l0, index_t k0) {
        TINYBATCH_LANES_OF(tag);
        prefetch_group<true>(A, g, l0);
        Ops::template potrf<P, N, G, decltype(lower)::value>(A.data() + g * A.group_size + l0, info, k0, count);
      });
    };
    if (ul == uplo::lower)
      go(std::true_type{});
    else
      go(std::false_type{});
  }

  template <class Policy, class T, int N, int NRHS>
  static void potrs(const Policy& policy0, uplo ul, const compact_view<const T, N, N>& A,
                    const compact_view<T, N, NRHS>& B) {
    const auto& policy = fit_threads(policy0, simd::tuning::op::potrs, B.count(), matrix_bytes(A, B));
    constexpr int G = compact_width<T>;
    auto go = [&](auto lower) {
      for_lanes<T>(policy, B.count(), [&](auto tag, index_t g, int l0, index_t) {
        TINYBATCH_LANES_OF(tag);
        if constexpr (std::size_t(N) * (N + 1) / 2 * 64 + group_bytes<T, N, NRHS>() <= prefetch_getrs_potrs_max_bytes) {
          prefetch_triangle<decltype(lower)::value>(A, g, l0);
          prefetch_group<true>(B, g, l0);
        }
        Ops::template potrs<P, N, NRHS, G, decltype(lower)::value>(A.data() + g * A.group_size + l0,
                                                                   B.data() + g * B.group_size + l0);
      });
    };
    if (ul == uplo::lower)
      go(std::true_type{});
    else
      go(std::false_type{});
  }

  template <class Policy, class T, int AR, int AC, int M, int N>
  static void trsm(const Policy& policy0, side sd, uplo ul, op ta, diag dg, T alpha,
                   const compact_view<const T, AR, AC>& A, const compact_view<T, M, N>& B) {
    const auto& policy = fit_threads(policy0, simd::tuning::op::trsm, B.count(), matrix_bytes(A, B));
    constexpr int G = compact_width<T>;
    auto go = [&](auto left, auto lower, auto trans, auto unit) {
      for_lanes<T>(policy, B.count(), [&](auto tag, index_t g, int l0, index_t) {
        TINYBATCH_LANES_OF(tag);
        if constexpr (group_bytes<T, AR, AC>() + group_bytes<T, M, N>() <= prefetch_solve_max_bytes) {
          prefetch_group<false>(A, g, l0);
          prefetch_group<true>(B, g, l0);
        }
        Ops::template trsm<P, M, N, G, decltype(left)::value, decltype(lower)::value,
                           decltype(trans)::value, decltype(unit)::value>(
            alpha, A.data() + g * A.group_size + l0, B.data() + g * B.group_size + l0);
      });
    };
    auto b = [](bool x, auto f) { x ? f(std::true_type{}) : f(std::false_type{}); };
    b(sd == side::left, [&](auto s) {
      if constexpr ((decltype(s)::value ? M : N) == AR) {
        b(ul == uplo::lower, [&](auto u) {
          b(ta != op::no_trans, [&](auto t) { b(dg == diag::unit, [&](auto d) { go(s, u, t, d); }); });
        });
      }
    });
  }

  template <class Policy, class T, int M, int N, int AR, int AC, int BR, int BC>
  static void gemm(const Policy& policy0, op ta, op tb, T alpha, const compact_view<const T, AR, AC>& A,
                   const compact_view<const T, BR, BC>& B, T beta, const compact_view<T, M, N>& C) {
    const auto& policy = fit_threads(policy0, simd::tuning::op::gemm, C.count(), matrix_bytes(A, B, C));
    constexpr int G = compact_width<T>;
    auto go = [&](auto TA, auto TB) {
      constexpr bool tA = decltype(TA)::value, tB = decltype(TB)::value;
      constexpr int K = tA ? AR : AC;
      // Combinations whose shapes do not fit were refused by the front end.
      if constexpr ((tB ? BC : BR) == K && (tA ? AC : AR) == M && (tB ? BR : BC) == N) {
        for_lanes<T>(policy, C.count(), [&](auto tag, index_t g, int l0, index_t) {
          TINYBATCH_LANES_OF(tag);
          if constexpr (group_bytes<T, AR, AC>() + group_bytes<T, BR, BC>() + group_bytes<T, M, N>() <=
                        prefetch_solve_max_bytes) {
            prefetch_group<false>(A, g, l0);
            prefetch_group<false>(B, g, l0);
            prefetch_group<true>(C, g, l0);
          }
          Ops::template gemm<P, M, N, K, G, tA, tB>(alpha, A.data() + g * A.group_size + l0,
                                                    B.data() + g * B.group_size + l0, beta,
                                                    C.data() + g * C.group_size + l0);
        });
      }
    };
    auto b = [](bool x, auto f) { x ? f(std::true_type{}) : f(std::false_type{}); };
    b(ta != op::no_trans, [&](auto TA) { b(tb != op::no_trans, [&](auto TB) { go(TA, TB); }); });
  }

  /// X := inv(A) (getrf + getri on X, as reference::inverse): a singular lane keeps its LU.
  template <class Policy, class T, int N>
  static void inverse(const Policy& policy0, const compact_view<const T, N, N>& A,
                      const compact_view<T, N, N>& X, int* info) {
    const auto& policy = fit_threads(policy0, simd::tuning::op::inverse, X.count(), matrix_bytes(A, X));
    constexpr int G = compact_width<T>;
    const index_t count = X.count();
    // Streaming (inverse_stream_max_bytes): X by non-temporal stores where a group is one
    // vector per element (AVX-512; AVX2's half-line stores would not fill whole lines).
    const bool streaming = group_bytes<T, N, N>() <= inverse_stream_max_bytes &&
                           simd::tuning::streams(std::size_t(X.groups()) * 2 * group_bytes<T, N, N>());
    for_lanes<T>(
        policy, count,
        [&](auto tag, index_t g, int l0, index_t k0) {
          TINYBATCH_LANES_OF(tag);
          const T* a = A.data() + g * A.group_size + l0;
          T* x = X.data() + g * X.group_size + l0;
          prefetch_group<false>(A, g, l0);
          if constexpr (lane_traits<P>::width == G && sizeof(P) == 64 && group_bytes<T, N, N>() <= inverse_stream_max_bytes) {
            if (streaming) return Ops::template inverse_streaming<P, N, G>(a, x, info, k0, count);
          }
          prefetch_group<true>(X, g, l0);
          Ops::template inverse<P, N, G>(a, x, info, k0, count);
        },
        [&](auto tag) {
          if (streaming) decltype(tag)::ops::stream_fence();
        });
  }
};

#undef TINYBATCH_LANES_OF

}  // namespace tinybatch::detail::compact
