// The compact (interleaved) layout: every operation on compact batches against the reference
// path on the ordinary layout. The same poisoned batch is factored / solved / multiplied by
// reference kernels in place, and converted to the compact layout, run there and converted
// back into a copy of the original buffer; the two buffers must agree element by element
// (poison, padding and untouched triangles included), pivots and info exactly. Every size
// 1..32, both types, every lane width this CPU has plus the scalar (W = 1) path, batch
// counts that leave the last group partly empty, and matrices that are singular, not positive
// definite or hold NaNs.
#include "test_simd_support.hpp"

#include <tinybatch/tinybatch.hpp>

using namespace tbt;
using namespace tbt::simd;

namespace {

/// How the compact kernels run: scalar lanes (kernels::reference), or vectors of one
/// instruction set.
struct lanes_case {
  const char* name;
  int isa;  // 0: scalar lanes
};

std::vector<lanes_case> lanes_cases() {
  std::vector<lanes_case> v{{"scalar", 0}};
#if TINYBATCH_HOST_SIMD
  for (ts::isa s : isas()) v.push_back({simd::name(s), int(s)});
#endif
  return v;
}

/// Runs f(policy) with the policy and instruction-set cap of case `c`.
template <class F>
void with_case(const lanes_case& c, index_t count, F&& f) {
  if (c.isa == 0) {
    f(reference);
    return;
  }
#if TINYBATCH_HOST_SIMD
  // One policy type for the vector lanes (each policy instantiates every kernel again):
  // par, which runs a batch of one group on one thread.
  isa_scope scope(ts::isa(c.isa));
  (void)count;
  f(tb::par);
#endif
}

template <class T, int M, int N, class Policy>
tb::compact_batch<T, M, N> compact_of(const Policy& p, poisoned<T>& a) {
  tb::compact_batch<T, M, N> c(a.count);
  tb::to_compact(p, a.template strided<M, N, const T>(), c);
  return c;
}

template <class T, int M, int N, class Policy>
void back(const Policy& p, const tb::compact_batch<T, M, N>& c, poisoned<T>& a) {
  tb::from_compact(p, c, a.template strided<M, N>());
}

inline constexpr index_t counts[] = {1, 5, 21, 203};

template <class T, int N>
void check_lu(const lanes_case& lc, index_t count, int variant) {
  poisoned<T> A(N, N, count, shape::padded);
  A.fill([&](index_t k) { return getrf_case<T>(N, N, k, variant); });
  poisoned<T> want = A, got = A;
  std::vector<int> piv(std::size_t(count * N), -7), piv_want = piv, info(std::size_t(count), -7),
      info_want = info;
  tb::getrf(reference, want.template strided<N, N>(), piv_want, info_want);
  // getrs runs on the reference's factors, some given a subnormal diagonal entry (see
  // subnormal_diagonal), the right-hand sides' rows that reach it zeroed.
  poisoned<T> F = want;
  std::vector<int> j(static_cast<std::size_t>(count)), from(j.size());
  for (index_t k = 0; k < count; ++k) {
    j[k] = subnormal_diagonal(F, k, variant, 6, info_want);
    if (j[k] >= 0) from[k] = row_brought_to(N, piv_want.data() + k * N, j[k]);
  }
  with_case(lc, count, [&](const auto& p) {
    auto c = compact_of<T, N, N>(p, A);
    tb::getrf(p, c, piv, info);
    back(p, c, got);

    // getrs with 3 right-hand sides, both transposes.
    auto cf = compact_of<T, N, N>(p, F);
    for (tb::op t : {tb::op::no_trans, tb::op::trans}) {
      INFO("getrs, op " << (t == tb::op::trans ? "T" : "N"));
      poisoned<T> B(N, 3, count, shape::padded);
      B.fill([&](index_t) { return random_of<T>(N, 3); });
      for (index_t k = 0; k < count; ++k)
        for (int r = 0; r < 3 && j[k] >= 0; ++r) B.at(k, j[k], r) = B.at(k, from[k], r) = T(0);
      poisoned<T> bwant = B, bgot = B;
      tb::getrs(reference, t, F.template strided<N, N, const T>(), piv_want, bwant.template strided<N, 3>());
      auto cb = compact_of<T, N, 3>(p, B);
      {
#if TINYBATCH_HOST_SIMD
        // Variant 1 solves as a call that streams (the touch of backend.hpp from
        // getrs_touch_min_order), variant 0 as one that does not.
        streaming_scope streaming(variant == 1);
#endif
        tb::getrs(p, t, cf, piv_want, cb);
      }
      back(p, cb, bgot);
      only_random(bgot, bwant, variant);
      CHECK(compare(bgot.buf, bwant.buf, 1e2 * tol<T>(N)) == "");
    }
  });
  CHECK(piv == piv_want);
  CHECK(info == info_want);
  CHECK(compare(got.buf, want.buf, tol<T>(N)) == "");
}

template <class T, int N>
void check_inverse(const lanes_case& lc, index_t count, int variant) {
  poisoned<T> A(N, N, count, shape::packed);
  A.fill([&](index_t k) { return getrf_case<T>(N, N, k, variant); });
  poisoned<T> X(N, N, count, shape::padded);
  poisoned<T> want = X, got = X;
  std::vector<int> info(std::size_t(count), -7), info_want = info;
  tb::inverse(reference, A.template strided<N, N, const T>(), want.template strided<N, N>(), info_want);
  with_case(lc, count, [&](const auto& p) {
    auto ca = compact_of<T, N, N>(p, A);
    tb::compact_batch<T, N, N> cx(count);
    {
#if TINYBATCH_HOST_SIMD
      // Variant 1 as a call that streams (X by streaming stores from an L1 buffer, AVX-512).
      streaming_scope streaming(variant == 1);
#endif
      tb::inverse(p, ca, cx, info);
    }
    back(p, cx, got);
  });
  CHECK(info == info_want);
  // Inverses of the random matrices, relative to the size of the inverse.
  only_random(got, want, variant, &info_want);
  CHECK(compare(got.buf, want.buf, 1e3 * tol<T>(N)) == "");
}

template <class T, int N>
void check_cholesky(const lanes_case& lc, tb::uplo ul, index_t count, int variant) {
  poisoned<T> A(N, N, count, shape::padded);
  A.fill([&](index_t k) { return spd_case<T>(N, k, variant); });
  poisoned<T> want = A, got = A;
  std::vector<int> info(std::size_t(count), -7), info_want = info;
  tb::potrf(reference, ul, want.template strided<N, N>(), info_want);
  // potrs on the reference's factors, some given a subnormal diagonal entry at row j[k]
  // (subnormal_diagonal), B's row j[k] zeroed.
  poisoned<T> F = want;
  std::vector<int> j(static_cast<std::size_t>(count));
  for (index_t k = 0; k < count; ++k) j[k] = subnormal_diagonal(F, k, variant, 4, info_want);
  with_case(lc, count, [&](const auto& p) {
    auto c = compact_of<T, N, N>(p, A);
    tb::potrf(p, ul, c, info);
    back(p, c, got);
    // potrs on the matrices that factored (the others' factors are incomplete).
    poisoned<T> B(N, 2, count, shape::packed);
    B.fill([&](index_t) { return random_of<T>(N, 2); });
    for (index_t k = 0; k < count; ++k)
      for (int r = 0; r < 2 && j[k] >= 0; ++r) B.at(k, j[k], r) = T(0);
    poisoned<T> bwant = B, bgot = B;
    tb::potrs(reference, ul, F.template strided<N, N, const T>(), bwant.template strided<N, 2>());
    auto cf = compact_of<T, N, N>(p, F);
    auto cb = compact_of<T, N, 2>(p, B);
    tb::potrs(p, ul, cf, cb);
    back(p, cb, bgot);
    only_factored(bgot, bwant, info_want);
    CHECK(compare(bgot.buf, bwant.buf, 1e2 * tol<T>(N)) == "");
  });
  CHECK(info == info_want);
  CHECK(compare(got.buf, want.buf, tol<T>(N)) == "");
}

template <class T, int M, int N, int K>
void check_gemm(const lanes_case& lc, bool ta, bool tb_, T beta, index_t count) {
  INFO("gemm M N K " << M << " " << N << " " << K << ", op(A) " << (ta ? "T" : "N") << ", op(B) "
                     << (tb_ ? "T" : "N") << ", beta " << beta);
  const tb::op oa = ta ? tb::op::trans : tb::op::no_trans, ob = tb_ ? tb::op::trans : tb::op::no_trans;
  auto run = [&](auto TA, auto TB) {
    constexpr int AR = decltype(TA)::value ? K : M, AC = decltype(TA)::value ? M : K;
    constexpr int BR = decltype(TB)::value ? N : K, BC = decltype(TB)::value ? K : N;
    poisoned<T> A(AR, AC, count, shape::packed), B(BR, BC, count, shape::padded), C(M, N, count, shape::padded);
    A.fill([&](index_t) { return random_of<T>(AR, AC); });
    B.fill([&](index_t) { return random_of<T>(BR, BC); });
    if (beta != T(0)) C.fill([&](index_t) { return random_of<T>(M, N); });  // else poison (NaN)
    poisoned<T> want = C, got = C;
    tb::gemm(reference, oa, ob, T(0.75), A.template strided<AR, AC, const T>(),
             B.template strided<BR, BC, const T>(), beta, want.template strided<M, N>());
    with_case(lc, count, [&](const auto& p) {
      auto ca = compact_of<T, AR, AC>(p, A);
      auto cb = compact_of<T, BR, BC>(p, B);
      tb::compact_batch<T, M, N> cc(count);
      tb::to_compact(p, C.template strided<M, N, const T>(), cc);
      tb::gemm(p, oa, ob, T(0.75), ca, cb, beta, cc);
      back(p, cc, got);
    });
    CHECK(compare(got.buf, want.buf, tol<T>(K)) == "");
  };
  auto b = [](bool x, auto f) { x ? f(std::true_type{}) : f(std::false_type{}); };
  b(ta, [&](auto TA) { b(tb_, [&](auto TB) { run(TA, TB); }); });
}

template <class T, int N>
void check_trsm(const lanes_case& lc, index_t count) {
  for (bool left : {true, false})
    for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper})
      for (tb::op t : {tb::op::no_trans, tb::op::trans})
        for (tb::diag d : {tb::diag::non_unit, tb::diag::unit}) {
          INFO("trsm " << (left ? "left" : "right") << (ul == tb::uplo::lower ? " lower" : " upper")
                       << (t == tb::op::trans ? " T" : " N") << (d == tb::diag::unit ? " unit" : ""));
          constexpr int R = 3;
          poisoned<T> A(N, N, count, shape::packed);
          A.fill([&](index_t) { return mat<T>(random_of<T>(N, N) + T(N) * mat<T>::Identity(N, N)); });
          auto one = [&](auto rows, auto cols) {
            constexpr int BM = decltype(rows)::value, BN = decltype(cols)::value;
            poisoned<T> B(BM, BN, count, shape::padded);
            B.fill([&](index_t) { return random_of<T>(BM, BN); });
            poisoned<T> want = B, got = B;
            tb::trsm(reference, left ? tb::side::left : tb::side::right, ul, t, d, T(-1.5),
                     A.template strided<N, N, const T>(), want.template strided<BM, BN>());
            with_case(lc, count, [&](const auto& p) {
              auto ca = compact_of<T, N, N>(p, A);
              auto cb = compact_of<T, BM, BN>(p, B);
              tb::trsm(p, left ? tb::side::left : tb::side::right, ul, t, d, T(-1.5), ca, cb);
              back(p, cb, got);
            });
            CHECK(compare(got.buf, want.buf, 1e2 * tol<T>(N)) == "");
          };
          if (left)
            one(std::integral_constant<int, N>{}, std::integral_constant<int, R>{});
          else
            one(std::integral_constant<int, R>{}, std::integral_constant<int, N>{});
        }
}

template <class T, int N>
void check_size() {
  for (const lanes_case& lc : lanes_cases())
    for (index_t count : counts) {
      INFO("n " << N << ", lanes " << lc.name << ", count " << count);
      for (int variant = 0; variant < 2; ++variant) {
        check_lu<T, N>(lc, count, variant);
        check_inverse<T, N>(lc, count, variant);
        check_cholesky<T, N>(lc, tb::uplo::lower, count, variant);
        check_cholesky<T, N>(lc, tb::uplo::upper, count, variant);
      }
      check_gemm<T, N, N, N>(lc, false, false, T(0), count);
      check_gemm<T, N, N, N>(lc, false, false, T(-0.5), count);
    }
}

/// Shapes and variants checked at a few sizes only (compile time): all transposes of gemm,
/// rectangular gemm, every trsm.
/// With `gemm` false the gemm checks are left out, with `trsm` false the trsm checks.
template <class T, int N, bool gemm = true, bool trsm = true>
void check_variants() {
  for (const lanes_case& lc : lanes_cases()) {
    INFO("n " << N << ", lanes " << lc.name);
    if constexpr (gemm) {
      for (bool ta : {false, true})
        for (bool tb_ : {false, true}) check_gemm<T, N, N, N>(lc, ta, tb_, T(0.5), 21);
      check_gemm<T, N, 3, 5>(lc, true, false, T(0), 21);
      check_gemm<T, 2, N, 7>(lc, false, true, T(1), 5);
    }
    if constexpr (trsm) check_trsm<T, N>(lc, 21);
  }
}

}  // namespace

TEMPLATE_TEST_CASE("compact: every operation matches the reference, n = 1..32", "[compact]", float, double) {
  for_sizes<TestType>([](auto n) { check_size<TestType, n>(); });
}

TEMPLATE_TEST_CASE("compact: gemm transposes and shapes, trsm variants", "[compact]", float, double) {
  // The sanitizer build (-Dcompact_test_sizes=ends) checks them at one size: at three they
  // were 700 of this program's 780 s of sanitized compile, whatever the set of sizes above.
  // There the gemm variants run in float and the trsm variants in double, to save compile
  // time (CI's margin is ten minutes; not yet shown: the run after it, on a slower VM, read
  // 710 s against 678).
#if !defined(TB_SIMD_ENDS)
  if constexpr (first_shard) {  // -Dsimd_test_shards: the first shard holds them
    check_variants<TestType, 2>();  // unrolled
    check_variants<TestType, 7>();  // loops
    check_variants<TestType, 32>();
  }
#else
  constexpr bool dbl = std::is_same_v<TestType, double>;
  check_variants<TestType, 7, !dbl, dbl>();
#endif
}

TEMPLATE_TEST_CASE("compact: conversions round-trip and pad with identities", "[compact]", float, double) {
  using T = TestType;
  constexpr int G = tb::compact_width<T>;
  poisoned<T> A(5, 3, 2 * G + 3, shape::padded);
  A.fill([](index_t) { return random_of<T>(5, 3); });
  tb::compact_batch<T, 5, 3> c(A.count);
  // Through the pointer layout, which lists the matrices in reverse order.
  const index_t last = A.count - 1;
  tb::to_compact(tb::par, A.template pointers<5, 3, const T>(), c);
  CHECK(c(1, 4, 2) == A.at(last - 1, 4, 2));
  CHECK(c(G + 2, 0, 1) == A.at(last - G - 2, 0, 1));
  CHECK(c(A.count, 0, 0) == T(1));  // padding lane: identity
  CHECK(c(A.count, 1, 0) == T(0));
  poisoned<T> B(5, 3, A.count, shape::packed), want(5, 3, A.count, shape::packed);
  want.fill([&](index_t k) {
    mat<T> m(5, 3);
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 5; ++i) m(i, j) = A.at(last - k, i, j);
    return m;
  });
  tb::from_compact(tb::seq, c, B.template strided<5, 3>());
  CHECK(compare(B.buf, want.buf, 0) == "");
}

TEST_CASE("compact: bad arguments throw before anything is written", "[compact]") {
  tb::compact_batch<double, 4, 4> a(10);
  std::vector<int> piv(40), info(9);
  CHECK_THROWS_WITH(tb::getrf(tb::seq, a, piv, info),
                    Catch::Matchers::Contains("getrf") && Catch::Matchers::Contains("info"));
  tb::compact_batch<double, 4, 2> b(11);
  CHECK_THROWS_WITH(tb::potrs(tb::seq, tb::lower, a, b), Catch::Matchers::Contains("11"));
  alignas(64) static double storage[4 * 4 * 8 + 1];
  tb::compact_view<double, 4, 4> mis(storage + 1, 3);
  info.resize(10);
  CHECK_THROWS_WITH(tb::potrf(tb::seq, tb::upper, mis, info), Catch::Matchers::Contains("aligned"));
  tb::batch<double, 4, 4> plain(9);
  CHECK_THROWS_WITH(tb::to_compact(tb::seq, plain, a), Catch::Matchers::Contains("to_compact"));
  tb::compact_batch<double, 4, 3> c(10);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, tb::op::trans, tb::op::no_trans, 1.0, c, c, 0.0, a),
                    Catch::Matchers::Contains("op(A)"));
}
