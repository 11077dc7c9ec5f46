// bench_potrf_var: Cholesky of variable-size batches on the host, in one run:
//   tinybatch_vbatch   tb::potrf(par, vbatch_view): grouped by order through the fixed-size
//                      kernels, n > 32 blocked (host/blocked/cholesky.hpp)
//   tinybatch_groups   the same matrices stored and called as one fixed-size batch per order
//                      (what a user would do without vbatch_view), the calls back to back
//   lapacke            LAPACKE_?potrf_work per matrix, an OpenMP loop (OpenBLAS, its own
//                      threads off)
//
//   bench_potrf_var [--counts 3000,100000] [--maxes 16,32,64,128,256] [--reps 5] [--csv FILE]
//                   [--uplo L|U]
//
// Sizes uniform in [1, max] or Gaussian around max / 2 (clamped to [1, max]); double. The
// input is restored before every call, outside the timed interval; the fastest of --reps
// calls. GFLOP/s count n^3 / 3 of the actual sizes.
#include <tinybatch/tinybatch.hpp>

#include <lapacke.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

const char* tb_bench_build_commit();

namespace tb = tinybatch;
using tb::index_t;

namespace {

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) v.push_back(std::stoi(x));
  return v;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto s = line.substr(line.find(':') + 2);
      for (auto& c : s)
        if (c == ',') c = ' ';
      return s;
    }
  return "unknown";
}

void spd_into(double* a, int n, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const double v = i == j ? n + 1 + u(g) : u(g);
      a[i + j * n] = v, a[j + i * n] = v;
    }
}

template <class Run, class Restore>
double best_ms(int reps, Run&& run, Restore&& restore) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    restore();
    const auto t0 = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts{3000, 100000}, maxes{16, 32, 64, 128, 256};
  int reps = 5;
  std::string csv = "bench_potrf_var.csv";
  char uplo = 'L';
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--counts") counts = parse_list(argv[i + 1]);
    else if (a == "--maxes") maxes = parse_list(argv[i + 1]);
    else if (a == "--reps") reps = std::atoi(argv[i + 1]);
    else if (a == "--csv") csv = argv[i + 1];
    else if (a == "--uplo") uplo = argv[i + 1][0] == 'U' ? 'U' : 'L';
  }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  const std::string machine = cpu_model();
  const int threads = omp_get_max_threads();
  std::ofstream out(csv);
  out << "op,prec,dist,max,count,impl,ms,gflops,threads,machine,date,commit\n";
  const tb::uplo ul = uplo == 'U' ? tb::uplo::upper : tb::uplo::lower;
  std::printf("# %s, %d threads, commit %s, %s triangle\n", machine.c_str(), threads, tb_bench_build_commit(),
              uplo == 'U' ? "upper" : "lower");
  for (int count : counts)
    for (int max : maxes)
      for (bool gaussian : {false, true}) {
        if (count > 3000 && max > 128) continue;
        std::mt19937_64 g(unsigned(max * 3 + gaussian));
        std::normal_distribution<double> gd(max / 2.0, max / 6.0);
        std::uniform_int_distribution<int> ud(1, max);
        std::vector<int> n(static_cast<std::size_t>(count));
        for (auto& x : n) x = std::clamp(gaussian ? int(std::lround(gd(g))) : ud(g), 1, max);
        std::vector<std::size_t> off(n.size());
        std::size_t total = 0;
        double flops = 0;
        for (std::size_t k = 0; k < n.size(); ++k) {
          off[k] = total;
          total += std::size_t(n[k]) * n[k];
          flops += double(n[k]) * n[k] * n[k] / 3;
        }
        std::vector<double> pristine(total), a(total);
        for (std::size_t k = 0; k < n.size(); ++k) spd_into(pristine.data() + off[k], n[k], g);
        std::vector<double*> ptrs(n.size());
        for (std::size_t k = 0; k < n.size(); ++k) ptrs[k] = a.data() + off[k];
        std::vector<int> info(n.size());
        auto restore = [&] { std::memcpy(a.data(), pristine.data(), total * sizeof(double)); };
        const char* dist = gaussian ? "gaussian" : "uniform";
        auto row = [&](const char* impl, double ms) {
          std::printf("%-8s max %4d count %6d %-18s %9.3f ms %8.2f GFLOP/s\n", dist, max, count, impl, ms, flops / (ms * 1e6));
          out << (uplo == 'U' ? "potrf_upper,d," : "potrf,d,") << dist << "," << max << "," << count << "," << impl << "," << ms << "," << flops / (ms * 1e6) << ","
              << threads << "," << machine << "," << date << "," << tb_bench_build_commit() << "\n";
        };
        // tinybatch on the variable-size batch.
        const tb::vbatch_view<double> view(ptrs.data(), n.data(), n.data(), n.data(), index_t(n.size()));
        row("tinybatch_vbatch", best_ms(reps, [&] { tb::potrf(tb::par, ul, view, info); }, restore));
        // The same matrices as one fixed-size batch per order (stored by order), called in turn.
        {
          std::vector<std::vector<std::size_t>> by(std::size_t(max) + 1);
          for (std::size_t k = 0; k < n.size(); ++k) by[std::size_t(n[k])].push_back(k);
          std::vector<std::vector<double>> gp(std::size_t(max) + 1), ga(std::size_t(max) + 1);
          for (int o = 1; o <= max; ++o)
            for (std::size_t k : by[std::size_t(o)])
              gp[std::size_t(o)].insert(gp[std::size_t(o)].end(), pristine.begin() + std::ptrdiff_t(off[k]),
                                        pristine.begin() + std::ptrdiff_t(off[k] + std::size_t(o) * o));
          ga = gp;
          auto restore_g = [&] {
            for (int o = 1; o <= max; ++o) std::memcpy(ga[std::size_t(o)].data(), gp[std::size_t(o)].data(), gp[std::size_t(o)].size() * sizeof(double));
          };
          row("tinybatch_groups", best_ms(reps, [&] {
                for (int o = 1; o <= max; ++o) {
                  const index_t c = index_t(by[std::size_t(o)].size());
                  if (c == 0) continue;
                  double* d = ga[std::size_t(o)].data();
                  tb::dispatch_size(o, [&](auto N) {
                    constexpr int s = decltype(N)::value;
                    if constexpr (s != tb::dynamic)
                      tb::potrf(tb::par, ul, tb::strided_view<double, s, s>(d, c), std::span<int>(info.data(), std::size_t(c)));
                    else
                      tb::potrf(tb::par, ul, tb::strided_view<double>(d, o, o, c), std::span<int>(info.data(), std::size_t(c)));
                  });
                }
              }, restore_g));
        }
        // OpenBLAS's own threads off, as tinybatch's blocked path has them (blas_threads.hpp).
        row("lapacke", best_ms(reps, [&] {
              const tb::host::blocked::blas_single_threaded one;
#pragma omp parallel for schedule(dynamic, 16)
              for (std::size_t k = 0; k < n.size(); ++k)
                info[k] = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n[k], ptrs[k], n[k]);
            }, restore));
      }
  return 0;
}
