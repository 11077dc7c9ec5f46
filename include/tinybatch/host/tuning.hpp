// The host backend's tuned choices, in one table: for each operation and scalar type, the
// orders n (fixed sizes, 1..32) at which `kernels::automatic` runs the staged compact kernels
// (host/compact/staged.hpp) instead of the scalar reference. Each entry comes from
// bench/cpu/bench_cpu (see docs/tuning.md for how to remeasure); `kernels::simd` ignores it.
#pragma once

namespace tinybatch::detail::simd::tuning {

enum class op { getrf, potrf, getrs, potrs, trsm, getri, inverse };

struct orders {
  int min_n, max_n;
  constexpr bool has(int n) const { return n >= min_n && n <= max_n; }
};

/// Where the staged kernels are the default, by operation (double, float).
constexpr orders staged_orders(op o, bool is_double) {
  (void)is_double;
  switch (o) {
    default:
      return {1, 32};
  }
}

template <class T>
constexpr bool staged(op o, int n) {
  return staged_orders(o, sizeof(T) == 8).has(n);
}

}  // namespace tinybatch::detail::simd::tuning
