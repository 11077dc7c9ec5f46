// Splitting a batch over host threads: one contiguous range per OpenMP thread.
#pragma once

#include <cstddef>
#include <type_traits>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../core/config.hpp"
#include "../policy.hpp"
#include "tuning.hpp"

namespace tinybatch::detail {

/// The team a `par` call of this policy opens: its `threads`, or OpenMP's default (1 without
/// OpenMP).
template <class K>
int team_size(const parallel_policy<K>& p) {
#if defined(_OPENMP)
  return p.threads > 0 ? p.threads : omp_get_max_threads();
#else
  (void)p;
  return 1;
#endif
}

/// The policy a host call of operation `o` runs with: `par` runs a call whose operands weigh
/// less than tuning::parallel_min_bytes(threads) (all matrices together, `bytes` each, times
/// tuning::parallel_weight(o)) on the calling thread, with no OpenMP region: there the team's
/// fork and join cost more than it saves (host/tuning.hpp). bytes == 0: not known
/// (variable-size batches), the policy as it is. Other policies: as they are.
template <class K>
parallel_policy<K> fit_threads(const parallel_policy<K>& p, simd::tuning::op o, index_t count, double bytes) {
  parallel_policy<K> q = p;
#if defined(_OPENMP)
  if (bytes > 0) {
    const int threads = team_size(q);
    const double weighed = double(count) * bytes * simd::tuning::parallel_weight(o);
    if (weighed < double(simd::tuning::parallel_min_bytes(threads))) q.threads = 1;
  }
#else
  (void)o, (void)count, (void)bytes;
#endif
  return q;
}
template <class P>
const P& fit_threads(const P& p, simd::tuning::op, index_t, double) {
  return p;
}

/// Bytes of one matrix of each of the views together, 0 where one is not uniform (the
/// per-matrix sizes of a variable-size batch are not summed for this).
template <class... V>
double matrix_bytes(const V&... v) {
  if constexpr ((V::uniform && ...)) {
    return (0.0 + ... + (double(v.rows()) * double(v.cols()) * sizeof(typename V::value_type)));
  } else {
    return 0;
  }
}

/// Calls f(k0, k1) on disjoint ranges covering [0, count): one range per OpenMP thread
/// (parallel policy, same split as `schedule(static)`), or the whole batch.
template <class Policy, class F>
void for_each_range(const Policy& policy, index_t count, F&& f) {
  if constexpr (std::is_same_v<Policy, parallel_policy<typename Policy::kernels>>) {
#if defined(_OPENMP)
    const int threads = team_size(policy);
    if (threads > 1 && count > 1) {
#pragma omp parallel num_threads(threads)
      {
        const index_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const index_t k0 = count * t / nt, k1 = count * (t + 1) / nt;
        if (k0 < k1) f(k0, k1);
      }
      return;
    }
#endif
  }
  (void)policy;
  f(index_t(0), count);
}

}  // namespace tinybatch::detail
