// The run-time knobs a program may turn (docs/tuning.md): the public names of values the host
// backend reads on every call. Setting them is thread-safe (atomics); a call already running
// keeps the values it read.
#pragma once

#include <atomic>
#include <cstddef>

#include "../host/simd/arch.hpp"
#include "../host/tuning.hpp"

namespace tinybatch::tuning {

/// Host SIMD instruction sets: none (the reference loops), avx2, avx512. In builds without the
/// host SIMD kernels (TINYBATCH_NO_HOST_SIMD, nvcc's translation units, other CPUs) the
/// active set is always none and limit_isa does nothing.
#if TINYBATCH_HOST_SIMD
using isa = detail::simd::isa;
/// Caps the instruction set the host kernels use (isa::none: the reference loops everywhere),
/// for comparisons and for programs that must give the same bits on every machine.
inline void limit_isa(isa cap) { detail::simd::limit_isa(cap); }
/// The set the host kernels use now: the best this CPU runs, under the cap.
inline isa active_isa() { return detail::simd::active_isa(); }
#else
enum class isa : int { none = 0, avx2 = 1, avx512 = 2 };
inline void limit_isa(isa) {}
inline isa active_isa() { return isa::none; }
#endif

/// tb::par's threshold in operand bytes: a call below it runs on the calling thread.
/// parallel_min_bytes_set() = B: B for every call (0: always the team); -1 (the default): the
/// rule of docs/api.md (24 KiB + 2 KiB per thread, weighted per operation).
using detail::simd::tuning::parallel_min_bytes_set;

/// Operand bytes from which a call streams its outputs (gemm's streaming stores, the solves
/// one matrix at a time): by default the last-level cache size, at least 8 MiB.
using detail::simd::tuning::streaming_min_bytes;

}  // namespace tinybatch::tuning
