// The CUDA headers a plain C++ compiler may include (cuda/error.hpp, cuda/memory.hpp),
// compiled by g++ and run without a GPU: error messages, and argument checks that fail
// before any CUDA call.
#include <catch2/catch.hpp>

#include <tinybatch/cuda/error.hpp>
#include <tinybatch/cuda/memory.hpp>
#include <tinybatch/tinybatch.hpp>

#include <limits>
#include <span>
#include <string>
#include <vector>

namespace tb = tinybatch;

TEST_CASE("CUDA status codes become cuda_error naming the call", "[cuda-host]") {
  try {
    tb::cuda::check(cudaErrorMemoryAllocation, "cudaMalloc(&p, 4096)");
    FAIL("no exception");
  } catch (const tb::cuda_error& e) {
    CHECK(std::string(e.what()) == "cudaMalloc(&p, 4096) failed: out of memory (code 2)");
    CHECK(e.code() == 2);
  }
  CHECK_NOTHROW(tb::cuda::check(cudaSuccess, "nothing"));
  CHECK_NOTHROW(TINYBATCH_CUDA_CHECK(CUBLAS_STATUS_SUCCESS));
  try {
    TINYBATCH_CUDA_CHECK(CUBLAS_STATUS_INVALID_VALUE);
    FAIL("no exception");
  } catch (const tb::cuda_error& e) {
    CHECK(std::string(e.what()) ==
          "CUBLAS_STATUS_INVALID_VALUE failed: cuBLAS invalid value (code 7)");
  }
  try {
    tb::cuda::check(CUSOLVER_STATUS_EXECUTION_FAILED, "cusolverDnSgetrf(h, ...)");
    FAIL("no exception");
  } catch (const tb::cuda_error& e) {
    CHECK(std::string(e.what()) ==
          "cusolverDnSgetrf(h, ...) failed: cuSOLVER execution failed (code 6)");
  }
  try {
    tb::cuda::check(cudaErrorInvalidValue, "cudaMemcpy(a, b, 8, kind)");
  } catch (const tb::cuda_error& e) {
    CHECK(std::string(e.what()) == "cudaMemcpy(a, b, 8, kind) failed: invalid argument (code 1)");
  }
}

TEST_CASE("device memory types from g++: no CUDA call for empty or mismatched arguments",
          "[cuda-host]") {
  tb::cuda::device_array<int> empty(0);
  CHECK(empty.data() == nullptr);
  CHECK(empty.size() == 0);
  std::span<int> info = empty;  // converts as the front end's info argument
  CHECK(info.empty());
  tb::pivot_view pv(empty);
  CHECK(pv.size() == 0);
  std::vector<int> v(3);
  CHECK_THROWS_AS(tb::cuda::copy(empty, v), tb::invalid_argument);
  tb::cuda::device_batch<float, 3, 3> none(0);
  CHECK(none.data() == nullptr);
  tb::batch<float, 3, 3> h(2);
  CHECK_THROWS_AS(tb::cuda::copy(none, h), tb::invalid_argument);
  static_assert(tb::cuda::device_space::alignment == 256);
}

// reference/lu.hpp spells numeric_limits<T>::min() so that device code needs no
// --expt-relaxed-constexpr; the host must see the very same constant.
static_assert(tb::reference::smallest_normal<float>() == std::numeric_limits<float>::min());
static_assert(tb::reference::smallest_normal<double>() == std::numeric_limits<double>::min());
