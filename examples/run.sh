#!/usr/bin/env bash
# Quick start: installs missing Debian packages, builds, and solves a batch of small systems
# on the CPU (and on the GPU where CUDA and a device are present), checking every residual.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/deps.sh
tb_setup build/release --buildtype=release -Dcuda=auto -Dbenchmarks=false
ninja -C build/release examples/solve_batch $( [ -f examples/solve_batch_cuda.cu ] && [ -x "$(command -v nvcc)" ] && echo examples/solve_batch_cuda || true)
./build/release/examples/solve_batch "$@"
if [ -x build/release/examples/solve_batch_cuda ]; then
  ./build/release/examples/solve_batch_cuda "$@"
fi
