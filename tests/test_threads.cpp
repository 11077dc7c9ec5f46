// par's rule for small calls (host/ranges.hpp fit_threads, host/tuning.hpp
// parallel_min_bytes): which team a call gets, and that results do not depend on it. The
// other test programs set the rule off (catch_main.cpp), so that their small batches still
// run the multi-threaded splits.
#include "support.hpp"

#include <cstring>
#include <tuple>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {
namespace tb = tinybatch;
namespace tun = tinybatch::detail::simd::tuning;
using tb::index_t;

int omp_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// Bit for bit (the poison in the padding is a NaN, never == itself).
template <class V>
bool same_bits(const V& x, const V& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), sizeof(x[0]) * x.size()) == 0;
}
template <class... V>
bool same_bits(const std::tuple<V...>& x, const std::tuple<V...>& y) {
  return std::apply([&](const auto&... a) { return std::apply([&](const auto&... b) { return (same_bits(a, b) && ...); }, y); }, x);
}

struct rule_scope {
  long saved = tun::parallel_min_bytes_set().load();
  explicit rule_scope(long v) { tun::parallel_min_bytes_set() = v; }
  ~rule_scope() { tun::parallel_min_bytes_set() = saved; }
};
}  // namespace

TEST_CASE("parallel_min_bytes: 24 KiB + 2 KiB per thread, or the value set") {
  rule_scope rule(-1);
  CHECK(tun::parallel_min_bytes(2) == 28u * 1024);
  CHECK(tun::parallel_min_bytes(16) == 56u * 1024);
  CHECK(tun::parallel_min_bytes(0) == 26u * 1024);
  tun::parallel_min_bytes_set() = 0;
  CHECK(tun::parallel_min_bytes(16) == 0u);
  tun::parallel_min_bytes_set() = 12345;
  CHECK(tun::parallel_min_bytes(2) == 12345u);
}

TEST_CASE("fit_threads: par runs small calls on the calling thread") {
  using tb::detail::fit_threads;
  using tb::detail::matrix_bytes;
  rule_scope rule(-1);
  std::vector<double> buf(8 * 8 * 2, 1.0);
  const tb::strided_view<double, 8, 8> a(buf.data(), 2);
  const tb::strided_view<double, 8, 1> b(buf.data(), 2);
  CHECK(matrix_bytes(a) == 512.0);
  CHECK(matrix_bytes(a, b) == 576.0);
  tb::compact_batch<float, 4, 4> c(3);
  CHECK(matrix_bytes(c.view()) == 64.0);
  std::vector<int> sizes = {2, 3};
  std::vector<const double*> ptrs = {buf.data(), buf.data()};
  const tb::vbatch_view<const double> v(ptrs.data(), sizes.data(), sizes.data(), sizes.data(), 2);
  CHECK(matrix_bytes(v) == 0.0);  // variable sizes: no estimate

  const tb::parallel_policy<> par{};
  const tb::parallel_policy<tb::kernels::simd> four{4};
  using tun::op;
  // getrf's bytes weigh 1: just below and at the rule for the default team; explicit teams
  // use their own size; gemm's and getrs' bytes weigh a third.
  const double min_t = double(tun::parallel_min_bytes(omp_threads()));
  const index_t below = index_t((min_t - 1) / 512), at = index_t(min_t / 512) + 1;
#if defined(_OPENMP)
  CHECK(fit_threads(par, op::getrf, below, 512.0).threads == 1);
  CHECK(fit_threads(par, op::getrf, at, 512.0).threads == 0);
  CHECK(fit_threads(par, op::gemm, 3 * below, 512.0).threads == 1);
  CHECK(fit_threads(par, op::gemm, 3 * at, 512.0).threads == 0);
  CHECK(fit_threads(par, op::getrs, 3 * below, 512.0).threads == 1);
  CHECK(fit_threads(par, op::getrs, 3 * at, 512.0).threads == 0);
  CHECK(fit_threads(par, op::inverse, 2 * below, 512.0).threads == 1);
  CHECK(fit_threads(par, op::inverse, 2 * at, 512.0).threads == 0);
  CHECK(fit_threads(four, op::getrf, 1, 512.0).threads == 1);
  CHECK(fit_threads(four, op::getrf, index_t(tun::parallel_min_bytes(4) / 512), 512.0).threads == 4);
  CHECK(fit_threads(par, op::getrf, 1, 0.0).threads == 0);  // unknown bytes: the policy as it is
  tun::parallel_min_bytes_set() = 0;
  CHECK(fit_threads(par, op::getrf, 1, 512.0).threads == 0);
#endif
  (void)below, (void)at;
  const tb::sequential_policy<> seq{};
  CHECK(&fit_threads(seq, op::getrf, 1, 512.0) == &seq);
}

TEMPLATE_TEST_CASE("par below and above the rule: the same results as seq", "", float, double) {
  using T = TestType;
  constexpr int N = 8;
  const index_t count = GENERATE(as<index_t>{}, 1, 9, 37);
  INFO("count " << count << ", seed " << tbt::seed());
  tbt::test_batch<T> a0(N, N, count), b0(N, 2, count);
  a0.fill_random();
  b0.fill_random();
  for (index_t k = 0; k < count; ++k)
    for (int i = 0; i < N; ++i) a0.at(k, i, i) += T(N);
  auto run = [&](auto policy, long rule_bytes) {
    rule_scope rule(rule_bytes);
    tbt::test_batch<T> a = a0, b = b0, c(N, 2, count);
    a.ptrs.clear(), b.ptrs.clear(), c.ptrs.clear();
    c.fill_poison();
    std::vector<int> piv(std::size_t(count) * N, -7), info(std::size_t(count), -7);
    auto av = tb::strided_view<T, N, N>::make(a.buf.data(), count, a.ld, a.stride, N, N);
    auto bv = tb::strided_view<T, N, 2>::make(b.buf.data(), count, b.ld, b.stride, N, 2);
    auto cv = tb::strided_view<T, N, 2>::make(c.buf.data(), count, c.ld, c.stride, N, 2);
    tb::gemm(policy, av, bv, cv);  // C = A B, before A is factored
    tb::getrf(policy, av, std::span<int>(piv), std::span<int>(info));
    tb::getrs(policy, tb::no_trans, av, std::span<int>(piv), bv);
    return std::make_tuple(a.buf, b.buf, c.buf, piv, info);
  };
  const auto ref = run(tb::seq, -1);
  CHECK(same_bits(run(tb::par, -1), ref));  // small: the calling thread
  CHECK(same_bits(run(tb::par, 0), ref));   // the whole team, as before
  // And seq is right: A X = B with X from getrs, C = A B checked against Eigen.
  const auto& [lu, x, c, piv, info] = ref;
  for (index_t k = 0; k < count; ++k) {
    REQUIRE(info[k] == 0);
    tbt::mat<T> A = a0.get(k), B = b0.get(k), X(N, 2), C(N, 2);
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < N; ++i) {
        X(i, j) = x[std::size_t(k * b0.stride + i + j * b0.ld)];
        C(i, j) = c[std::size_t(k * b0.stride + i + j * b0.ld)];
      }
    const T eps = std::numeric_limits<T>::epsilon();
    CHECK((A * X - B).norm() <= 50 * N * eps * (A.norm() * X.norm() + B.norm()));
    CHECK((C - A * B).norm() <= 10 * N * eps * A.norm() * B.norm());
  }
}
