// The SIMD gemm (fixed M, N, K <= 32) against the reference kernels, on every size 1..32, all
// four transposition pairs, both scalar types, every instruction set this CPU has, odd batch
// counts, padded, packed and 64-byte aligned layouts, misaligned starts, strided and
// pointer-array views; the grid through the plain and the streaming path (prefetch,
// streaming stores), a large batch through the default choice.
#include "test_simd_support.hpp"


using namespace tbt;
using namespace tbt::simd;

#if TINYBATCH_HOST_SIMD

#if defined(TB_SIMD_FEW)
#define TB_SIMD_FEW_BUILD true
#else
#define TB_SIMD_FEW_BUILD false
#endif

namespace {

template <class T>
mat<T> random_of(int m, int n) {
  mat<T> a(m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) a(i, j) = uniform<T>();
  return a;
}

/// Calls f(std::bool_constant<b>{}).
template <class F>
void with_bool(bool b, F&& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

/// One gemm on fresh data, fast path (policy `fast`) against the reference; returns the first
/// difference or "". The transposes are run-time values here so that the harness is compiled
/// once per shape (it cost as much compile time as the kernels when it was per transpose).
template <class T, int M, int N, int K, class Policy>
std::string one_gemm(const Policy& fast, bool ta, bool tb_, shape sh, bool pointers, index_t count,
                     T alpha, T beta) {
  const int ar = ta ? K : M, ac = ta ? M : K, br = tb_ ? N : K, bc = tb_ ? K : N;
  poisoned<T> A(ar, ac, count, sh), B(br, bc, count, sh), C(M, N, count, sh);
  A.fill([&](index_t) { return random_of<T>(ar, ac); });
  B.fill([&](index_t) { return random_of<T>(br, bc); });
  if (beta != T(0)) C.fill([&](index_t) { return random_of<T>(M, N); });  // else C stays poison
  poisoned<T> want = C;
  const tb::op oa = ta ? tb::op::trans : tb::op::no_trans;
  const tb::op ob = tb_ ? tb::op::conj_trans : tb::op::no_trans;
  auto run = [&](const auto& policy, poisoned<T>& c) {
    with_bool(ta, [&](auto ta_c) {
      with_bool(tb_, [&](auto tb_c) {
        constexpr bool TA = decltype(ta_c)::value, TB = decltype(tb_c)::value;
        constexpr int AR = TA ? K : M, AC = TA ? M : K, BR = TB ? N : K, BC = TB ? K : N;
        if (pointers)
          tb::gemm(policy, oa, ob, alpha, A.template pointers<AR, AC, const T>(),
                   B.template pointers<BR, BC, const T>(), beta, c.template pointers<M, N>());
        else
          tb::gemm(policy, oa, ob, alpha, A.template strided<AR, AC, const T>(),
                   B.template strided<BR, BC, const T>(), beta, c.template strided<M, N>());
      });
    });
  };
  run(fast, C);
  run(reference, want);
  return compare(C.buf, want.buf, 4.0 * (K + 2) * eps<T>());
}

/// Sets gemm's software prefetch in the streaming path for a scope.
struct prefetch_scope {
  bool saved = ts::tuning::gemm_prefetches().load();
  explicit prefetch_scope(bool on) { ts::tuning::gemm_prefetches() = on; }
  ~prefetch_scope() { ts::tuning::gemm_prefetches() = saved; }
};

template <class T, int M, int N, int K>
void check_shape() {
  for (ts::isa s : isas()) {
    isa_scope scope(s);
    // The grid through both paths, the big batch below through the default one. The streaming
    // grid with gemm's software prefetch on, which the machine's default may leave off
    // (tuning::gemm_prefetches): its index arithmetic runs under the sanitizers everywhere.
    for (bool on : {false, true}) {
      const streaming_scope streaming(on);
      const prefetch_scope prefetch(true);
      for (bool ta : {false, true})
        for (bool tb_ : {false, true})
          for (shape sh : {shape::padded, shape::packed, shape::aligned})
            for (bool pointers : {false, true})
              for (index_t count : small_counts)
                for (T beta : {T(0), T(0.75)}) {
                  INFO("isa " << name(s) << (on ? ", streaming" : "") << ", M N K = " << M << " " << N << " " << K << ", op(A) "
                              << (ta ? "T" : "N") << ", op(B) " << (tb_ ? "T" : "N") << ", "
                              << name(sh) << (pointers ? ", pointers" : ", strided") << ", count "
                              << count << ", beta " << beta);
                  const std::string diff =
                      count == 1
                          ? one_gemm<T, M, N, K>(simd_seq, ta, tb_, sh, pointers, count, T(1.25), beta)
                          : one_gemm<T, M, N, K>(simd_par, ta, tb_, sh, pointers, count, T(-0.5), beta);
                  CHECK(diff == "");
                }
    }
    // Many matrices over the threads, one configuration.
    INFO("isa " << name(s) << ", M N K = " << M << " " << N << " " << K << ", count " << big_count);
    // The default policy (kernels::automatic) at two sizes (test_simd_support.hpp).
    if constexpr (M == N && N == K && automatic_size(N))
      CHECK(one_gemm<T, M, N, K>(tb::par, false, false, shape::padded, false, big_count, T(1), T(1)) == "");
    else
      CHECK(one_gemm<T, M, N, K>(simd_par, false, false, shape::padded, false, big_count, T(1), T(1)) == "");
    // Packed C over the threads through the streaming path with beta == 0: where M is not a
    // multiple of the pack, C goes out in groups through an L1 buffer (gemm.hpp,
    // grouped_streamable), from a first matrix on a line boundary (aligned) or not (packed).
    const streaming_scope streaming(true);
    for (shape sh : {shape::packed, shape::aligned})
      for (bool ta : {false, true}) {
        INFO((ta ? "op(A) T, " : "op(A) N, ") << name(sh) << ", streaming, beta 0");
        CHECK(one_gemm<T, M, N, K>(simd_par, ta, false, sh, false, big_count, T(1), T(0)) == "");
      }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("simd gemm: square sizes 1..32 match the reference", "[simd][gemm]", float, double) {
  for_sizes<TestType>([](auto n) { check_shape<TestType, n, n, n>(); });
}

TEMPLATE_TEST_CASE("simd gemm: rectangular shapes match the reference", "[simd][gemm]", float, double) {
  // Every shape in both types, but under the sanitizers (-Dsimd_test_sizes=few) each shape
  // in one type: there they cost about 30 s of compile each, and CI's margin is ten minutes.
  // With -Dsimd_test_shards the first shard holds them (if constexpr: the others do not
  // instantiate them).
  [[maybe_unused]] constexpr bool both = !TB_SIMD_FEW_BUILD, dbl = std::is_same_v<TestType, double>;
  if constexpr (first_shard && (both || dbl)) check_shape<TestType, 3, 7, 5>();
  if constexpr (first_shard && (both || !dbl)) check_shape<TestType, 17, 4, 9>();
  if constexpr (first_shard && (both || dbl)) check_shape<TestType, 32, 1, 32>();
  if constexpr (first_shard && (both || !dbl)) check_shape<TestType, 1, 32, 2>();
  if constexpr (first_shard && (both || !dbl)) check_shape<TestType, 9, 31, 16>();
  if constexpr (first_shard && (both || dbl)) check_shape<TestType, 24, 12, 1>();
}

TEMPLATE_TEST_CASE("simd gemm: alpha == 0 reads neither A nor B, beta == 0 never reads C",
                   "[simd][gemm]", float, double) {
  using T = TestType;
  for (ts::isa s : isas()) {
    isa_scope scope(s);
    INFO("isa " << name(s));
    poisoned<T> A(8, 8, 5, shape::padded), B(8, 8, 5, shape::padded), C(8, 8, 5, shape::padded);
    C.fill([](index_t) { return mat<T>::Constant(8, 8, T(2)); });
    // A and B are all poison (NaN): alpha == 0 must not look at them.
    tb::gemm(simd_seq, tb::no_trans, tb::no_trans, T(0), A.template strided<8, 8, const T>(),
             B.template strided<8, 8, const T>(), T(0.5), C.template strided<8, 8>());
    CHECK(C.at(4, 7, 7) == T(1));
    // C all poison, beta == 0: the result is finite.
    poisoned<T> D(8, 8, 5, shape::packed);
    A.fill([](index_t) { return mat<T>::Identity(8, 8); });
    B.fill([](index_t) { return mat<T>::Constant(8, 8, T(3)); });
    tb::gemm(simd_seq, tb::no_trans, tb::no_trans, T(1), A.template strided<8, 8, const T>(),
             B.template strided<8, 8, const T>(), T(0), D.template strided<8, 8>());
    CHECK(D.at(4, 7, 7) == T(3));
    CHECK(D.at(0, 0, 0) == T(3));
  }
}

#else

TEST_CASE("simd gemm: no SIMD kernels in this build", "[simd][gemm]") { SUCCEED(); }

#endif
