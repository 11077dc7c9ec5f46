// Memory spaces for owning batches. The host space hands out 64-byte aligned memory (one
// cache line, one AVX-512 register); the CUDA space lives in cuda/memory.hpp.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace tinybatch {

struct host_space {
  static constexpr std::size_t alignment = 64;
  static void* allocate(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, rounded);
    if (!p) throw std::bad_alloc();
    return p;
  }
  static void deallocate(void* p) noexcept { std::free(p); }
};

}  // namespace tinybatch
