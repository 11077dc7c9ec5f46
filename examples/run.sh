#!/usr/bin/env bash
# Quick start: installs missing Debian packages, builds, and solves a batch of small systems
# on the CPU, and on the GPU where CUDA and a device are present, checking every residual.
#   bash examples/run.sh [count] [n]
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/deps.sh
tb_setup build/release --buildtype=release -Dcuda=auto -Dbenchmarks=false -Dexamples=true
targets=(examples/solve_batch)
grep -q "solve_batch_cuda" build/release/build.ninja && targets+=(examples/solve_batch_cuda)
ninja -C build/release "${targets[@]}"
./build/release/examples/solve_batch "$@"
if [ -x build/release/examples/solve_batch_cuda ]; then
  ./build/release/examples/solve_batch_cuda "$@"
fi
