// The SIMD (staged compact) solves and inverses on the ordinary layout against the reference:
// getrs (both transposes) and potrs (both triangles) on the reference's own factors, given the
// factorization's info, so that a failed matrix's right-hand sides must stay exactly as they
// were (poison); getri and the out-of-place inverse (info exactly; a singular matrix's output
// exactly as the reference leaves it); trsm in all 16 variants, on both sides. Every size
// 1..32, both types, both instruction sets, padded and packed layouts, strided and pointer
// arrays, counts that leave partial lane blocks.
#include "test_simd_support.hpp"

#include <algorithm>
#include <utility>

#if !defined(TB_SOLVE_PART)
#define TB_SOLVE_PART 0
#endif

using namespace tbt;
using namespace tbt::simd;

#if TINYBATCH_HOST_SIMD

namespace {

/// f(view of b) with the strided or the pointer-array view of the M x N batch b.
template <int M, int N, class E = void, class T, class F>
void with_view(poisoned<T>& b, bool pointers, F&& f) {
  using V = std::conditional_t<std::is_void_v<E>, T, E>;
  if (pointers)
    f(b.template pointers<M, N, V>());
  else
    f(b.template strided<M, N, V>());
}

/// f(view of a, view of b), both strided or both pointer arrays: the checks run only these
/// two pairings, and two nested with_view calls would also compile the two mixed ones (a
/// third of this program's compile time went to front-end paths no check ran).
template <int MA, int NA, int MB, int NB, class T, class F>
void with_views(poisoned<T>& a, poisoned<T>& b, bool pointers, F&& f) {
  if (pointers)
    f(a.template pointers<MA, NA, const T>(), b.template pointers<MB, NB>());
  else
    f(a.template strided<MA, NA, const T>(), b.template strided<MB, NB>());
}

struct layout {
  shape sh;
  bool pointers;
  index_t count;
};

/// info in the order of the buffer's matrices: a pointer-array view lists them in reverse,
/// and info follows the view (only_random / only_factored index the buffer).
inline std::vector<int> buffer_order(const std::vector<int>& info, const layout& L) {
  std::vector<int> b(info);
  if (L.pointers) std::reverse(b.begin(), b.end());
  return b;
}

/// a0's matrix k := the matrix whose factors F holds (for accept_solutions' residual test):
/// P^T L U from getrf's (ipiv: its pivots), L L^T or U^T U from potrf's.
template <class T>
void product_of_factors(poisoned<T>& F, index_t k, const int* ipiv, tb::uplo ul, poisoned<T>& a0) {
  const int n = F.m;
  mat<T> L = mat<T>::Zero(n, n), U = mat<T>::Zero(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) (i > j ? L(i, j) : U(i, j)) = F.at(k, i, j);
  mat<T> a;
  if (ipiv) {
    L += mat<T>::Identity(n, n);
    a = L * U;
    for (int i = n - 1; i >= 0; --i) a.row(i).swap(a.row(ipiv[i] - 1));
  } else if (ul == tb::uplo::lower) {
    L.diagonal() = U.diagonal();
    a = L * L.transpose();
  } else {
    a = U.transpose() * U;
  }
  a0.set(k, a);
}

template <class T, int N, class Policy>
std::string check_lu_solves(const Policy& fast, const layout& L, int variant) {
  constexpr int R = 3;
  poisoned<T> A(N, N, L.count, L.sh);
  A.fill([&](index_t k) { return getrf_case<T>(N, N, k, variant); });
  poisoned<T> A0 = A;
  // Pivots packed (stride N: whole groups load by vectors) or, with the padded layout, at a
  // stride of N + 2 (lane by lane).
  const index_t ps = L.sh == shape::padded ? N + 2 : N;
  std::vector<int> pbuf(std::size_t(L.count * ps), -7), info(std::size_t(L.count), -7);
  const tb::pivot_view piv(pbuf.data(), index_t(pbuf.size()), ps);
  // Everything runs on the same kind of view (pointer arrays list the matrices in reverse),
  // so pivots and info line up with the matrices.
  with_view<N, N>(A, L.pointers, [&](auto a) { tb::getrf(reference, a, piv, info); });
  const std::span<const int> inf(info);
  const std::vector<int> kept = buffer_order(info, L);

  // The solves run on F: the factors, some with a subnormal diagonal entry at row j[k]. B's
  // rows that reach it are zeroed: j itself (trans: U^T's sweep divides there first) and the
  // row that P brings to j (no_trans).
  poisoned<T> F = A, F0 = A0;
  std::vector<int> j(std::size_t(L.count)), from(std::size_t(L.count));
  for (index_t k = 0; k < L.count; ++k) {
    j[k] = subnormal_diagonal(F, k, variant, 6, kept);
    if (j[k] < 0) continue;
    const int* ip = pbuf.data() + (L.pointers ? L.count - 1 - k : k) * ps;  // pivots follow the view
    from[k] = row_brought_to(N, ip, j[k]);
    product_of_factors(F, k, ip, tb::uplo::lower, F0);
  }
  for (tb::op t : {tb::op::no_trans, tb::op::trans}) {
    poisoned<T> B(N, R, L.count, L.sh);
    B.fill([&](index_t) { return random_of<T>(N, R); });
    for (index_t k = 0; k < L.count; ++k)
      for (int c = 0; c < R && j[k] >= 0; ++c) B.at(k, j[k], c) = B.at(k, from[k], c) = T(0);
    poisoned<T> want = B;
    auto solve = [&](const auto& policy, poisoned<T>& rhs) {
      with_views<N, N, N, R>(F, rhs, L.pointers, [&](auto a, auto b) { tb::getrs(policy, t, a, piv, b, inf); });
    };
    solve(fast, B);
    solve(reference, want);
    // Solves with the factors of the special cases (ties, NaNs) may differ between two
    // legitimate roundings; the failed ones (info != 0) are compared exactly: untouched.
    only_random(B, want, variant, &kept);
    accept_solutions(B, want, F0, t == tb::op::trans, 1e2 * tol<T>(N));
    const std::string d = compare(B.buf, want.buf, 1e2 * tol<T>(N));
    if (!d.empty()) return std::string("getrs ") + (t == tb::op::trans ? "T: " : "N: ") + d;
  }
  {
    poisoned<T> X = A, want = A;  // getri on the factors, in place
    std::vector<int> i1(std::size_t(L.count), -7), i2 = i1;
    with_view<N, N>(X, L.pointers, [&](auto x) { tb::getri(fast, x, piv, i1); });
    with_view<N, N>(want, L.pointers, [&](auto x) { tb::getri(reference, x, piv, i2); });
    if (i1 != i2) return "getri: info differs";
    const std::vector<int> kept2 = buffer_order(i2, L);
    only_random(X, want, variant, &kept2);
    accept_solutions(X, want, A0, false, 1e3 * tol<T>(N));  // A0 X = I
    const std::string d = compare(X.buf, want.buf, 1e3 * tol<T>(N));
    if (!d.empty()) return "getri: " + d;
  }
  return {};
}

template <class T, int N, class Policy>
std::string check_inverse(const Policy& fast, const layout& L, int variant) {
  poisoned<T> A(N, N, L.count, L.sh);
  A.fill([&](index_t k) { return getrf_case<T>(N, N, k, variant); });
  const poisoned<T> A0 = A;
  // Streaming, a packed A goes with an X packed from a line (shape::aligned), whose whole
  // blocks are then written by streaming stores.
  const bool streaming = ts::tuning::streaming_min_bytes().load() == 0;
  poisoned<T> X(N, N, L.count, L.sh == shape::padded ? shape::packed : streaming ? shape::aligned : shape::padded);
  poisoned<T> want = X;
  std::vector<int> i1(std::size_t(L.count), -7), i2 = i1;
  auto inv = [&](const auto& policy, poisoned<T>& out, std::vector<int>& inf) {
    with_views<N, N, N, N>(A, out, L.pointers, [&](auto a, auto x) { tb::inverse(policy, a, x, inf); });
  };
  inv(fast, X, i1);
  inv(reference, want, i2);
  if (i1 != i2) return "inverse: info differs";
  if (compare(A.buf, A0.buf, 0) != "") return "inverse: A was written";
  const std::vector<int> kept = buffer_order(i2, L);
  only_random(X, want, variant, &kept);  // singular: the LU factors, exactly
  poisoned<T> a0 = A0;
  accept_solutions(X, want, a0, false, 1e3 * tol<T>(N));  // A X = I
  const std::string d = compare(X.buf, want.buf, 1e3 * tol<T>(N));
  return d.empty() ? d : "inverse: " + d;
}

template <class T, int N, class Policy>
std::string check_cholesky_solve(const Policy& fast, const layout& L, tb::uplo ul, int variant) {
  constexpr int R = 2;
  poisoned<T> A(N, N, L.count, L.sh);
  A.fill([&](index_t k) { return spd_case<T>(N, k, variant); });
  poisoned<T> A0 = A;
  std::vector<int> info(std::size_t(L.count), -7);
  with_view<N, N>(A, L.pointers, [&](auto a) { tb::potrf(reference, ul, a, info); });
  poisoned<T> B(N, R, L.count, L.sh);
  B.fill([&](index_t) { return random_of<T>(N, R); });
  // Some factors with a subnormal diagonal entry (potrf never makes one: sqrt of the least
  // subnormal is normal; a user's factor may have one), B's row j zeroed.
  const std::vector<int> kept = buffer_order(info, L);
  for (index_t k = 0; k < L.count; ++k) {
    const int j = subnormal_diagonal(A, k, variant, 4, kept);
    if (j < 0) continue;
    for (int c = 0; c < R; ++c) B.at(k, j, c) = T(0);
    product_of_factors(A, k, nullptr, ul, A0);
  }
  poisoned<T> want = B;
  const std::span<const int> inf(info);
  auto solve = [&](const auto& policy, poisoned<T>& rhs) {
    with_views<N, N, N, R>(A, rhs, L.pointers, [&](auto a, auto b) { tb::potrs(policy, ul, a, b, inf); });
  };
  solve(fast, B);
  solve(reference, want);
  accept_solutions(B, want, A0, false, 1e2 * tol<T>(N));
  const std::string d = compare(B.buf, want.buf, 1e2 * tol<T>(N));  // failed ones: untouched
  return d.empty() ? d : std::string("potrs ") + (ul == tb::uplo::lower ? "lower: " : "upper: ") + d;
}

/// One side per call: the two sides are two programs (TB_SOLVE_PART 3 and 4), since trsm's
/// 16 variants at every size are the largest unit of the build.
template <class T, int N, bool Left, class Policy>
std::string check_trsm(const Policy& fast, const layout& L) {
  constexpr int R = 3;
  poisoned<T> A(N, N, L.count, L.sh);
  A.fill([&](index_t) { return mat<T>(random_of<T>(N, N) + T(N) * mat<T>::Identity(N, N)); });
  constexpr bool left = Left;
  for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper})
    for (tb::op t : {tb::op::no_trans, tb::op::trans})
      for (tb::diag dg : {tb::diag::non_unit, tb::diag::unit}) {
        const tb::side sd = left ? tb::side::left : tb::side::right;
        auto one = [&](auto rows, auto cols) {
          constexpr int BM = decltype(rows)::value, BN = decltype(cols)::value;
          poisoned<T> B(BM, BN, L.count, L.sh);
          B.fill([&](index_t) { return random_of<T>(BM, BN); });
          poisoned<T> want = B;
          auto solve = [&](const auto& policy, poisoned<T>& rhs) {
            with_views<N, N, BM, BN>(A, rhs, L.pointers, [&](auto a, auto b) {
              tb::trsm(policy, sd, ul, t, dg, T(-1.5), a, b);
            });
          };
          solve(fast, B);
          solve(reference, want);
          return compare(B.buf, want.buf, 1e2 * tol<T>(N));
        };
        std::string d;
        if constexpr (Left)
          d = one(std::integral_constant<int, N>{}, std::integral_constant<int, R>{});
        else
          d = one(std::integral_constant<int, R>{}, std::integral_constant<int, N>{});
        if (!d.empty())
          return std::string("trsm ") + (left ? "left" : "right") + (ul == tb::uplo::lower ? " lower" : " upper") +
                 (t == tb::op::trans ? " T" : " N") + (dg == tb::diag::unit ? " unit: " : ": ") + d;
      }
  return {};
}

template <class T, int N>
void check_size() {
  static int variant = 0;
  // Each instruction set; the direct solves (getrs, potrs) also streaming, where they take
  // one matrix at a time instead of groups, and the inverse, whose packed aligned X is then
  // written by streaming stores.
  constexpr bool streams = TB_SOLVE_PART == 0 || TB_SOLVE_PART == 1 || TB_SOLVE_PART == 2;
  std::vector<std::pair<ts::isa, bool>> modes;
  for (ts::isa s : isas())
    for (bool on : {false, true})
      if (!on || streams) modes.push_back({s, on});
  for (const auto& [s, on] : modes) {
    isa_scope scope(s);
    const streaming_scope streaming(on);
    std::vector<layout> layouts;
    for (shape sh : {shape::padded, shape::packed})
      for (bool pointers : {false, true})
        for (index_t count : small_counts) layouts.push_back({sh, pointers, count});
    // Full lane blocks of 8 and 16 (whole-matrix staging through transposes, the last run
    // ending at the end of the allocation), a partial last block, threads.
    layouts.push_back({shape::padded, true, big_count});
    layouts.push_back({shape::packed, false, big_count});
    layouts.push_back({shape::packed, true, 37});
    for (const layout& L : layouts) {
      ++variant;
      INFO("isa " << name(s) << (on ? ", streaming" : "") << ", n = " << N << ", " << name(L.sh) << (L.pointers ? ", pointers" : ", strided")
                  << ", count " << L.count << ", variant " << variant);
      // simd_par runs a small batch on one thread and splits the big one. At two sizes the
      // packed big batch goes through the default policy instead (kernels::automatic, the
      // path the grid tests of the release build no longer compile, see tests/run.sh), which
      // must reach the same kernels; not at every size, as each policy type instantiates the
      // kernels again (twice the compile time). TB_SOLVE_PART picks one family per program
      // (tests/meson.build builds five), so the every-size build compiles on several cores.
      auto check = [&](const auto& policy) {
#if TB_SOLVE_PART == 0
        return check_lu_solves<T, N>(policy, L, variant);
#elif TB_SOLVE_PART == 1
        return check_inverse<T, N>(policy, L, variant);
#elif TB_SOLVE_PART == 2
        return check_cholesky_solve<T, N>(policy, L, tb::uplo::lower, variant) +
               check_cholesky_solve<T, N>(policy, L, tb::uplo::upper, variant);
#elif TB_SOLVE_PART == 3
        return check_trsm<T, N, true>(policy, L);
#else
        return check_trsm<T, N, false>(policy, L);
#endif
      };
      if constexpr (automatic_size(N)) {
        const bool automatic = L.count == big_count && L.sh == shape::packed;
        CHECK((automatic ? check(tb::par) : check(simd_par)) == "");
      } else {
        CHECK(check(simd_par) == "");
      }
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("simd solves, getri, inverse, trsm: sizes 1..32 match the reference",
                   "[simd][solve]", float, double) {
  for_sizes<TestType>([](auto n) { check_size<TestType, n>(); });
}

#else

TEST_CASE("simd solves: no SIMD kernels in this build", "[simd][solve]") { SUCCEED(); }

#endif
