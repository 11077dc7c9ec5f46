// The SIMD getrf (fixed M x N <= 32) against the reference: factors within a few ulps, pivots
// and info exactly equal, on random matrices and on the cases that decide pivots and info:
// ties in |a| (the first one wins), NaNs (never chosen over a number), exactly zero columns.
#include "test_simd_support.hpp"

#include <algorithm>


using namespace tbt;
using namespace tbt::simd;

#if TINYBATCH_HOST_SIMD

namespace {

template <class T, int M, int N, class Policy>
std::string one_getrf(const Policy& fast, shape sh, bool pointers, index_t count, int variant) {
  constexpr int MN = M < N ? M : N;
  poisoned<T> A(M, N, count, sh);
  A.fill([&](index_t k) { return getrf_case<T>(M, N, k, variant); });
  poisoned<T> want = A;
  std::vector<int> piv(std::size_t(count * MN), -7), piv_want = piv;
  std::vector<int> info(std::size_t(count), -7), info_want = info;
  auto run = [&](const auto& policy, poisoned<T>& a, std::vector<int>& p, std::vector<int>& i) {
    if (pointers)
      tb::getrf(policy, a.template pointers<M, N>(), p, i);
    else
      tb::getrf(policy, a.template strided<M, N>(), p, i);
  };
  run(fast, A, piv, info);
  run(reference, want, piv_want, info_want);
  if (piv != piv_want) return "pivots differ";
  if (info != info_want) return "info differs";
  // Entries of L and U: backward error of one elimination is about n eps |L| |U|; the
  // integer case keeps |L| <= 1 and |U| small.
  return compare(A.buf, want.buf, 8.0 * (MN + 1) * eps<T>() * 16);
}

template <class T, int M, int N>
void check_shape() {
  static int variant = 0;
  for (ts::isa s : isas()) {
    isa_scope scope(s);
    for (shape sh : {shape::padded, shape::packed})
      for (bool pointers : {false, true})
        for (index_t count : small_counts) {
          ++variant;
          INFO("isa " << name(s) << ", M N = " << M << " " << N << ", " << name(sh)
                      << (pointers ? ", pointers" : ", strided") << ", count " << count
                      << ", variant " << variant);
          const std::string diff = count == 1
                                       ? one_getrf<T, M, N>(simd_seq, sh, pointers, count, variant)
                                       : one_getrf<T, M, N>(simd_par, sh, pointers, count, variant);
          CHECK(diff == "");
        }
    INFO("isa " << name(s) << ", M N = " << M << " " << N << ", count " << big_count);
    CHECK(one_getrf<T, M, N>(simd_par, shape::padded, true, big_count, 0) == "");
    // The default policy (kernels::automatic) at two sizes (test_simd_support.hpp).
    if constexpr (M == N && automatic_size(N))
      CHECK(one_getrf<T, M, N>(tb::par, shape::packed, false, big_count, 1) == "");
    else
      CHECK(one_getrf<T, M, N>(simd_par, shape::packed, false, big_count, 1) == "");
  }
}

}  // namespace

TEMPLATE_TEST_CASE("simd getrf: square sizes 1..32 match the reference", "[simd][getrf]", float,
                   double) {
  for_sizes<TestType>([](auto n) { check_shape<TestType, n, n>(); });
}

TEMPLATE_TEST_CASE("simd getrf: rectangular shapes match the reference", "[simd][getrf]", float,
                   double) {
  if constexpr (first_shard) {  // -Dsimd_test_shards: the first shard holds them
    check_shape<TestType, 7, 3>();
    check_shape<TestType, 3, 7>();
    check_shape<TestType, 32, 5>();
    check_shape<TestType, 17, 32>();
    check_shape<TestType, 1, 4>();
    check_shape<TestType, 9, 1>();
  }
}

TEMPLATE_TEST_CASE("simd getrf: a NaN on the diagonal is the pivot, elsewhere never", "[simd][getrf]",
                   float, double) {
  using T = TestType;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (ts::isa s : isas()) {
    isa_scope scope(s);
    INFO("isa " << name(s));
    poisoned<T> A(4, 4, 2, shape::packed);
    mat<T> a0(4, 4), a1(4, 4);
    a0 << nan, 1, 2, 3,  //
        5, 1, 0, 1,      //
        9, 0, 1, 0,      //
        1, 2, 3, 1;
    a1 << 1, 1, 2, 3,  //
        nan, 1, 0, 1,  //
        -9, 0, 1, 0,   //
        9, 2, 3, 1;
    A.set(0, a0);
    A.set(1, a1);
    std::vector<int> piv(8), info(2);
    tb::getrf(simd_seq, A.template strided<4, 4>(), piv, info);
    CHECK(piv[0] == 1);  // NaN first: idamax keeps it
    CHECK(piv[4] == 3);  // -9 before 9, the NaN never
  }
}

#else

TEST_CASE("simd getrf: no SIMD kernels in this build", "[simd][getrf]") { SUCCEED(); }

#endif
