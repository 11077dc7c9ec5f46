// Instruction sets of the host SIMD kernels and the one value type they are written over.
//
// Why not xsimd: xsimd 8.1 compiles a batch<T, avx512f> only when the whole translation unit
// is built with -mavx512f (its headers test __AVX512F__), and its run-time dispatch expects one
// object file per instruction set. tinybatch is header-only and must run on a generic x86-64
// build, so it cannot use that. Instead every kernel is a template over an architecture tag,
// written with the compiler's vector extensions (`pack<T, W>`: +, -, *, /, comparisons and
// `?:` blends lane by lane), and force-inlined into one small entry function per instruction
// set that carries __attribute__((target(...))): the code generator then sees the whole kernel
// with that instruction set enabled and nothing outside the entry function does. No intrinsic
// is used (an intrinsic would need the target attribute on every function that calls it).
#pragma once

#include "../../core/config.hpp"

// GCC and Clang on x86-64, not nvcc: CUDA translation units use the reference kernels on
// the host side (the CUDA backend is where their speed comes from).
#if !defined(TINYBATCH_NO_HOST_SIMD) && !defined(__CUDACC__) && defined(__x86_64__) && \
    (defined(__GNUC__) || defined(__clang__))
#define TINYBATCH_HOST_SIMD 1
#else
#define TINYBATCH_HOST_SIMD 0
#endif

// TINYBATCH_NO_AVX512: build the AVX2 kernels only. Every kernel is otherwise generated twice,
// and the AVX-512 copy is dead code on CPUs without it (AMD before Zen 4, most laptops);
// defining this before the first tinybatch include roughly halves the compile time of a
// translation unit that instantiates many kernels (docs/cpu-backend.md, Instruction sets). The
// choice must be the same in every translation unit of a program (one definition rule).
#if TINYBATCH_HOST_SIMD && !defined(TINYBATCH_NO_AVX512)
#define TINYBATCH_HOST_AVX512 1
#else
#define TINYBATCH_HOST_AVX512 0
#endif

#if TINYBATCH_HOST_SIMD

#include <atomic>
#include <cstring>
#include <type_traits>

// Vector values are passed between always-inline functions only; the ABI note GCC attaches
// to 32- and 64-byte vector arguments in functions without AVX does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

#define TINYBATCH_SIMD_INLINE inline __attribute__((always_inline))
// For the lambdas the kernels pass to unroll<>: GCC at -O2 left them as calls inside the
// flattened entry points (the direct solves' column sweeps, 2.5 - 4x slower than at -O3).
// Not under AddressSanitizer, where inlining them cost compile time that the tests cannot
// afford (direct potrs, double, n = 8, -O1: 13 -> 44 s) and speed does not matter.
#if defined(__SANITIZE_ADDRESS__)
#define TINYBATCH_SIMD_AI
#else
#define TINYBATCH_SIMD_AI __attribute__((always_inline))
#endif

namespace tinybatch::detail::simd {

/// Instruction set tags: the register width in bytes and how many vector registers there are
/// (the register blocking of every kernel is sized from these two numbers).
struct avx2 {
  static constexpr int bytes = 32;
  static constexpr int registers = 16;
  static constexpr const char* name = "avx2";
};
struct avx512 {
  static constexpr int bytes = 64;
  static constexpr int registers = 32;
  static constexpr const char* name = "avx512";
};

/// Run-time choice, ordered: a value allows every set at or below it.
enum class isa : int { none = 0, avx2 = 1, avx512 = 2 };

/// Whether this build has the AVX-512 kernels (TINYBATCH_NO_AVX512 above).
inline constexpr bool avx512_built = TINYBATCH_HOST_AVX512;

inline isa detect_isa() {
  __builtin_cpu_init();
  if (avx512_built && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"))
    return isa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return isa::avx2;
  return isa::none;
}

/// The best set this CPU runs, detected once.
inline isa best_isa() {
  static const isa best = detect_isa();
  return best;
}

/// Test hook: caps the set the kernels may use (isa::none forces the reference path).
inline std::atomic<int>& isa_cap() {
  static std::atomic<int> cap{int(isa::avx512)};
  return cap;
}
inline void limit_isa(isa cap) { isa_cap().store(int(cap)); }

inline isa active_isa() {
  const int cap = isa_cap().load(std::memory_order_relaxed);
  return int(best_isa()) < cap ? best_isa() : isa(cap);
}

// pack<T, W>: W lanes of T in one register (W * sizeof(T) <= 64 bytes).
template <class T, int W>
struct pack_type;
#define TINYBATCH_PACK(T, W)                                            \
  template <>                                                           \
  struct pack_type<T, W> {                                              \
    typedef T type __attribute__((vector_size(W * sizeof(T))));         \
  };
TINYBATCH_PACK(double, 1)
TINYBATCH_PACK(double, 2)
TINYBATCH_PACK(double, 4)
TINYBATCH_PACK(double, 8)
TINYBATCH_PACK(float, 1)
TINYBATCH_PACK(float, 2)
TINYBATCH_PACK(float, 4)
TINYBATCH_PACK(float, 8)
TINYBATCH_PACK(float, 16)
#undef TINYBATCH_PACK

template <class T, int W>
using pack = typename pack_type<T, W>::type;

/// Lanes of T in one full register of the set.
template <class Arch, class T>
inline constexpr int lanes = Arch::bytes / int(sizeof(T));

constexpr int bit_floor(int x) {
  int p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}
constexpr int bit_ceil(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

/// A column of M elements as packs of width W (a power of two, W <= M, so the last pack can
/// end at row M - 1 and overlap the one before it instead of reading past the column).
template <class Arch, class T, int M>
struct column_tiling {
  static constexpr int width = lanes<Arch, T> < bit_floor(M) ? lanes<Arch, T> : bit_floor(M);
  static constexpr int count = (M + width - 1) / width;
  static constexpr int offset(int v) { return v * width < M - width ? v * width : M - width; }
};

// Unaligned loads and stores: user matrices have any leading dimension and alignment.
template <int W, class T>
TINYBATCH_SIMD_INLINE pack<T, W> load(const T* p) {
  pack<T, W> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int W, class T>
TINYBATCH_SIMD_INLINE void store(T* p, const pack<T, W>& v) {
  std::memcpy(p, &v, sizeof v);
}
/// A non-temporal ("streaming") store of a whole pack of 16, 32 or 64 bytes, which must be
/// aligned to its size: the line goes to memory without being read first. A plain store to a
/// line that is not in cache reads it (write-allocate), so an output that is only written
/// moves through memory twice; on the 2-core Xeon VM a kernel reading two arrays and writing
/// a third ran at 0.60 - 0.66 of the memcpy roofline with plain stores and 0.80 - 0.85 with
/// these (git show b70cdcc:docs/performance.md, CPU). Inline assembly, not an intrinsic: this header uses none
/// (above). Stores issued so must be fenced (store_fence) before another thread reads them.
/// Without optimization (-O0) GCC cannot always give the operand a vector register ("impossible
/// constraint in asm"): a plain store there, the same result.
template <int W, class T>
TINYBATCH_SIMD_INLINE void stream(T* p, const pack<T, W>& v) {
  static_assert(sizeof v == 16 || sizeof v == 32 || sizeof v == 64);
#if !defined(__OPTIMIZE__)
  std::memcpy(p, &v, sizeof v);
  return;
#endif
  auto& m = *reinterpret_cast<pack<T, W>*>(p);
  if constexpr (sizeof(T) == 8)
    asm volatile("vmovntpd %1, %0" : "=m"(m) : "v"(v) : "memory");
  else
    asm volatile("vmovntps %1, %0" : "=m"(m) : "v"(v) : "memory");
}
/// v := the lanes of the pack at p selected by mask (the low lanes), the other lanes zero; the
/// memory of the masked-off lanes is not read (no fault past the end of an array). AVX-512
/// only (with VL for 16- and 32-byte packs); p needs no alignment. Inline assembly, as
/// `stream` below. (An output argument: returning the pack by value drew a -Wpsabi note at the
/// end of the including file, which the pragma of this header does not cover.)
template <int W, class T>
TINYBATCH_SIMD_INLINE void load_masked(pack<T, W>& v, const T* p, unsigned short mask) {
#if !defined(__OPTIMIZE__)  // -O0: lane by lane (as `stream`)
  for (int l = 0; l < W; ++l) v[l] = (mask >> l) & 1 ? p[l] : T(0);
  return;
#endif
  struct bytes {
    char b[W * sizeof(T)];
  };
  if constexpr (sizeof(T) == 8)
    asm("vmovupd %1, %0%{%2%}%{z%}" : "=v"(v) : "m"(*reinterpret_cast<const bytes*>(p)), "Yk"(mask));
  else
    asm("vmovups %1, %0%{%2%}%{z%}" : "=v"(v) : "m"(*reinterpret_cast<const bytes*>(p)), "Yk"(mask));
}
/// Stores the lanes of v selected by mask to p; the memory of the other lanes is left alone.
template <int W, class T>
TINYBATCH_SIMD_INLINE void store_masked(T* p, const pack<T, W>& v, unsigned short mask) {
#if !defined(__OPTIMIZE__)  // -O0: lane by lane (as `stream`)
  for (int l = 0; l < W; ++l)
    if ((mask >> l) & 1) p[l] = v[l];
  return;
#endif
  struct bytes {
    char b[W * sizeof(T)];
  };
  if constexpr (sizeof(T) == 8)
    asm volatile("vmovupd %1, %0%{%2%}" : "+m"(*reinterpret_cast<bytes*>(p)) : "v"(v), "Yk"(mask));
  else
    asm volatile("vmovups %1, %0%{%2%}" : "+m"(*reinterpret_cast<bytes*>(p)) : "v"(v), "Yk"(mask));
}
/// Orders the streaming stores before every later store (the other threads see them once the
/// parallel region's barrier has passed).
TINYBATCH_SIMD_INLINE void store_fence() { asm volatile("sfence" ::: "memory"); }

template <int W, class T>
TINYBATCH_SIMD_INLINE pack<T, W> splat(const T& x) {
  // Through memory: GCC then emits a broadcast, and no -Wpsabi note about the return type.
  T lane[W];
#pragma GCC unroll 16
  for (int i = 0; i < W; ++i) lane[i] = x;
  pack<T, W> v;
  std::memcpy(&v, lane, sizeof v);
  return v;
}

/// d = x * t rounded on its own, unless this translation unit is compiled with FMA, where the
/// compiler fuses the reference kernels' `a -= b * c` and may fuse this one too. Factorizations
/// use it so that their exact-zero pivots and non-positive minors (info) are those of the
/// reference path of the same build, to the last bit.
template <class P, class T>
TINYBATCH_SIMD_INLINE void product_as_reference(P& d, const P& x, const T& t) {
  d = x * t;
#if !defined(__FMA__) && defined(__OPTIMIZE__)
  // An opaque value: no fused multiply-add across this point. Packs under 16 bytes are not
  // vector-register operands, they go through memory.
  if constexpr (sizeof(P) >= 16)
    asm("" : "+v"(d));
  else
    asm("" : "+m"(d));
#endif
}

/// Lanes first, first + 1, ..., with those at or past `end` set to `past`.
template <int W, class T>
TINYBATCH_SIMD_INLINE pack<T, W> iota(int first, int end, T past) {
  T lane[W];
#pragma GCC unroll 16
  for (int i = 0; i < W; ++i) lane[i] = first + i < end ? T(first + i) : past;
  pack<T, W> v;
  std::memcpy(&v, lane, sizeof v);
  return v;
}

/// Where matrix k of a uniform batch starts: strided and pointer-array views reduce to this,
/// so each kernel is instantiated once per scalar type and size, not once per view type.
template <class T>
struct matrix_starts {
  T* base = nullptr;
  T* const* ptrs = nullptr;
  index_t stride = 0;
  int ld = 0;
  TINYBATCH_SIMD_INLINE T* operator[](index_t k) const { return ptrs ? ptrs[k] : base + k * stride; }
};

template <class V>
auto starts_of(const V& v) {
  using E = typename V::element_type;
  using T = typename V::value_type;
  matrix_starts<T> s;
  s.ld = v.shape().ld;
  if constexpr (requires { v.stride(); }) {
    s.base = const_cast<T*>(static_cast<E*>(v.data()));
    s.stride = v.stride();
  } else {
    s.ptrs = const_cast<T* const*>(v.pointers());
  }
  return s;
}

/// Calls f(std::integral_constant<int, I>) for I in [0, N): a loop the compiler sees unrolled,
/// so arrays of packs indexed by I stay in registers.
template <int N, class F, int... I>
TINYBATCH_SIMD_INLINE void unroll_impl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
TINYBATCH_SIMD_INLINE void unroll(F&& f) {
  unroll_impl<N>(f, std::make_integer_sequence<int, N>{});
}

// Entry points: `f(Arch{})` compiled with the instruction set enabled. Everything f calls is
// always-inline (or flattened in), so the kernel body is generated for that set only.
// The AVX-512 set also asks GCC for 512-bit vectors: where the translation unit is built for
// a CPU whose tuning prefers 256 (-march=native on Skylake-SP to Emerald Rapids; why GCC's
// code then lost was not looked at in the assembly), on the Xeon of the GPU machine (Sapphire Rapids tuning, 2
// threads, 128 KiB of factors, us per call, generic build / -march=native / -march=native
// -mprefer-vector-width=512) the direct getrs of double n = 8 took 6.5 - 6.9 / 15.2 - 16.0 /
// 6.8 - 7.2, n = 32 4.0 - 4.2 / 9.1 - 9.6 / 4.0 - 4.2, and compact getrs n = 3 3.6 - 3.7 /
// 5.8 - 5.9 / 3.8 - 4.0 (bench/results/gpu-host-xeon/cpu-bcedcea-xeon-dev-march-native.txt). Clang takes no
// such target option (it sizes vectors by the types).
#define TINYBATCH_AVX2_TARGET "avx2,fma,bmi,bmi2,popcnt,lzcnt"
#if defined(__clang__)
#define TINYBATCH_AVX512_TARGET "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,bmi,bmi2,popcnt,lzcnt"
#else
#define TINYBATCH_AVX512_TARGET \
  "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,bmi,bmi2,popcnt,lzcnt,prefer-vector-width=512"
#endif

template <class F, class Arg = avx2>
__attribute__((target(TINYBATCH_AVX2_TARGET), flatten)) void run_avx2(F& f, Arg arg = {}) {
  f(arg);
}
template <class F, class Arg = avx512>
__attribute__((target(TINYBATCH_AVX512_TARGET), flatten)) void run_avx512(F& f, Arg arg = {}) {
  f(arg);
}

/// Runs f(Arch{}) for the instruction set `s` (which must not be isa::none).
template <class F>
void with_isa(isa s, F&& f) {
  if constexpr (avx512_built) {
    if (s == isa::avx512) return run_avx512(f);
  }
  run_avx2(f);
}

}  // namespace tinybatch::detail::simd

#pragma GCC diagnostic pop

#endif  // TINYBATCH_HOST_SIMD
