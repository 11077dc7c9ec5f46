// tinybatch for GPU users: everything in <tinybatch/tinybatch.hpp> plus the CUDA backend, so
// that tinybatch::cuda::policy (tinybatch::cuda::on(stream)) runs every operation on the GPU.
// Include it from files that nvcc compiles. Plain C++ files that only allocate or copy device
// memory include <tinybatch/cuda/memory.hpp> instead, which needs no nvcc.
#pragma once

#if !defined(__CUDACC__)
#error "<tinybatch/cuda.hpp> brings the CUDA backend's kernels and needs nvcc: compile this file as CUDA (.cu). Plain C++ files may include <tinybatch/cuda/memory.hpp> (device memory, copies) and <tinybatch/cuda/error.hpp>."
#else

#include "tinybatch.hpp"

#include "cuda/error.hpp"
#include "cuda/memory.hpp"
#include "cuda/backend.cuh"

#endif
