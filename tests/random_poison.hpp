// What the host and the GPU tests share: one fresh, printed seed per run (TINYBATCH_SEED
// reproduces it) and the poison that marks memory a routine must write or must not touch.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <type_traits>

namespace tinybatch_tests {

inline std::uint64_t seed() {
  static const std::uint64_t s = [] {
    std::uint64_t v;
    if (const char* e = std::getenv("TINYBATCH_SEED"))
      v = std::strtoull(e, nullptr, 10);
    else
      v = (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    std::printf("tinybatch tests: TINYBATCH_SEED=%llu\n", static_cast<unsigned long long>(v));
    return v;
  }();
  return s;
}
inline std::mt19937_64& rng() {
  static std::mt19937_64 g(seed());
  return g;
}
template <class T>
T uniform(T lo = -1, T hi = 1) {
  return std::uniform_real_distribution<T>(lo, hi)(rng());
}

/// A quiet NaN with a payload no computation produces, compared bit for bit.
template <class T>
T poison() {
  if constexpr (std::is_same_v<T, double>) {
    std::uint64_t b = 0x7ff8dead0000beefull;
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  } else {
    std::uint32_t b = 0x7fc0beefu;
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }
}
template <class T>
bool is_poison(T v) {
  const T p = poison<T>();
  return std::memcmp(&v, &p, sizeof v) == 0;
}

}  // namespace tinybatch_tests
