// A stand-in for the GPU of the hybrid CALU's schedule (include/tinybatch/tasks/hybrid.hpp):
// each of its three queues is a host thread that runs what is enqueued in order, after a
// random delay (jitter) so that the CPU tasks and the queues interleave differently every
// run; events are CUDA's (a wait or synchronize sees the latest record made before it, and
// one never recorded does not wait); "device memory" is host memory filled with NaN, so
// that a column the schedule forgot to send reads as NaN in the result. The arithmetic is
// CBLAS and loops. What this checks without a GPU: which columns go where and when, the
// offsets, the pivots, the order the events impose, and that nothing waits forever.
#pragma once

#include <tinybatch/tasks/hybrid.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace tinybatch_tests {

template <class T>
class emulated_device {
  struct token {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    double when = 0;
    void finish() {
      std::lock_guard<std::mutex> l(m);
      when = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      done = true;
      cv.notify_all();
    }
    void wait() {
      std::unique_lock<std::mutex> l(m);
      cv.wait(l, [&] { return done; });
    }
  };
  struct event_state {
    std::mutex m;
    std::shared_ptr<token> latest;
    std::shared_ptr<token> get() {
      std::lock_guard<std::mutex> l(m);
      return latest;
    }
  };
  struct queue {
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::function<void()>> work;
    bool stop = false;
    std::thread worker;
  };

 public:
  using event = std::shared_ptr<event_state>;
  using L = tinybatch::calu::detail::lapack<T>;

  /// jitter_us: each queued operation starts after a random delay of up to this many us.
  explicit emulated_device(unsigned jitter_us, std::uint64_t seed) : jitter_(jitter_us) {
    for (int q = 0; q < 3; ++q) {
      queue& Q = q_[q];
      Q.worker = std::thread([this, &Q, q, s = seed + q] {
        std::mt19937_64 g(s);
        for (;;) {
          std::function<void()> f;
          {
            std::unique_lock<std::mutex> l(Q.m);
            Q.cv.wait(l, [&] { return Q.stop || !Q.work.empty(); });
            if (Q.work.empty()) return;
            f = std::move(Q.work.front());
            Q.work.pop_front();
          }
          if (jitter_) std::this_thread::sleep_for(std::chrono::microseconds(g() % jitter_));
          f();
          (void)q;
        }
      });
    }
  }
  emulated_device(const emulated_device&) = delete;
  emulated_device& operator=(const emulated_device&) = delete;
  ~emulated_device() {
    for (queue& Q : q_) {
      {
        std::lock_guard<std::mutex> l(Q.m);
        Q.stop = true;
      }
      Q.cv.notify_all();
    }
    for (queue& Q : q_) Q.worker.join();
  }

  event make_event(bool) { return std::make_shared<event_state>(); }
  T* pinned(std::size_t count) { return alloc(count); }
  int* pinned_ints(std::size_t count) { return alloc_ints(count); }
  T* device(std::size_t count) { return alloc(count); }
  int* device_ints(std::size_t count) { return alloc_ints(count); }

  void copy_to_device(int q, T* d, long long ldd, const T* h, long long ldh, int rows, int cols) {
    copy(q, d, ldd, h, ldh, rows, cols);
  }
  void copy_to_host(int q, T* h, long long ldh, const T* d, long long ldd, int rows, int cols) {
    copy(q, h, ldh, d, ldd, rows, cols);
  }
  void copy_ints_to_device(int q, int* d, const int* h, int count) {
    enqueue(q, [=] { std::copy(h, h + count, d); });
  }
  void record(event e, int q) {
    auto t = std::make_shared<token>();
    {
      std::lock_guard<std::mutex> l(e->m);
      e->latest = t;
    }
    enqueue(q, [t] { t->finish(); });
  }
  void wait(int q, event e) {
    if (auto t = e->get()) enqueue(q, [t] { t->wait(); });
  }
  void synchronize(event e) {
    if (auto t = e->get()) t->wait();
  }
  void synchronize_queue(int q) {
    auto e = make_event(false);
    record(e, q);
    synchronize(e);
  }
  void bind_thread() {}

  void laswp(int q, int ncols, T* a, long long lda, int k1, int k2, const int* ipiv) {
    enqueue(q, [=] {
      for (int c = 0; c < ncols; ++c)
        for (int i = k1; i < k2; ++i) std::swap(a[i + c * lda], a[ipiv[i] - 1 + c * lda]);
    });
  }
  void left_swaps(int q, int ncols, T* a, long long lda, int b, int mn, const int* ipiv) {
    enqueue(q, [=] {
      for (int c = 0; c < ncols; ++c)
        for (int i = (c / b + 1) * b; i < mn; ++i) std::swap(a[i + c * lda], a[ipiv[i] - 1 + c * lda]);
    });
  }
  void trsm(int q, int m, int n, const T* a, long long lda, T* b, long long ldb) {
    if (m > 0 && n > 0)
      enqueue(q, [=] { L::trsm(CblasLeft, CblasLower, CblasNoTrans, CblasUnit, m, n, T(1), a, int(lda), b, int(ldb)); });
  }
  void gemm_minus(int q, int m, int n, int k, const T* a, long long lda, const T* b, long long ldb, T* c,
                  long long ldc) {
    if (m > 0 && n > 0 && k > 0)
      enqueue(q, [=] {
        L::gemm(CblasNoTrans, CblasNoTrans, m, n, k, T(-1), a, int(lda), b, int(ldb), T(1), c, int(ldc));
      });
  }
  double seconds_between(event a, event b) {
    auto ta = a->get(), tb = b->get();
    return ta && tb ? tb->when - ta->when : 0;
  }

 private:
  void enqueue(int q, std::function<void()> f) {
    queue& Q = q_[q];
    {
      std::lock_guard<std::mutex> l(Q.m);
      Q.work.push_back(std::move(f));
    }
    Q.cv.notify_one();
  }
  void copy(int q, T* dst, long long ldd, const T* src, long long lds, int rows, int cols) {
    enqueue(q, [=] {
      for (int j = 0; j < cols; ++j) std::copy(src + j * lds, src + j * lds + rows, dst + j * ldd);
    });
  }
  T* alloc(std::size_t count) {
    mem_.emplace_back(new T[std::max<std::size_t>(count, 1)]);
    std::fill(mem_.back().get(), mem_.back().get() + count, std::numeric_limits<T>::quiet_NaN());
    return mem_.back().get();
  }
  int* alloc_ints(std::size_t count) {
    ints_.emplace_back(new int[std::max<std::size_t>(count, 1)]);
    std::fill(ints_.back().get(), ints_.back().get() + count, -12345);
    return ints_.back().get();
  }
  unsigned jitter_;
  queue q_[3];
  std::vector<std::unique_ptr<T[]>> mem_;
  std::vector<std::unique_ptr<int[]>> ints_;
};

/// The hybrid schedule on the emulated device; the matrix starts (and ends) on the host, or
/// in the emulated device memory (with its own leading dimension m + 1).
template <class T>
int emulated_hybrid_getrf(int m, int n, T* a, int lda, int* ipiv, const tinybatch::calu::hybrid_options& o,
                          int d, bool on_device, unsigned jitter_us, std::uint64_t seed,
                          tinybatch::calu::hybrid_report* rep = nullptr) {
  emulated_device<T> dev(jitter_us, seed);
  if (!on_device) return tinybatch::calu::detail::hybrid_schedule(dev, m, n, a, lda, (T*)nullptr, 0, ipiv, o, d, rep);
  const long long ldd = m + 1;
  T* dA = dev.device(std::size_t(ldd) * n);
  for (int j = 0; j < n; ++j) std::copy(a + std::size_t(j) * lda, a + std::size_t(j) * lda + m, dA + j * ldd);
  const int info = tinybatch::calu::detail::hybrid_schedule(dev, m, n, (T*)nullptr, lda, dA, ldd, ipiv, o, d, rep);
  for (int j = 0; j < n; ++j) std::copy(dA + j * ldd, dA + j * ldd + m, a + std::size_t(j) * lda);
  return info;
}

}  // namespace tinybatch_tests
