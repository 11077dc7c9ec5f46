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
# ones for representative sizes only. tests/cuda/run-device.sh builds all sizes on a GPU.
gpu_sizes=sparse
nvidia-smi -L >/dev/null 2>&1 && gpu_sizes=all

echo "== release build (CUDA: auto) =="
# -O2: a quarter less compile time than release's -O3 for the unrolled kernels of the tests.
tb_setup build/release --buildtype=release -Doptimization=2 -Dcuda=auto -Dbenchmarks=false \
  -Dexamples=false -Dgpu_test_sizes=$gpu_sizes -Dcompact_test_sizes=sparse
ninja -C build/release -j"$jobs"
meson test -C build/release --print-errorlogs --num-processes "$jobs"

echo "== AddressSanitizer + UBSan build of the host tests =="
# -O1 with line tables only: a readable report, and half the compile time of -O2 -g. The
# SIMD tests are built for representative sizes here (every size in the release build), and
# the grid tests run the reference path (-Dgrid_simd=false): the SIMD kernels are checked
# under the sanitizers by test_simd_* and test_compact, and in the release build by all.
tb_setup build/asan --buildtype=plain -Doptimization=1 -Dcuda=disabled -Dbenchmarks=false \
  -Dexamples=false -Dsimd_test_sizes=sparse -Dcompact_test_sizes=few -Dgrid_simd=false -Db_sanitize=address,undefined -Db_lundef=false \
  "-Dcpp_args=['-g1', '-fno-sanitize-recover=all', '-fno-omit-frame-pointer']"
ninja -C build/asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  meson test -C build/asan --suite host --print-errorlogs --num-processes "$jobs"

echo "== install, then build outside programs with pkg-config and with CMake =="
bash tests/install/check.sh build/release
echo "tinybatch: all tests passed"
