// bench_potrf_large: batched Cholesky beyond n = 32 and on variable-size batches, tinybatch
// against cuSOLVER in one run, and the tuning sweep of the blocked kernel's shapes.
//
//   bench_potrf_large [--gib G] [--types d,s] [--sizes 33,64,...] [--no-var] [--no-fixed]
//                     [--sweep] [--csv FILE]
//
// Fixed: n = 33 .. 1024, batches filling G GiB (default 1), tinybatch's default and (with
// --sweep) every fused-kernel shape loop-exclusive and loop-inclusive and the GEMM-updated
// path at each panel width, against
// cusolverDn<t>potrfBatched. Variable: 3000 and 100000 matrices (100000 only up to max 128),
// sizes uniform in [1, max] or Gaussian around max / 2, tinybatch vbatch in each early-exit /
// scheduling variant, tinybatch's fixed-size kernel on the batch padded to max, cuSOLVER
// potrfBatched on the padded batch, and one cusolverDn<t>potrf per matrix on 8 streams (3000
// only). GFLOP/s count n^3 / 3 of the actual sizes; "bound" is the attainable time (the
// larger of reading and writing every matrix once at the measured copy bandwidth and its
// flops at the measured GEMM rate) over the measured time.
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <tinybatch/cuda.hpp>

#include "timing.hpp"

namespace tb = tinybatch;
using tb::index_t;
using tb::cuda::check;

#if defined(TB_BENCH_BUILD_COMMIT_TU)
const char* tb_bench_build_commit();  // bench/cpu/build_commit.cpp
#else
const char* tb_bench_build_commit() { return "unknown"; }
#endif

namespace {

template <class T> struct vendor;
template <> struct vendor<double> {
  static constexpr const char* p = "d";
  static cusolverStatus_t batched(cusolverDnHandle_t h, double** a, int n, int* info, int count) {
    return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, count);
  }
  static cusolverStatus_t buffer(cusolverDnHandle_t h, double* a, int n, int* lw) {
    return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lw);
  }
  static cusolverStatus_t one(cusolverDnHandle_t h, double* a, int n, double* w, int lw, int* info) {
    return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lw, info);
  }
  static cublasStatus_t gemm(cublasHandle_t h, int n, const double* a, double* c) {
    const double one = 1, zero = 0;
    return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, n, a, n, &zero, c, n);
  }
};
template <> struct vendor<float> {
  static constexpr const char* p = "s";
  static cusolverStatus_t batched(cusolverDnHandle_t h, float** a, int n, int* info, int count) {
    return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, count);
  }
  static cusolverStatus_t buffer(cusolverDnHandle_t h, float* a, int n, int* lw) {
    return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lw);
  }
  static cusolverStatus_t one(cusolverDnHandle_t h, float* a, int n, float* w, int lw, int* info) {
    return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lw, info);
  }
  static cublasStatus_t gemm(cublasHandle_t h, int n, const float* a, float* c) {
    const float one = 1, zero = 0;
    return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, n, a, n, &zero, c, n);
  }
};

struct machine {
  std::string device;
  double bw = 0;                   // bytes/s, read + write, device to device
  double gemm_d = 0, gemm_s = 0;   // flop/s at n = 8192
};

struct writer {
  std::ofstream f;
  std::string tail;
  writer(const std::string& path, const machine& m) : f(path) {
    const char* c = std::getenv("TB_COMMIT");
    if (!c) c = tb_bench_build_commit();
    char date[32];
    const std::time_t t = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&t));
    f << "# device " << m.device << ", copy bandwidth " << m.bw / 1e9 << " GB/s, dgemm " << m.gemm_d / 1e12
      << " TFLOP/s, sgemm " << m.gemm_s / 1e12 << " TFLOP/s\n";
    f << "kind,prec,dist,n_or_max,batch,impl,variant,ms,gflops,bound_fraction,device,date,commit\n";
    tail = "," + m.device + "," + date + "," + c;
  }
  void row(const char* kind, const char* prec, const char* dist, int n, index_t batch, const std::string& impl,
           const std::string& variant, double ms, double flops, double bound_ms) {
    const double gf = flops / (ms * 1e6);
    std::printf("%-6s %s %-8s %5d %7lld %-26s %-22s %9.4f ms %9.1f GFLOP/s  %.3f of bound\n", kind, prec, dist, n,
                (long long)batch, impl.c_str(), variant.c_str(), ms, gf, bound_ms / ms);
    f << kind << "," << prec << "," << dist << "," << n << "," << batch << "," << impl << "," << variant << ","
      << ms << "," << gf << "," << bound_ms / ms << tail << "\n";
    f.flush();
  }
};

machine measure_machine() {
  machine m;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  m.device = prop.name;
  for (auto& c : m.device)
    if (c == ',') c = ' ';
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "cudaEventCreate");
  check(cudaEventCreate(&e1), "cudaEventCreate");
  const std::size_t bytes = std::size_t(1) << 30;
  tb::cuda::device_array<char> a(bytes), b(bytes);
  check(cudaMemset(a.data(), 1, bytes), "cudaMemset");
  const double ms = tb_bench::median_ms(e0, e1, 5, 50, [&] {
    check(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
  });
  m.bw = 2.0 * bytes / (ms * 1e-3);
  cublasHandle_t h;
  check(cublasCreate(&h), "cublasCreate");
  const int n = 8192;
  {
    tb::cuda::device_array<double> x(std::size_t(n) * n), y(std::size_t(n) * n);
    check(cudaMemset(x.data(), 0, x.size() * 8), "cudaMemset");
    const double t = tb_bench::median_ms(e0, e1, 3, 50, [&] { check(vendor<double>::gemm(h, n, x.data(), y.data()), "cublasDgemm"); });
    m.gemm_d = 2.0 * n * double(n) * n / (t * 1e-3);
  }
  {
    tb::cuda::device_array<float> x(std::size_t(n) * n), y(std::size_t(n) * n);
    check(cudaMemset(x.data(), 0, x.size() * 4), "cudaMemset");
    const double t = tb_bench::median_ms(e0, e1, 3, 50, [&] { check(vendor<float>::gemm(h, n, x.data(), y.data()), "cublasSgemm"); });
    m.gemm_s = 2.0 * n * double(n) * n / (t * 1e-3);
  }
  cublasDestroy(h);
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  return m;
}

/// SPD matrices: diagonally dominant random symmetric (full square stored), on the host.
template <class T>
void spd_into(std::vector<T>& h, index_t at, int n, int ld, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const T v = i == j ? T(n + 1 + u(g)) : T(u(g));
      h[std::size_t(at + i + index_t(j) * ld)] = v;
      h[std::size_t(at + j + index_t(i) * ld)] = v;
    }
}

struct options {
  double gib = 1;
  std::vector<int> sizes{33, 40, 48, 64, 100, 128, 200, 256, 384, 512, 768, 1024};
  std::vector<int> maxes{32, 64, 128, 256, 512};
  bool fixed = true, var = true, sweep = false, dbl = true, flt = true;
  std::string csv = "bench_potrf_large.csv";
};

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) v.push_back(std::stoi(x));
  return v;
}

template <class T, class K>
double time_tb(cudaEvent_t e0, cudaEvent_t e1, const auto& view, int* info, T* a, const T* pristine,
               std::size_t elems, int max_n = -1) {
  return tb_bench::median_ms(
      e0, e1, 5, 30,
      [&] {
        if constexpr (std::remove_cvref_t<decltype(view)>::uniform)
          tb::potrf(tb::cuda::policy<K>{}, tb::lower, view, std::span<int>(info, std::size_t(view.count())));
        else
          tb::potrf(tb::cuda::policy<K>{}, tb::lower, view, std::span<int>(info, std::size_t(view.count())), max_n);
      },
      [&] { check(cudaMemcpyAsync(a, pristine, elems * sizeof(T), cudaMemcpyDeviceToDevice), "restore"); });
}

template <class T>
void fixed_sizes(const options& o, const machine& m, writer& w, cusolverDnHandle_t sol, cudaEvent_t e0, cudaEvent_t e1) {
  const char* p = vendor<T>::p;
  const double gemm = sizeof(T) == 8 ? m.gemm_d : m.gemm_s;
  for (int n : o.sizes) {
    const index_t count = index_t(o.gib * double(1 << 30) / (double(n) * n * sizeof(T)));
    const std::size_t elems = std::size_t(count) * n * n;
    std::vector<T> h(elems);
    std::mt19937_64 g(n);
    spd_into(h, 0, n, n, g);
    for (index_t k = 1; k < count; ++k) std::copy(h.begin(), h.begin() + std::ptrdiff_t(n) * n, h.begin() + k * n * n);
    tb::cuda::device_array<T> pristine{std::span<const T>(h)}, a(elems);
    tb::cuda::device_array<int> info(static_cast<std::size_t>(count));
    std::vector<T*> ptr(static_cast<std::size_t>(count));
    for (index_t k = 0; k < count; ++k) ptr[std::size_t(k)] = a.data() + k * n * n;
    tb::cuda::device_array<T*> dptr{std::span<T* const>(ptr)};
    const double flops = double(count) * n * double(n) * n / 3;
    const double bound = std::max(2.0 * elems * sizeof(T) / m.bw, flops / gemm) * 1e3;
    auto restore = [&] { check(cudaMemcpyAsync(a.data(), pristine.data(), elems * sizeof(T), cudaMemcpyDeviceToDevice), "restore"); };
    const auto view = tb::strided_view<T>(a.data(), n, n, count);
    double ms = time_tb<T, tb::kernels::automatic>(e0, e1, view, info.data(), a.data(), pristine.data(), elems);
    w.row("fixed", p, "-", n, count, "tinybatch", "default", ms, flops, bound);
    if (n >= 96) {
      // The GEMM path's panel step as one kernel or two launches (cholesky_gemm_split).
      for (bool split : {false, true}) {
        auto run = [&] {
          check(cudaMemsetAsync(info.data(), 0, sizeof(int) * std::size_t(count)), "cudaMemsetAsync(info)");
          tb::cuda::blocked::potrf_gemm<T, 32, false>(nullptr, view, info.data(), n, split);
        };
        ms = tb_bench::median_ms(e0, e1, 5, 30, run, restore);
        w.row("fixed", p, "-", n, count, "tinybatch", split ? "gemm_nb32_split" : "gemm_nb32_one_kernel", ms, flops, bound);
      }
    }
    if (n <= tb::cuda::onchip::max_order) {
      // The on-chip kernel (potrf_onchip.cuh), lower and upper, whatever the default is.
      for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper}) {
        tb::cuda::blocked::cholesky_options co;
        co.onchip = 1;
        ms = tb_bench::median_ms(e0, e1, 5, 30, [&] { tb::cuda::blocked::potrf(nullptr, ul, view, info.data(), n, co); }, restore);
        w.row("fixed", p, "-", n, count, "tinybatch", ul == tb::uplo::upper ? "onchip_upper" : "onchip", ms, flops, bound);
      }
    }
    if (o.sweep) {
      for (int s = 0; s < 3; ++s)
        for (bool inc : {false, true}) {
          tb::cuda::blocked::cholesky_options co;
          co.shape = s, co.inclusive = inc;
          const auto& sh = tb::cuda::blocked_kernels::cholesky_shapes[s];
          ms = tb_bench::median_ms(e0, e1, 5, 30, [&] { tb::cuda::blocked::potrf(nullptr, tb::uplo::lower, view, info.data(), n, co); }, restore);
          w.row("fixed", p, "-", n, count, "tinybatch",
                "ib" + std::to_string(sh.ib) + "_rpt" + std::to_string(sh.rpt) + "_t" + std::to_string(sh.maxt) + (inc ? "_inc" : "_exc"),
                ms, flops, bound);
        }
      // The GEMM-updated path (potrf_gemm.cuh) at each panel width, lower and upper.
      for (int nb : {16, 32})
        for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper}) {
          auto run = [&] {
            check(cudaMemsetAsync(info.data(), 0, sizeof(int) * std::size_t(count)), "cudaMemsetAsync(info)");
            if (nb == 32)
              ul == tb::uplo::upper ? tb::cuda::blocked::potrf_gemm<T, 32, true>(nullptr, view, info.data(), n)
                                    : tb::cuda::blocked::potrf_gemm<T, 32, false>(nullptr, view, info.data(), n);
            else
              ul == tb::uplo::upper ? tb::cuda::blocked::potrf_gemm<T, 16, true>(nullptr, view, info.data(), n)
                                    : tb::cuda::blocked::potrf_gemm<T, 16, false>(nullptr, view, info.data(), n);
          };
          ms = tb_bench::median_ms(e0, e1, 5, 30, run, restore);
          w.row("fixed", p, "-", n, count, "tinybatch",
                "gemm_nb" + std::to_string(nb) + (ul == tb::uplo::upper ? "_upper" : ""), ms, flops, bound);
        }
      ms = tb_bench::median_ms(e0, e1, 5, 30, [&] { tb::cuda::blocked::potrf(nullptr, tb::uplo::upper, view, info.data(), n); }, restore);
      w.row("fixed", p, "-", n, count, "tinybatch", "default_upper", ms, flops, bound);
    }
    if (count <= 2147483647) {
      ms = tb_bench::median_ms(e0, e1, 5, 30, [&] { check(vendor<T>::batched(sol, dptr.data(), n, info.data(), int(count)), "potrfBatched"); }, restore);
      w.row("fixed", p, "-", n, count, "cusolver_potrf_batched", "-", ms, flops, bound);
    }
  }
}

template <class T>
void var_sizes(const options& o, const machine& m, writer& w, cusolverDnHandle_t sol, cudaEvent_t e0, cudaEvent_t e1) {
  const char* p = vendor<T>::p;
  const double gemm = sizeof(T) == 8 ? m.gemm_d : m.gemm_s;
  using E = tb::kernels::early_exit;
  using S = tb::kernels::start;
  for (index_t count : {index_t(3000), index_t(100000)})
    for (int max : o.maxes)
      for (bool gaussian : {false, true}) {
        if (count > 3000 && max > 128) continue;
        std::mt19937_64 g(max * 7 + gaussian);
        std::normal_distribution<double> gd(max / 2.0, max / 6.0);
        std::uniform_int_distribution<int> ud(1, max);
        std::vector<int> n(static_cast<std::size_t>(count));
        for (auto& x : n) x = std::clamp(gaussian ? int(std::lround(gd(g))) : ud(g), 1, max);
        std::vector<index_t> off(static_cast<std::size_t>(count));
        index_t total = 0;
        double flops = 0, bytes = 0;
        for (index_t k = 0; k < count; ++k) {
          off[std::size_t(k)] = total;
          total += index_t(n[std::size_t(k)]) * n[std::size_t(k)];
          flops += double(n[std::size_t(k)]) * n[std::size_t(k)] * n[std::size_t(k)] / 3;
          bytes += 2.0 * sizeof(T) * n[std::size_t(k)] * n[std::size_t(k)];
        }
        std::vector<T> h(static_cast<std::size_t>(total));
        for (index_t k = 0; k < count; ++k) spd_into(h, off[std::size_t(k)], n[std::size_t(k)], n[std::size_t(k)], g);
        tb::cuda::device_array<T> pristine{std::span<const T>(h)}, a(h.size());
        std::vector<T*> ptr(static_cast<std::size_t>(count));
        for (index_t k = 0; k < count; ++k) ptr[std::size_t(k)] = a.data() + off[std::size_t(k)];
        tb::cuda::device_array<T*> dptr{std::span<T* const>(ptr)};
        tb::cuda::device_array<int> dn{std::span<const int>(n)}, info(static_cast<std::size_t>(count));
        const tb::vbatch_view<T> view(dptr.data(), dn.data(), dn.data(), dn.data(), count);
        const double bound = std::max(bytes / m.bw, flops / gemm) * 1e3;
        const char* dist = gaussian ? "gaussian" : "uniform";
        auto row = [&](const char* impl, const char* variant, double ms) { w.row("var", p, dist, max, count, impl, variant, ms, flops, bound); };
        row("tinybatch_vbatch", "default", time_tb<T, tb::kernels::automatic>(e0, e1, view, info.data(), a.data(), pristine.data(), h.size(), max));
        row("tinybatch_vbatch", "classic_greedy", time_tb<T, tb::kernels::blocked<E::classic, S::greedy>>(e0, e1, view, info.data(), a.data(), pristine.data(), h.size(), max));
        row("tinybatch_vbatch", "classic_lazy", time_tb<T, tb::kernels::blocked<E::classic, S::lazy>>(e0, e1, view, info.data(), a.data(), pristine.data(), h.size(), max));
        row("tinybatch_vbatch", "aggressive_greedy", time_tb<T, tb::kernels::blocked<E::aggressive, S::greedy>>(e0, e1, view, info.data(), a.data(), pristine.data(), h.size(), max));
        row("tinybatch_vbatch", "aggressive_lazy", time_tb<T, tb::kernels::blocked<E::aggressive, S::lazy>>(e0, e1, view, info.data(), a.data(), pristine.data(), h.size(), max));
        row("tinybatch_vbatch", "inclusive", time_tb<T, tb::kernels::blocked<E::aggressive, S::greedy, true>>(e0, e1, view, info.data(), a.data(), pristine.data(), h.size(), max));
        if (max <= tb::cuda::onchip::max_order) {
          tb::cuda::blocked::cholesky_options co;
          co.onchip = 1;
          auto restore = [&] { check(cudaMemcpyAsync(a.data(), pristine.data(), h.size() * sizeof(T), cudaMemcpyDeviceToDevice), "restore"); };
          row("tinybatch_vbatch", "onchip", tb_bench::median_ms(e0, e1, 5, 30, [&] { tb::cuda::blocked::potrf(nullptr, tb::uplo::lower, view, info.data(), max, co); }, restore));
        }
        if (max >= 64) {
          // The GEMM-updated path (potrf_gemm_vbatch: the update by its own kernel), the panel
          // step as one kernel and as two launches.
          auto restore = [&] { check(cudaMemcpyAsync(a.data(), pristine.data(), h.size() * sizeof(T), cudaMemcpyDeviceToDevice), "restore"); };
          for (int split : {0, 1})
            row("tinybatch_vbatch", split ? "gemm_nb32_split" : "gemm_nb32_one_kernel", tb_bench::median_ms(e0, e1, 5, 30, [&] {
                  check(cudaMemsetAsync(info.data(), 0, sizeof(int) * std::size_t(count)), "cudaMemsetAsync(info)");
                  tb::cuda::blocked::potrf_gemm_vbatch<T, 32, false>(nullptr, view, info.data(), max, split, 0);
                }, restore));
          if constexpr (std::is_same_v<T, double>)  // the update on the tensor cores (DMMA)
            for (int split : {0, 1})
              row("tinybatch_vbatch", split ? "gemm_nb32_mma_split" : "gemm_nb32_mma", tb_bench::median_ms(e0, e1, 5, 30, [&] {
                    check(cudaMemsetAsync(info.data(), 0, sizeof(int) * std::size_t(count)), "cudaMemsetAsync(info)");
                    tb::cuda::blocked::potrf_gemm_vbatch<T, 32, false, true>(nullptr, view, info.data(), max, split, 0);
                  }, restore));
          // The two-launch step with each step's live work in device-built lists (vwork).
          row("tinybatch_vbatch", "gemm_nb32_split_lists", tb_bench::median_ms(e0, e1, 5, 30, [&] {
                check(cudaMemsetAsync(info.data(), 0, sizeof(int) * std::size_t(count)), "cudaMemsetAsync(info)");
                tb::cuda::blocked::potrf_gemm_vbatch<T, 32, false>(nullptr, view, info.data(), max, 1, 1);
              }, restore));
          if constexpr (std::is_same_v<T, double>)
            row("tinybatch_vbatch", "gemm_nb32_mma_split_lists", tb_bench::median_ms(e0, e1, 5, 30, [&] {
                  check(cudaMemsetAsync(info.data(), 0, sizeof(int) * std::size_t(count)), "cudaMemsetAsync(info)");
                  tb::cuda::blocked::potrf_gemm_vbatch<T, 32, false, true>(nullptr, view, info.data(), max, 1, 1);
                }, restore));
          // The fused step (potrf_vfused_kernel: no workspace S, two launches a step).
          row("tinybatch_vbatch", "gemm_nb32_fused", tb_bench::median_ms(e0, e1, 5, 30, [&] {
                check(cudaMemsetAsync(info.data(), 0, sizeof(int) * std::size_t(count)), "cudaMemsetAsync(info)");
                tb::cuda::blocked::potrf_gemm_vbatch<T, 32, false>(nullptr, view, info.data(), max, -1, -1, 1);
              }, restore));
          if constexpr (std::is_same_v<T, double>)
            row("tinybatch_vbatch", "gemm_nb32_mma_fused", tb_bench::median_ms(e0, e1, 5, 30, [&] {
                  check(cudaMemsetAsync(info.data(), 0, sizeof(int) * std::size_t(count)), "cudaMemsetAsync(info)");
                  tb::cuda::blocked::potrf_gemm_vbatch<T, 32, false, true>(nullptr, view, info.data(), max, -1, -1, 1);
                }, restore));
        }
        row("tinybatch_vbatch", "max_from_device", time_tb<T, tb::kernels::automatic>(e0, e1, view, info.data(), a.data(), pristine.data(), h.size(), -1));
        {
          // The batch padded to max x max (identity outside each matrix): fixed-size kernels.
          std::vector<T> hp(std::size_t(count) * max * max, T(0));
          for (index_t k = 0; k < count; ++k) {
            const int nk = n[std::size_t(k)];
            for (int j = 0; j < max; ++j)
              for (int i = 0; i < max; ++i)
                hp[std::size_t(k * max * max + i + j * max)] =
                    i < nk && j < nk ? h[std::size_t(off[std::size_t(k)] + i + j * nk)] : T(i == j);
          }
          tb::cuda::device_array<T> pp{std::span<const T>(hp)}, ap(hp.size());
          std::vector<T*> pptr(static_cast<std::size_t>(count));
          for (index_t k = 0; k < count; ++k) pptr[std::size_t(k)] = ap.data() + k * max * max;
          tb::cuda::device_array<T*> dpp{std::span<T* const>(pptr)};
          const auto pview = tb::strided_view<T>(ap.data(), max, max, count);
          row("tinybatch_fixed_padded", "default", time_tb<T, tb::kernels::automatic>(e0, e1, pview, info.data(), ap.data(), pp.data(), hp.size()));
          auto restore = [&] { check(cudaMemcpyAsync(ap.data(), pp.data(), hp.size() * sizeof(T), cudaMemcpyDeviceToDevice), "restore"); };
          row("cusolver_potrf_batched_padded", "-", tb_bench::median_ms(e0, e1, 5, 30, [&] { check(vendor<T>::batched(sol, dpp.data(), max, info.data(), int(count)), "potrfBatched"); }, restore));
        }
        if (count <= 3000) {
          constexpr int ns = 8;
          cusolverDnHandle_t hs[ns];
          cudaStream_t st[ns];
          int lw = 0;
          check(vendor<T>::buffer(sol, a.data(), max, &lw), "potrf_bufferSize");
          tb::cuda::device_array<T> work(std::size_t(lw) * ns + 1);
          for (int s = 0; s < ns; ++s) {
            check(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking), "cudaStreamCreate");
            check(cusolverDnCreate(&hs[s]), "cusolverDnCreate");
            check(cusolverDnSetStream(hs[s], st[s]), "cusolverDnSetStream");
          }
          auto restore = [&] { check(cudaMemcpy(a.data(), pristine.data(), h.size() * sizeof(T), cudaMemcpyDeviceToDevice), "restore"); };
          const double ms = tb_bench::median_ms(e0, e1, 3, 30, [&] {
            // Streams fork from and join the legacy stream with events, so the timing covers all.
            cudaEvent_t fork, join[ns];
            check(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), "cudaEventCreate");
            check(cudaEventRecord(fork, 0), "cudaEventRecord");
            for (int s = 0; s < ns; ++s) check(cudaStreamWaitEvent(st[s], fork, 0), "cudaStreamWaitEvent");
            for (index_t k = 0; k < count; ++k) {
              const int s = int(k % ns);
              check(vendor<T>::one(hs[s], ptr[std::size_t(k)], n[std::size_t(k)], work.data() + std::size_t(lw) * s, lw, info.data() + k), "potrf");
            }
            for (int s = 0; s < ns; ++s) {
              check(cudaEventCreateWithFlags(&join[s], cudaEventDisableTiming), "cudaEventCreate");
              check(cudaEventRecord(join[s], st[s]), "cudaEventRecord");
              check(cudaStreamWaitEvent(0, join[s], 0), "cudaStreamWaitEvent");
              cudaEventDestroy(join[s]);
            }
            cudaEventDestroy(fork);
          }, restore);
          row("cusolver_potrf_streams", "8 streams", ms);
          for (int s = 0; s < ns; ++s) cusolverDnDestroy(hs[s]), cudaStreamDestroy(st[s]);
        }
      }
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? argv[++i] : (std::fprintf(stderr, "%s needs a value\n", a.c_str()), std::exit(2), argv[0]); };
    if (a == "--gib") o.gib = std::atof(next());
    else if (a == "--sizes") o.sizes = parse_list(next());
    else if (a == "--maxes") o.maxes = parse_list(next());
    else if (a == "--no-var") o.var = false;
    else if (a == "--no-fixed") o.fixed = false;
    else if (a == "--sweep") o.sweep = true;
    else if (a == "--types") { const std::string t = next(); o.dbl = t.find('d') != std::string::npos; o.flt = t.find('s') != std::string::npos; }
    else if (a == "--csv") o.csv = next();
    else { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  const machine m = measure_machine();
  std::printf("# %s: copy %.0f GB/s (read + write), dgemm %.1f TFLOP/s, sgemm %.1f TFLOP/s\n", m.device.c_str(), m.bw / 1e9,
              m.gemm_d / 1e12, m.gemm_s / 1e12);
  writer w(o.csv, m);
  cusolverDnHandle_t sol;
  check(cusolverDnCreate(&sol), "cusolverDnCreate");
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "cudaEventCreate");
  check(cudaEventCreate(&e1), "cudaEventCreate");
  if (o.fixed) {
    if (o.dbl) fixed_sizes<double>(o, m, w, sol, e0, e1);
    if (o.flt) fixed_sizes<float>(o, m, w, sol, e0, e1);
  }
  if (o.var) {
    if (o.dbl) var_sizes<double>(o, m, w, sol, e0, e1);
    if (o.flt) var_sizes<float>(o, m, w, sol, e0, e1);
  }
  cusolverDnDestroy(sol);
  return 0;
}
