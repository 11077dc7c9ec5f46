#!/usr/bin/env bash
# The full host test grid: every test at every size, both types, every instruction set the
# CPU runs (AVX2 and AVX-512), the grid tests through the SIMD kernels, the compact test at
# every n, the compiled kernel library for every order 1..32. tests/run.sh (CI: two cores,
# 90 minutes) runs a reduced grid of the same programs; this is the command to run before a
# change to the kernels or to the reduced sets lands.
#   bash tests/full-grid.sh [build folder, default build/full]
# Cost: hours on two cores. Its longest programs (the compact test and the SIMD solves at
# every n, both instruction sets) compiled for up to half an hour each, so each is built in
# TB_FULL_GRID_SHARDS (default 8) parts by size (-Dsimd_test_shards): the parts spread over
# many cores. Rerunning continues an interrupted build.
# TB_FULL_GRID_BUILD_ONLY=1 stops after the build (for machines where a command's time is
# limited); TB_SKIP_DEPS=1 skips the Debian packages check (a machine whose dependencies
# come from elsewhere, as the GPU machine's .device-deps).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${TB_SKIP_DEPS:-0}" = 1 ] || source tests/deps.sh
build=${1:-build/full}
jobs=$(nproc)
[ -f "$build/build.ninja" ] ||
  meson setup "$build" --buildtype=release -Doptimization=2 -Dcuda=disabled -Dtests=true -Dbenchmarks=false \
    -Dexamples=false -Dsimd_test_sizes=all -Dcompact_test_sizes=all -Dgrid_simd=true -Dgrid_sizes=all \
    -Dsimd_test_isas=all -Dkernel_library=true -Dkernel_library_sizes=all -Dsimd_test_shards="${TB_FULL_GRID_SHARDS:-8}"
ninja -C "$build" -j"$jobs"
[ "${TB_FULL_GRID_BUILD_ONLY:-0}" = 1 ] && exit 0
# Two OpenMP threads per test program and half as many programs as cores: with every program
# on all cores (OpenMP's default) the 16-core GPU machine ran 9 test programs of 16 spinning
# threads each, and the SIMD gemm tests, 68 s each on the 2-core VM, passed 190 s unfinished.
# Two threads still split the batches unevenly (1003 matrices).
OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} meson test -C "$build" --suite host --print-errorlogs \
  --num-processes $(( jobs > 1 ? jobs / 2 : 1 ))
echo "tinybatch: full host grid passed"
