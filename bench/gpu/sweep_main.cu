// The tuning sweep behind cuda/kernels/tuning.hpp (issue #4), on the GPU machine:
//   sweep_gpu [--gib 1] [--reps 7] [--warmup-ms 100] [--csv file] [--commit id] [--ops getrf,inverse,potrf,gemm]
//             [--n 16,32 (default: every n built)]
// Runs every part of sweep.hpp (sweep_part.cu): getrf and the fast inverse at each launch
// shape and pivot search (against cublas<t>getrfBatched for getrf), and
// the fast gemm against cublas<t>gemmStridedBatched around the crossover; writes one CSV in
// bench_gpu's format (impl = the launch shape for the inverse). Times: CUDA events, median
// of --reps after a warm-up; roofline from the device-to-device copy bandwidth measured at
// the start of the run.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include <tinybatch/cuda/error.hpp>

#include "sweep.hpp"
#include "timing.hpp"

int main(int argc, char** argv) {
  sweep::options o;
  std::string csv = "sweep_gpu.csv", commit = "unknown";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--gib") o.gib = std::atof(argv[i + 1]);
    else if (a == "--reps") o.reps = std::atoi(argv[i + 1]);
    else if (a == "--warmup-ms") o.warmup_ms = std::atof(argv[i + 1]);
    else if (a == "--csv") csv = argv[i + 1];
    else if (a == "--commit") commit = argv[i + 1];
    else if (a == "--ops") o.ops = argv[i + 1];
    else if (a == "--n") o.sizes = argv[i + 1];
    else { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("no CUDA device\n");
    return 77;
  }
  cudaEvent_t ev0, ev1;
  TINYBATCH_CUDA_CHECK(cudaEventCreate(&ev0));
  TINYBATCH_CUDA_CHECK(cudaEventCreate(&ev1));
  std::vector<sweep::row> rows;
  sweep::context c{o, 0, &rows, {}};
  c.time_restored = [&](const std::function<void()>& run, const std::function<void()>& restore) {
    return tb_bench::median_ms(ev0, ev1, o.reps, o.warmup_ms, run, restore);
  };
  c.time_ms = [&](const std::function<void()>& run) { return c.time_restored(run, {}); };
  cudaDeviceProp prop;
  TINYBATCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  {
    const std::size_t bytes = std::size_t(o.gib * double(1ull << 30));
    void *x, *y;
    TINYBATCH_CUDA_CHECK(cudaMalloc(&x, bytes));
    TINYBATCH_CUDA_CHECK(cudaMalloc(&y, bytes));
    TINYBATCH_CUDA_CHECK(cudaMemset(x, 1, bytes));
    const double ms = c.time_ms([&] { TINYBATCH_CUDA_CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice)); });
    c.bw_gbs = 2.0 * double(bytes) / (ms * 1e6);
    TINYBATCH_CUDA_CHECK(cudaFree(x));
    TINYBATCH_CUDA_CHECK(cudaFree(y));
  }
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::printf("# device %s, %d SMs; d2d bandwidth %.0f GB/s (read+write); %.2f GiB per operand; commit %s; %s\n",
              prop.name, prop.multiProcessorCount, c.bw_gbs, o.gib, commit.c_str(), date);
#define TB_SWEEP_RUN(p, n) sweep::sweep_##p##_##n(c);
  TB_SWEEP_PARTS(TB_SWEEP_RUN)
#undef TB_SWEEP_RUN
  if (FILE* f = std::fopen(csv.c_str(), "w")) {
    std::fprintf(f, "# device %s, %d SMs, L2 %d MB\n# d2d bandwidth %.0f GB/s (read+write)\n", prop.name,
                 prop.multiProcessorCount, prop.l2CacheSize >> 20, c.bw_gbs);
    std::fprintf(f, "# date %s\n# commit %s\n# %.3f GiB per operand, median of %d after %.0f ms of warm-up (tuning sweep)\n",
                 date, commit.c_str(), o.gib, o.reps, o.warmup_ms);
    std::fprintf(f, "op,impl,prec,n,batch,ms,gflops,gbs,roofline_fraction\n");
    for (const sweep::row& r : rows)
      std::fprintf(f, "%s,%s,%s,%d,%lld,%.5f,%.2f,%.1f,%.4f\n", r.op.c_str(), r.impl.c_str(), r.prec.c_str(), r.n,
                   (long long)r.batch, r.ms, r.gflops, r.gbs, r.frac);
    std::fclose(f);
  }
  return 0;
}
