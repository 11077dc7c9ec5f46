#!/usr/bin/env bash
# The test command (README, .ci/run): every host test in a release build and again under
# AddressSanitizer + UBSan, the GPU tests where CUDA is found (they report SKIP without a
# GPU), and an outside program built against the installed headers through pkg-config and
# through CMake's find_package. Installs missing Debian packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/deps.sh
jobs=$(nproc)

# Without a GPU the GPU tests can only be compiled (they report SKIP): build the fast-kernel
# ones for representative sizes only, and to PTX only (-Dgpu_arch=compute_90: nvcc's front
# end checks all the device code, and ptxas is left out: test_fast.cu for getrs 132 -> 48 s,
# all GPU tests 447 -> 364 CPU s). tests/cuda/run-device.sh builds all sizes for sm_90 on a
# GPU.
gpu_sizes=sparse gpu_arch=compute_90
nvidia-smi -L >/dev/null 2>&1 && gpu_sizes=all gpu_arch=sm_90

echo "== release build (CUDA: auto) =="
# -O2: a quarter less compile time than release's -O3 for the unrolled kernels of the tests.
# The SIMD tests run every size 1..32 here, 11 of them in both types and the others in one
# (-Dsimd_test_sizes=split: all 64 pairs took 44 of CI's 90 minutes on two cores); the
# compact-layout test the few set (its lane kernels are the staged ones the SIMD tests
# cover). The grid tests (tests/test_<op>.cpp) run the reference path (-Dgrid_simd=false):
# with the SIMD kernels of their 13 fixed sizes they were 38% of this build, while test_simd_*
# check those kernels at every size, through the default policy too; at three compile-time
# sizes (-Dgrid_sizes=few; every size at run time): on an
# AVX2-only Zen 3 VM this script went past CI's 90 minutes (docs/cpu-backend.md, Tests).
# On a CPU without AVX-512 (that VM) the SIMD tests leave the AVX-512 kernels out in both
# builds (-Dsimd_test_isas=host): they could not run them, and they were about 40% of their
# compile time; tests/avx512_compiles.cpp compiles those kernels at a few sizes instead.
# Both builds link the compiled kernel library (src/) for three orders (-Dkernel_library_sizes=few;
# on the 2-core EPYC VM 83 CPU s in this build; the sanitized build below holds order 7 only,
# -Dkernel_library_sizes=one: its glue is the same at every order, and three orders cost
# 820 CPU s there);
# test_kernel_library checks the run-time-size path through it.
tb_setup build/release --buildtype=release -Doptimization=2 -Dcuda=auto -Dtests=true -Dbenchmarks=false \
  -Dexamples=false -Dgpu_test_sizes=$gpu_sizes -Dgpu_arch=$gpu_arch -Dsimd_test_sizes=split -Dcompact_test_sizes=few \
  -Dgrid_simd=false -Dgrid_sizes=few -Dsimd_test_isas=host -Dkernel_library=true -Dkernel_library_sizes=few
ninja -C build/release -j"$jobs"
meson test -C build/release --print-errorlogs --num-processes "$jobs"

echo "== AddressSanitizer + UBSan build of the host tests =="
# -O1 with line tables only: a readable report, and half the compile time of -O2 -g; the SIMD
# test programs at -O0 (tests/meson.build: 2.5x faster to compile, 3x slower to run). The
# SIMD tests are built for the few set here (every size in the release build): double n = 2,
# 8, 32 and float 7 take every staging path (element by element, whole blocks through
# transposes, half-width lanes, runs that end at the end of the allocation; float 32 is left
# out, for time); the compact test float n = 2 and double n = 32 with its
# variants at n = 7 (it stages nothing). The grid tests run the reference path as in the
# release build, with three compile-time sizes (-Dgrid_sizes=few; every size at run time).
tb_setup build/asan --buildtype=plain -Doptimization=1 -Dcuda=disabled -Dtests=true -Dbenchmarks=false \
  -Dexamples=false -Dsimd_test_sizes=few -Dcompact_test_sizes=ends -Dgrid_simd=false -Dgrid_sizes=few \
  -Dsimd_test_isas=host -Dkernel_library=true -Dkernel_library_sizes=one -Db_sanitize=address,undefined -Db_lundef=false \
  "-Dcpp_args=['-g1', '-fno-sanitize-recover=all', '-fno-omit-frame-pointer']"
ninja -C build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  meson test -C build/asan --suite host --print-errorlogs --num-processes "$jobs"

echo "== install, then build outside programs with pkg-config and with CMake =="
bash tests/install/check.sh build/release
echo "tinybatch: all tests passed"
