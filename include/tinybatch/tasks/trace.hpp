// Traces of the CALU task graphs: each task's interval on its thread, for the benchmark's
// trace pictures (bench/calu/plot_calu.py --trace). Recording costs two clock reads per task
// and only when asked for (options::trace with a report).
#pragma once

#include <omp.h>

#include <chrono>
#include <vector>

namespace tinybatch::calu {

/// One interval of a trace: a CPU task (thread >= 0) or a device update (thread -1). The CPU
/// factorization's kinds: "leaf", "tree" (TSLU's tournament), "panel_lu" (the interchanges
/// and the b x b LU), "panel_trsm" (L21), "panel_getrf" (a panel by partial pivoting),
/// "update" (a block column's interchanges and U(K, J)), "gemm" (one row chunk of its GEMM),
/// "laswp" (L's later interchanges); each is one thread's work, none nested in another.
struct trace_event {
  const char* what;
  int K, J, thread;
  double t0, t1;  // seconds from the start of the factorization's task graph
};

namespace detail {

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Per-thread event lists of one traced factorization (threads append to their own list,
/// indexed by omp_get_thread_num(), so no lock is taken). A null tracer records nothing.
class tracer {
 public:
  explicit tracer(int threads) : t0_(now()), events_(std::size_t(threads)) {}
  void add(const char* what, int K, int J, double start) {
    const int t = omp_get_thread_num();
    if (t < int(events_.size())) events_[std::size_t(t)].push_back({what, K, J, t, start - t0_, now() - t0_});
  }
  void collect(std::vector<trace_event>& out) const {
    out.clear();
    for (const auto& v : events_) out.insert(out.end(), v.begin(), v.end());
  }

 private:
  double t0_;
  std::vector<std::vector<trace_event>> events_;
};

/// Start time of an interval, read only when tracing.
inline double trace_start(const tracer* tr) { return tr ? now() : 0; }

}  // namespace detail
}  // namespace tinybatch::calu
