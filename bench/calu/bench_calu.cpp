// bench_calu: the large LU, double precision. On the CPU cores: tinybatch's CALU
// (calu::getrf) and LAPACKE / OpenBLAS dgetrf. Built as bench_calu_gpu by nvcc (bench_calu.cu
// includes this file) it adds tinybatch's hybrid CALU (calu::hybrid_getrf, matrix on the
// GPU, panels on the CPU) with a sweep of d, hybrid_gpu (the panels on the GPU too;
// --row-blocks=0, the library's default: TSLU's tournament on very tall matrices, each panel
// by cuSOLVER's partial pivoting otherwise; 1: partial pivoting; 2 or more: the tournament
// with that many leaves; hybrid_gpu_cublas: its node LUs by cuBLAS), and
// cuSOLVER dgetrf (matrix on the GPU).
//
//   bench_calu [--square=4096,8192] [--tall=100000x1024,...] [--methods=calu,calu_wide,calu_narrow,calu_blocked,calu_rec,lapacke,panel,hybrid,hybrid_gpu,hybrid_gpu_cublas,cusolver]
//              [--b=128,256] [--d=model,1,2,4] [--reps=2] [--threads=16] [--row-blocks=0] [--leaf-rows=0] [--panel-inverse=-1]
//              [--leaf-width=0,256,512]
//              [--csv=out.csv] [--trace=trace.csv] [--no-check] [--max-cpu-n=16384]
//
// Each (shape, method, b, d) runs --reps times after one warm-up run on a fresh copy of the
// same random matrix; the best time is reported, as GFLOP/s of m n^2 - n^3 / 3 flops. The
// first run of each is checked: the solve residual ||A x - y||_1 / (||A||_1 ||x||_1 n eps)
// with the factors (calu::getrs), x the solution of a random y. Output: a table on stdout
// and a CSV (--csv) with device, CPU, date and commit. --trace writes the per-task intervals
// of the first traced run, for plot_calu.py --trace: the hybrid's (CPU panels, updates,
// sends, waits; GPU updates) of its first shape at the first d of the sweep, or CPU CALU's
// (leaves, tree, panel LU and TRSM, updates, GEMM chunks) of its first shape and b. --methods=panel times one m x b panel:
// TSLU on the threads, and OpenBLAS dgetrf of it (the CPU's panel rate, the hybrid's bound).
// --leaf-rows: rows of each LU inside a TSLU leaf (0: the default, about 2 MiB; a number
// above m: one LU per leaf, as before the leaves were split). --panel-inverse=1 / 0: TSLU's
// rows below the diagonal block by GEMMs with U11^-1 / by TRSM (default: the library's).
// calu_blocked / calu_rec: CALU with options::recursive off / on, calu_rec once per
// --leaf-width (the widest column block of the blocked graph; 0: the library's).
#include <tinybatch/tasks/calu.hpp>
#if defined(__CUDACC__)
#include <cusolverDn.h>

#include <tinybatch/tasks/calu_cuda.cuh>
#endif

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

const char* tb_bench_build_commit();  // bench/cpu/build_commit.cpp

namespace {

namespace calu = tinybatch::calu;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string shell(const char* cmd) {
  std::string out;
  if (FILE* p = popen(cmd, "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::vector<std::string> split(const std::string& s, char sep = ',') {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, sep))
    if (!x.empty()) v.push_back(x);
  return v;
}

struct shape {
  long m, n;
};

struct config {
  std::vector<shape> shapes;
  std::vector<std::string> methods{"calu", "lapacke"};
  std::vector<int> bs{0}, leaf_widths{0};
  std::vector<std::string> ds{"model"};
  int reps = 2, threads = 0, row_blocks = 0, leaf_rows = 0, panel_inverse = -1;
  long max_cpu_n = 1L << 40;  // CPU methods only on shapes with n <= this
  bool check = true;
  std::string csv, trace;
};

/// A matrix of uniform [-1, 1) entries from a counter-based generator: the same at any
/// thread count, and filled by all cores (10^9 entries in well under a second).
void fill_random(double* a, std::size_t count, std::uint64_t seed) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    a[i] = double(z >> 11) * 0x1.0p-52 - 1.0;
  }
}

void copy_parallel(double* dst, const double* src, std::size_t count) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < count; ++i) dst[i] = src[i];
}

/// A trace for plot_calu.py --trace: a "# title" line, then one row per task interval.
void write_trace(const std::string& path, const std::string& title, const std::vector<calu::trace_event>& events) {
  std::ofstream tf(path);
  tf << "# " << title << "\n" << "what,K,J,thread,t0,t1\n";
  for (const auto& e : events) tf << e.what << ',' << e.K << ',' << e.J << ',' << e.thread << ',' << e.t0 << ',' << e.t1 << '\n';
}

/// ||A x - y||_1 / (||A||_1 ||x||_1 n eps) for the factors lu (n x n) of a0, y random.
double solve_ratio(long n, const double* a0, const double* lu, const int* ipiv) {
  std::vector<double> y(n), x(n), r(n);
  fill_random(y.data(), n, 99);
  x = y;
  calu::getrs('N', int(n), 1, lu, int(n), ipiv, x.data(), int(n));
  r = y;
  cblas_dgemv(CblasColMajor, CblasNoTrans, int(n), int(n), 1.0, a0, int(n), x.data(), 1, -1.0, r.data(), 1);
  double an = 0;
#pragma omp parallel for reduction(max : an)
  for (long j = 0; j < n; ++j) {
    double s = 0;
    for (long i = 0; i < n; ++i) s += std::fabs(a0[i + j * n]);
    an = std::max(an, s);
  }
  double rn = 0, xn = 0;
  for (long i = 0; i < n; ++i) rn += std::fabs(r[i]), xn += std::fabs(x[i]);
  return rn / (an * xn * n * 2.220446049250313e-16);
}

struct row {
  std::string method;
  long m, n;
  int b, d, model_d, row_blocks;
  double seconds, gflops, check;
  int info;
  std::string note;
};

double lu_flops(long m, long n) { return double(m) * n * n - double(n) * n * n / 3.0; }

}  // namespace

int run(int argc, char** argv);

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // a CUDA error names its call
    std::fprintf(stderr, "bench_calu: %s\n", e.what());
    return 1;
  }
}

int run(int argc, char** argv) {
  config c;
  std::vector<shape> square, tall;
  bool shapes_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&](const char* key) -> const char* {
      const std::size_t k = std::strlen(key);
      return a.compare(0, k, key) == 0 ? argv[i] + k : nullptr;
    };
    if (const char* v = val("--square=")) {
      shapes_given = true;
      for (auto& s : split(v)) c.shapes.push_back({std::atol(s.c_str()), std::atol(s.c_str())});
    } else if (const char* v = val("--tall=")) {
      shapes_given = true;
      for (auto& s : split(v)) {
        const auto mn = split(s, 'x');
        if (mn.size() == 2) c.shapes.push_back({std::atol(mn[0].c_str()), std::atol(mn[1].c_str())});
      }
    } else if (const char* v = val("--methods=")) {
      c.methods = split(v);
    } else if (const char* v = val("--b=")) {
      c.bs.clear();
      for (auto& s : split(v)) c.bs.push_back(std::atoi(s.c_str()));
    } else if (const char* v = val("--leaf-width=")) {
      c.leaf_widths.clear();
      for (auto& s : split(v)) c.leaf_widths.push_back(std::atoi(s.c_str()));
    } else if (const char* v = val("--d=")) {
      c.ds = split(v);
    } else if (const char* v = val("--reps=")) {
      c.reps = std::max(1, std::atoi(v));
    } else if (const char* v = val("--threads=")) {
      c.threads = std::atoi(v);
    } else if (const char* v = val("--row-blocks=")) {
      c.row_blocks = std::atoi(v);
    } else if (const char* v = val("--leaf-rows=")) {
      c.leaf_rows = std::atoi(v);
    } else if (const char* v = val("--panel-inverse=")) {
      c.panel_inverse = std::atoi(v);
    } else if (const char* v = val("--max-cpu-n=")) {
      c.max_cpu_n = std::atol(v);
    } else if (const char* v = val("--csv=")) {
      c.csv = v;
    } else if (const char* v = val("--trace=")) {
      c.trace = v;
    } else if (a == "--no-check") {
      c.check = false;
    } else {
      std::fprintf(stderr, "unknown argument %s (see the comment at the top of bench/calu/bench_calu.cpp)\n", argv[i]);
      return 2;
    }
  }
  if (!shapes_given) c.shapes = {{4096, 4096}, {100000, 1024}};
  if (c.threads) omp_set_num_threads(c.threads);
  const int threads = omp_get_max_threads();

  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string cpu = shell("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'");
  std::string device = "none";
#if defined(__CUDACC__)
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) device = prop.name;
#endif
  std::string commit = tb_bench_build_commit();
  const std::string head = shell("git rev-parse --short=7 HEAD 2>/dev/null");
  if (!head.empty() && commit.compare(0, head.size(), head) != 0) commit += " (HEAD at run time " + head + ")";
  char date[64];
  const std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  std::printf("# bench_calu on %s: %s, %d threads, GPU %s, commit %s, %s\n", host, cpu.c_str(), threads,
              device.c_str(), commit.c_str(), date);
  std::printf("%-9s %7s %6s %4s %4s %5s %4s %9s %9s %9s %5s %s\n", "method", "m", "n", "b", "d", "model", "P_r",
              "seconds", "GFLOP/s", "check", "info", "note");

  std::vector<row> rows;
  std::ofstream csv;
  if (!c.csv.empty()) {
    csv.open(c.csv);
    csv << "host,cpu,device,threads,date,commit,method,type,m,n,b,d,model_d,row_blocks,seconds,gflops,check,info,note\n";
  }
  auto emit = [&](const row& r) {
    std::printf("%-9s %7ld %6ld %4d %4d %5d %4d %9.4f %9.1f %9.3g %5d %s\n", r.method.c_str(), r.m, r.n, r.b, r.d,
                r.model_d, r.row_blocks, r.seconds, r.gflops, r.check, r.info, r.note.c_str());
    std::fflush(stdout);
    if (csv.is_open()) {
      csv << '"' << host << "\",\"" << cpu << "\",\"" << device << "\"," << threads << ',' << date << ",\"" << commit
          << "\"," << r.method << ",double," << r.m << ',' << r.n << ',' << r.b << ',' << r.d << ',' << r.model_d << ','
          << r.row_blocks << ',' << r.seconds << ',' << r.gflops << ',' << r.check << ',' << r.info << ",\"" << r.note
          << "\"\n";
      csv.flush();
    }
  };
  [[maybe_unused]] bool traced = false;
  const std::string leaf_note = (c.leaf_rows ? ", leaf rows " + std::to_string(c.leaf_rows) : "") +
                                (c.panel_inverse >= 0 ? ", panel inverse " + std::to_string(c.panel_inverse) : "");

  for (const shape& s : c.shapes) {
    const long m = s.m, n = s.n;
    const std::size_t count = std::size_t(m) * n;
    std::unique_ptr<double[]> a0(new double[count]), work(new double[count]);
    fill_random(a0.get(), count, 12345 + m * 7 + n);
    std::vector<int> ipiv(std::min(m, n));
    const bool square_shape = m == n;
    const double flops = lu_flops(m, n);
    auto check = [&](const double* lu) { return c.check && square_shape ? solve_ratio(n, a0.get(), lu, ipiv.data()) : 0.0; };

    for (const std::string& method : c.methods) {
      const bool calu_method = method == "calu" || method == "calu_wide" || method == "calu_narrow" ||
                               method == "calu_blocked" || method == "calu_rec";
      const bool cpu_method = calu_method || method == "lapacke";
      if (cpu_method && n > c.max_cpu_n) continue;
      if (method == "lapacke") {
        row r{"lapacke", m, n, 0, 0, 0, 0, 1e30, 0, 0, 0, "OpenBLAS dgetrf, all threads"};
        for (int rep = 0; rep <= c.reps; ++rep) {
          copy_parallel(work.get(), a0.get(), count);
          const double t0 = now();
          r.info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, int(m), int(n), work.get(), int(m), ipiv.data());
          const double dt = now() - t0;
          if (rep > 0) r.seconds = std::min(r.seconds, dt);
          if (rep == 0) r.check = check(work.get());
        }
        r.gflops = flops / r.seconds * 1e-9;
        emit(r);
      } else if (calu_method) {
        for (int b : c.bs)
        for (int lw : method == "calu_rec" ? c.leaf_widths : std::vector<int>{0}) {
          calu::options o;
          o.b = b, o.row_blocks = c.row_blocks, o.leaf_rows = c.leaf_rows;
          // calu: the default; calu_wide / calu_narrow: each step's rest as one wide update or
          // one update per block column (options::wide_update).
          o.wide_update = method == "calu_wide" ? 1 : method == "calu_narrow" ? 0 : -1;
          o.panel_inverse = c.panel_inverse;
          o.recursive = method == "calu_rec" ? 1 : method == "calu_blocked" ? 0 : -1;
          o.leaf_width = lw;
          const std::string how = method == "calu_rec" ? "recursive halving, leaf width " + std::to_string(lw)
                                                       : "CPU task graph";
          row r{method, m, n, b ? b : calu::cpu_block(int(m), int(n)), 0, 0, c.row_blocks ? c.row_blocks : threads,
                1e30, 0, 0, 0, how + leaf_note};
          const bool trace_this = !c.trace.empty() && !traced;
          for (int rep = 0; rep <= c.reps; ++rep) {
            copy_parallel(work.get(), a0.get(), count);
            calu::report rep_out;
            o.trace = trace_this && rep == c.reps;
            const double t0 = now();
            r.info = calu::getrf(int(m), int(n), work.get(), int(m), ipiv.data(), o, &rep_out);
            const double dt = now() - t0;
            if (rep > 0) r.seconds = std::min(r.seconds, dt);
            if (rep == 0) r.check = check(work.get());
            if (o.trace) {
              std::ostringstream title;
              title << "calu (CPU) m " << m << " n " << n << " b " << r.b << " threads " << threads << " seconds " << dt
                    << " cpu " << cpu << " commit " << commit << " date " << date;
              write_trace(c.trace, title.str(), rep_out.events);
              traced = true;
            }
          }
          r.gflops = flops / r.seconds * 1e-9;
          emit(r);
        }
      }
      else if (method == "panel") {
        // One panel, m x b: TSLU on the task graph's threads (the CPU's part of the hybrid at
        // d = 1) and OpenBLAS's dgetrf of the same panel on all threads. The rate is the
        // panel's LU flops, m b^2 - b^3 / 3.
        for (int b : c.bs) {
          const int bb = int(std::min<long>(b ? b : calu::default_block(int(m), int(n)), n));  // the shape's buffers
          const int rb = c.row_blocks ? c.row_blocks : threads;
          for (const char* which : {"panel_tslu", "panel_gepp"}) {
            row r{which, m, bb, bb, 0, 0, rb, 1e30, 0, 0, 0, "one m x b panel" + leaf_note};
            for (int rep = 0; rep <= c.reps; ++rep) {
              copy_parallel(work.get(), a0.get(), std::size_t(m) * bb);
              const double t0 = now();
              if (which[6] == 't') {
                calu::detail::blas_single_threaded one;
#pragma omp parallel num_threads(threads)
#pragma omp single
                r.info = calu::detail::tslu(int(m), bb, work.get(), int(m), ipiv.data(), rb, c.leaf_rows, nullptr, 0,
                                            c.panel_inverse);
              } else {
                r.info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, int(m), bb, work.get(), int(m), ipiv.data());
              }
              const double dt = now() - t0;
              if (rep > 0) r.seconds = std::min(r.seconds, dt);
            }
            r.gflops = lu_flops(m, bb) / r.seconds * 1e-9;
            emit(r);
          }
        }
      }
#if defined(__CUDACC__)
      else if (method == "cusolver" || method == "hybrid" || method == "hybrid_host" || method == "hybrid_gpu" ||
               method == "hybrid_gpu_cublas") {
        double *d0 = nullptr, *dw = nullptr;
        TINYBATCH_CUDA_CHECK(cudaMalloc(&d0, sizeof(double) * count));
        TINYBATCH_CUDA_CHECK(cudaMalloc(&dw, sizeof(double) * count));
        TINYBATCH_CUDA_CHECK(cudaMemcpy(d0, a0.get(), sizeof(double) * count, cudaMemcpyHostToDevice));
        auto fetch = [&] {  // the factors to the host for the check
          TINYBATCH_CUDA_CHECK(cudaMemcpy(work.get(), dw, sizeof(double) * count, cudaMemcpyDeviceToHost));
          return check(work.get());
        };
        if (method == "cusolver") {
          cusolverDnHandle_t h = nullptr;
          TINYBATCH_CUDA_CHECK(cusolverDnCreate(&h));
          int lwork = 0;
          TINYBATCH_CUDA_CHECK(cusolverDnDgetrf_bufferSize(h, int(m), int(n), dw, int(m), &lwork));
          double* ws = nullptr;
          int *dpiv = nullptr, *dinfo = nullptr;
          TINYBATCH_CUDA_CHECK(cudaMalloc(&ws, sizeof(double) * std::max(1, lwork)));
          TINYBATCH_CUDA_CHECK(cudaMalloc(&dpiv, sizeof(int) * std::min(m, n)));
          TINYBATCH_CUDA_CHECK(cudaMalloc(&dinfo, sizeof(int)));
          row r{"cusolver", m, n, 0, 0, 0, 0, 1e30, 0, 0, 0, "cusolverDnDgetrf, matrix on the GPU"};
          for (int rep = 0; rep <= c.reps; ++rep) {
            TINYBATCH_CUDA_CHECK(cudaMemcpy(dw, d0, sizeof(double) * count, cudaMemcpyDeviceToDevice));
            TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
            const double t0 = now();
            TINYBATCH_CUDA_CHECK(cusolverDnDgetrf(h, int(m), int(n), dw, int(m), ws, dpiv, dinfo));
            TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
            const double dt = now() - t0;
            if (rep > 0) r.seconds = std::min(r.seconds, dt);
            if (rep == 0) {
              TINYBATCH_CUDA_CHECK(cudaMemcpy(&r.info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
              TINYBATCH_CUDA_CHECK(cudaMemcpy(ipiv.data(), dpiv, sizeof(int) * ipiv.size(), cudaMemcpyDeviceToHost));
              r.check = fetch();
            }
          }
          r.gflops = flops / r.seconds * 1e-9;
          emit(r);
          (void)cudaFree(ws), (void)cudaFree(dpiv), (void)cudaFree(dinfo);
          (void)cusolverDnDestroy(h);
        } else if (method == "hybrid_gpu" || method == "hybrid_gpu_cublas") {
          // The panels on the GPU too (panel_location::gpu): no d, no calibration.
          calu::cuda_device<double> ws;
          for (int b : c.bs) {
            calu::hybrid_options o;
            o.panel = calu::panel_location::gpu;
            // 0: the library's default (the tournament where gpu_tournament_default, else
            // cuSOLVER's partial pivoting per panel); 1: partial pivoting; >= 2: the tournament
            // with that many leaves (always for _cublas)
            const int rb = method == "hybrid_gpu_cublas" ? std::max(2, c.row_blocks) : std::max(0, c.row_blocks);
            const bool tournament = rb >= 2 || (rb == 0 && calu::gpu_tournament_default(int(m), int(n)));
            o.row_blocks = rb;
            o.b = b;  // 0: the library's choice (gpu_panel_block, or cuSOLVER's whole getrf where gpu_whole_getrf_default)
            o.tournament_cublas = method == "hybrid_gpu_cublas";
            row r{method, m, n, o.b, 0, 0, rb, 1e30, 0, 0, 0, ""};
            double wait = 0;
            for (int rep = 0; rep <= c.reps; ++rep) {
              calu::hybrid_report rep_out;
              TINYBATCH_CUDA_CHECK(cudaMemcpy(dw, d0, sizeof(double) * count, cudaMemcpyDeviceToDevice));
              TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
              const double t0 = now();
              r.info = calu::hybrid_getrf(int(m), int(n), dw, int(m), ipiv.data(), o, &rep_out, &ws);
              const double dt = now() - t0;
              if (rep == 0) r.check = fetch();
              if (rep > 0 && dt < r.seconds) {
                r.seconds = dt;
                wait = rep_out.host_wait;
              }
              r.b = rep_out.b;
            }
            if (!c.trace.empty() && !traced) {  // one more run, traced (timing events on both queues), not timed
              calu::hybrid_report rep_out;
              o.trace = true;
              TINYBATCH_CUDA_CHECK(cudaMemcpy(dw, d0, sizeof(double) * count, cudaMemcpyDeviceToDevice));
              TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
              const double t0 = now();
              calu::hybrid_getrf(int(m), int(n), dw, int(m), ipiv.data(), o, &rep_out, &ws);
              const double dt = now() - t0;
              std::ostringstream title;
              title << method << " m " << m << " n " << n << " b " << rep_out.b << " leaves " << rb << " seconds " << dt
                    << " (traced) device " << device << " commit " << commit << " date " << date;
              write_trace(c.trace, title.str(), rep_out.events);
              traced = true;
              o.trace = false;
            }
            char note[160];
            const bool whole = rb == 0 && b == 0 && calu::gpu_whole_getrf_default(int(m), int(n));
            std::snprintf(note, sizeof note, "matrix on the GPU, panels on the GPU (%s), host waits %.4f s",
                          whole ? "the default: cuSOLVER getrf of the whole matrix"
                          : !tournament ? "cuSOLVER getrf"
                          : o.tournament_cublas ? "tournament, cuBLAS nodes" : "tournament",
                          wait);
            r.note = note;
            r.gflops = flops / r.seconds * 1e-9;
            emit(r);
          }
        } else {
          const bool on_host = method == "hybrid_host";
          // One workspace for the shape: the warm-up run allocates the pinned buffers, the
          // timed runs reuse them (as cuSOLVER's workspace is allocated outside its timing).
          calu::cuda_device<double> ws;
          for (int b : c.bs) {
            const int bb = b ? b : calu::default_block(int(m), int(n));
            // The model's d once per (shape, b): calibrated rates, kept for the sweep.
            calu::hybrid_options probe;
            probe.b = bb, probe.row_blocks = c.row_blocks, probe.leaf_rows = c.leaf_rows;
            probe.panel = calu::panel_location::cpu;  // the seed's schedule
            double g1 = 0, g2 = 0;
            calu::calibrate<double>(bb, g1, g2);
            const int rb = c.row_blocks ? c.row_blocks : threads;
            const double gp = calu::detail::cpu_panel_rate<double>(int(m), bb, threads, rb, c.leaf_rows);
            const int model = calu::model_d(int(m), int(n), bb, threads, g1, g2, gp);
            std::printf("# %lld x %lld, b %d: g1 %.1f GFLOP/s per core, g2 %.1f TFLOP/s, TSLU %.1f GFLOP/s: model d %d "
                        "(the seed's model without the panel rate: %d)\n",
                        (long long)m, (long long)n, bb, g1 / 1e9, g2 / 1e12, gp / 1e9, model,
                        calu::model_d(int(m), int(n), bb, threads, g1, g2));
            const int nb = int((n + bb - 1) / bb);
            for (const std::string& ds : c.ds) {
              const int d = ds == "model" ? model : std::atoi(ds.c_str());
              if (d < 1 || d > nb) continue;
              calu::hybrid_options o = probe;
              o.d = d, o.g1 = g1, o.g2 = g2, o.gp = gp;
              const bool trace_this = !c.trace.empty() && !traced;
              char note[160];
              std::snprintf(note, sizeof note, "%s%s, g1 %.1f GF/core, g2 %.1f TF", on_host ? "matrix on the host" : "matrix on the GPU",
                            ds == "model" ? ", model's d" : "", g1 * 1e-9, g2 * 1e-12);
              row r{method, m, n, bb, d, model, c.row_blocks ? c.row_blocks : threads, 1e30, 0, 0, 0, note};
              for (int rep = 0; rep <= c.reps; ++rep) {
                calu::hybrid_report rep_out;
                o.trace = trace_this && rep == c.reps;
                double dt;
                if (on_host) {
                  copy_parallel(work.get(), a0.get(), count);
                  const double t0 = now();
                  r.info = calu::hybrid_getrf(int(m), int(n), work.get(), int(m), ipiv.data(), o, &rep_out, &ws);
                  dt = now() - t0;
                  if (rep == 0) r.check = check(work.get());
                } else {
                  TINYBATCH_CUDA_CHECK(cudaMemcpy(dw, d0, sizeof(double) * count, cudaMemcpyDeviceToDevice));
                  TINYBATCH_CUDA_CHECK(cudaDeviceSynchronize());
                  const double t0 = now();
                  r.info = calu::hybrid_getrf(int(m), int(n), dw, int(m), ipiv.data(), o, &rep_out, &ws);
                  dt = now() - t0;
                  if (rep == 0) r.check = fetch();
                }
                if (rep > 0) r.seconds = std::min(r.seconds, dt);
                if (o.trace) {
                  std::ostringstream title;
                  title << method << " m " << m << " n " << n << " b " << bb << " d " << d << " seconds " << dt << " device "
                        << device << " commit " << commit << " date " << date;
                  write_trace(c.trace, title.str(), rep_out.events);
                  traced = true;
                }
              }
              r.gflops = flops / r.seconds * 1e-9;
              emit(r);
            }
          }
        }
        (void)cudaFree(d0), (void)cudaFree(dw);
      }
#endif
      else {
        std::fprintf(stderr, "bench_calu: method %s not in this build\n", method.c_str());
      }
    }
  }
  return 0;
}
