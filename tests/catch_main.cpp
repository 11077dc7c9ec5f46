#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <tinybatch/host/tuning.hpp>

int main(int argc, char** argv) {
  // `par` on every batch however small, as before the small-call rule (host/tuning.hpp
  // parallel_min_bytes): the tests' batches are small, and the multi-threaded splits of the
  // batch are part of what they check. test_threads.cpp checks the rule itself.
  tinybatch::detail::simd::tuning::parallel_min_bytes_set() = 0;
  return Catch::Session().run(argc, argv);
}
