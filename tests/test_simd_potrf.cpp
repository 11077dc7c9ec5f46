// The SIMD potrf (fixed n <= 32) against the reference: both triangles, info exactly equal
// (first non-positive or NaN leading minor), the other triangle left as it was (it holds
// poison here, so reading it would also show), and the factorization stopped where LAPACK's
// stops.
#include "test_simd_support.hpp"


using namespace tbt;
using namespace tbt::simd;

#if TINYBATCH_HOST_SIMD

namespace {

template <class T, int N, class Policy>
std::string one_potrf(const Policy& fast, tb::uplo ul, shape sh, bool pointers, index_t count,
                      int variant) {
  poisoned<T> A(N, N, count, sh);
  for (index_t k = 0; k < count; ++k) {  // the `ul` triangle only; the other stays poison
    const mat<T> a = spd_case<T>(N, k, variant);
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i)
        if (ul == tb::uplo::lower ? i >= j : i <= j) A.at(k, i, j) = a(i, j);
  }
  poisoned<T> want = A;
  std::vector<int> info(std::size_t(count), -7), info_want = info;
  auto run = [&](const auto& policy, poisoned<T>& a, std::vector<int>& i) {
    if (pointers)
      tb::potrf(policy, ul, a.template pointers<N, N>(), i);
    else
      tb::potrf(policy, ul, a.template strided<N, N>(), i);
  };
  run(fast, A, info);
  run(reference, want, info_want);
  if (info != info_want) return "info differs";
  return compare(A.buf, want.buf, 4.0 * (N + 1) * eps<T>());
}

template <class T, int N>
void check_size() {
  static int variant = 0;
  for (ts::isa s : isas()) {
    isa_scope scope(s);
    for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper})
      for (shape sh : {shape::padded, shape::packed})
        for (bool pointers : {false, true})
          for (index_t count : small_counts) {
            ++variant;
            INFO("isa " << name(s) << ", n = " << N << (ul == tb::uplo::lower ? ", lower" : ", upper")
                        << ", " << name(sh) << (pointers ? ", pointers" : ", strided") << ", count "
                        << count << ", variant " << variant);
            const std::string diff =
                count == 1 ? one_potrf<T, N>(simd_seq, ul, sh, pointers, count, variant)
                           : one_potrf<T, N>(simd_par, ul, sh, pointers, count, variant);
            CHECK(diff == "");
          }
    INFO("isa " << name(s) << ", n = " << N << ", count " << big_count);
    // The default policy (kernels::automatic) at two sizes (test_simd_support.hpp).
    if constexpr (automatic_size(N))
      CHECK(one_potrf<T, N>(tb::par, tb::uplo::lower, shape::packed, false, big_count, 0) == "");
    else
      CHECK(one_potrf<T, N>(simd_par, tb::uplo::lower, shape::packed, false, big_count, 0) == "");
  }
}

}  // namespace

TEMPLATE_TEST_CASE("simd potrf: sizes 1..32 match the reference", "[simd][potrf]", float, double) {
  for_sizes<TestType>([](auto n) { check_size<TestType, n>(); });
}

#else

TEST_CASE("simd potrf: no SIMD kernels in this build", "[simd][potrf]") { SUCCEED(); }

#endif
