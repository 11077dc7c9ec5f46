// The front end's argument rules, one small case each: messages that name the sizes, shared
// factors (stride-0 A and ipiv), aliasing between outputs and inputs, views that know their
// buffer. Outputs are poisoned where a call must throw before writing anything.
#include "support.hpp"

#include <span>

using namespace tbt;
using Catch::Matchers::Contains;

TEST_CASE("size errors name the sizes", "[api][messages]") {
  CHECK_THROWS_WITH((tb::batch<double, 4, 4>(3, 4, 2)), Contains("rows 3") && Contains("M = 4"));
  CHECK_THROWS_WITH((tb::batch<double, 4, 4>(4, 5, 2)), Contains("cols 5") && Contains("N = 4"));
  std::vector<double> buf(3 * 5 * 2);
  tb::strided_view<double> v(buf.data(), 3, 5, 2);
  CHECK_THROWS_WITH((tb::fixed_extents<4, 4>(v)), Contains("3 x 5") && Contains("4 x 4"));
  tb::batch<double> A(3, 4, 2), B(5, 5, 2), C(3, 5, 2);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, A, B, C), Contains("3 x 4, 5 x 5, 3 x 5"));
  tb::batch<double> S(4, 4, 2), R(3, 1, 2);
  std::vector<int> ipiv(8), info(2);
  CHECK_THROWS_WITH(tb::gesv(tb::seq, S, ipiv, R, info), Contains("4 x 4, 3 x 1"));
  CHECK_THROWS_WITH(tb::getrf(tb::seq, S, tb::pivot_view(ipiv.data(), 8, 3), info),
                      Contains("stride 3") && Contains("= 4"));
  CHECK_THROWS_WITH(tb::vbatch<double>({1, 2}, {1}), Contains("different lengths (2 and 1)"));
}

namespace {
/// One factor (A at stride 0, ipiv at stride 0) solved against `count` right-hand sides.
template <int N>
void shared_factor(int n, index_t count) {
  test_batch<double> a(n, n, 1), b(n, 2, count);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) a.at(0, i, j) = (i == j ? n : 0) + uniform<double>(-1, 1);
  for (index_t k = 0; k < count; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < 2; ++j) b.at(k, i, j) = uniform<double>(-1, 1);
  const mat<double> a0 = a.get(0);
  std::vector<mat<double>> b0;
  for (index_t k = 0; k < count; ++k) b0.push_back(b.get(k));
  std::vector<int> ipiv(std::size_t(n), -7), info(1, -7);
  auto A1 = tb::strided_view<double, N, N>::make(a.buf.data(), 1, a.ld, a.stride, n, n);
  tb::getrf(tb::seq, A1, ipiv, info);
  REQUIRE(info[0] == 0);
  auto A = tb::strided_view<const double, N, N>::make(a.buf.data(), count, a.ld, 0, n, n);
  auto B = tb::strided_view<double, N, tb::dynamic>::make(b.buf.data(), count, b.ld, b.stride, n, 2);
  tb::getrs(tb::par, tb::no_trans, A, tb::pivot_view(ipiv.data(), n, 0), B);
  const Eigen::PartialPivLU<mat<double>> lu(a0);
  for (index_t k = 0; k < count; ++k) REQUIRE((b.get(k) - lu.solve(b0[k])).norm() < 1e-12 * (1 + b0[k].norm()));
  // Outputs keep their rule: getrf's pivots at stride 0 would overlap.
  tb::batch<double> F(n, n, 2);
  std::vector<int> info2(2);
  CHECK_THROWS_WITH(tb::getrf(tb::seq, F, tb::pivot_view(ipiv.data(), n, 0), info2), Contains("ipiv stride 0"));
}
}  // namespace

TEST_CASE("getrs: one factor and its pivots shared by a batch of right-hand sides (stride 0)", "[api][getrs]") {
  shared_factor<tb::dynamic>(5, 37);
  shared_factor<4>(4, 37);
}

namespace {
template <class T>
bool all_poison(const std::vector<T>& v, std::size_t from = 0, std::size_t to = std::size_t(-1)) {
  for (std::size_t i = from; i < std::min(to, v.size()); ++i)
    if (!is_poison(v[i])) return false;
  return true;
}
}  // namespace

TEST_CASE("an output that shares memory with an input throws before writing", "[api][aliasing]") {
  const int n = 6;
  const index_t count = 5;
  std::vector<double> buf(std::size_t(n * n * count * 2), poison<double>());
  std::vector<int> ipiv(std::size_t(n * count), -7), info(std::size_t(count), -7);
  tb::strided_view<double> A(buf.data(), n, n, count), B(buf.data() + n * n * count, n, n, count);
  const auto same = [&](auto f) { CHECK_THROWS_WITH(f(), Contains("overlaps")); };
  // C == A, run-time and fixed sizes; C inside B; C one matrix off A.
  same([&] { tb::gemm(tb::seq, A, B, A); });
  same([&] { tb::gemm(tb::seq, B, A, A); });
  same([&] { tb::gemm(tb::seq, tb::fixed_extents<6, 6>(A), tb::fixed_extents<6, 6>(B), tb::fixed_extents<6, 6>(A)); });
  double* const b0 = buf.data() + n * n * count;
  same([&] { tb::gemm(tb::seq, tb::strided_view<double>(buf.data(), n, n, 1), tb::strided_view<double>(b0, n, n, 1),
                      tb::strided_view<double>(b0 + 3, n, n, 1)); });
  same([&] { tb::gemm(tb::seq, tb::strided_view<double>(buf.data(), n, n, 2), tb::strided_view<double>(b0, n, n, 2),
                      tb::strided_view<double>(buf.data() + n * n, n, n, 2)); });
  same([&] { tb::trsm(tb::seq, tb::left, tb::lower, tb::no_trans, tb::unit, 1.0, A, A); });
  same([&] { tb::getrs(tb::seq, tb::no_trans, A, ipiv, A); });
  same([&] { tb::potrs(tb::seq, tb::lower, A, A); });
  same([&] { tb::inverse(tb::seq, A, A, info); });
  // Two outputs: gesv's B inside A's memory (n = 4 over the first matrix).
  tb::strided_view<double> A4(buf.data(), 4, 4, 1), B4(buf.data() + 2, 4, 1, 1);
  same([&] { tb::gesv(tb::seq, A4, ipiv, B4, info); });
  same([&] { tb::posv(tb::seq, tb::lower, A4, B4, info); });
  // A shared input (stride 0) inside the output's range.
  same([&] { tb::gemm(tb::seq, tb::strided_view<const double>(buf.data() + n * n * 2, n, n, count, n, 0), B, A); });
  // Through pointer arrays: matrix k against matrix k.
  std::vector<double*> pa(count), pb(count);
  for (index_t k = 0; k < count; ++k) pa[k] = A[k].data, pb[k] = B[k].data;
  tb::pointer_view<double> PA(pa.data(), n, n, count), PB(pb.data(), n, n, count);
  same([&] { tb::gemm(tb::seq, PA, PB, PA); });
  same([&] { tb::gemm(tb::seq, A, PB, PA); });
  CHECK(all_poison(buf));
  CHECK(std::all_of(info.begin(), info.end(), [](int i) { return i == -7; }));
  // Disjoint neighbours and interleaved batches with equal strides pass.
  std::vector<double> two(std::size_t(2 * n * n * count), 1.0);
  tb::strided_view<double> X(two.data(), n, n, count, n, 2 * n * n), Y(two.data() + n * n, n, n, count, n, 2 * n * n);
  CHECK_NOTHROW(tb::gemm(tb::seq, X, X, Y));
  CHECK_NOTHROW(tb::gemm(tb::seq, A, A, B));
}

TEST_CASE("overlapping matrices of an output given by pointers throw before writing", "[api][aliasing]") {
  const int n = 3;
  std::vector<double> buf(std::size_t(n * n * 4), poison<double>());
  std::vector<double> in(std::size_t(n * n * 4), 1.0);
  std::vector<int> info(4, -7), ipiv(std::size_t(4 * n), -7);
  std::vector<double*> same(4, buf.data()), shifted{buf.data() + 3 * n * n, buf.data() + 2, buf.data() + n * n, buf.data()};
  std::vector<const double*> pin{in.data(), in.data() + 9, in.data() + 18, in.data() + 27};
  tb::pointer_view<const double> I(pin.data(), n, n, 4);
  for (auto* p : {&same, &shifted}) {
    tb::pointer_view<double> C(p->data(), n, n, 4);
    CHECK_THROWS_WITH(tb::gemm(tb::seq, I, I, C), Contains("C: two of its matrices overlap"));
    CHECK_THROWS_WITH(tb::getrf(tb::seq, C, ipiv, info), Contains("overlap"));
    CHECK_THROWS_WITH(tb::potrf(tb::seq, tb::lower, C, info), Contains("overlap"));
    CHECK_THROWS_WITH(tb::inverse(tb::seq, I, C, info), Contains("overlap"));
  }
  CHECK(all_poison(buf));
  // Distinct matrices in any order pass.
  std::vector<double*> perm{buf.data() + 27, buf.data() + 9, buf.data() + 18, buf.data()};
  CHECK_NOTHROW(tb::gemm(tb::seq, I, I, tb::pointer_view<double>(perm.data(), n, n, 4)));
  // Neighbouring buckets (starts 8 elements apart, extent 9), and starts spread far apart
  // (the sorted path), overlapping and not.
  std::vector<double> big(1000, poison<double>());
  for (const auto& [p, bad] : std::vector<std::pair<std::vector<double*>, bool>>{
           {{big.data() + 27, big.data() + 8, big.data() + 18, big.data()}, true},
           {{big.data() + 900, big.data() + 8, big.data() + 18, big.data()}, true},
           {{big.data() + 900, big.data() + 9, big.data() + 18, big.data()}, false}}) {
    tb::pointer_view<double> C(p.data(), n, n, 4);
    if (bad)
      CHECK_THROWS_WITH(tb::gemm(tb::seq, I, I, C), Contains("C: two of its matrices overlap"));
    else
      CHECK_NOTHROW(tb::gemm(tb::seq, I, I, C));
  }
  // Variable sizes (extents differ: the sorted path).
  std::vector<int> vm{3, 2, 3, 1}, vld{3, 2, 3, 1};
  std::vector<const double*> vin{in.data(), in.data() + 9, in.data() + 18, in.data() + 27};
  std::vector<double*> vout{big.data() + 100, big.data() + 50, big.data() + 4, big.data() + 12};
  std::fill(big.begin(), big.end(), poison<double>());
  tb::vbatch_view<const double> VI(vin.data(), vm.data(), vm.data(), vld.data(), 4);
  tb::vbatch_view<double> VO(vout.data(), vm.data(), vm.data(), vld.data(), 4);
  CHECK_THROWS_WITH(tb::gemm(tb::seq, VI, VI, VO), Contains("C: two of its matrices overlap"));
  CHECK(all_poison(big));
}

TEST_CASE("views over a known buffer check its size; ld and stride by name", "[api][views]") {
  std::vector<double> buf(100 * 36);
  // The mistake: (p, count, 36) meant stride 36 but is ld 36 (stride 216).
  CHECK_THROWS_WITH((tb::strided_view<double, 6, 6>(buf, 100, {.ld = 36})),
                    Contains("need 21570 elements; the buffer has 3600"));
  const tb::strided_view<double, 6, 6> v(buf, 100, {.stride = 36});
  CHECK((v.ld() == 6 && v.stride() == 36 && v.count() == 100));
  const tb::strided_view<double, 6, 6> packed(buf, 100);
  CHECK(packed.stride() == 36);
  CHECK_THROWS_WITH((tb::strided_view<double, 6, 6>(buf, 101)), Contains("the buffer has 3600"));
  CHECK_THROWS_WITH((tb::strided_view<double>(std::span<double>(buf).first(35), 6, 6, 1)), Contains("need 36"));
  CHECK_THROWS_WITH((tb::strided_view<double>(buf, 6, 6, 2, {.ld = 5})), Contains("leading dimension 5"));
  const tb::strided_view<const double> c(buf, 6, 6, 50, {.ld = 8, .stride = 60});
  CHECK((c.ld() == 8 && c.stride() == 60));
  Eigen::MatrixXd e(6, 6 * 10);
  const tb::strided_view<double, 6, 6> ev(std::span<double>(e.data(), std::size_t(e.size())), 10);
  CHECK(ev[9].data == e.data() + 9 * 36);
  CHECK_NOTHROW(tb::strided_view<double, 6, 6>(buf, 0, {.ld = 36}));
}

TEST_CASE("the run-time knobs have public names", "[api][tuning]") {
  namespace tn = tb::tuning;
  const long before = tn::parallel_min_bytes_set().load();
  tn::parallel_min_bytes_set() = 0;
  CHECK(tb::detail::simd::tuning::parallel_min_bytes(2) == 0);
  tn::parallel_min_bytes_set() = before;
  const std::size_t stream = tn::streaming_min_bytes().load();
  CHECK(stream > 0);
  tn::limit_isa(tn::isa::none);
  CHECK(tn::active_isa() == tn::isa::none);
  tn::limit_isa(tn::isa::avx512);
}

TEST_CASE("variable-size batches: empty is a no-op; a pivot stride must hold every matrix's pivots", "[api][vbatch]") {
  std::vector<double*> ptrs;
  std::vector<int> m, n, ld, ipiv, info;
  tb::vbatch_view<double> E(ptrs.data(), m.data(), n.data(), ld.data(), 0);
  CHECK_NOTHROW(tb::getrf(tb::seq, E, ipiv, info));
  CHECK_NOTHROW(tb::getrs(tb::seq, tb::no_trans, E, ipiv, E));
  CHECK_NOTHROW(tb::gesv(tb::seq, E, ipiv, E, info));
  CHECK_NOTHROW(tb::getri(tb::seq, E, ipiv, info));
  tb::vbatch<double> V({2, 4, 3}, {2, 4, 3});
  for (index_t k = 0; k < V.count(); ++k)
    for (int i = 0; i < V[k].rows(); ++i) V[k](i, i) = 2;
  std::vector<int> piv(12, -7), inf(3, -7);
  CHECK_THROWS_WITH(tb::getrf(tb::seq, V, tb::pivot_view(piv.data(), 12, 3), inf),
                    Contains("ipiv stride 3 smaller than min(m, n) = 4 of matrix 1"));
  CHECK_THROWS_WITH(tb::getrf(tb::seq, V, piv, inf), Contains("explicit stride"));
  CHECK(std::all_of(piv.begin(), piv.end(), [](int p) { return p == -7; }));
  CHECK(std::all_of(inf.begin(), inf.end(), [](int p) { return p == -7; }));
  tb::getrf(tb::seq, V, tb::pivot_view(piv.data(), 12, 4), inf);
  CHECK((inf == std::vector<int>{0, 0, 0}));
  CHECK((piv[0] == 1 && piv[4] == 1 && piv[8] == 1 && piv[10] == 3 && piv[11] == -7));
}

TEST_CASE("compact layout: an output sharing an argument's storage throws before writing", "[api][aliasing][compact]") {
  tb::compact_batch<double, 3, 3> A(10), B(10);
  std::vector<int> info(10, -7), ipiv(30, -7);
  std::fill(A.data(), A.data() + 2 * 8 * 9, poison<double>());
  CHECK_THROWS_WITH(tb::gemm(tb::seq, tb::no_trans, tb::no_trans, 1.0, A, B, 0.0, A), Contains("C overlaps A"));
  CHECK_THROWS_WITH(tb::gemm(tb::seq, tb::no_trans, tb::no_trans, 1.0, B, A, 0.0, A), Contains("C overlaps B"));
  CHECK_THROWS_WITH(tb::inverse(tb::seq, A, A, info), Contains("X overlaps A"));
  CHECK_THROWS_WITH(tb::getrs(tb::seq, tb::no_trans, A, ipiv, A), Contains("B overlaps A"));
  CHECK_THROWS_WITH(tb::potrs(tb::seq, tb::lower, A, A), Contains("B overlaps A"));
  CHECK_THROWS_WITH(tb::trsm(tb::seq, tb::left, tb::lower, tb::no_trans, tb::unit, 1.0, A, A), Contains("B overlaps A"));
  CHECK(std::all_of(A.data(), A.data() + 2 * 8 * 9, [](double x) { return is_poison(x); }));
  CHECK(std::all_of(info.begin(), info.end(), [](int i) { return i == -7; }));
}
