// CPU benchmark: tinybatch (par: what kernels::automatic picks; tb_reference_par: the generic
// loops; tb_compact_par: the compact layout, converted outside the timing) and the anchors on
// the same batches, in one run. --seq adds tinybatch_seq and tb_compact_seq: the same calls
// on the calling thread alone (tinybatch::seq), for small batches (--cache-kib 4 - 64) where
// a parallel region costs more than it saves. --par-min-bytes B sets the size below which
// par runs a call on the calling thread (host/tuning.hpp parallel_min_bytes; 0: never, as
// before the thirty-first session; default: the rule there).
//
//   eigen      Eigen fixed-size types (Matrix<T, n, n>), an OpenMP loop over the batch
//   lapacke    LAPACKE_?potrf_work / ?getrf_work per matrix, an OpenMP loop (OpenBLAS LAPACK)
//   openblas   cblas_?gemm per matrix, an OpenMP loop
//   libxsmm    a JIT-dispatched LIBXSMM kernel per matrix, an OpenMP loop
//
// Two regimes: `stream` (each operand >= --stream-mib MiB, far beyond the caches) and `cache`
// (each operand about --cache-kib KiB, the call repeated for --min-seconds); times are the
// fastest single call. Roofline fraction = (the least time the memory allows) / measured time,
// where the least time is the largest of R / read rate, W / write rate and (R + W) / in-place
// rate, for the R bytes every call must read and the W bytes it must write (each element
// once). The three rates are those of a sum over --stream-mib MiB (reads only), a fill with
// non-temporal stores (writes only, no read for ownership) and an in-place update x := c x
// (each line read once and written back once), timed in turns with the implementations of
// every streaming cell, so that the VM's drift (its rates move by a third within minutes)
// falls on both. On the EPYC reads and writes run at about 30 GB/s each and together at
// about 55: memcpy, whose stores pay a read for ownership that its count leaves out, ran at
// half the in-place rate, and in-place operations read up to 2.6 of the memcpy roofline that
// this program used until the twenty-first session. The rates at the start (and memcpy's)
// are printed in the header. In-place factorizations and the solves restore their input
// before every call, outside the timed interval. (--net-of-restore: timed as in
// shared/anchors, net of that copy, time(restore + op) - time(restore); with calls of a few
// microseconds, cache-resident,
// the restore alone ran slower than in the pair, after the call had left the lines in the
// other core's cache, and the difference fell to nothing: compact potrf, double, n = 24.)
// Output: a table on stdout and a CSV (--csv) with machine, date, commit.
#include <tinybatch/eigen.hpp>
#include <tinybatch/tinybatch.hpp>

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/LU>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <omp.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <unistd.h>

#if defined(TB_BENCH_LAPACKE)
#include <cblas.h>
#include <lapacke.h>
extern "C" void openblas_set_num_threads(int);
#endif
#if defined(TB_BENCH_LIBXSMM)
#include <libxsmm.h>
#endif

namespace tb = tinybatch;
using tb::index_t;

/// The generic per-matrix loops on OpenMP threads: what `par` ran before the SIMD kernels,
/// and the measurement behind each entry of host/tuning.hpp.
constexpr tb::parallel_policy<tb::kernels::reference> ref_par{};

const char* tb_bench_build_commit();  // build_commit.cpp: the commit this binary was built from

namespace {

struct options {
  double stream_mib = 256, cache_kib = 128, min_seconds = 0.2;
  int reps = 5, threads = 0;
  std::vector<int> sizes = {2, 3, 4, 5, 8, 12, 16, 24, 32};
  std::vector<std::string> ops = {"gemm", "potrf", "getrf", "inverse", "getrs", "potrs"};
  std::vector<std::string> regimes = {"stream", "cache"};
  std::string precisions = "ds", csv, machine_note;
  bool compact = true;  // --no-compact leaves the compact-layout column out
  bool net_of_restore = false;  // --net-of-restore: the method of shared/anchors (see the top)
  bool seq = false;  // --seq: tinybatch on the calling thread too (tinybatch_seq, tb_compact_seq)
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Host memory, first touched by the threads that will work on it (static split).
template <class T>
struct buffer {
  std::unique_ptr<T[], decltype(&std::free)> p{nullptr, &std::free};
  std::size_t n = 0;
  explicit buffer(std::size_t count) : n(count) {
    p.reset(static_cast<T*>(tb::host_space::allocate(sizeof(T) * std::max<std::size_t>(count, 1))));
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) p[i] = T(0);
  }
  T* data() { return p.get(); }
};

template <class T>
void parallel_copy(T* dst, const T* src, std::size_t n) {
#pragma omp parallel
  {
    const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::size_t b = n * t / nt, e = n * (t + 1) / nt;
    std::memcpy(dst + b, src + b, sizeof(T) * (e - b));
  }
}

/// The three ways of moving memory behind the roofline, over x[0, n) split among the threads
/// as the batches are (static). c = 1, read at run time so that nothing is folded away.
void in_place_update(double* x, std::size_t n, double c) {
#pragma omp parallel
  {
    const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::size_t b = n * t / nt, e = n * (t + 1) / nt;
    for (std::size_t i = b; i < e; ++i) x[i] *= c;
  }
}
double read_sum(const double* x, std::size_t n) {
  double total = 0;
#pragma omp parallel reduction(+ : total)
  {
    const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::size_t b = n * t / nt, e = n * (t + 1) / nt;
    double s[8] = {};  // independent chains: the add latency must not bound the reads
    std::size_t i = b;
    for (; i + 8 <= e; i += 8)
      for (int k = 0; k < 8; ++k) s[k] += x[i + k];
    for (; i < e; ++i) s[0] += x[i];
    for (int k = 0; k < 8; ++k) total += s[k];
  }
  return total;
}
void streaming_fill(double* x, std::size_t n, double c) {
#pragma omp parallel
  {
    const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::size_t b = n * t / nt, e = n * (t + 1) / nt;
#if defined(__SSE2__)
    for (; b < e && reinterpret_cast<std::uintptr_t>(x + b) % 16 != 0; ++b) x[b] = c;
    const __m128d v = _mm_set1_pd(c);
    for (; b + 2 <= e; b += 2) _mm_stream_pd(x + b, v);
    _mm_sfence();
#endif
    for (; b < e; ++b) x[b] = c;
  }
}

volatile double unit_scale = 1;  // the c above, unknown to the compiler
volatile double read_sink = 0;

/// Bytes per second of reads alone, writes alone and an in-place update (bytes read +
/// written), and of memcpy (read + written, for the header only).
struct rates {
  double read = 0, write = 0, in_place = 0, memcpy = 0;
  /// The least time for a call that must read r bytes and write w bytes.
  double least_seconds(double r, double w) const { return std::max({r / read, w / write, (r + w) / in_place}); }
};

/// The three rate measurements of `rates` over x[0, n), for best_times.
std::vector<std::function<void()>> rate_probes(double* x, std::size_t n) {
  return {[x, n] { read_sink = read_sum(x, n); }, [x, n] { streaming_fill(x, n, unit_scale); },
          [x, n] { in_place_update(x, n, unit_scale); }};
}
/// The rates from the probes' best times. Reads alone are never slower than the reads of the
/// in-place update (half its count), nor writes alone than its writes: a probe that says so
/// lost its core or caught the VM's slow state (one cell of 406eb1e's run read 16.6 GB/s
/// beside an in-place 53.6), and the roofline takes the in-place half instead.
rates rates_from(const double* t, std::size_t n) {
  const double bytes = double(n) * sizeof(double), in_place = 2 * bytes / t[2];
  return {std::max(bytes / t[0], in_place / 2), std::max(bytes / t[1], in_place / 2), in_place};
}

/// The fastest single call of each of fs, among at least `reps` calls of each and
/// `min_seconds` of calls of each: on a shared, noisy machine the minimum filters out the
/// calls that lost their core. The functions take turns (one call of each per round), so that
/// a drift of the machine's speed during the run (this VM's copy bandwidth moves by a third
/// within minutes) falls on all of them alike instead of on whichever ran at the time: timed
/// one after the other, two runs a minute apart put double gemm n = 12 at 0.46 and 0.89 of
/// the roofline, against LIBXSMM's 0.77 and 0.69.
/// prep[i] (where given) runs before each call of fs[i], outside the timed interval.
std::vector<double> best_times(int reps, double min_seconds, const std::vector<std::function<void()>>& fs,
                               const std::vector<std::function<void()>>& prep = {}) {
  std::vector<double> best(fs.size(), 1e30), total(fs.size(), 0);
  for (int r = 0; r <= 100000; ++r) {
    bool more = r < reps;
    for (std::size_t i = 0; i < fs.size(); ++i) more = more || total[i] < min_seconds;
    if (!more) break;
    for (std::size_t i = 0; i < fs.size(); ++i) {
      if (r >= reps && total[i] >= min_seconds) continue;
      if (i < prep.size() && prep[i]) prep[i]();
      const double t0 = now();
      fs[i]();
      const double t = now() - t0;
      best[i] = std::min(best[i], t);
      total[i] += t;
    }
  }
  return best;
}

/// The rates at the start of the run, 256 MiB, best of 6 each, in turns.
rates machine_rates() {
  const std::size_t n = std::size_t(256) << 20 >> 3;
  buffer<double> a(n), b(n);
  std::vector<std::function<void()>> fs = rate_probes(a.data(), n);
  fs.push_back([&] { parallel_copy(b.data(), a.data(), n); });
  const std::vector<double> t = best_times(6, 0, fs);
  rates r = rates_from(t.data(), n);
  r.memcpy = 2.0 * n * sizeof(double) / t[3];
  return r;
}

struct result {
  std::string regime, op, impl;
  char prec;
  int n;
  index_t batch;
  double seconds, gflops, roofline;
  rates rate;  // the rates of its roofline
};

struct bench {
  options opt;
  rates start;  // measured before the first cell
  rates cell;  // the rates timed with the current streaming cell
  std::unique_ptr<buffer<double>> scratch;  // what that in-place update runs over
  std::vector<result> results;

  /// best_times of fs, and, in the streaming regime, of the rate probes over --stream-mib MiB
  /// in the same turns: `cell`, the roofline of this cell. Cache-resident cells keep the rates
  /// of the start (their roofline fraction only says how far they are from memory).
  std::vector<double> timed(const std::string& regime, std::vector<std::function<void()>> fs,
                            const std::vector<std::function<void()>>& prep = {}) {
    cell = start;
    if (regime != "stream") return best_times(opt.reps, seconds_for(regime), fs, prep);
    const std::size_t n = std::size_t(opt.stream_mib * (1 << 20)) / sizeof(double);
    if (!scratch || scratch->n != n) scratch = std::make_unique<buffer<double>>(n);
    for (auto& f : rate_probes(scratch->data(), n)) fs.push_back(f);
    std::vector<double> t = best_times(opt.reps, seconds_for(regime), fs, prep);
    cell = rates_from(t.data() + t.size() - 3, n);
    cell.memcpy = start.memcpy;
    t.resize(t.size() - 3);
    return t;
  }

  template <class T>
  void record(const std::string& regime, const std::string& op, const std::string& impl, int n,
              index_t batch, double seconds, double flops_per, double read_per, double write_per) {
    result r{regime, op, impl, sizeof(T) == 8 ? 'd' : 's', n, batch, seconds,
             flops_per * batch / seconds * 1e-9, cell.least_seconds(read_per * batch, write_per * batch) / seconds, cell};
    std::printf("%-6s %-6s %c %2d %-14s %9lld  %10.4f ms  %8.2f GFLOP/s  %6.3f of roofline\n",
                regime.c_str(), op.c_str(), r.prec, n, impl.c_str(), (long long)batch,
                seconds * 1e3, r.gflops, r.roofline);
    std::fflush(stdout);
    results.push_back(r);
  }

  index_t batch_for(const std::string& regime, int n, std::size_t elem) const {
    const double bytes = regime == "stream" ? opt.stream_mib * (1 << 20) : opt.cache_kib * 1024;
    return std::max<index_t>(1, index_t(bytes / (double(n) * n * elem)));
  }
  /// Seconds of calls per timing: the streaming regime counts repetitions only.
  double seconds_for(const std::string& regime) const { return regime == "stream" ? 0 : opt.min_seconds; }

  template <class T, int N>
  void run_gemm(const std::string& regime) {
    const index_t count = batch_for(regime, N, sizeof(T));
    const std::size_t len = std::size_t(count) * N * N;
    buffer<T> A(len), B(len), C(len);
    std::mt19937_64 g(42);
    std::uniform_real_distribution<T> u(-1, 1);
    for (std::size_t i = 0; i < len; ++i) A.p[i] = u(g), B.p[i] = u(g);
    // beta = 0: A and B read, C written.
    const double flops = 2.0 * N * N * N, read = 2.0 * N * N * sizeof(T), write = 1.0 * N * N * sizeof(T);
    using Mat = Eigen::Matrix<T, N, N>;
    tb::strided_view<const T, N, N> a(A.data(), count), b(B.data(), count);
    tb::strided_view<T, N, N> c(C.data(), count);
    std::vector<std::pair<std::string, std::function<void()>>> impls;
    impls.push_back({"tinybatch_par", [&] { tb::gemm(tb::par, a, b, c); }});
    if (opt.seq) impls.push_back({"tinybatch_seq", [&] { tb::gemm(tb::seq, a, b, c); }});
    impls.push_back({"tb_reference_par", [&] { tb::gemm(ref_par, a, b, c); }});
    impls.push_back({"eigen", [&] {
#pragma omp parallel for schedule(static)
                       for (index_t k = 0; k < count; ++k) {
                         Eigen::Map<const Mat> ma(A.data() + k * N * N), mb(B.data() + k * N * N);
                         Eigen::Map<Mat> mc(C.data() + k * N * N);
                         mc.noalias() = ma * mb;
                       }
                     }});
#if defined(TB_BENCH_LAPACKE)
    impls.push_back({"openblas", [&] {
#pragma omp parallel for schedule(static)
                       for (index_t k = 0; k < count; ++k) {
                         if constexpr (sizeof(T) == 8)
                           cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0,
                                       A.data() + k * N * N, N, B.data() + k * N * N, N, 0.0,
                                       C.data() + k * N * N, N);
                         else
                           cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f,
                                       A.data() + k * N * N, N, B.data() + k * N * N, N, 0.0f,
                                       C.data() + k * N * N, N);
                       }
                     }});
#endif
#if defined(TB_BENCH_LIBXSMM)
    impls.push_back({"libxsmm", [&] {
                       const T alpha = 1, beta = 0;
                       if constexpr (sizeof(T) == 8) {
                         const libxsmm_dmmfunction f = libxsmm_dmmdispatch(N, N, N, nullptr, nullptr, nullptr, &alpha, &beta, nullptr, nullptr);
#pragma omp parallel for schedule(static)
                         for (index_t k = 0; k < count; ++k)
                           f(A.data() + k * N * N, B.data() + k * N * N, C.data() + k * N * N);
                       } else {
                         const libxsmm_smmfunction f = libxsmm_smmdispatch(N, N, N, nullptr, nullptr, nullptr, &alpha, &beta, nullptr, nullptr);
#pragma omp parallel for schedule(static)
                         for (index_t k = 0; k < count; ++k)
                           f(A.data() + k * N * N, B.data() + k * N * N, C.data() + k * N * N);
                       }
                     }});
#endif
    std::vector<std::function<void()>> fs;
    for (auto& [name, f] : impls) {
      f();  // warm up (page faults, JIT)
      fs.push_back(f);
    }
    const std::vector<double> t = timed(regime, fs);
    for (std::size_t i = 0; i < impls.size(); ++i)
      record<T>(regime, "gemm", impls[i].first, N, count, t[i], flops, read, write);
  }

  /// The fastest call of each implementation, its input restored before every call by
  /// restore(whether the implementation reads the compact layout): untimed, or
  /// (--net-of-restore) timed with the call and subtracted.
  template <class Impls, class Restore>
  std::vector<double> restored_times(const std::string& regime, Impls& impls, Restore&& restore) {
    std::vector<std::function<void()>> fs, prep;
    for (auto& [name, f] : impls) {
      std::function<void()> r = [&restore, compact_input = name.rfind("tb_compact", 0) == 0] { restore(compact_input); };
      r();
      f();  // warm up
      if (opt.net_of_restore) {
        fs.push_back([r, &f] { r(); f(); });
        fs.push_back(r);
      } else {
        fs.push_back(f);
        prep.push_back(r);
      }
    }
    const std::vector<double> t = timed(regime, fs, prep);
    std::vector<double> best(impls.size());
    for (std::size_t i = 0; i < impls.size(); ++i)
      best[i] = opt.net_of_restore ? std::max(t[2 * i] - t[2 * i + 1], 1e-12) : t[i];
    return best;
  }

  /// In-place factorizations: A restored from A0 before every call (restored_times).
  template <class T, int N>
  void run_factor(const std::string& regime, const std::string& op) {
    const index_t count = batch_for(regime, N, sizeof(T));
    const std::size_t len = std::size_t(count) * N * N;
    buffer<T> A0(len), A(len);
    buffer<int> piv{std::size_t(count) * N}, info{std::size_t(count)};
    using Mat = Eigen::Matrix<T, N, N>;
    {
      std::mt19937_64 g(7);
      std::uniform_real_distribution<T> u(-1, 1);
      Mat m;
      for (index_t k = 0; k < count; ++k) {
        for (int j = 0; j < N; ++j)
          for (int i = 0; i < N; ++i) m(i, j) = u(g);
        if (op == "potrf") {
          // Symmetric, diagonally dominant: positive definite.
          m = (m + m.transpose()).eval();
          m.diagonal().array() += T(2 * N);
        }
        Eigen::Map<Mat>(A0.data() + k * N * N) = m;
      }
    }
    const double flops = op == "potrf" ? N * N * N / 3.0 : 2.0 * N * N * N / 3.0;
    const double bytes = 1.0 * N * N * sizeof(T);  // read, and written back
    tb::strided_view<T, N, N> a(A.data(), count);
    std::span<int> info_s(info.data(), std::size_t(count));
    std::span<int> piv_s(piv.data(), std::size_t(count) * N);
    std::vector<std::pair<std::string, std::function<void()>>> impls;
    // The compact layout (matrices interleaved across SIMD lanes): converted once, outside the
    // timing, as an application that keeps its batches compact would; restored like A.
    tb::compact_batch<T, N, N> C0(count), C(count);
    tb::to_compact(tb::par, tb::strided_view<const T, N, N>(A0.data(), count), C0);
    const std::size_t clen = std::size_t(C0.view().groups() * C0.view().group_size);
    const bool compact = opt.compact;
    if (op == "potrf") {
      if (compact) impls.push_back({"tb_compact_par", [&] { tb::potrf(tb::par, tb::lower, C, info_s); }});
      impls.push_back({"tinybatch_par", [&] { tb::potrf(tb::par, tb::lower, a, info_s); }});
      if (opt.seq && compact) impls.push_back({"tb_compact_seq", [&] { tb::potrf(tb::seq, tb::lower, C, info_s); }});
      if (opt.seq) impls.push_back({"tinybatch_seq", [&] { tb::potrf(tb::seq, tb::lower, a, info_s); }});
      impls.push_back({"tb_reference_par", [&] { tb::potrf(ref_par, tb::lower, a, info_s); }});
      impls.push_back({"eigen", [&] {
#pragma omp parallel for schedule(static)
                         for (index_t k = 0; k < count; ++k) {
                           Eigen::Map<Mat> m(A.data() + k * N * N);
                           Eigen::LLT<Mat> llt(m);
                           m = llt.matrixLLT();
                           info.p[k] = llt.info() == Eigen::Success ? 0 : 1;
                         }
                       }});
#if defined(TB_BENCH_LAPACKE)
      impls.push_back({"lapacke", [&] {
#pragma omp parallel for schedule(static)
                         for (index_t k = 0; k < count; ++k) {
                           if constexpr (sizeof(T) == 8)
                             info.p[k] = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', N, A.data() + k * N * N, N);
                           else
                             info.p[k] = LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'L', N, A.data() + k * N * N, N);
                         }
                       }});
#endif
    } else {
      if (compact) impls.push_back({"tb_compact_par", [&] { tb::getrf(tb::par, C, piv_s, info_s); }});
      impls.push_back({"tinybatch_par", [&] { tb::getrf(tb::par, a, piv_s, info_s); }});
      if (opt.seq && compact) impls.push_back({"tb_compact_seq", [&] { tb::getrf(tb::seq, C, piv_s, info_s); }});
      if (opt.seq) impls.push_back({"tinybatch_seq", [&] { tb::getrf(tb::seq, a, piv_s, info_s); }});
      impls.push_back({"tb_reference_par", [&] { tb::getrf(ref_par, a, piv_s, info_s); }});
      impls.push_back({"eigen", [&] {
#pragma omp parallel for schedule(static)
                         for (index_t k = 0; k < count; ++k) {
                           Eigen::Map<Mat> m(A.data() + k * N * N);
                           Eigen::PartialPivLU<Mat> lu(m);
                           m = lu.matrixLU();
                           const auto& t = lu.permutationP().indices();
                           for (int i = 0; i < N; ++i) piv.p[k * N + i] = t[i];
                         }
                       }});
#if defined(TB_BENCH_LAPACKE)
      impls.push_back({"lapacke", [&] {
#pragma omp parallel for schedule(static)
                         for (index_t k = 0; k < count; ++k) {
                           if constexpr (sizeof(T) == 8)
                             info.p[k] = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, N, N, A.data() + k * N * N, N, piv.data() + k * N);
                           else
                             info.p[k] = LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, N, N, A.data() + k * N * N, N, piv.data() + k * N);
                         }
                       }});
#endif
    }
    const std::vector<double> t = restored_times(regime, impls, [&](bool compact_input) {
      if (compact_input) parallel_copy(C.data(), C0.data(), clen);
      else parallel_copy(A.data(), A0.data(), len);
    });
    for (std::size_t i = 0; i < impls.size(); ++i) record<T>(regime, op, impls[i].first, N, count, t[i], flops, bytes, bytes);
  }

  /// getrs / potrs with one right-hand side on factors made once (outside the timing): B is
  /// restored before every call (restored_times). Bytes: the factor read,
  /// B read and written (the pivots' n ints are left out: under 1/n of the factor).
  template <class T, int N>
  void run_solve(const std::string& regime, const std::string& op) {
    const index_t count = batch_for(regime, N, sizeof(T));
    const std::size_t len = std::size_t(count) * N * N, blen = std::size_t(count) * N;
    buffer<T> A(len), B0(blen), B(blen);
    buffer<int> piv{blen}, info{std::size_t(count)};
    using Mat = Eigen::Matrix<T, N, N>;
    using Vec = Eigen::Matrix<T, N, 1>;
    const bool lu = op == "getrs";
    {
      std::mt19937_64 g(11);
      std::uniform_real_distribution<T> u(-1, 1);
      Mat m;
      for (index_t k = 0; k < count; ++k) {
        for (int j = 0; j < N; ++j)
          for (int i = 0; i < N; ++i) m(i, j) = u(g);
        if (!lu) m = (m + m.transpose()).eval();
        m.diagonal().array() += T(2 * N);
        Eigen::Map<Mat>(A.data() + k * N * N) = m;
        for (int i = 0; i < N; ++i) B0.p[std::size_t(k) * N + i] = u(g);
      }
    }
    tb::strided_view<T, N, N> a(A.data(), count);
    tb::strided_view<T, N, 1> b(B.data(), count);
    std::span<int> info_s(info.data(), std::size_t(count));
    std::span<int> piv_s(piv.data(), blen);
    if (lu)
      tb::getrf(tb::par, a, piv_s, info_s);
    else
      tb::potrf(tb::par, tb::lower, a, info_s);
    tb::compact_batch<T, N, N> CA(count);
    tb::compact_batch<T, N, 1> CB0(count), CB(count);
    tb::to_compact(tb::par, tb::strided_view<const T, N, N>(A.data(), count), CA);
    tb::to_compact(tb::par, tb::strided_view<const T, N, 1>(B0.data(), count), CB0);
    const std::size_t cblen = std::size_t(CB0.view().groups() * CB0.view().group_size);
    std::vector<std::pair<std::string, std::function<void()>>> impls;
    if (lu) {
      if (opt.compact) impls.push_back({"tb_compact_par", [&] { tb::getrs(tb::par, tb::no_trans, CA, piv_s, CB); }});
      impls.push_back({"tinybatch_par", [&] { tb::getrs(tb::par, tb::no_trans, a, piv_s, b); }});
      if (opt.seq && opt.compact) impls.push_back({"tb_compact_seq", [&] { tb::getrs(tb::seq, tb::no_trans, CA, piv_s, CB); }});
      if (opt.seq) impls.push_back({"tinybatch_seq", [&] { tb::getrs(tb::seq, tb::no_trans, a, piv_s, b); }});
      impls.push_back({"tb_reference_par", [&] { tb::getrs(ref_par, tb::no_trans, a, piv_s, b); }});
      impls.push_back({"eigen", [&] {
#pragma omp parallel for schedule(static)
                         for (index_t k = 0; k < count; ++k) {
                           Eigen::Map<const Mat> m(A.data() + k * N * N);
                           Eigen::Map<Vec> x(B.data() + k * N);
                           const int* p = piv.data() + k * N;
                           for (int i = 0; i < N; ++i) std::swap(x(i), x(p[i] - 1));
                           m.template triangularView<Eigen::UnitLower>().solveInPlace(x);
                           m.template triangularView<Eigen::Upper>().solveInPlace(x);
                         }
                       }});
#if defined(TB_BENCH_LAPACKE)
      impls.push_back({"lapacke", [&] {
#pragma omp parallel for schedule(static)
                         for (index_t k = 0; k < count; ++k) {
                           if constexpr (sizeof(T) == 8)
                             LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', N, 1, A.data() + k * N * N, N, piv.data() + k * N, B.data() + k * N, N);
                           else
                             LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, 'N', N, 1, A.data() + k * N * N, N, piv.data() + k * N, B.data() + k * N, N);
                         }
                       }});
#endif
    } else {
      if (opt.compact) impls.push_back({"tb_compact_par", [&] { tb::potrs(tb::par, tb::lower, CA, CB); }});
      impls.push_back({"tinybatch_par", [&] { tb::potrs(tb::par, tb::lower, a, b); }});
      if (opt.seq && opt.compact) impls.push_back({"tb_compact_seq", [&] { tb::potrs(tb::seq, tb::lower, CA, CB); }});
      if (opt.seq) impls.push_back({"tinybatch_seq", [&] { tb::potrs(tb::seq, tb::lower, a, b); }});
      impls.push_back({"tb_reference_par", [&] { tb::potrs(ref_par, tb::lower, a, b); }});
      impls.push_back({"eigen", [&] {
#pragma omp parallel for schedule(static)
                         for (index_t k = 0; k < count; ++k) {
                           Eigen::Map<const Mat> m(A.data() + k * N * N);
                           Eigen::Map<Vec> x(B.data() + k * N);
                           m.template triangularView<Eigen::Lower>().solveInPlace(x);
                           m.transpose().template triangularView<Eigen::Upper>().solveInPlace(x);
                         }
                       }});
#if defined(TB_BENCH_LAPACKE)
      impls.push_back({"lapacke", [&] {
#pragma omp parallel for schedule(static)
                         for (index_t k = 0; k < count; ++k) {
                           if constexpr (sizeof(T) == 8)
                             LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', N, 1, A.data() + k * N * N, N, B.data() + k * N, N);
                           else
                             LAPACKE_spotrs_work(LAPACK_COL_MAJOR, 'L', N, 1, A.data() + k * N * N, N, B.data() + k * N, N);
                         }
                       }});
#endif
    }
    // The factor and the right-hand side read, the solution written.
    const double flops = 2.0 * N * N, read = (double(N) * N + N) * sizeof(T), write = double(N) * sizeof(T);
    const std::vector<double> t = restored_times(regime, impls, [&](bool compact_input) {
      if (compact_input) parallel_copy(CB.data(), CB0.data(), cblen);
      else parallel_copy(B.data(), B0.data(), blen);
    });
    for (std::size_t i = 0; i < impls.size(); ++i) record<T>(regime, op, impls[i].first, N, count, t[i], flops, read, write);
  }

  /// X := inv(A), out of place: A read once, X written once (2 n^3 flops, LAPACK's count).
  template <class T, int N>
  void run_inverse(const std::string& regime) {
    const index_t count = batch_for(regime, N, sizeof(T));
    const std::size_t len = std::size_t(count) * N * N;
    buffer<T> A(len), X(len);
    buffer<int> piv{std::size_t(count) * N}, info{std::size_t(count)};
    using Mat = Eigen::Matrix<T, N, N>;
    {
      std::mt19937_64 g(13);
      std::uniform_real_distribution<T> u(-1, 1);
      for (std::size_t i = 0; i < len; ++i) A.p[i] = u(g);
    }
    tb::strided_view<const T, N, N> a(A.data(), count);
    tb::strided_view<T, N, N> x(X.data(), count);
    std::span<int> info_s(info.data(), std::size_t(count));
    tb::compact_batch<T, N, N> CA(count), CX(count);
    tb::to_compact(tb::par, a, CA);
    std::vector<std::pair<std::string, std::function<void()>>> impls;
    if (opt.compact) impls.push_back({"tb_compact_par", [&] { tb::inverse(tb::par, CA, CX, info_s); }});
    impls.push_back({"tinybatch_par", [&] { tb::inverse(tb::par, a, x, info_s); }});
    if (opt.seq && opt.compact) impls.push_back({"tb_compact_seq", [&] { tb::inverse(tb::seq, CA, CX, info_s); }});
    if (opt.seq) impls.push_back({"tinybatch_seq", [&] { tb::inverse(tb::seq, a, x, info_s); }});
    impls.push_back({"tb_reference_par", [&] { tb::inverse(ref_par, a, x, info_s); }});
    impls.push_back({"eigen", [&] {
#pragma omp parallel for schedule(static)
                       for (index_t k = 0; k < count; ++k) {
                         Eigen::Map<const Mat> ma(A.data() + k * N * N);
                         Eigen::Map<Mat> mx(X.data() + k * N * N);
                         mx = ma.inverse();
                       }
                     }});
#if defined(TB_BENCH_LAPACKE)
    impls.push_back({"lapacke", [&] {
#pragma omp parallel
                       {
                         T work[N];
#pragma omp for schedule(static)
                         for (index_t k = 0; k < count; ++k) {
                           T* xk = X.data() + k * N * N;
                           std::memcpy(xk, A.data() + k * N * N, sizeof(T) * N * N);
                           int* p = piv.data() + k * N;
                           if constexpr (sizeof(T) == 8) {
                             LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, N, N, xk, N, p);
                             info.p[k] = LAPACKE_dgetri_work(LAPACK_COL_MAJOR, N, xk, N, p, work, N);
                           } else {
                             LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, N, N, xk, N, p);
                             info.p[k] = LAPACKE_sgetri_work(LAPACK_COL_MAJOR, N, xk, N, p, work, N);
                           }
                         }
                       }
                     }});
#endif
    const double flops = 2.0 * N * N * N, bytes = 1.0 * N * N * sizeof(T);  // read, and written
    std::vector<std::function<void()>> fs;
    for (auto& [name, f] : impls) {
      f();  // warm up
      fs.push_back(f);
    }
    const std::vector<double> t = timed(regime, fs);
    for (std::size_t i = 0; i < impls.size(); ++i)
      record<T>(regime, "inverse", impls[i].first, N, count, t[i], flops, bytes, bytes);
  }

  template <class T, int N>
  void run_size(const std::string& regime) {
    for (const auto& op : opt.ops) {
      if (op == "gemm") run_gemm<T, N>(regime);
      if (op == "potrf" || op == "getrf") run_factor<T, N>(regime, op);
      if (op == "getrs" || op == "potrs") run_solve<T, N>(regime, op);
      if (op == "inverse") run_inverse<T, N>(regime);
    }
  }

  /// The sizes the benchmark is compiled for (issue 3's list); --sizes picks among them.
  /// -DTB_BENCH_SIZES=2,8,16 compiles fewer (the whole list takes about 30 minutes of one
  /// core at -O3).
#if defined(TB_BENCH_SIZES)
  using compiled_sizes = std::integer_sequence<int, TB_BENCH_SIZES>;
#else
  using compiled_sizes = std::integer_sequence<int, 2, 3, 4, 5, 8, 12, 16, 24, 32>;
#endif

  template <class T, int... I>
  void run_sizes(const std::string& regime, int n, std::integer_sequence<int, I...>) {
    const bool found = ((n == I ? (run_size<T, I>(regime), true) : false) || ...);
    if (!found) std::fprintf(stderr, "n = %d is not compiled in (bench_cpu.cpp: compiled_sizes)\n", n);
  }

  template <class T>
  void run_prec(const std::string& regime) {
    for (int n : opt.sizes) run_sizes<T>(regime, n, compiled_sizes{});
  }
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    const std::size_t e = s.find(',', b);
    out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

std::string shell(const char* cmd) {
  std::string out;
  if (FILE* p = popen(cmd, "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bench b;
  options& o = b.opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--stream-mib") o.stream_mib = std::stod(next());
    else if (a == "--cache-kib") o.cache_kib = std::stod(next());
    else if (a == "--reps") o.reps = std::stoi(next());
    else if (a == "--threads") o.threads = std::stoi(next());
    else if (a == "--min-seconds") o.min_seconds = std::stod(next());
    else if (a == "--ops") o.ops = split(next());
    else if (a == "--regimes") o.regimes = split(next());
    else if (a == "--prec") o.precisions = next();
    else if (a == "--csv") o.csv = next();
    else if (a == "--no-compact") o.compact = false;
    else if (a == "--net-of-restore") o.net_of_restore = true;
    else if (a == "--seq") o.seq = true;
    else if (a == "--par-min-bytes") tb::detail::simd::tuning::parallel_min_bytes_set() = std::stol(next());
    else if (a == "--note") o.machine_note = next();
    else if (a == "--sizes") {
      o.sizes.clear();
      for (auto& s : split(next())) o.sizes.push_back(std::stoi(s));
    } else {
      std::printf(
          "usage: bench_cpu [--stream-mib 256] [--cache-kib 128] [--reps 5] [--threads T]\n"
          "  [--sizes 2,3,4,5,8,12,16,24,32] [--ops gemm,potrf,getrf,inverse,getrs,potrs] [--regimes stream,cache]\n"
          "  [--prec ds] [--min-seconds 0.2] [--csv file] [--note text] [--no-compact] [--net-of-restore]\n"
          "  [--seq] [--par-min-bytes B]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (o.threads > 0) omp_set_num_threads(o.threads);
#if defined(TB_BENCH_LAPACKE)
  openblas_set_num_threads(1);
#endif
#if defined(TB_BENCH_LIBXSMM)
  libxsmm_init();
#endif
  const int threads = omp_get_max_threads();
  b.start = machine_rates();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string cpu = shell("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'");
  // The commit the binary was built from ("+dirty": with uncommitted changes to tracked files),
  // and HEAD now where it differs.
  std::string commit = tb_bench_build_commit();
  std::string dirty;
  if (commit.size() > 6 && commit.compare(commit.size() - 6, 6, "-dirty") == 0) {
    commit.resize(commit.size() - 6);
    dirty = "+dirty";
  }
  const std::string head = shell("git rev-parse --short=7 HEAD 2>/dev/null");
  if (!head.empty() && head != commit) dirty += " (HEAD at run time " + head + ")";
  char date[64];
  const std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  char rates_text[200];
  std::snprintf(rates_text, sizeof rates_text,
                "GB/s at the start: read %.1f, write %.1f, in-place update %.1f (read + written), memcpy %.1f (read + written)",
                b.start.read * 1e-9, b.start.write * 1e-9, b.start.in_place * 1e-9, b.start.memcpy * 1e-9);
  std::printf("# %s, %s, %d threads, %s, commit %s%s, %s\n", host, cpu.c_str(), threads, rates_text,
              commit.c_str(), dirty.c_str(), date);

  for (const auto& regime : o.regimes)
    for (char p : o.precisions) {
      if (p == 'd') b.run_prec<double>(regime);
      if (p == 's') b.run_prec<float>(regime);
    }

  if (!o.csv.empty()) {
    std::ofstream f(o.csv);
    f << "# machine " << host << " (" << cpu << "), " << threads << " threads, " << rates_text
      << ", commit " << commit << dirty << ", "
      << date << (o.machine_note.empty() ? "" : ", " + o.machine_note) << "\n";
    f << "machine,date,commit,threads,read_gbs,write_gbs,in_place_gbs,regime,op,impl,prec,n,batch,ms,gflops,roofline_fraction\n";
    for (const auto& r : b.results) {
      char line[512];
      std::snprintf(line, sizeof line, "%s,%s,%s,%d,%.2f,%.2f,%.2f,%s,%s,%s,%c,%d,%lld,%.5f,%.3f,%.4f\n", host,
                    date, commit.c_str(), threads, r.rate.read * 1e-9, r.rate.write * 1e-9, r.rate.in_place * 1e-9, r.regime.c_str(), r.op.c_str(),
                    r.impl.c_str(), r.prec, r.n, (long long)r.batch, r.seconds * 1e3, r.gflops,
                    r.roofline);
      f << line;
    }
    std::printf("# wrote %s\n", o.csv.c_str());
  }
}
