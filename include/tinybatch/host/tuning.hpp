// The host backend's tuned choices, in one table: for each operation and scalar type, the
// orders n (fixed sizes, 1..32) at which `kernels::automatic` runs the staged compact kernels
// (host/compact/staged.hpp) instead of the scalar reference, from bench/cpu/bench_cpu's
// `tinybatch_par` and `tb_reference_par` columns (docs/tuning.md: how to remeasure);
// `kernels::simd` ignores it.
#pragma once

namespace tinybatch::detail::simd::tuning {

enum class op { getrf, potrf, getrs, potrs, trsm, getri, inverse };

struct orders {
  int min_n, max_n;
  constexpr bool has(int n) const { return n >= min_n && n <= max_n; }
};

/// Where the staged kernels are the default, by operation and type. Today everywhere: in
/// bench/results/cpu-2026-11-23-vm.csv (2 threads, n in {2, 3, 4, 5, 8, 12, 16, 24, 32}) the
/// staged kernels beat the reference loops in both regimes and types (1.2 - 9x) but for potrf
/// at n <= 3 cache-resident (double 0.94x at n = 2, 1.02x at 3; float 0.79x, 0.88x), where
/// streaming they win 1.4 - 2.4x: large batches decide. Orders between the measured ones
/// follow their neighbours; trsm and getri are not in the benchmark and follow getrs and
/// inverse, whose kernels they are part of.
constexpr orders staged_orders(op o, bool is_double) {
  (void)o;
  (void)is_double;
  return {1, 32};
}

template <class T>
constexpr bool staged(op o, int n) {
  return staged_orders(o, sizeof(T) == 8).has(n);
}

}  // namespace tinybatch::detail::simd::tuning
