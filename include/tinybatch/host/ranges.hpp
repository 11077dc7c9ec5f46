// Splitting a batch over host threads: one contiguous range per OpenMP thread.
#pragma once

#include <type_traits>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../core/config.hpp"
#include "../policy.hpp"

namespace tinybatch::detail {

/// Calls f(k0, k1) on disjoint ranges covering [0, count): one range per OpenMP thread
/// (parallel policy, same split as `schedule(static)`), or the whole batch.
template <class Policy, class F>
void for_each_range(const Policy& policy, index_t count, F&& f) {
  if constexpr (std::is_same_v<Policy, parallel_policy<typename Policy::kernels>>) {
#if defined(_OPENMP)
    const int threads = policy.threads > 0 ? policy.threads : omp_get_max_threads();
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
