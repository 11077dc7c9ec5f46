// The compiled kernel library (optional): the host SIMD kernels of every square order 1..32,
// float and double, built once into libtinybatch_kernels (src/kernels.cpp, `meson install`
// with -Dkernel_library=true), so that a batch whose n is known only at run time reaches
// them without instantiating 32 sizes in the caller's translation unit.
//
// Header-only stays the default. A program compiled with TINYBATCH_KERNEL_LIBRARY defined
// (pkg-config tinybatch-kernels sets it and links the library) sends run-time-size square
// getrf, getrs, gesv, potrf, potrs and posv calls with n <= 32 on the host to the functions
// declared here; fixed sizes still instantiate their kernels in the caller (they inline and
// unroll there, and a program with a few fixed sizes compiles only those). Solves take
// their right-hand sides four columns at a time, the rest one by one (the library holds the
// NRHS = 4 and NRHS = 1 kernels: each count of right-hand sides is another 32 kernels).
//
// Each function returns false where it does not apply (n > 32, not square, an order the
// library was not built for, no AVX2 on this CPU); the backend then runs the reference
// loops, as for any run-time size without the library.
#pragma once

#include <cstdint>

#include "../core/config.hpp"
#include "../core/pivots.hpp"
#include "simd/arch.hpp"

#if defined(TINYBATCH_KERNEL_LIBRARY) && TINYBATCH_HOST_SIMD
#define TINYBATCH_USES_KERNEL_LIBRARY 1
#else
#define TINYBATCH_USES_KERNEL_LIBRARY 0
#endif

#if TINYBATCH_HOST_SIMD
namespace tinybatch::detail::compiled {

using simd::matrix_starts;

// `threads`: the team of a `par` call (0: OpenMP's default), 1 for `seq`. A and B are n x n
// and n x nrhs matrices at the given starts; ipiv, info as in the front-end calls.
bool getrf(int threads, const matrix_starts<float>& a, int m, int n, index_t count, const pivot_view& ipiv, int* info);
bool getrf(int threads, const matrix_starts<double>& a, int m, int n, index_t count, const pivot_view& ipiv, int* info);
bool getrs(int threads, bool trans, const matrix_starts<float>& a, const pivot_view& ipiv,
           const matrix_starts<float>& b, int n, int nrhs, index_t count, const int* info);
bool getrs(int threads, bool trans, const matrix_starts<double>& a, const pivot_view& ipiv,
           const matrix_starts<double>& b, int n, int nrhs, index_t count, const int* info);
bool potrf(int threads, bool lower, const matrix_starts<float>& a, int n, index_t count, int* info);
bool potrf(int threads, bool lower, const matrix_starts<double>& a, int n, index_t count, int* info);
bool potrs(int threads, bool lower, const matrix_starts<float>& a, const matrix_starts<float>& b, int n, int nrhs,
           index_t count, const int* info);
bool potrs(int threads, bool lower, const matrix_starts<double>& a, const matrix_starts<double>& b, int n, int nrhs,
           index_t count, const int* info);

/// Calls the library has run since the program started (any thread): how a program (and its
/// tests) can tell that its run-time sizes reached the compiled kernels.
std::uint64_t kernel_calls();
/// Counts one call (the library's functions, as they run a kernel).
void count_call();

}  // namespace tinybatch::detail::compiled
#endif
