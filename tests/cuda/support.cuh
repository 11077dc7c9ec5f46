// GPU test machinery. Every test runs one operation twice on the same data: on the host
// through the sequential reference kernels (the oracle, host_ref below) and on the GPU
// through tinybatch::cuda::policy, then compares the two whole buffers: matrix elements to a
// tight tolerance (NaN where the host has NaN), integers (pivots, info) exactly, and
// everything the host left as poison (padding rows, gaps between matrices, untouched
// triangles, unwritten outputs) bit for bit.
//
// Buffers use a padded layout (ld = rows + 3, two spare elements between matrices) filled
// with a NaN carrying a payload no arithmetic produces, so a GPU write outside a matrix, or a
// missing write to an output, is caught. Host buffers travel to the device whole (padding
// included) with one copy.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <tinybatch/cuda.hpp>

#include "../random_poison.hpp"

namespace tbc {
namespace tb = tinybatch;
using tb::index_t;

// ---- grid -----------------------------------------------------------------------------

/// TINYBATCH_CUDA_TESTS=small shrinks the grid (for compute-sanitizer runs) and skips the
/// million-matrix runs.
inline bool small_grid() {
  const char* e = std::getenv("TINYBATCH_CUDA_TESTS");
  return e && std::string(e) == "small";
}
inline const std::vector<int>& sizes() {
  static const std::vector<int> full{1, 2, 3, 4, 5, 6, 7, 8, 13, 16, 17, 31, 32, 33, 64};
  static const std::vector<int> small{1, 2, 3, 5, 8, 17, 33};
  return small_grid() ? small : full;
}
inline const std::vector<index_t>& counts() {
  static const std::vector<index_t> full{0, 1, 3, 1000};
  static const std::vector<index_t> small{0, 1, 3, 37};
  return small_grid() ? small : full;
}

// ---- random data and poison (shared with the host tests) ---------------------------

using tinybatch_tests::is_poison;
using tinybatch_tests::poison;
using tinybatch_tests::rng;
using tinybatch_tests::seed;
using tinybatch_tests::uniform;

/// Integer poison for pivots and info.
inline constexpr int ipoison = -123456789;

template <class T>
T nan() {
  return std::numeric_limits<T>::quiet_NaN();
}

// ---- layouts --------------------------------------------------------------------------

enum class layout { strided, pointers };
inline const char* name(layout l) { return l == layout::strided ? "strided" : "pointers"; }
template <layout L>
using layout_c = std::integral_constant<layout, L>;

/// f(layout_c<strided>), then f(layout_c<pointers>).
template <class F>
void for_layouts(F&& f) {
  f(layout_c<layout::strided>{});
  f(layout_c<layout::pointers>{});
}

/// The oracle: the host reference kernels, one matrix after another. (tinybatch::seq with
/// kernels::reference, so that host SIMD kernels, which round differently, never stand in.)
inline constexpr tb::sequential_policy<tb::kernels::reference> host_ref{};

inline void device_sync() { TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize()); }

/// `count` m x n matrices in the padded layout, on the host (h) and on the device (d).

/// How a tbatch lays out its matrices: padded (ld = rows + 3, two spare elements between
/// matrices), or packed (ld = rows, matrices back to back: the case kernels may load by
/// 16-byte vectors) with the first matrix at element 0 (aligned) or 1 (misaligned).
enum class pack { padded, packed, packed_off1 };
inline const char* name(pack p) {
  return p == pack::padded ? "padded" : p == pack::packed ? "packed" : "packed, offset 1";
}

template <class T>
struct tbatch {
  int m, n, ld;
  index_t count, stride, off;  // matrix k at element off + k * stride
  std::vector<T> h;    // the input; after the host call, the oracle's result
  std::vector<T> got;  // the device's result
  std::vector<T*> hp;
  tb::cuda::device_array<T> d;
  tb::cuda::device_array<T*> dp;

  tbatch(int m_, int n_, index_t count_, pack p = pack::padded)
      : m(m_),
        n(n_),
        ld(p == pack::padded ? m_ + 3 : m_),
        count(count_),
        stride(p == pack::padded ? index_t(m_ + 3) * n_ + 2 : index_t(m_) * n_),
        off(p == pack::packed_off1 ? 1 : 0),
        h(std::size_t(off + stride * count_ + 1), poison<T>()),
        hp(std::size_t(count_)) {
    for (index_t k = 0; k < count; ++k) hp[k] = h.data() + off + k * stride;
  }
  T* first() { return d.data() + off; }  // the first matrix on the device
  T& at(index_t k, int i, int j) { return h[std::size_t(off + k * stride + i + index_t(j) * ld)]; }

  template <class F>
  void fill(F&& f) {  // f(k, i, j) for every matrix element
    for (index_t k = 0; k < count; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) at(k, i, j) = f(k, i, j);
  }
  void fill_random() {
    fill([](index_t, int, int) { return uniform<T>(); });
  }

  /// The whole host buffer, padding included, to the device; the pointer array too.
  void upload() {
    d = tb::cuda::device_array<T>(std::span<const T>(h));
    std::vector<T*> p(static_cast<std::size_t>(count));
    for (index_t k = 0; k < count; ++k) p[k] = d.data() + off + k * stride;
    dp = tb::cuda::device_array<T*>(std::span<T* const>(p));
  }
  void download() {
    got.resize(h.size());
    tb::cuda::copy(got, d);
    device_sync();
  }

  template <layout L>
  auto view_of(T* base, T* const* ptrs) {
    if constexpr (L == layout::strided)
      return tb::strided_view<T>(base + off, m, n, count, ld, stride);
    else
      return tb::pointer_view<T>(ptrs, m, n, count, ld);
  }
  template <layout L>
  auto hview(layout_c<L>) {
    return view_of<L>(h.data(), hp.data());
  }
  template <layout L>
  auto dview(layout_c<L>) {
    return view_of<L>(d.data(), dp.data());
  }
};

/// An int array (info) on host and device, poisoned.
struct tints {
  std::vector<int> h, got;
  tb::cuda::device_array<int> d;
  explicit tints(std::size_t n) : h(n, ipoison) {}
  void upload() { d = tb::cuda::device_array<int>(std::span<const int>(h)); }
  void download() {
    got.resize(h.size());
    tb::cuda::copy(got, d);
    device_sync();
  }
  std::span<int> hspan() { return std::span<int>(h.data(), h.size() > 0 ? h.size() - 1 : 0); }
  std::span<int> dspan() { return std::span<int>(d.data(), d.size() > 0 ? d.size() - 1 : 0); }
  static tints info(index_t count) { return tints(std::size_t(count) + 1); }  // +1: a guard
};

/// Pivots: strided layout with a one-int gap between matrices; pointer layout through a
/// device pointer array into the same buffer.
struct tpivots : tints {
  int mn;
  index_t count, stride;
  std::vector<int*> hp;
  tb::cuda::device_array<int*> dp;
  tpivots(int mn_, index_t count_)
      : tints(std::size_t(count_ * (mn_ + 1) + 1)),
        mn(mn_),
        count(count_),
        stride(mn_ + 1),
        hp(std::size_t(count_)) {
    for (index_t k = 0; k < count; ++k) hp[k] = h.data() + k * stride;
  }
  void upload() {
    tints::upload();
    std::vector<int*> p(static_cast<std::size_t>(count));
    for (index_t k = 0; k < count; ++k) p[k] = d.data() + k * stride;
    dp = tb::cuda::device_array<int*>(std::span<int* const>(p));
  }
  template <layout L>
  tb::pivot_view hview(layout_c<L>) {
    if constexpr (L == layout::strided)
      return tb::pivot_view(h.data(), index_t(h.size()), stride);
    else
      return tb::pivot_view(hp.data(), count);
  }
  template <layout L>
  tb::pivot_view dview(layout_c<L>) {
    if constexpr (L == layout::strided)
      return tb::pivot_view(d.data(), index_t(d.size()), stride);
    else
      return tb::pivot_view(dp.data(), count);
  }
};

// ---- comparison -----------------------------------------------------------------------

/// What the comparisons saw, printed at exit: whether GPU and host agreed bit for bit.
struct agreement {
  long long values = 0, not_identical = 0;
  double max_rel = 0;
  ~agreement() {
    if (values > 0)
      std::printf(
          "GPU vs host: %lld values compared, %lld not bit-identical, largest difference "
          "%.3g (relative to the matrix's largest entry)\n",
          values, not_identical, max_rel);
  }
};
inline agreement stats;

/// Empty when the device buffer matches the host's; else the first mismatch.
template <class T>
std::string compare(const tbatch<T>& b, const char* what) {
  const std::size_t N = b.h.size();
  if (b.got.size() != N) return std::string(what) + ": not downloaded";
  const int order = std::max(std::max(b.m, b.n), 1);
  const double tol = 32.0 * order * std::numeric_limits<T>::epsilon();
  std::vector<double> scale(std::size_t(b.count) + 1, 1.0);
  for (std::size_t e = 0; e < N; ++e)
    if (std::isfinite(b.h[e])) {
      double& s = scale[std::min<std::size_t>(e / std::size_t(b.stride ? b.stride : 1), b.count)];
      s = std::max(s, double(std::abs(b.h[e])));
    }
  for (std::size_t e = 0; e < N; ++e) {
    const T r = b.h[e], g = b.got[e];
    const std::size_t k = std::min<std::size_t>(e / std::size_t(b.stride ? b.stride : 1), b.count);
    const index_t off = index_t(e) - index_t(k) * b.stride;
    auto where = [&] {
      return std::string(what) + " matrix " + std::to_string(k) + " offset " + std::to_string(off) +
             " (i=" + std::to_string(off % b.ld) + ", j=" + std::to_string(off / b.ld) +
             "): host " + std::to_string(r) + (is_poison(r) ? " [poison]" : "") + ", GPU " +
             std::to_string(g) + (is_poison(g) ? " [poison]" : "");
    };
    if (is_poison(r)) {
      if (!is_poison(g)) return where() + " (written where the host left poison)";
      continue;
    }
    if (is_poison(g)) return where() + " (not written)";
    ++stats.values;
    if (std::memcmp(&r, &g, sizeof r) != 0 && !(std::isnan(r) && std::isnan(g)))
      ++stats.not_identical;
    if (std::isnan(r) || std::isnan(g)) {
      if (std::isnan(r) != std::isnan(g)) return where() + " (NaN mismatch)";
      continue;
    }
    if (std::isinf(r) || std::isinf(g)) {
      if (r != g) return where() + " (inf mismatch)";
      continue;
    }
    const double diff = std::abs(double(r) - double(g)) / scale[k];
    stats.max_rel = std::max(stats.max_rel, diff);
    if (diff > tol)
      return where() + " (difference " + std::to_string(diff) + " > tolerance " +
             std::to_string(tol) + ")";
  }
  return {};
}

inline std::string compare(const tints& b, const char* what) {
  if (b.got.size() != b.h.size()) return std::string(what) + ": not downloaded";
  for (std::size_t e = 0; e < b.h.size(); ++e)
    if (b.h[e] != b.got[e])
      return std::string(what) + "[" + std::to_string(e) + "]: host " + std::to_string(b.h[e]) +
             ", GPU " + std::to_string(b.got[e]);
  return {};
}

/// Downloads every buffer and checks each against the host.
template <class... B>
void check_all(std::pair<B*, const char*>... b) {
  (b.first->download(), ...);
  (
      [&] {
        const std::string r = compare(*b.first, b.second);
        INFO(r);
        CHECK(r.empty());
      }(),
      ...);
}
template <class B>
std::pair<B*, const char*> arg(B& b, const char* what) {
  return {&b, what};
}

// ---- test matrices ---------------------------------------------------------------------

/// Which matrices of a batch are special: k % 5 == 2 singular (or not positive definite),
/// k % 5 == 4 with a NaN, k % 5 == 3 (general matrices) scaled into the subnormal range,
/// where getrf divides instead of multiplying by the reciprocal.
inline bool singular_k(index_t k) { return k % 5 == 2; }
inline bool nan_k(index_t k) { return k % 5 == 4; }
inline bool tiny_k(index_t k) { return k % 5 == 3; }

template <class T>
T subnormal_scale() {
  return std::is_same_v<T, float> ? T(1e-39) : T(1e-310);
}

/// General (LU) matrices: random; singular ones get a zero column, NaN ones a NaN entry.
template <class T>
void fill_general(tbatch<T>& a) {
  a.fill_random();
  for (index_t k = 0; k < a.count; ++k) {
    if (singular_k(k) && a.n > 0)
      for (int i = 0; i < a.m; ++i) a.at(k, i, int(k % a.n)) = T(0);
    if (nan_k(k) && a.m > 0 && a.n > 0) a.at(k, int(k % a.m), int(k % a.n)) = nan<T>();
    if (tiny_k(k))
      for (int j = 0; j < a.n; ++j)
        for (int i = 0; i < a.m; ++i) a.at(k, i, j) *= subnormal_scale<T>();
  }
}

/// Symmetric positive definite matrices in the `ul` triangle (B B^T / n + I), the other
/// triangle poison: potrf must neither read nor write it. Not-SPD ones get a negative
/// diagonal entry, NaN ones a NaN in the triangle.
template <class T>
void fill_spd(tbatch<T>& a, tb::uplo ul) {
  const int n = a.n;
  std::vector<double> b(std::size_t(n) * n);
  for (index_t k = 0; k < a.count; ++k) {
    for (auto& x : b) x = uniform<double>();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const bool in = ul == tb::uplo::lower ? i >= j : i <= j;
        double s = i == j ? 1.0 : 0.0;
        for (int l = 0; l < n; ++l) s += b[i + l * n] * b[j + l * n] / n;
        a.at(k, i, j) = in ? T(s) : poison<T>();
      }
    if (n == 0) continue;
    const int p = int(k % n), q = p / 2;  // q <= p
    if (singular_k(k)) a.at(k, p, p) = T(-1);
    if (nan_k(k)) {
      if (ul == tb::uplo::lower)
        a.at(k, p, q) = nan<T>();
      else
        a.at(k, q, p) = nan<T>();
    }
  }
}

/// Triangular matrices for trsm: the `ul` triangle random (off-diagonal scaled by 1/n so the
/// solves stay well conditioned), the other triangle poison, and with diag::unit the
/// diagonal poison too: trsm must not read them. Singular ones get a zero diagonal entry.
template <class T>
void fill_triangular(tbatch<T>& a, tb::uplo ul, tb::diag dg) {
  const int n = a.n;
  for (index_t k = 0; k < a.count; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const bool in = ul == tb::uplo::lower ? i > j : i < j;
        if (i == j)
          a.at(k, i, j) = dg == tb::diag::unit ? poison<T>()
                          : singular_k(k) && i == int(k % n)
                              ? T(0)
                              : (uniform<T>() < 0 ? T(-1) : T(1)) * uniform<T>(T(1), T(2));
        else
          a.at(k, i, j) = in ? uniform<T>() / T(n) : poison<T>();
      }
}

/// Matrices for the right-hand sides: random, NaN ones with one NaN.
template <class T>
void fill_rhs(tbatch<T>& b) {
  b.fill_random();
  for (index_t k = 0; k < b.count; ++k)
    if (nan_k(k) && b.m > 0 && b.n > 0) b.at(k, 0, b.n - 1) = nan<T>();
}

inline const char* name(tb::op o) {
  return o == tb::op::no_trans ? "N" : o == tb::op::trans ? "T" : "C";
}
inline const char* name(tb::uplo u) { return u == tb::uplo::lower ? "lower" : "upper"; }

}  // namespace tbc
