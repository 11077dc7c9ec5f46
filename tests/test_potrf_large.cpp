// Host Cholesky beyond the SIMD kernels' n <= 32 (blocked, host/blocked/cholesky.hpp) and on
// variable-size batches (grouped by order through the fixed-size kernels, n > 32 blocked):
// potrf's ||L L^T - A|| / (n ||A|| eps) < 30 with Eigen's LLT agreeing, info exactly as the
// reference (and reference LAPACK where installed) for not-SPD and NaN matrices mixed in, the
// other triangle and everything around the matrices untouched; potrs / posv by the solve
// residual, B untouched where info != 0.
#include "support.hpp"

using namespace tbt;

namespace {

/// A variable-size batch: matrix k is m[k] x n[k], ld m[k] + k % ld_mod, two poison elements
/// after each, poison everywhere to begin with.
template <class T>
struct vbuf {
  std::vector<int> m, n, ld;
  std::vector<index_t> off;
  std::vector<T> buf;
  std::vector<T*> ptrs;
  vbuf(std::vector<int> rows, std::vector<int> cols, int ld_mod = 3) : m(std::move(rows)), n(std::move(cols)) {
    index_t total = 0;
    for (std::size_t k = 0; k < m.size(); ++k) {
      ld.push_back(std::max(m[k], 1) + int(k % std::size_t(ld_mod)));
      off.push_back(total);
      total += index_t(ld[k]) * n[k] + 2;
    }
    buf.assign(std::size_t(total) + 1, poison<T>());
    for (std::size_t k = 0; k < m.size(); ++k) ptrs.push_back(buf.data() + off[k]);
  }
  index_t count() const { return index_t(m.size()); }
  tb::vbatch_view<T> view() { return {ptrs.data(), m.data(), n.data(), ld.data(), count()}; }
  T& at(std::size_t k, int i, int j) { return buf[std::size_t(off[k] + i + index_t(j) * ld[k])]; }
  mat<T> get(std::size_t k) {
    mat<T> a(m[k], n[k]);
    for (int j = 0; j < n[k]; ++j)
      for (int i = 0; i < m[k]; ++i) a(i, j) = at(k, i, j);
    return a;
  }
  void set(std::size_t k, const mat<T>& a) {
    for (int j = 0; j < n[k]; ++j)
      for (int i = 0; i < m[k]; ++i) at(k, i, j) = a(i, j);
  }
  bool padding_intact() const {
    for (std::size_t k = 0; k < m.size(); ++k) {
      const index_t end = k + 1 < m.size() ? off[k + 1] : index_t(buf.size());
      for (index_t e = off[k]; e < end; ++e) {
        const index_t o = e - off[k];
        const bool inside = o < index_t(ld[k]) * n[k] && int(o % ld[k]) < m[k];
        if (!inside && !is_poison(buf[std::size_t(e)])) return false;
      }
    }
    return true;
  }
};

/// Per-matrix SPD input with every third matrix failing at a random leading minor (negative
/// or NaN pivot), the other triangle marked; what potrf must report.
template <class T>
struct spd_inputs {
  std::vector<mat<T>> a0;
  std::vector<int> want;
  spd_inputs(const std::vector<int>& n, tb::uplo ul) {
    for (std::size_t k = 0; k < n.size(); ++k) {
      mat<T> a = random_spd<T>(n[k]);
      int w = 0;
      if (k % 3 == 1 && n[k] > 0) {
        const int c = int(rng()() % unsigned(n[k]));
        a(c, c) = k % 2 ? T(-1) : std::numeric_limits<T>::quiet_NaN();
        w = c + 1;
      }
      for (int j = 0; j < n[k]; ++j)
        for (int i = 0; i < n[k]; ++i)
          if (ul == tb::uplo::lower ? i < j : i > j) a(i, j) = T(-12345);
      a0.push_back(a);
      want.push_back(w);
    }
  }
};

/// Checks matrix k's factor (got) against its input: residual ratio and Eigen's LLT.
template <class T>
double factor_ratio(const mat<T>& got, const mat<T>& a0, bool lo) {
  const int n = int(a0.rows());
  if (n == 0) return 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if ((lo ? i < j : i > j) && got(i, j) != T(-12345)) return 1e300;  // other triangle touched
  const mat<T> f = lo ? mat<T>(got.template triangularView<Eigen::Lower>()) : mat<T>(got.template triangularView<Eigen::Upper>());
  const mat<T> a = lo ? mat<T>(a0.template selfadjointView<Eigen::Lower>()) : mat<T>(a0.template selfadjointView<Eigen::Upper>());
  const mat<T> R = lo ? mat<T>(f * f.transpose() - a) : mat<T>(f.transpose() * f - a);
  double ratio = norm1(R) / (n * norm1(a) * eps<T>());
  Eigen::LLT<mat<T>> llt(a);
  const mat<T> lref = llt.matrixL();
  const mat<T> fl = lo ? f : mat<T>(f.transpose());
  if ((fl - lref).norm() > 100 * n * eps<T>() * lref.norm()) ratio = 1e300;
  return ratio;
}

template <class T>
void check_info(const std::vector<int>& info, const spd_inputs<T>& in, bool lo) {
  index_t bad = -1;
  for (std::size_t k = 0; k < in.want.size(); ++k) {
    if (info[k] != in.want[k]) bad = index_t(k);
#if defined(TINYBATCH_TEST_LAPACK)
    if (info[k] != lapack_potrf<T>(lo ? 'L' : 'U', in.a0[k])) bad = index_t(k);
#else
    (void)lo;
#endif
  }
  INFO("wrong info at matrix " << bad);
  CHECK(bad == -1);
}

template <class T, class P, class L>
void uniform_case(P policy, int n, index_t count, tb::uplo ul, L l) {
  const bool lo = ul == tb::uplo::lower;
  INFO("n = " << n << " count = " << count << " " << (lo ? "lower" : "upper") << " " << name(L::value));
  test_batch<T> A(n, n, count);
  spd_inputs<T> in(std::vector<int>(std::size_t(count), n), ul);
  for (index_t k = 0; k < count; ++k) A.set(k, in.a0[std::size_t(k)]);
  std::vector<int> info(std::size_t(count) + 1, -999);
  tb::potrf(policy, ul, A.template view<tb::dynamic, tb::dynamic>(l), std::span<int>(info.data(), std::size_t(count)));
  CHECK(info.back() == -999);
  check_info(info, in, lo);
  worst w;
  index_t partial_bad = -1;
  for (index_t k = 0; k < count; ++k) {
    const int c = in.want[std::size_t(k)];
    if (c == 0) {
      w(factor_ratio(A.get(k), in.a0[std::size_t(k)], lo), k);
      continue;
    }
    // A failed matrix: the columns left of the failed pivot (rows above it, upper) hold the
    // factor, as the unblocked dpotf2 leaves them.
    mat<T> ref = in.a0[std::size_t(k)];
    tb::reference::potrf(ul, tb::matrix_ref<T>(ref.data(), n, n, n));
    const mat<T> got = A.get(k);
    for (int j = 0; j < c - 1; ++j)
      for (int i = j; i < n; ++i) {
        const T g = lo ? got(i, j) : got(j, i), r = lo ? ref(i, j) : ref(j, i);
        if (!(std::abs(double(g - r)) <= 100 * n * eps<T>() * (1 + std::abs(double(r))))) partial_bad = k;
      }
  }
  INFO("worst ratio " << w.value << " at " << w.where << "; failed matrix with a wrong partial factor: " << partial_bad);
  CHECK(w.value < ratio_threshold);
  CHECK(partial_bad == -1);
  CHECK(A.padding_intact());
}

std::vector<int> draw_orders(index_t count, int max, bool gaussian) {
  std::vector<int> s;
  std::normal_distribution<double> g(max / 2.0, max / 6.0);
  std::uniform_int_distribution<int> u(0, max);
  for (index_t k = 0; k < count; ++k)
    s.push_back(std::clamp(gaussian ? int(std::lround(g(rng()))) : u(rng()), 0, max));
  s[0] = 0, s[1] = 1, s[2] = max;
  return s;
}

template <class T, class P>
void variable_case(P policy, index_t count, int max, bool gaussian, tb::uplo ul, int ld_mod = 3) {
  const bool lo = ul == tb::uplo::lower;
  INFO("vbatch count = " << count << " max = " << max << (gaussian ? " gaussian " : " uniform ") << (lo ? "lower" : "upper")
                         << " ld = n + k % " << ld_mod);
  const auto n = draw_orders(count, max, gaussian);
  vbuf<T> A(n, n, ld_mod);
  spd_inputs<T> in(n, ul);
  for (std::size_t k = 0; k < n.size(); ++k) A.set(k, in.a0[k]);
  std::vector<int> info(std::size_t(count) + 1, -999);
  tb::potrf(policy, ul, A.view(), std::span<int>(info.data(), std::size_t(count)));
  CHECK(info.back() == -999);
  check_info(info, in, lo);
  worst w;
  for (std::size_t k = 0; k < n.size(); ++k)
    if (in.want[k] == 0) w(factor_ratio(A.get(k), in.a0[k], lo), index_t(k));
  INFO("worst ratio " << w.value << " at " << w.where << " (n = " << (w.where >= 0 ? n[std::size_t(w.where)] : -1) << ")");
  CHECK(w.value < ratio_threshold);
  CHECK(A.padding_intact());
}

}  // namespace

TEMPLATE_TEST_CASE("potrf beyond n = 32, blocked", "[potrf][large]", float, double) {
  INFO("level-3 provider: " << tb::host::blocked::provider);
  for (int n : {33, 40, 64, 100, 129, 200})
    for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper}) {
      uniform_case<TestType>(tb::seq, n, 7, ul, layout_c<layout::strided>{});
      uniform_case<TestType>(tb::par, n, 7, ul, layout_c<layout::pointers>{});
    }
}

TEST_CASE("potrf beyond n = 32 on a fixed-size view", "[potrf][large]") {
  constexpr int n = 40;
  test_batch<double> A(n, n, 5);
  spd_inputs<double> in(std::vector<int>(5, n), tb::uplo::lower);
  for (index_t k = 0; k < 5; ++k) A.set(k, in.a0[std::size_t(k)]);
  std::vector<int> info(5, -999);
  tb::potrf(tb::par, tb::lower, A.view<n, n>(layout_c<layout::strided>{}), info);
  check_info(info, in, true);
  for (index_t k = 0; k < 5; ++k)
    if (in.want[std::size_t(k)] == 0) CHECK(factor_ratio(A.get(k), in.a0[std::size_t(k)], true) < ratio_threshold);
}

TEMPLATE_TEST_CASE("potrf on variable-size batches", "[potrf][vbatch]", float, double) {
  for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper})
    for (bool gaussian : {false, true}) {
      variable_case<TestType>(tb::seq, 300, 40, gaussian, ul);
      variable_case<TestType>(tb::par, 300, 40, gaussian, ul);
      variable_case<TestType>(tb::par, 60, 150, gaussian, ul);
    }
  // Many matrices of each order with one ld: the host splits the batch into ranges per thread
  // and chunks of about 256 KiB, and an order's matrices beyond whole lane groups wait for
  // the next chunk (host/backend.hpp by_order); with ld = n + k % 3 above, groups are short.
  variable_case<TestType>(tb::par, 5000, 32, false, tb::uplo::lower, 1);
  variable_case<TestType>(tb::seq, 5000, 20, true, tb::uplo::upper, 1);
  // The reference policy takes the batch matrix by matrix, without grouping.
  variable_case<TestType>(tb::sequential_policy<tb::kernels::reference>{}, 50, 40, false, tb::uplo::lower);
}

TEMPLATE_TEST_CASE("posv beyond n = 32 and on variable-size batches", "[posv][large][vbatch]", float, double) {
  using T = TestType;
  for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper}) {
    const bool lo = ul == tb::uplo::lower;
    for (int nrhs : {1, 5}) {
      // Uniform, n = 70: every matrix solved where SPD, B untouched where not.
      const int n = 70;
      const index_t count = 6;
      INFO("posv n = " << n << " nrhs = " << nrhs << (lo ? " lower" : " upper"));
      test_batch<T> A(n, n, count), B(n, nrhs, count);
      spd_inputs<T> in(std::vector<int>(std::size_t(count), n), ul);
      std::vector<mat<T>> b0;
      for (index_t k = 0; k < count; ++k) {
        A.set(k, in.a0[std::size_t(k)]);
        b0.push_back(random_mat<T>(n, nrhs));
        B.set(k, b0.back());
      }
      std::vector<int> info(std::size_t(count), -999);
      tb::posv(tb::par, ul, A.template view<tb::dynamic, tb::dynamic>(layout_c<layout::strided>{}),
               B.template view<tb::dynamic, tb::dynamic>(layout_c<layout::pointers>{}), info);
      check_info(info, in, lo);
      worst w;
      for (index_t k = 0; k < count; ++k) {
        const mat<T> x = B.get(k);
        if (in.want[std::size_t(k)] != 0) {
          CHECK(x == b0[std::size_t(k)]);
          continue;
        }
        const mat<T> a = lo ? mat<T>(in.a0[std::size_t(k)].template selfadjointView<Eigen::Lower>())
                            : mat<T>(in.a0[std::size_t(k)].template selfadjointView<Eigen::Upper>());
        w(solve_ratio(a, x, b0[std::size_t(k)]), k);
      }
      INFO("worst solve ratio " << w.value << " at " << w.where);
      CHECK(w.value < ratio_threshold);
      CHECK(B.padding_intact());
    }
    // Variable sizes, 0 .. 3 right-hand sides each.
    const index_t count = 80;
    const auto n = draw_orders(count, 90, false);
    std::vector<int> r;
    for (index_t k = 0; k < count; ++k) r.push_back(int(k % 4));
    vbuf<T> A(n, n), B(n, r);
    spd_inputs<T> in(n, ul);
    std::vector<mat<T>> b0;
    for (std::size_t k = 0; k < n.size(); ++k) {
      A.set(k, in.a0[k]);
      b0.push_back(random_mat<T>(n[k], r[k]));
      B.set(k, b0.back());
    }
    std::vector<int> info(std::size_t(count), -999);
    tb::posv(tb::par, ul, A.view(), B.view(), info);
    check_info(info, in, lo);
    worst w;
    for (std::size_t k = 0; k < n.size(); ++k) {
      const mat<T> x = B.get(k);
      if (in.want[k] != 0 || n[k] == 0) {
        CHECK(x == b0[k]);
        continue;
      }
      const mat<T> a = lo ? mat<T>(in.a0[k].template selfadjointView<Eigen::Lower>())
                          : mat<T>(in.a0[k].template selfadjointView<Eigen::Upper>());
      w(solve_ratio(a, x, b0[k]), index_t(k));
    }
    INFO("vbatch posv, worst solve ratio " << w.value << " at " << w.where);
    CHECK(w.value < ratio_threshold);
    CHECK(B.padding_intact());
  }
}
