// The compiled kernel library (include/tinybatch/host/compiled.hpp): square calls with
// run-time extents against the reference on the same poisoned batches (factors within a few
// ulps, pivots and info exactly, padding and untouched triangles bit for bit), strided and
// pointer-array views, `seq` and `par`, each instruction set of the CPU, and the library's
// call counter: every backend call at an order it holds must reach it (a call that falls back
// to the reference loops unseen fails), one it does not hold (n = 5 in the few build, n = 33)
// or with the instruction sets capped at none must not, and all must be right.
#include "test_simd_support.hpp"

#include <tinybatch/host/compiled.hpp>

using namespace tbt;
using namespace tbt::simd;

#if TINYBATCH_USES_KERNEL_LIBRARY

namespace {

namespace tc = tinybatch::detail::compiled;

bool in_library(int n) {
#if defined(TINYBATCH_KERNELS_FEW)
  return n == 2 || n == 7 || n == 8;
#elif defined(TINYBATCH_KERNELS_ONE)
  return n == 7;
#else
  return n >= 1 && n <= 32;
#endif
}

/// f(view) with the run-time-size view of p: strided, or the pointer array.
template <class T, class F>
void with_dynamic(poisoned<T>& p, bool pointers, F&& f) {
  if (pointers)
    f(tb::pointer_view<T, tb::dynamic, tb::dynamic>(p.ptrs.data(), p.m, p.n, p.count, p.ld));
  else
    f(tb::strided_view<T, tb::dynamic, tb::dynamic>(p.buf.data() + p.offset, p.m, p.n, p.count, p.ld, p.stride));
}

/// Runs call(policy, fast) with a policy that reaches the library (`seq` or `par`) on the
/// first buffers and the reference on the second, and checks how many calls the library ran:
/// `expect` (each front-end operation is one or two backend calls, each counted once).
template <class Call>
void both(std::uint64_t expect, bool seq, Call&& call) {
  const std::uint64_t before = tc::kernel_calls();
  if (seq)
    call(tb::seq, true);
  else
    call(tb::par, true);
  CHECK(tc::kernel_calls() - before == expect);
  call(reference, false);
}

template <class T>
void check(int n, bool pointers, index_t count, bool seq, bool vector_isa) {
  const std::uint64_t lib = in_library(n) && vector_isa ? 1 : 0;  // calls per backend operation
  const double tolerance = 1e2 * tol<T>(n);
  INFO("n = " << n << (pointers ? ", pointers" : ", strided") << ", count " << count << (seq ? ", seq" : ", par"));
  // gesv, then getrs (transposed) on its factors: LU with partial pivoting on well-conditioned
  // matrices; the factors, pivots, info and solutions of both paths compared.
  {
    poisoned<T> A(n, n, count, shape::padded), B(n, 5, count, shape::padded);  // 4 + 1 columns
    A.fill([&](index_t) { return mat<T>(random_of<T>(n, n) + T(n) * mat<T>::Identity(n, n)); });
    B.fill([&](index_t) { return random_of<T>(n, 5); });
    poisoned<T> A2 = A, B2 = B;
    std::vector<int> piv(std::size_t(count * n), -7), piv2 = piv, info(std::size_t(count), -7), info2 = info;
    both(2 * lib, seq, [&](const auto& policy, bool fast) {
      with_dynamic(fast ? A : A2, pointers, [&](auto a) {
        with_dynamic(fast ? B : B2, pointers,
                     [&](auto b) { tb::gesv(policy, a, fast ? piv : piv2, b, fast ? info : info2); });
      });
    });
    CHECK(piv == piv2);
    CHECK(info == info2);
    CHECK(compare(A.buf, A2.buf, tolerance) == "");
    CHECK(compare(B.buf, B2.buf, tolerance) == "");
    poisoned<T> C(n, 1, count, shape::packed);
    C.fill([&](index_t) { return random_of<T>(n, 1); });
    poisoned<T> C2 = C;
    both(lib, seq, [&](const auto& policy, bool fast) {
      with_dynamic(fast ? A : A2, pointers, [&](auto a) {
        with_dynamic(fast ? C : C2, pointers, [&](auto c) {
          tb::getrs(policy, tb::op::trans, a, fast ? piv : piv2, c, fast ? info : info2);
        });
      });
    });
    CHECK(compare(C.buf, C2.buf, tolerance) == "");
  }
  // getrf on the cases that decide pivots and info (ties, zero columns, NaNs).
  {
    poisoned<T> A(n, n, count, shape::packed);
    A.fill([&](index_t k) { return getrf_case<T>(n, n, k, int(count) + n); });
    poisoned<T> A2 = A;
    std::vector<int> piv(std::size_t(count * n), -7), piv2 = piv, info(std::size_t(count), -7), info2 = info;
    both(lib, seq, [&](const auto& policy, bool fast) {
      with_dynamic(fast ? A : A2, pointers, [&](auto a) { tb::getrf(policy, a, fast ? piv : piv2, fast ? info : info2); });
    });
    CHECK(piv == piv2);
    CHECK(info == info2);
    CHECK(compare(A.buf, A2.buf, 8.0 * (n + 1) * eps<T>() * 16) == "");
  }
  // posv in both triangles, with matrices that are not positive definite among them (info
  // exact, their right-hand sides untouched).
  for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper}) {
    poisoned<T> A(n, n, count, shape::padded), B(n, 6, count, shape::padded);  // 4 + 2 columns
    A.fill([&](index_t k) { return spd_case<T>(n, k, n); });
    B.fill([&](index_t) { return random_of<T>(n, 6); });
    poisoned<T> A2 = A, B2 = B;
    std::vector<int> info(std::size_t(count), -7), info2 = info;
    both(2 * lib, seq, [&](const auto& policy, bool fast) {
      with_dynamic(fast ? A : A2, pointers, [&](auto a) {
        with_dynamic(fast ? B : B2, pointers, [&](auto b) { tb::posv(policy, ul, a, b, fast ? info : info2); });
      });
    });
    CHECK(info == info2);
    CHECK(compare(A.buf, A2.buf, tolerance) == "");
    CHECK(compare(B.buf, B2.buf, 1e2 * tolerance) == "");
  }
}

}  // namespace

TEMPLATE_TEST_CASE("kernel library: run-time sizes reach the compiled kernels", "[kernel_library]", float, double) {
  // Each instruction set this CPU runs (the library's kernels obey the same cap as the
  // header's), then none: the cap at isa::none leaves every call to the reference loops.
  std::vector<ts::isa> sets = isas();
  sets.push_back(ts::isa::none);
  for (ts::isa s : sets) {
    isa_scope scope(s);
    INFO("isa " << (s == ts::isa::none ? "none" : name(s)));
    for (int n : {1, 2, 5, 7, 8, 17, 32, 33})
      for (bool pointers : {false, true})
        for (index_t count : {index_t(1), index_t(37)})
          check<TestType>(n, pointers, count, /*seq=*/count == 1, s != ts::isa::none);
  }
}

TEST_CASE("kernel library: not for rectangular, fixed-size or reference calls", "[kernel_library]") {
  using T = double;
  poisoned<T> A(7, 5, 9, shape::packed);
  A.fill([&](index_t k) { return getrf_case<T>(7, 5, k, 3); });
  std::vector<int> piv(9 * 5), info(9);
  std::uint64_t before = tc::kernel_calls();
  with_dynamic(A, false, [&](auto a) { tb::getrf(tb::par, a, piv, info); });
  CHECK(tc::kernel_calls() == before);
  tb::getrf(tb::par, A.template strided<7, 5>(), piv, info);
  CHECK(tc::kernel_calls() == before);
  poisoned<T> S(8, 8, 9, shape::packed);
  S.fill([&](index_t k) { return getrf_case<T>(8, 8, k, 3); });
  piv.assign(9 * 8, -7);
  with_dynamic(S, true, [&](auto a) { tb::getrf(reference, a, piv, info); });
  CHECK(tc::kernel_calls() == before);
}

#else

TEST_CASE("kernel library: not linked in this build", "[kernel_library]") { SUCCEED(); }

#endif
