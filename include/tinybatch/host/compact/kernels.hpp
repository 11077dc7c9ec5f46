// Kernels on the compact layout (core/compact.hpp): each one is the reference kernel of
// reference/ written over a lane type P, which is either a vector of W lanes (one matrix per
// lane, W matrices at once) or the scalar T itself (W = 1: the portable path, and the path of
// kernels::reference). Every branch of the reference on a value becomes a compare and a blend,
// so all lanes run the same instructions; the order of the arithmetic is the reference's, so
// pivots and info agree with it to the last bit.
//
// Element (i, j) of the W matrices is the P at a + (i + j * M) * G, G the group width.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>  // vector square roots (kernels.inc)
#endif

#include "../../core/config.hpp"
#include "../../core/pivots.hpp"

#if defined(__GNUC__)
#define TINYBATCH_LANES_INLINE inline __attribute__((always_inline))
#define TINYBATCH_LANES_AI __attribute__((always_inline))
#else
#define TINYBATCH_LANES_INLINE inline
#define TINYBATCH_LANES_AI
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace tinybatch::detail::compact {
template <class P>
struct lane_traits {  // a vector extension type
  using scalar = std::remove_cvref_t<decltype(std::declval<P>()[0])>;
  static constexpr int width = int(sizeof(P) / sizeof(scalar));
};
template <>
struct lane_traits<float> {
  using scalar = float;
  static constexpr int width = 1;
};
template <>
struct lane_traits<double> {
  using scalar = double;
  static constexpr int width = 1;
};


/// A lane type and the kernels compiled for its instruction set (generic, avx2 or avx512 ops).
template <class P, class Ops>
struct lanes {
  using type = P;
  using ops = Ops;
};

}  // namespace tinybatch::detail::compact

// Whether this translation unit itself may fuse multiply-adds: the reference kernels then
// may too, and the factorizations' products need no barrier (see product() in kernels.inc).
// Read here, before a target pragma redefines __FMA__.
#if defined(__FMA__)
#define TINYBATCH_TU_HAS_FMA 1
#else
#define TINYBATCH_TU_HAS_FMA 0
#endif

namespace tinybatch::detail::compact::generic {
#include "kernels.inc"
}  // namespace tinybatch::detail::compact::generic

#include "../simd/arch.hpp"

#if TINYBATCH_HOST_SIMD
// `#pragma GCC target` does not expand macros; _Pragma through two levels does.
#define TINYBATCH_DO_PRAGMA(x) _Pragma(#x)
#define TINYBATCH_TARGET_PRAGMA(t) TINYBATCH_DO_PRAGMA(GCC target(t))
#pragma GCC push_options
TINYBATCH_TARGET_PRAGMA(TINYBATCH_AVX2_TARGET)
namespace tinybatch::detail::compact::avx2 {
#include "kernels.inc"
}  // namespace tinybatch::detail::compact::avx2
#pragma GCC pop_options

#pragma GCC push_options
TINYBATCH_TARGET_PRAGMA(TINYBATCH_AVX512_TARGET)
namespace tinybatch::detail::compact::avx512 {
#include "kernels.inc"
}  // namespace tinybatch::detail::compact::avx512
#pragma GCC pop_options
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
