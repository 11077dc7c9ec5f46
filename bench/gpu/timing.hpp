// Timing shared by bench_gpu and sweep_gpu: CUDA events around the call alone, median of
// several runs after a warm-up of a given wall time.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include <tinybatch/cuda.hpp>

namespace tb_bench {

/// Median ms of `run` over `reps` runs, `restore` (if any) before each, untimed. Before them
/// the pair runs for at least `warmup_ms` of wall time (and at least once), so that no size is
/// timed on a GPU still raising its clocks. Why: with a single warm-up run, the first shape
/// timed at each size in an H100 sweep read up to 17% below the same kernel timed again later
/// in that run (bench/results/h100/gpu-h100-18b075f-dirty-opaque-ld-sweep-potrf.log: potrf double
/// n = 12 .96 -> 1.12, n = 16 .91 -> 1.06, float n = 8 .82 -> .93). bench_gpu with 100 ms
/// against 0 ms, on an H100 and an H200 (gpu-{h100,h200}-4b6c0c1-dirty{,-warmup0}.csv), moved
/// its cells by no more than the run-to-run spread (up to .09 either way at n <= 8).
inline double median_ms(cudaEvent_t ev0, cudaEvent_t ev1, int reps, double warmup_ms,
                        const std::function<void()>& run, const std::function<void()>& restore = {}) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  do {
    if (restore) restore();
    run();
    tinybatch::cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (warm-up)");
  } while (std::chrono::duration<double, std::milli>(clock::now() - t0).count() < warmup_ms);
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    if (restore) restore();
    tinybatch::cuda::check(cudaEventRecord(ev0), "cudaEventRecord");
    run();
    tinybatch::cuda::check(cudaEventRecord(ev1), "cudaEventRecord");
    tinybatch::cuda::check(cudaEventSynchronize(ev1), "cudaEventSynchronize");
    float ms = 0;
    tinybatch::cuda::check(cudaEventElapsedTime(&ms, ev0, ev1), "cudaEventElapsedTime");
    t.push_back(ms);
  }
  tinybatch::cuda::check(cudaGetLastError(), "kernel launch");
  std::sort(t.begin(), t.end());
  return double(t[t.size() / 2]);
}

}  // namespace tb_bench
