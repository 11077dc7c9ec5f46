// bench_kernel_library: a batch whose order n is known only at run time, on the host, in
// one run:
//   library     tb::gesv / tb::posv(par, strided_view<T, dynamic, dynamic>) in a program
//               built with the compiled kernel library (TINYBATCH_KERNEL_LIBRARY): the SIMD
//               kernels of order n, compiled once into libtinybatch_kernels
//   fixed       the same call on strided_view<T, N, N>: the header-only kernels
//               instantiated in this translation unit (what dispatch_size gives, for the
//               orders this file instantiates)
//   runtime     the same run-time-size call with kernels::reference (what a program without
//               the library gets for a run-time n: the reference loops)
//   eigen       Eigen's PartialPivLU / LLT per matrix on Map<Matrix<T, Dynamic, Dynamic>>
//               (Eigen's types for a run-time order), an OpenMP loop
//
//   bench_kernel_library [--count 100000] [--reps 5] [--sizes 4,8,12,16,24,32] [--prec ds]
//                        [--csv FILE]
//
// Threads: OpenMP's (OMP_NUM_THREADS). --sizes: among 4, 8, 12, 16, 24, 32 (the orders whose
// fixed-size kernels this file instantiates; others run without the `fixed` row). gesv with 1
// and 4 right-hand sides (the library solves four columns at a time with its NRHS = 4
// kernels, the rest one at a time), posv with 1. The input is restored before every call,
// outside the timed interval; the fastest of --reps calls.
#include <tinybatch/tinybatch.hpp>

#include <omp.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
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

constexpr tb::parallel_policy<tb::kernels::reference> par_reference{};

/// f(integral_constant<int, N>) for the orders this file instantiates.
template <class F>
void at_fixed(int n, F&& f) {
  [&]<int... N>(std::integer_sequence<int, N...>) {
    ((n == N ? (f(std::integral_constant<int, N>{}), 0) : 0), ...);
  }(std::integer_sequence<int, 4, 8, 12, 16, 24, 32>{});
}

struct options {
  index_t count = 100000;
  int reps = 5;
  std::vector<int> sizes{4, 8, 12, 16, 24, 32};
  std::string prec = "d";
};

template <class T>
void run(const options& o, std::ofstream& out, const std::string& machine, const std::string& date, int threads) {
  using dyn = tb::strided_view<T, tb::dynamic, tb::dynamic>;
  using MatX = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  const char prec = sizeof(T) == 8 ? 'd' : 's';
  const index_t count = o.count;
  for (const char* op : {"gesv", "posv"})
    for (int n : o.sizes)
      for (int nrhs : {1, 4}) {
        const bool lu = op[0] == 'g';
        if (!lu && nrhs != 1) continue;
        std::mt19937_64 g(unsigned(n * 7 + nrhs));
        std::uniform_real_distribution<T> u(-1, 1);
        const std::size_t sa = std::size_t(n) * n, sb = std::size_t(n) * nrhs;
        std::vector<T> a0(sa * count), b0(sb * count);
        for (index_t k = 0; k < count; ++k) {
          T* a = a0.data() + sa * k;
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) a[i + j * n] = u(g);
          if (!lu)  // SPD: the symmetric part plus (n + 1) I, diagonally dominant
            for (int j = 0; j < n; ++j)
              for (int i = j; i < n; ++i) {
                const T v = (i == j ? T(n + 1) : T(0)) + T(0.5) * (a[i + j * n] + a[j + i * n]);
                a[i + j * n] = v, a[j + i * n] = v;
              }
        }
        for (auto& x : b0) x = u(g);
        std::vector<T> a(a0.size()), b(b0.size());
        std::vector<int> piv(std::size_t(n) * count, 0), info(std::size_t(count), 0);
        auto restore = [&] {
          std::memcpy(a.data(), a0.data(), a.size() * sizeof(T));
          std::memcpy(b.data(), b0.data(), b.size() * sizeof(T));
        };
        const double flops =
            double(count) * (lu ? 2.0 * n * n * n / 3 + 2.0 * n * n * nrhs : double(n) * n * n / 3 + 2.0 * n * n * nrhs);
        double eigen_ms = 0;
        auto row = [&](const char* impl, double ms) {
          if (std::string(impl) == "eigen") eigen_ms = ms;
          std::printf("%-5s %c %3d %4d %-10s %10.3f %9.2f %8.2f\n", op, prec, n, nrhs, impl, ms, flops / (ms * 1e6),
                      eigen_ms > 0 ? eigen_ms / ms : 0.0);
          out << op << "," << prec << "," << n << "," << nrhs << "," << count << "," << impl << "," << ms << ","
              << flops / (ms * 1e6) << "," << threads << "," << machine << "," << date << "," << tb_bench_build_commit()
              << "\n";
          out.flush();
        };
        row("eigen", best_ms(o.reps, [&] {
              using M = Eigen::Map<MatX>;
#pragma omp parallel for schedule(static)
              for (index_t k = 0; k < count; ++k) {
                M A(a.data() + sa * k, n, n), B(b.data() + sb * k, n, nrhs);
                if (lu)
                  B = Eigen::PartialPivLU<Eigen::Ref<MatX>>(A).solve(B);
                else
                  B = Eigen::LLT<Eigen::Ref<MatX>>(A).solve(B);
              }
            }, restore));
        const dyn A(a.data(), n, n, count), B(b.data(), n, nrhs, count);
        auto call = [&](const auto& policy, const auto& va, const auto& vb) {
          if (lu)
            tb::gesv(policy, va, piv, vb, info);
          else
            tb::posv(policy, tb::lower, va, vb, info);
        };
        row("library", best_ms(o.reps, [&] { call(tb::par, A, B); }, restore));
        at_fixed(n, [&](auto N) {
          constexpr int s = decltype(N)::value;
          if (nrhs == 1)
            row("fixed", best_ms(o.reps, [&] {
                  call(tb::par, tb::strided_view<T, s, s>(a.data(), count), tb::strided_view<T, s, 1>(b.data(), count));
                }, restore));
          else
            row("fixed", best_ms(o.reps, [&] {
                  call(tb::par, tb::strided_view<T, s, s>(a.data(), count), tb::strided_view<T, s, 4>(b.data(), count));
                }, restore));
        });
        row("runtime", best_ms(o.reps, [&] { call(par_reference, A, B); }, restore));
      }
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  std::string csv = "bench_kernel_library.csv";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--count") o.count = std::atol(argv[i + 1]);
    else if (a == "--reps") o.reps = std::atoi(argv[i + 1]);
    else if (a == "--csv") csv = argv[i + 1];
    else if (a == "--prec") o.prec = argv[i + 1];
    else if (a == "--sizes") {
      o.sizes.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string t; std::getline(ss, t, ',');) o.sizes.push_back(std::atoi(t.c_str()));
    } else {
      std::fprintf(stderr, "bench_kernel_library [--count N] [--reps R] [--sizes 4,8,...] [--prec ds] [--csv FILE]\n");
      return 2;
    }
  }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  const std::string machine = cpu_model();
  const int threads = omp_get_max_threads();
  std::ofstream out(csv);
  out << "op,prec,n,nrhs,count,impl,ms,gflops,threads,machine,date,commit\n";
  std::printf("# %s, %d threads, commit %s, kernel library %s\n", machine.c_str(), threads, tb_bench_build_commit(),
              TINYBATCH_USES_KERNEL_LIBRARY ? "linked" : "NOT linked (library = reference loops)");
  std::printf("%-5s %c %3s %4s %-10s %10s %9s %8s\n", "op", 'p', "n", "nrhs", "impl", "ms", "GFLOP/s", "x eigen");
  for (char p : o.prec) {
    if (p == 'd') run<double>(o, out, machine, date, threads);
    if (p == 's') run<float>(o, out, machine, date, threads);
  }
  return 0;
}
