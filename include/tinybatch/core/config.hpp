// Compiler and platform switches shared by every tinybatch header.
#pragma once

#include <cstdint>

#define TINYBATCH_VERSION_MAJOR 0
#define TINYBATCH_VERSION_MINOR 1
#define TINYBATCH_VERSION_PATCH 0

// Per-matrix kernels in reference/ are compiled for the host and, under nvcc, for the device:
// the generic CUDA path runs exactly the code the host reference runs.
#if defined(__CUDACC__)
#define TINYBATCH_HD __host__ __device__
#define TINYBATCH_COMPILING_CUDA 1
#else
#define TINYBATCH_HD
#define TINYBATCH_COMPILING_CUDA 0
#endif

namespace tinybatch {

/// Extent value meaning "known only at run time" (Eigen's `Dynamic`, std::dynamic_extent).
inline constexpr int dynamic = -1;

/// Batch counts and element offsets can exceed 2^31 (a 1 GiB batch of 2x2 floats does).
using index_t = std::int64_t;

}  // namespace tinybatch
