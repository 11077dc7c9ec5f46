// The tuning sweep of bench/gpu/sweep_main.cu: what the parts (sweep_part.cu, one object per
// type and n so that they compile in parallel) and the main program share.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <tinybatch/core/config.hpp>

namespace sweep {

using tinybatch::index_t;

struct options {
  double gib = 1.0;
  int reps = 7;
  double warmup_ms = 100;  ///< warm-up wall time before each timing (timing.hpp)
  std::string ops = "getrf,inverse,potrf,gemm";  ///< which parts of each (type, n) to run
  std::string sizes;                             ///< which n to run (empty: every n built)
  bool has(const char* op) const { return ("," + ops + ",").find("," + std::string(op) + ",") != std::string::npos; }
  bool has_n(int n) const {
    return sizes.empty() || ("," + sizes + ",").find("," + std::to_string(n) + ",") != std::string::npos;
  }
};

/// One measured point: roofline fraction = bytes / ms / the measured copy bandwidth.
struct row {
  std::string op, impl, prec;
  int n;
  index_t batch;
  double ms, gflops, gbs, frac;
};

struct context {
  options o;
  double bw_gbs = 0;
  std::vector<row>* rows = nullptr;
  /// Median ms of `run` over o.reps after a warm-up.
  std::function<double(const std::function<void()>&)> time_ms;
  /// The same with `restore` run before each run, untimed (in-place routines).
  std::function<double(const std::function<void()>&, const std::function<void()>&)> time_restored;
  void record(const char* op, const std::string& impl, const char* prec, int n, index_t batch, double ms,
              double flops_per, double bytes) const {
    row r{op, impl, prec, n, batch, ms, flops_per * double(batch) / (ms * 1e6), bytes / (ms * 1e6), 0};
    r.frac = r.gbs / bw_gbs;
    rows->push_back(r);
    std::printf("%-8s %-28s %s n=%2d batch=%9lld %9.4f ms %9.1f GFLOP/s %7.1f GB/s roofline %.3f\n", op,
                impl.c_str(), prec, n, (long long)batch, ms, r.gflops, r.gbs, r.frac);
    std::fflush(stdout);
  }
};

/// Each part: sweep_<prec>_<n>(ctx), defined by sweep_part.cu with TB_SWEEP_T / TB_SWEEP_N.
// (the same list as bench/gpu/meson.build's)
#define TB_SWEEP_PARTS(X)                                                                          \
  X(s, 2) X(s, 3) X(s, 4) X(s, 5) X(s, 6) X(s, 7) X(s, 8) X(s, 9) X(s, 10) X(s, 11) X(s, 12)       \
  X(s, 13) X(s, 14) X(s, 15) X(s, 16) X(s, 17) X(s, 18) X(s, 19) X(s, 20) X(s, 21) X(s, 22)        \
  X(s, 23) X(s, 24) X(s, 28) X(s, 32) X(d, 2) X(d, 3) X(d, 4) X(d, 5) X(d, 6) X(d, 7) X(d, 8)      \
  X(d, 9) X(d, 10) X(d, 11) X(d, 12) X(d, 13) X(d, 14) X(d, 15) X(d, 16) X(d, 17) X(d, 18)         \
  X(d, 19) X(d, 20) X(d, 21) X(d, 22) X(d, 23) X(d, 24) X(d, 28) X(d, 32)
#define TB_SWEEP_DECLARE(p, n) void sweep_##p##_##n(const context&);
TB_SWEEP_PARTS(TB_SWEEP_DECLARE)
#undef TB_SWEEP_DECLARE

}  // namespace sweep
