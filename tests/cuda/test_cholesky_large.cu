// GPU Cholesky beyond the register kernels and on variable-size batches: potrf, potrs and posv
// through the blocked kernels (cuda/kernels/potrf_blocked.cuh, potrf_gemm.cuh) against the host reference,
// element by element, with poison in the untouched triangle and around every matrix, info
// exactly (not-SPD and NaN matrices mixed in). Variable-size batches: sizes uniform and
// Gaussian in [0, max] with 0 and 1 among them, every early-termination / scheduling
// variant; counts above 65535 and a batch of more than 2^31 elements.
#include "support.cuh"

namespace {
using namespace tbc;

const tb::uplo both_uplos[] = {tb::uplo::lower, tb::uplo::upper};

// The host oracle (the unblocked reference, column by column) takes seconds per matrix at
// n = 1024, so the largest orders run few matrices and n = 1024 one case of its own.
std::vector<int> large_sizes() {
  if (small_grid()) return {33, 40, 100};
  return {33, 40, 64, 100, 128, 200, 256, 400, 512};
}
index_t large_count(int n) {
  if (small_grid()) return 3;
  return n <= 128 ? 60 : n <= 256 ? 8 : 2;
}

template <class T, layout L, class P = tb::cuda::policy<>>
void run_potrf(layout_c<L> l, tb::uplo ul, int n, index_t count, P policy = {}) {
  INFO("potrf " << name(L) << " " << name(ul) << " n=" << n << " count=" << count);
  tbatch<T> A(n, n, count);
  fill_spd(A, ul);
  auto info = tints::info(count);
  A.upload(), info.upload();
  tb::potrf(host_ref, ul, A.hview(l), info.hspan());
  tb::potrf(policy, ul, A.dview(l), info.dspan());
  check_all(arg(A, "A"), arg(info, "info"));
}

template <class T, layout L>
void run_posv(layout_c<L> l, tb::uplo ul, int n, int nrhs, index_t count) {
  INFO("posv " << name(L) << " " << name(ul) << " n=" << n << " nrhs=" << nrhs << " count=" << count);
  tbatch<T> A(n, n, count), B(n, nrhs, count);
  fill_spd(A, ul);
  fill_rhs(B);
  auto info = tints::info(count);
  A.upload(), B.upload(), info.upload();
  tb::posv(host_ref, ul, A.hview(l), B.hview(l), info.hspan());
  tb::posv(tb::cuda::policy<>{}, ul, A.dview(l), B.dview(l), info.dspan());
  check_all(arg(A, "A"), arg(B, "B"), arg(info, "info"));
}

/// A variable-size batch on host and device: matrix k is n[k] x c[k] with ld n[k] + k % 3,
/// each followed by two elements of padding, all poison to begin with.
template <class T>
struct vb {
  std::vector<int> m, n, ld;
  std::vector<index_t> off;
  std::vector<T> h, got;
  std::vector<T*> hp;
  tb::cuda::device_array<T> d;
  tb::cuda::device_array<T*> dp;
  tb::cuda::device_array<int> dm, dn, dld;
  vb(std::vector<int> rows, std::vector<int> cols) : m(std::move(rows)), n(std::move(cols)) {
    index_t total = 0;
    for (std::size_t k = 0; k < m.size(); ++k) {
      ld.push_back(std::max(m[k], 1) + int(k % 3));
      off.push_back(total);
      total += index_t(ld[k]) * n[k] + 2;
    }
    h.assign(std::size_t(total) + 1, poison<T>());
    for (std::size_t k = 0; k < m.size(); ++k) hp.push_back(h.data() + off[k]);
  }
  index_t count() const { return index_t(m.size()); }
  T& at(std::size_t k, int i, int j) { return h[std::size_t(off[k] + i + index_t(j) * ld[k])]; }
  void upload() {
    d = tb::cuda::device_array<T>(std::span<const T>(h));
    std::vector<T*> p;
    for (std::size_t k = 0; k < m.size(); ++k) p.push_back(d.data() + off[k]);
    dp = tb::cuda::device_array<T*>(std::span<T* const>(p));
    dm = tb::cuda::device_array<int>(std::span<const int>(m));
    dn = tb::cuda::device_array<int>(std::span<const int>(n));
    dld = tb::cuda::device_array<int>(std::span<const int>(ld));
  }
  tb::vbatch_view<T> hview() { return {hp.data(), m.data(), n.data(), ld.data(), count()}; }
  tb::vbatch_view<T> dview() { return {dp.data(), dm.data(), dn.data(), dld.data(), count()}; }
  void download() {
    got.resize(h.size());
    tb::cuda::copy(got, d);
    device_sync();
  }
  /// Empty, or the first element where device and host differ (tolerance as compare()).
  std::string compare(const char* what) const {
    for (std::size_t k = 0; k <= m.size(); ++k) {
      const std::size_t e0 = k < m.size() ? std::size_t(off[k]) : h.size() - 1;
      const std::size_t e1 = k + 1 < m.size() ? std::size_t(off[k + 1]) : h.size();
      if (k == m.size() && e0 >= e1) break;
      double scale = 1;
      for (std::size_t e = e0; e < e1; ++e)
        if (std::isfinite(h[e])) scale = std::max(scale, double(std::abs(h[e])));
      const int order = k < m.size() ? std::max({m[k], n[k], 1}) : 1;
      const double tol = 32.0 * order * std::numeric_limits<T>::epsilon();
      for (std::size_t e = e0; e < e1; ++e) {
        const T r = h[e], g = got[e];
        auto where = [&] {
          return std::string(what) + " matrix " + std::to_string(k) + " (" + std::to_string(k < m.size() ? m[k] : 0) +
                 " rows) element " + std::to_string(e - e0) + ": host " + std::to_string(r) + ", GPU " +
                 std::to_string(g);
        };
        if (is_poison(r) != is_poison(g)) return where() + " (poison differs)";
        if (is_poison(r)) continue;
        if (std::isnan(r) != std::isnan(g)) return where() + " (NaN differs)";
        if (std::isnan(r)) continue;
        if (std::abs(double(r) - double(g)) / scale > tol) return where();
      }
    }
    return {};
  }
};

/// Sizes in [0, max]: uniform, or Gaussian around max / 2; 0 and 1 always among them.
std::vector<int> draw_sizes(index_t count, int max, bool gaussian) {
  std::vector<int> s;
  std::normal_distribution<double> g(max / 2.0, max / 6.0);
  std::uniform_int_distribution<int> u(0, max);
  for (index_t k = 0; k < count; ++k) {
    int v = gaussian ? int(std::lround(g(rng()))) : u(rng());
    s.push_back(std::clamp(v, 0, max));
  }
  if (count > 0) s[0] = 0;
  if (count > 1) s[1] = 1;
  if (count > 2) s[2] = max;
  return s;
}

/// SPD matrices (B B^T / n + I) in the `ul` triangle, every fifth not SPD (a negative
/// diagonal entry), every fifth from the fourth with a NaN.
template <class T>
void fill_spd(vb<T>& a, tb::uplo ul) {
  for (std::size_t k = 0; k < a.m.size(); ++k) {
    const int n = a.m[k];
    std::vector<double> b(std::size_t(n) * n);
    for (auto& x : b) x = uniform<double>();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const bool in = ul == tb::uplo::lower ? i >= j : i <= j;
        if (!in) continue;
        double s = i == j ? 1.0 : 0.0;
        for (int l = 0; l < n; ++l) s += b[i + l * n] * b[j + l * n] / n;
        a.at(k, i, j) = T(s);
      }
    if (n == 0) continue;
    const int p = int(k % n), q = p / 2;
    if (singular_k(index_t(k))) a.at(k, p, p) = T(-1);
    if (nan_k(index_t(k))) (ul == tb::uplo::lower ? a.at(k, p, q) : a.at(k, q, p)) = nan<T>();
  }
}

/// A variable-size batch's result and info against the host's, element by element.
template <class T>
void check_vbatch(vb<T>& A, tints& info) {
  A.download(), info.download();
  const std::string r = A.compare("A");
  INFO(r);
  CHECK(r.empty());
  const std::string ri = compare(info, "info");
  INFO(ri);
  CHECK(ri.empty());
}

/// A variable-size batch of SPD (and some failing) matrices with sizes drawn in [0, max],
/// factored on the host and by gpu(device view, info), compared.
template <class T, class F>
void vpotrf_case(tb::uplo ul, index_t count, int max, bool gaussian, F&& gpu) {
  const auto sizes = draw_sizes(count, max, gaussian);
  vb<T> A(sizes, sizes);
  fill_spd(A, ul);
  auto info = tints::info(count);
  A.upload(), info.upload();
  tb::potrf(host_ref, ul, A.hview(), info.hspan());
  gpu(A.dview(), info);
  check_vbatch(A, info);
}

template <class T, class P>
void run_vpotrf(P policy, tb::uplo ul, index_t count, int max, bool gaussian, bool give_max) {
  INFO("vbatch potrf " << name(ul) << " count=" << count << " max=" << max << (gaussian ? " gaussian" : " uniform")
                       << (give_max ? " max given" : ""));
  vpotrf_case<T>(ul, count, max, gaussian, [&](auto view, tints& info) {
    if (give_max)
      tb::potrf(policy, ul, view, info.dspan(), max);
    else
      tb::potrf(policy, ul, view, info.dspan());
  });
}

}  // namespace

TEMPLATE_TEST_CASE("cuda potrf beyond n = 32, lower and upper", "[potrf][large]", float, double) {
  for_layouts([](auto l) {
    for (tb::uplo ul : both_uplos)
      for (int n : large_sizes()) run_potrf<TestType>(l, ul, n, large_count(n));
  });
}

TEST_CASE("cuda potrf and posv at n = 1024", "[potrf][large]") {
  if (small_grid()) return;
  run_potrf<double>(layout_c<layout::strided>{}, tb::uplo::lower, 1024, 2);
  run_potrf<float>(layout_c<layout::pointers>{}, tb::uplo::upper, 1024, 2);
  run_posv<double>(layout_c<layout::pointers>{}, tb::uplo::upper, 1024, 3, 2);
}

TEMPLATE_TEST_CASE("cuda potrf beyond n = 32 on fixed-size views", "[potrf][large]", float, double) {
  // Compile-time orders past the register kernels take the blocked kernel too.
  tbatch<TestType> A(48, 48, 50);
  fill_spd(A, tb::uplo::lower);
  auto info = tints::info(50);
  A.upload(), info.upload();
  tb::potrf(host_ref, tb::lower, tb::strided_view<TestType, 48, 48>(A.h.data(), 50, A.ld, A.stride), info.hspan());
  tb::potrf(tb::cuda::policy<>{}, tb::lower, tb::strided_view<TestType, 48, 48>(A.first(), 50, A.ld, A.stride),
            info.dspan());
  check_all(arg(A, "A"), arg(info, "info"));
}

TEMPLATE_TEST_CASE("cuda potrf, every blocked shape and the loop-inclusive kernel", "[potrf][large]", float, double) {
  using T = TestType;
  for (int shape = 0; shape < 3; ++shape)
    for (bool inclusive : {false, true})
      for (tb::uplo ul : both_uplos)
        for (int n : {1, 7, 33, 70, 300}) {
          INFO("shape " << shape << (inclusive ? " inclusive" : " exclusive") << " " << name(ul) << " n=" << n);
          tbatch<T> A(n, n, 11);
          fill_spd(A, ul);
          auto info = tints::info(11);
          A.upload(), info.upload();
          tb::potrf(host_ref, ul, A.hview(layout_c<layout::strided>{}), info.hspan());
          tb::cuda::blocked::cholesky_options o;
          o.shape = shape, o.inclusive = inclusive;
          tb::cuda::blocked::potrf(nullptr, ul, A.dview(layout_c<layout::strided>{}), info.d.data(), n, o);
          check_all(arg(A, "A"), arg(info, "info"));
        }
}

TEMPLATE_TEST_CASE("cuda potrf, the GEMM-updated path at each panel width", "[potrf][large]", float, double) {
  // Orders below, at and past one panel, multiples of it and not; strided (ld > n, stride
  // > ld * n) and pointer arrays; not-SPD and NaN matrices among them (fill_spd). Width 32
  // through the front door's options (the tuning table's panel step), width 16 with the panel
  // step as one kernel and as two launches.
  using T = TestType;
  for_layouts([](auto l) {
    for (int nb : {16, 32})
      for (int split : nb == 32 ? std::vector<int>{-1} : std::vector<int>{0, 1})
        for (tb::uplo ul : both_uplos)
          for (int n : small_grid() ? std::vector<int>{1, 33, 130} : std::vector<int>{1, 7, 32, 33, 64, 65, 130, 300}) {
            INFO("GEMM-updated nb " << nb << " split " << split << " " << name(ul) << " n=" << n);
            const index_t count = small_grid() ? 11 : 23;
            tbatch<T> A(n, n, count);
            fill_spd(A, ul);
            auto info = tints::info(count);
            A.upload(), info.upload();
            tb::potrf(host_ref, ul, A.hview(l), info.hspan());
            if (nb == 32) {
              tb::cuda::blocked::cholesky_options o;
              o.gemm_nb = nb;
              tb::cuda::blocked::potrf(nullptr, ul, A.dview(l), info.d.data(), n, o);
            } else {  // info is zeroed by the caller of potrf_gemm
              TINYBATCH_CUDA_CHECK(cudaMemset(info.d.data(), 0, sizeof(int) * std::size_t(count)));
              ul == tb::uplo::upper
                  ? tb::cuda::blocked::potrf_gemm<T, 16, true>(nullptr, A.dview(l), info.d.data(), n, split)
                  : tb::cuda::blocked::potrf_gemm<T, 16, false>(nullptr, A.dview(l), info.d.data(), n, split);
            }
            check_all(arg(A, "A"), arg(info, "info"));
          }
  });
}

TEMPLATE_TEST_CASE("cuda potrf, the on-chip kernel", "[potrf][large][onchip]", float, double) {
  // Each tile count (orders up to 64, 96, 128), orders at and between tile edges; strided
  // (ld > n, stride > ld * n) and pointer arrays; not-SPD and NaN matrices among them.
  using T = TestType;
  for_layouts([](auto l) {
    for (tb::uplo ul : both_uplos)
      for (int n : small_grid() ? std::vector<int>{1, 33, 100} : std::vector<int>{1, 2, 16, 17, 33, 48, 64, 65, 80, 96, 97, 113, 128}) {
        INFO("on-chip " << name(ul) << " n=" << n);
        const index_t count = small_grid() ? 11 : 23;
        tbatch<T> A(n, n, count);
        fill_spd(A, ul);
        auto info = tints::info(count);
        A.upload(), info.upload();
        tb::potrf(host_ref, ul, A.hview(l), info.hspan());
        tb::cuda::blocked::cholesky_options o;
        o.onchip = 1;
        tb::cuda::blocked::potrf(nullptr, ul, A.dview(l), info.d.data(), n, o);
        check_all(arg(A, "A"), arg(info, "info"));
      }
  });
  // Variable sizes: every matrix its own order below the launch's tile count.
  for (tb::uplo ul : both_uplos)
    for (int max : {64, 128}) {
      INFO("on-chip vbatch " << name(ul) << " max=" << max);
      vpotrf_case<T>(ul, small_grid() ? 20 : 200, max, false, [&](auto view, tints& info) {
        tb::cuda::blocked::cholesky_options o;
        o.onchip = 1;
        tb::cuda::blocked::potrf(nullptr, ul, view, info.d.data(), max, o);
      });
    }
}

TEMPLATE_TEST_CASE("cuda posv beyond n = 32", "[posv][large]", float, double) {
  for_layouts([](auto l) {
    for (tb::uplo ul : both_uplos)
      for (int n : large_sizes())
        for (int nrhs : {1, 3, 40}) run_posv<TestType>(l, ul, n, nrhs, std::min<index_t>(large_count(n), 6));
  });
}

TEMPLATE_TEST_CASE("cuda potrf on variable-size batches, every early exit and schedule", "[potrf][vbatch]", float,
                   double) {
  using T = TestType;
  using K = tb::kernels::early_exit;
  using S = tb::kernels::start;
  for (tb::uplo ul : both_uplos)
    for (int max : small_grid() ? std::vector<int>{40} : std::vector<int>{32, 64, 200, 512})
      for (bool gaussian : {false, true}) {
        const index_t count = small_grid() ? 40 : max >= 500 ? 30 : max >= 200 ? 60 : 300;
        run_vpotrf<T>(tb::cuda::policy<>{}, ul, count, max, gaussian, false);
        run_vpotrf<T>(tb::cuda::policy<>{}, ul, count, max, gaussian, true);
        run_vpotrf<T>(tb::cuda::policy<tb::kernels::blocked<K::classic, S::greedy>>{}, ul, count, max, gaussian, true);
        run_vpotrf<T>(tb::cuda::policy<tb::kernels::blocked<K::classic, S::lazy>>{}, ul, count, max, gaussian, true);
        run_vpotrf<T>(tb::cuda::policy<tb::kernels::blocked<K::aggressive, S::greedy>>{}, ul, count, max, gaussian,
                      true);
        run_vpotrf<T>(tb::cuda::policy<tb::kernels::blocked<K::aggressive, S::lazy, true>>{}, ul, count, max,
                      gaussian, true);
      }
}

TEMPLATE_TEST_CASE("cuda potrf on variable-size batches, the GEMM-updated path", "[potrf][vbatch][gemm]", float,
                   double) {
  // The update by potrf_vgemm_kernel (sizes read on the device): orders within one panel and
  // across many, tiles of S cut at every row count; through the front door's option (the
  // tuning table's panel step) and with the panel step as one kernel and as two launches;
  // double also with the update on the tensor cores (split -2: the front door's vgemm_mma,
  // -3: potrf_gemm_vbatch<..., MMA> with the panel step as one kernel); with the device-built
  // work lists (-4: the front door's vbatch_lists, DMMA in double; 2: two launches, FMA); the
  // fused step (-5: the front door's vbatch_fused, DMMA in double; -6: potrf_gemm_vbatch's,
  // FMA).
  using T = TestType;
  const bool dbl = std::is_same_v<T, double>;
  for (tb::uplo ul : both_uplos)
    for (int max : small_grid() ? std::vector<int>{40, 150} : std::vector<int>{33, 64, 200, 512})
      for (bool gaussian : {false, true})
        for (int split : max >= 500 ? std::vector<int>{-1, -2, -4, -5}
                                    : std::vector<int>{-1, 0, 1, 2, -2, -3, -4, -5, -6}) {
          if ((split == -2 || split == -3) && !dbl) continue;
          // (The host oracle takes about 0.3 s per matrix of order 512.)
          const index_t count = small_grid() ? 30 : max >= 500 ? 10 : max >= 200 ? 40 : 200;
          INFO("vbatch GEMM-updated " << name(ul) << " max=" << max << (gaussian ? " gaussian" : " uniform")
                                      << " split " << split);
          vpotrf_case<T>(ul, count, max, gaussian, [&](auto view, tints& info) {
            if (split == -1 || split == -2 || split == -4 || split == -5) {
              tb::cuda::blocked::cholesky_options o;
              o.gemm_nb = 32;
              o.vgemm_mma = split != -1;
              o.vbatch_lists = split == -4;
              o.vbatch_fused = split == -5;
              tb::cuda::blocked::potrf(nullptr, ul, view, info.d.data(), max, o);
            } else if (split == -6) {
              TINYBATCH_CUDA_CHECK(cudaMemset(info.d.data(), 0, sizeof(int) * std::size_t(count)));
              ul == tb::uplo::upper
                  ? tb::cuda::blocked::potrf_gemm_vbatch<T, 32, true>(nullptr, view, info.d.data(), max, -1, -1, 1)
                  : tb::cuda::blocked::potrf_gemm_vbatch<T, 32, false>(nullptr, view, info.d.data(), max, -1, -1, 1);
            } else if (split == -3) {
              TINYBATCH_CUDA_CHECK(cudaMemset(info.d.data(), 0, sizeof(int) * std::size_t(count)));
              ul == tb::uplo::upper
                  ? tb::cuda::blocked::potrf_gemm_vbatch<T, 32, true, true>(nullptr, view, info.d.data(), max, 0)
                  : tb::cuda::blocked::potrf_gemm_vbatch<T, 32, false, true>(nullptr, view, info.d.data(), max, 0);
            } else {  // info is zeroed by the caller of potrf_gemm_vbatch
              TINYBATCH_CUDA_CHECK(cudaMemset(info.d.data(), 0, sizeof(int) * std::size_t(count)));
              ul == tb::uplo::upper
                  ? tb::cuda::blocked::potrf_gemm_vbatch<T, 32, true>(nullptr, view, info.d.data(), max, split > 0,
                                                                        split == 2)
                  : tb::cuda::blocked::potrf_gemm_vbatch<T, 32, false>(nullptr, view, info.d.data(), max, split > 0,
                                                                         split == 2);
            }
          });
        }
  // A max_n below some orders: those matrices get info = -2 and keep their input; the others
  // are factored.
  for (tb::uplo ul : both_uplos)
    for (int lists : {0, 1, 2}) {  // 2: the fused step
      INFO("vbatch GEMM-updated " << name(ul) << ", max_n 64 for orders up to 100, work lists " << lists);
      const index_t count = 40;
      const auto sizes = draw_sizes(count, 100, false);
      vb<T> A(sizes, sizes);
      fill_spd(A, ul);
      const std::vector<T> input = A.h;
      auto info = tints::info(count);
      A.upload(), info.upload();
      tb::potrf(host_ref, ul, A.hview(), info.hspan());
      for (std::size_t k = 0; k < sizes.size(); ++k)
        if (sizes[k] > 64) {
          info.h[k] = -2;
          const std::size_t e1 = k + 1 < sizes.size() ? std::size_t(A.off[k + 1]) : A.h.size();
          std::copy(input.begin() + A.off[k], input.begin() + std::ptrdiff_t(e1), A.h.begin() + A.off[k]);
        }
      tb::cuda::blocked::cholesky_options o;
      o.gemm_nb = 32;
      o.vbatch_lists = lists == 1;
      o.vbatch_fused = lists == 2;
      tb::cuda::blocked::potrf(nullptr, ul, A.dview(), info.d.data(), 64, o);
      check_vbatch(A, info);
    }
}

TEMPLATE_TEST_CASE("cuda posv on variable-size batches", "[posv][vbatch]", float, double) {
  using T = TestType;
  const index_t count = small_grid() ? 30 : 300;
  for (tb::uplo ul : both_uplos)
    for (int max : {45, 300}) {
      INFO("vbatch posv " << name(ul) << " max=" << max);
      const auto sizes = draw_sizes(count, max, false);
      std::vector<int> rhs;
      for (index_t k = 0; k < count; ++k) rhs.push_back(int(k % 4));  // 0 .. 3 columns
      vb<T> A(sizes, sizes), B(sizes, rhs);
      fill_spd(A, ul);
      for (std::size_t k = 0; k < sizes.size(); ++k)
        for (int j = 0; j < rhs[k]; ++j)
          for (int i = 0; i < sizes[k]; ++i) B.at(k, i, j) = uniform<T>();
      auto info = tints::info(count);
      A.upload(), B.upload(), info.upload();
      tb::posv(host_ref, ul, A.hview(), B.hview(), info.hspan());
      tb::posv(tb::cuda::policy<>{}, ul, A.dview(), B.dview(), info.dspan());
      A.download(), B.download(), info.download();
      for (auto r : {A.compare("A"), B.compare("B"), compare(info, "info")}) {
        INFO(r);
        CHECK(r.empty());
      }
    }
}

TEST_CASE("cuda potrf: more than 65535 matrices, and more than 2^31 elements", "[potrf][large][huge]") {
  if (small_grid()) return;
  run_potrf<double>(layout_c<layout::strided>{}, tb::uplo::lower, 40, 70000);
  // 2^31 + elements of float: 2.0e6 matrices of 33 x 33; the host checks every 997th.
  const int n = 33;
  const index_t count = (index_t(1) << 31) / (n * n) + 1000;
  const index_t elems = count * n * n;
  REQUIRE(elems > (index_t(1) << 31));
  std::vector<float> h(static_cast<std::size_t>(elems));
  std::vector<double> b(std::size_t(n) * n);
  std::vector<float> one(std::size_t(n) * n);
  for (auto& x : b) x = uniform<double>();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double s = i == j ? 1.0 : 0.0;
      for (int l = 0; l < n; ++l) s += b[i + l * n] * b[j + l * n] / n;
      one[std::size_t(i + j * n)] = float(s);
    }
  for (index_t k = 0; k < count; ++k) std::copy(one.begin(), one.end(), h.begin() + k * n * n);
  h[std::size_t((count - 1) * n * n)] = -1.0f;  // the very last matrix fails at its first pivot
  tb::cuda::device_array<float> d{std::span<const float>(h)};
  tb::cuda::device_array<int> dinfo(static_cast<std::size_t>(count));
  tb::potrf(tb::cuda::policy<>{}, tb::lower, tb::strided_view<float>(d.data(), n, n, count),
            std::span<int>(dinfo.data(), std::size_t(count)));
  std::vector<float> got(h.size());
  std::vector<int> info(static_cast<std::size_t>(count));
  tb::cuda::copy(got, d);
  tb::cuda::copy(info, dinfo);
  device_sync();
  std::vector<float> ref = one;
  REQUIRE(tb::reference::potrf(tb::uplo::lower, tb::matrix_ref<float>(ref.data(), n, n, n)) == 0);
  index_t bad = -1;
  for (index_t k = 0; k + 1 < count; k += 997) {
    if (info[std::size_t(k)] != 0) bad = k;
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i)
        if (std::abs(got[std::size_t(k * n * n + i + j * n)] - ref[std::size_t(i + j * n)]) > 1e-4f) bad = k;
  }
  INFO("first bad matrix " << bad);
  CHECK(bad == -1);
  CHECK(info[std::size_t(count - 1)] == 1);
  CHECK(info[std::size_t(count - 2)] == 0);
}
