// calu::hybrid_getrf (CPU cores + GPU): backward error ||P A - L U||_1 / (n ||A||_1 eps) < 30,
// valid LAPACK pivots, info on singular matrices, for the matrix on the host and on the
// device, square and tall-skinny, sizes not multiples of b, d from 1 (the CPU only factors
// panels) to all block columns (the GPU only stores), with and without look-ahead; the
// solve through hybrid_gesv; the d model's range. ipiv prefilled with junk. The same with the
// panels on the GPU (panel_location::gpu), and there the growth against partial pivoting's;
// the default options (GPU panels by partial pivoting: LAPACK's pivots).
#include <catch2/catch.hpp>

#include <tinybatch/tasks/calu_cuda.cuh>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "../random_poison.hpp"

namespace {

namespace calu = tinybatch::calu;

template <class T>
std::vector<T> random_matrix(int m, int n, int ld) {
  std::vector<T> a(std::size_t(ld) * n, tinybatch_tests::poison<T>());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) a[i + std::size_t(j) * ld] = tinybatch_tests::uniform<T>();
  return a;
}

/// ||P A - L U||_1 / (max(m, n) ||A||_1 eps) in double; 1e300 for invalid pivots.
template <class T>
double lu_ratio(int m, int n, const std::vector<T>& a0, const std::vector<T>& lu, int ld, const std::vector<int>& ipiv) {
  const int mn = std::min(m, n);
  for (int i = 0; i < mn; ++i)
    if (ipiv[i] < i + 1 || ipiv[i] > m) return 1e300;
  std::vector<double> pa(std::size_t(m) * n), l(std::size_t(m) * mn, 0.0), u(std::size_t(mn) * n, 0.0);
  double an = 0;
  for (int j = 0; j < n; ++j) {
    double s = 0;
    for (int i = 0; i < m; ++i) pa[i + std::size_t(j) * m] = a0[i + std::size_t(j) * ld], s += std::fabs(a0[i + std::size_t(j) * ld]);
    an = std::max(an, s);
  }
  LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, n, pa.data(), m, 1, mn, ipiv.data(), 1);
  for (int j = 0; j < mn; ++j) {
    l[j + std::size_t(j) * m] = 1;
    for (int i = j + 1; i < m; ++i) l[i + std::size_t(j) * m] = lu[i + std::size_t(j) * ld];
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= std::min(j, mn - 1); ++i) u[i + std::size_t(j) * mn] = lu[i + std::size_t(j) * ld];
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, mn, -1.0, l.data(), m, u.data(), mn, 1.0, pa.data(), m);
  double r = 0;
  for (int j = 0; j < n; ++j) {
    double s = 0;
    for (int i = 0; i < m; ++i) s += std::fabs(pa[i + std::size_t(j) * m]);
    if (!(s <= r)) r = s;  // NaN sticks
  }
  return r / (std::max(m, n) * an * std::numeric_limits<T>::epsilon());
}

struct outcome {
  double ratio;
  int info;
  bool padding_ok;
};

/// Factors a copy of a with the hybrid, the matrix on the host or on the device.
template <class T>
outcome hybrid(int m, int n, int ld, const std::vector<T>& a, bool on_device, calu::hybrid_options o,
               calu::hybrid_report* rep = nullptr) {
  std::vector<T> lu = a;
  std::vector<int> ipiv(std::size_t(n) + 1, -7777);
  int info;
  if (on_device) {
    T* d = nullptr;
    TINYBATCH_CUDA_CHECK(cudaMalloc(&d, sizeof(T) * lu.size()));
    TINYBATCH_CUDA_CHECK(cudaMemcpy(d, lu.data(), sizeof(T) * lu.size(), cudaMemcpyHostToDevice));
    info = calu::hybrid_getrf(m, n, d, ld, ipiv.data(), o, rep);
    TINYBATCH_CUDA_CHECK(cudaMemcpy(lu.data(), d, sizeof(T) * lu.size(), cudaMemcpyDeviceToHost));
    TINYBATCH_CUDA_CHECK(cudaFree(d));
  } else {
    info = calu::hybrid_getrf(m, n, lu.data(), ld, ipiv.data(), o, rep);
  }
  bool pad = ipiv.back() == -7777;
  ipiv.pop_back();
  for (int j = 0; j < n; ++j)
    for (int i = m; i < ld; ++i) pad = pad && tinybatch_tests::is_poison(lu[i + std::size_t(j) * ld]);
  return {lu_ratio(m, n, a, lu, ld, ipiv), info, pad};
}

calu::hybrid_options hopts(int b, int d, bool lookahead = true) {
  calu::hybrid_options o;
  o.b = b, o.d = d, o.lookahead = lookahead;
  o.panel = calu::panel_location::cpu;  // the seed's schedule (the GPU panels are the default)
  o.g1 = 1e10, o.g2 = 1e12;  // no calibration in the tests (d is given)
  return o;
}

}  // namespace

TEMPLATE_TEST_CASE("calu::hybrid_getrf: backward error on host and device matrices", "[calu][hybrid]", float, double) {
  using T = TestType;
  (void)tinybatch_tests::seed();
  struct shape { int m, n, b; };
  const shape shapes[] = {{1, 1, 8}, {100, 100, 16}, {517, 517, 64}, {1000, 1000, 128}, {3001, 257, 64}, {4000, 64, 32}};
  for (const shape& s : shapes) {
    const int nb = (s.n + s.b - 1) / s.b;
    for (int d : {1, 2, 3, nb}) {
      if (d > nb) continue;
      for (bool dev : {false, true})
        for (bool la : {true, false}) {
          if (!la && d != 2) continue;
          INFO("m " << s.m << " n " << s.n << " b " << s.b << " d " << d << (dev ? " device" : " host")
                    << " lookahead " << la);
          const int ld = s.m + 2;
          const std::vector<T> a = random_matrix<T>(s.m, s.n, ld);
          const outcome o = hybrid(s.m, s.n, ld, a, dev, hopts(s.b, d, la));
          INFO("ratio " << o.ratio);
          CHECK(o.info == 0);
          CHECK(o.padding_ok);
          CHECK(o.ratio < 30);
        }
    }
  }
}

TEST_CASE("calu::hybrid_getrf with a workspace kept between calls", "[calu][hybrid]") {
  // The second and third calls reuse the first one's buffers and events (another size too).
  calu::cuda_device<double> ws;
  for (int n : {400, 400, 250}) {
    INFO("n " << n);
    const std::vector<double> a = random_matrix<double>(n, n, n);
    std::vector<double> lu = a;
    std::vector<int> ipiv(n, -7777);
    CHECK(calu::hybrid_getrf(n, n, lu.data(), n, ipiv.data(), hopts(32, 2), nullptr, &ws) == 0);
    CHECK(lu_ratio(n, n, a, lu, n, ipiv) < 30);
  }
}

TEST_CASE("calu::hybrid_getrf: singular matrices give getrf's info", "[calu][hybrid]") {
  for (int c : {0, 37, 130, 299}) {
    INFO("zero column " << c);
    const int n = 300;
    std::vector<double> a = random_matrix<double>(n, n, n);
    for (int i = 0; i < n; ++i) a[i + std::size_t(c) * n] = 0;
    const outcome o = hybrid(n, n, n, a, c % 2 == 0, hopts(32, 2));
    CHECK(o.info == c + 1);
    CHECK(o.ratio < 30);
  }
}

TEST_CASE("calu::hybrid_gesv solves; the model's d and the trace", "[calu][hybrid]") {
  const int n = 600, nrhs = 2;
  std::vector<double> a = random_matrix<double>(n, n, n), b = random_matrix<double>(n, nrhs, n);
  std::vector<double> lu = a, x = b;
  std::vector<int> ipiv(n);
  REQUIRE(calu::hybrid_gesv(n, nrhs, lu.data(), n, ipiv.data(), x.data(), n, hopts(64, 3)) == 0);
  double res = 0, an = 0, xn = 0;
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) {
      double s = -b[i + std::size_t(j) * n];
      for (int k = 0; k < n; ++k) s += a[i + std::size_t(k) * n] * x[k + std::size_t(j) * n];
      res = std::max(res, std::fabs(s));
      xn = std::max(xn, std::fabs(x[i + std::size_t(j) * n]));
    }
  for (double v : a) an = std::max(an, std::fabs(v));
  CHECK(res / (n * an * xn * n * std::numeric_limits<double>::epsilon()) < 30);

  // The model: a GPU 100x the CPU's cores together gets nearly all columns, an even match
  // about half, and d stays in [1, nb].
  CHECK(calu::model_d(32768, 32768, 128, 16, 15e9, 60e12) == 1);
  CHECK(std::abs(calu::model_d(32768, 32768, 128, 16, 1e9, 16e9) - 128) <= 2);
  CHECK(calu::model_d(1000, 1000, 128, 16, 1e12, 1e9) == 8);

  // Calibrated d and the trace of one run.
  calu::hybrid_options o;
  o.b = 64, o.trace = true, o.panel = calu::panel_location::cpu;
  calu::hybrid_report rep;
  const outcome r = hybrid(2000, 2000, 2000, random_matrix<double>(2000, 2000, 2000), false, o, &rep);
  CHECK(r.ratio < 30);
  CHECK(rep.g1 > 0);
  CHECK(rep.g2 > 0);
  CHECK(rep.d >= 1);
  CHECK(rep.d == rep.model_d);
  int panels = 0;
  for (const auto& e : rep.events) panels += std::string(e.what) == "panel";
  CHECK(panels == rep.nb);
}

// ---- The panels on the GPU (panel_location::gpu: TSLU's tournament as batched LUs) -------

namespace {

/// The GPU panels with the tournament (row_blocks >= 2; 0 and 1 give cuSOLVER's partial
/// pivoting per panel, the default).
calu::hybrid_options gpu_panel(int b) {
  calu::hybrid_options o;
  o.b = b, o.panel = calu::panel_location::gpu, o.row_blocks = 2;
  return o;
}

/// max |U| / max |A|, the growth of a factorization in place (lu) of a0.
template <class T>
double growth(int m, int n, const std::vector<T>& a0, const std::vector<T>& lu, int ld) {
  double amax = 0, umax = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      amax = std::max(amax, double(std::fabs(a0[i + std::size_t(j) * ld])));
      if (i <= j) umax = std::max(umax, double(std::fabs(lu[i + std::size_t(j) * ld])));
    }
  return umax / amax;
}

}  // namespace

TEMPLATE_TEST_CASE("calu::hybrid_getrf, panels on the GPU: backward error, pivots, padding", "[calu][hybrid][gpu_panel]",
                   float, double) {
  using T = TestType;
  (void)tinybatch_tests::seed();
  struct shape { int m, n, b; };
  // Sizes not multiples of b, panels of one leaf, of an odd number of leaves, tall-skinny.
  const shape shapes[] = {{1, 1, 8},       {100, 100, 16},  {517, 517, 64}, {1000, 1000, 128},
                          {3001, 257, 64}, {4000, 64, 32}, {20011, 96, 32}, {777, 300, 50}};
  for (const shape& s : shapes)
    for (bool dev : {false, true}) {
      INFO("m " << s.m << " n " << s.n << " b " << s.b << (dev ? " device" : " host"));
      const int ld = s.m + 2;
      const std::vector<T> a = random_matrix<T>(s.m, s.n, ld);
      // The tournament (tinybatch kernels: 2, 7 and up to 1000 leaves; cuBLAS node LUs);
      // cuSOLVER's partial pivoting. Up to 64 columns the kernel is tournament_panel (runs
      // of 256 rows, F-way merges, leaves down to one row), wider the per-level kernel.
      for (int variant : {0, 1, 2, 3, 4}) {
        calu::hybrid_options opt = gpu_panel(s.b);
        opt.tournament_cublas = variant == 1;
        if (variant == 2) opt.row_blocks = 1;
        if (variant == 3) opt.row_blocks = 7;
        if (variant == 4) opt.row_blocks = 1000;
        const outcome o = hybrid(s.m, s.n, ld, a, dev, opt);
        INFO("variant " << variant << " ratio " << o.ratio);
        CHECK(o.info == 0);
        CHECK(o.padding_ok);
        CHECK(o.ratio < 30);
      }
    }
}

TEST_CASE("calu::hybrid_getrf, panels on the GPU: growth within 2x of partial pivoting, other pivots",
          "[calu][hybrid][gpu_panel]") {
  (void)tinybatch_tests::seed();
  calu::cuda_device<double> ws;
  for (int leaves : {0, 2, 16}) {  // 0: cuBLAS node LUs
  const bool cublas = leaves == 0;
  INFO((cublas ? "cuBLAS node LUs" : "tinybatch node LUs, leaves ") << leaves);
  double g_tslu = 0, g_pp = 0;
  bool other_pivots = false;
  const int m = 2048, n = 256, b = 32, trials = 6;
  calu::hybrid_options opt = gpu_panel(b);
  opt.tournament_cublas = cublas;
  if (!cublas) opt.row_blocks = leaves;
  for (int t = 0; t < trials; ++t) {
    const std::vector<double> a = random_matrix<double>(m, n, m);
    std::vector<double> lu = a, pp = a;
    std::vector<int> ipiv(n, -7777), ppiv(n);
    REQUIRE(calu::hybrid_getrf(m, n, lu.data(), m, ipiv.data(), opt, nullptr, &ws) == 0);
    // The tournament's first pivot is the largest entry of the first column.
    double first = 0;
    int at = 0;
    for (int i = 0; i < m; ++i)
      if (std::fabs(a[i]) > first) first = std::fabs(a[i]), at = i;
    CHECK(ipiv[0] == at + 1);
    CHECK(lu_ratio(m, n, a, lu, m, ipiv) < 30);
    REQUIRE(LAPACKE_dgetrf(LAPACK_COL_MAJOR, m, n, pp.data(), m, ppiv.data()) == 0);
    g_tslu += growth(m, n, a, lu, m), g_pp += growth(m, n, a, pp, m);
    other_pivots = other_pivots || ipiv != ppiv;
  }
  INFO("mean growth: tournament " << g_tslu / trials << ", partial pivoting " << g_pp / trials);
  CHECK(g_tslu <= 2 * g_pp);
  CHECK(other_pivots);  // the tournament ran (one leaf would be partial pivoting itself)
  }
}

TEST_CASE("calu::hybrid_getrf, panels on the GPU: singular matrices give getrf's info", "[calu][hybrid][gpu_panel]") {
  for (int c : {0, 37, 130, 299}) {
    INFO("zero column " << c);
    const int m = 1500, n = 300;
    std::vector<double> a = random_matrix<double>(m, n, m);
    for (int i = 0; i < m; ++i) a[i + std::size_t(c) * m] = 0;
    calu::hybrid_options opt = gpu_panel(32);
    opt.tournament_cublas = c % 3 == 0;
    opt.row_blocks = c == 37 ? 40 : 2;  // a zero column in many leaves and merges
    const outcome o = hybrid(m, n, m, a, c % 2 == 0, opt);
    CHECK(o.info == c + 1);
    CHECK(o.ratio < 30);
  }
  const int n = 200;  // the zero matrix: info 1, the factorization completed
  std::vector<double> z(std::size_t(n) * n, 0.0);
  std::vector<int> ipiv(n, -7777);
  CHECK(calu::hybrid_getrf(n, n, z.data(), n, ipiv.data(), gpu_panel(32)) == 1);
  bool finite = true, valid = true;
  for (double v : z) finite = finite && std::isfinite(v);
  for (int i = 0; i < n; ++i) valid = valid && ipiv[i] >= i + 1 && ipiv[i] <= n;
  CHECK(finite);
  CHECK(valid);
}

TEST_CASE("calu::hybrid_getrf, panels on the GPU: the solve", "[calu][hybrid][gpu_panel]") {
  const int n = 900, nrhs = 3;
  std::vector<double> a = random_matrix<double>(n, n, n), b = random_matrix<double>(n, nrhs, n);
  std::vector<double> lu = a, x = b;
  std::vector<int> ipiv(n, -7777);
  REQUIRE(calu::hybrid_gesv(n, nrhs, lu.data(), n, ipiv.data(), x.data(), n, gpu_panel(64)) == 0);
  double res = 0, an = 0, xn = 0;
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) {
      double s = -b[i + std::size_t(j) * n];
      for (int k = 0; k < n; ++k) s += a[i + std::size_t(k) * n] * x[k + std::size_t(j) * n];
      res = std::max(res, std::fabs(s));
      xn = std::max(xn, std::fabs(x[i + std::size_t(j) * n]));
    }
  for (double v : a) an = std::max(an, std::fabs(v));
  CHECK(res / (n * an * xn * n * std::numeric_limits<double>::epsilon()) < 30);
}

namespace {

/// hybrid_getrf with default options on a host and on a device copy of a random m x n
/// matrix (leading dimension ld): info 0, padding untouched, backward error; the reports.
std::vector<calu::hybrid_report> check_defaults(int m, int n, int ld) {
  std::vector<calu::hybrid_report> reps;
  for (bool dev : {false, true}) {
    INFO((dev ? "device matrix" : "host matrix"));
    const std::vector<double> a = random_matrix<double>(m, n, ld);
    calu::hybrid_report rep;
    const outcome o = hybrid(m, n, ld, a, dev, calu::hybrid_options{}, &rep);
    CHECK(o.info == 0);
    CHECK(o.padding_ok);
    CHECK(o.ratio < 30);
    reps.push_back(rep);
  }
  return reps;
}

/// The default options' ipiv and LAPACK dgetrf's on one random m x n matrix.
std::pair<std::vector<int>, std::vector<int>> default_and_lapack_pivots(int m, int n) {
  const std::vector<double> a = random_matrix<double>(m, n, m);
  std::vector<double> lu = a, pp = a;
  std::vector<int> ipiv(n, -7777), ppiv(n);
  REQUIRE(calu::hybrid_getrf(m, n, lu.data(), m, ipiv.data()) == 0);
  REQUIRE(LAPACKE_dgetrf(LAPACK_COL_MAJOR, m, n, pp.data(), m, ppiv.data()) == 0);
  return {ipiv, ppiv};
}

}  // namespace

TEST_CASE("calu::hybrid_getrf with default options: GPU panels by partial pivoting", "[calu][hybrid][gpu_panel]") {
  // From m >= 4 n up to 64 n the defaults put every panel on the GPU, factored by cuSOLVER's
  // partial pivoting (no tournament, no calibration): the pivots are then LAPACK dgetrf's on
  // random matrices (ties aside), which the tournament's are not (the growth test above).
  (void)tinybatch_tests::seed();
  REQUIRE(!calu::gpu_whole_getrf_default(6000, 700));
  for (const calu::hybrid_report& rep : check_defaults(6000, 700, 6003)) {
    CHECK(rep.model_d == 0);  // no d, no calibration
    CHECK(rep.g1 == 0);
    CHECK(rep.nb > 1);  // panel by panel
  }
  const auto [ipiv, ppiv] = default_and_lapack_pivots(4800, 600);
  CHECK(ipiv == ppiv);
}

TEST_CASE("calu::hybrid_getrf with default options below m = 4 n: cuSOLVER's getrf", "[calu][hybrid][gpu_panel]") {
  // gpu_whole_getrf_default: the whole matrix by cuSOLVER's getrf, with the same checks,
  // LAPACK's pivots and info.
  (void)tinybatch_tests::seed();
  REQUIRE(calu::gpu_whole_getrf_default(1500, 700));
  REQUIRE(calu::gpu_whole_getrf_default(777, 777));
  for (const calu::hybrid_report& rep : check_defaults(1500, 700, 1503)) CHECK(rep.nb == 1);
  for (const calu::hybrid_report& rep : check_defaults(777, 777, 780)) CHECK(rep.nb == 1);
  const auto [ipiv, ppiv] = default_and_lapack_pivots(1200, 600);
  CHECK(ipiv == ppiv);
  for (bool dev : {false, true}) {  // a zero column: info
    const int n = 300, c = 123;
    std::vector<double> a = random_matrix<double>(n, n, n);
    for (int i = 0; i < n; ++i) a[i + std::size_t(c) * n] = 0;
    const outcome o = hybrid(n, n, n, a, dev, calu::hybrid_options{});
    CHECK(o.info == c + 1);
    CHECK(o.ratio < 30);
  }
}

TEST_CASE("calu::hybrid_getrf with default options on a very tall matrix: the tournament", "[calu][hybrid][gpu_panel]") {
  // m >= 64 n (gpu_tournament_default): 64-column panels by the one-launch tournament with
  // a leaf an SM, so the pivots are not partial pivoting's; the checks are the same.
  (void)tinybatch_tests::seed();
  const int m = 40000, n = 70;  // a full panel and one of 6 columns
  REQUIRE(calu::gpu_tournament_default(m, n));
  REQUIRE(!calu::gpu_tournament_default(63 * n, n));
  for (const calu::hybrid_report& rep : check_defaults(m, n, m + 1)) CHECK(rep.b == 64);
  const auto [ipiv, ppiv] = default_and_lapack_pivots(m, n);
  CHECK(ipiv != ppiv);        // the tournament ran
  CHECK(ipiv[0] == ppiv[0]);  // its first pivot is still the first column's largest entry
}
