// Compiled, not run: every host SIMD kernel for both instruction sets at a few sizes.
//
// tests/run.sh builds the SIMD test programs without their AVX-512 kernels on a machine that
// cannot run them (-Dsimd_test_isas=host, tests/meson.build): there they were dead code and
// about 40% of those programs' compile time. This translation unit keeps the AVX-512 kernels
// compiling there, so that a change that breaks them (an operand constraint of the masked
// loads, a register blocking that only the 32 registers of AVX-512 take) still fails the
// build. It runs nothing: the SIMD tests run these kernels on any AVX-512 machine, where
// tests/run.sh builds them with both sets.
//
// Sizes (tuning.hpp and kernels.inc decide the shapes): double 4 (unrolled kernels, groups in
// registers), float 7 (looped kernels, staging element by element), double 12 on the ordinary
// layout (direct solves), and getrs at double 32 (the direct transposed solve, half-width
// lanes). Every variant of each operation (transposes, triangles, sides) through its run-time
// arguments. Every operation at double 32 as well took 390 s at -O2 and was left out.
#include <tinybatch/tinybatch.hpp>

#include <span>

namespace tb = tinybatch;

namespace {

constexpr tb::parallel_policy<tb::kernels::simd> simd{};

template <class T, int N>
void ordinary(T* a, T* b, T* c, int* piv, int* info, tb::index_t count, int v) {
  constexpr int R = 3;
  const std::span<int> inf(info, std::size_t(count));
  const tb::pivot_view ipiv(piv, count * N, N);
  const tb::strided_view<T, N, N> A(a, count), C(c, count);
  const tb::strided_view<const T, N, N> cA(a, count);
  const tb::strided_view<T, N, R> B(b, count);
  const tb::strided_view<T, R, N> Br(b, count);
  const auto o = tb::op(v & 1), o2 = tb::op((v >> 1) & 1);
  const auto ul = tb::uplo(v & 1);
  tb::gemm(simd, o, o2, T(1), cA, cA, T(0), C);
  tb::getrf(simd, A, ipiv, inf);
  tb::getrs(simd, o, cA, ipiv, B, std::span<const int>(inf));
  tb::getri(simd, A, ipiv, inf);
  tb::inverse(simd, cA, C, inf);
  tb::potrf(simd, ul, A, inf);
  tb::potrs(simd, ul, cA, B, std::span<const int>(inf));
  tb::trsm(simd, tb::side::left, ul, o, tb::diag(v >> 2 & 1), T(1), cA, B);
  tb::trsm(simd, tb::side::right, ul, o, tb::diag(v >> 2 & 1), T(1), cA, Br);
}

template <class T, int N>
void compact(T* a, T* c, int* piv, int* info, tb::index_t count, int v) {
  constexpr int R = 3;
  const std::span<int> inf(info, std::size_t(count));
  const tb::pivot_view ipiv(piv, count * N, N);
  const tb::strided_view<T, N, N> A(a, count);
  const tb::strided_view<T, N, R> B(c, count);
  tb::compact_batch<T, N, N> ca(count), cx(count);
  tb::compact_batch<T, N, R> cb(count);
  tb::compact_batch<T, R, N> cr(count);
  const auto o = tb::op(v & 1), o2 = tb::op((v >> 1) & 1);
  const auto ul = tb::uplo(v & 1);
  tb::to_compact(tb::par, A, ca);
  tb::to_compact(tb::par, B, cb);
  tb::gemm(tb::par, o, o2, T(1), ca, ca, T(0), cx);
  tb::getrf(tb::par, ca, ipiv, inf);
  tb::getrs(tb::par, o, ca, ipiv, cb);
  tb::inverse(tb::par, ca, cx, inf);
  tb::potrf(tb::par, ul, ca, inf);
  tb::potrs(tb::par, ul, ca, cb);
  tb::trsm(tb::par, tb::side::left, ul, o, tb::diag(v >> 2 & 1), T(1), ca, cb);
  tb::trsm(tb::par, tb::side::right, ul, o, tb::diag(v >> 2 & 1), T(1), ca, cr);
  tb::from_compact(tb::par, cb, B);
}

}  // namespace

// External linkage, so that the compiler generates every kernel above.
void tinybatch_avx512_compiles(double* a, double* b, double* c, float* af, float* bf, float* cf, int* piv,
                               int* info, tb::index_t count, int v) {
  ordinary<double, 4>(a, b, c, piv, info, count, v);
  ordinary<double, 12>(a, b, c, piv, info, count, v);
  ordinary<float, 7>(af, bf, cf, piv, info, count, v);
  compact<double, 4>(a, c, piv, info, count, v);
  compact<float, 7>(af, cf, piv, info, count, v);
  const tb::strided_view<const double, 32, 32> A32(a, count);
  const tb::strided_view<double, 32, 3> B32(b, count);
  tb::getrs(simd, tb::op(v & 1), A32, tb::pivot_view(piv, count * 32, 32), B32,
            std::span<const int>(info, std::size_t(count)));
}
