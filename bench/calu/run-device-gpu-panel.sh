#!/usr/bin/env bash
# The hybrid CALU with its panels on the GPU (panel_location::gpu) on the GPU machine, from
# the repository root:
#
#   source .device-deps/env.sh; bench/calu/run-device-gpu-panel.sh
#
# Builds test_cuda_calu and bench_calu_gpu (build-calu), runs the GPU test, its GPU-panel
# cases under compute-sanitizer memcheck, then bench_calu_gpu, best of 2 after a warm-up, on
# 8192^2, 16384^2, 32768^2, 100000 x 1024, 400000 x 512: hybrid_gpu with the tournament
# (--row-blocks=2; b 32 / 64 / 128) and cuSOLVER dgetrf; the tournament's nodes by cuBLAS
# (b 64); cuSOLVER's partial pivoting per panel (--row-blocks=1, the default); the hybrid with
# CPU panels (d = 1, the fastest d of every sweep).
# Output in $OUT (or ./device-logs): build.log, test_cuda_calu.log, memcheck.log,
# calu-<step>.csv / .log, summary.txt (printed last). TB_CALU_BUDGET: seconds for it all
# (default 540).
set -uo pipefail
root=$(pwd)
out=${OUT:-$root/device-logs}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
build=build-calu
deadline=$(( SECONDS + ${TB_CALU_BUDGET:-540} ))
left() { echo $(( deadline - SECONDS )); }
summary=()
note() { summary+=("$1"); }
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nproc
  [ -f "$build/build.ninja" ] ||
    meson setup "$build" -Dcuda=enabled -Dtests=true -Dbenchmarks=true -Dexamples=false -Dbuildtype=release
  touch tests/cuda/test_calu.cu bench/calu/bench_calu.cu  # nvcc objects have no header depfiles
  ninja -C "$build" tests/cuda/test_cuda_calu bench/bench_calu_gpu
} >"$out/build.log" 2>&1
note "build: rc $? at ${SECONDS}s (build.log)"

export OMP_NUM_THREADS=$(nproc)
timeout 200 "$build/tests/cuda/test_cuda_calu" >"$out/test_cuda_calu.log" 2>&1
note "test_cuda_calu: rc $? at ${SECONDS}s ($(tail -n 2 "$out/test_cuda_calu.log" | head -n 1))"
timeout 150 compute-sanitizer --tool memcheck "$build/tests/cuda/test_cuda_calu" "[gpu_panel]" >"$out/memcheck.log" 2>&1
note "memcheck [gpu_panel]: rc $? at ${SECONDS}s ($(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -n 1))"

shapes="--square=8192,16384,32768 --tall=100000x1024,400000x512"
bench() {  # name, then the benchmark's arguments
  local name=$1 t=$(( $(left) - 5 ))
  shift
  if [ "$t" -lt 30 ]; then note "bench $name: skipped, out of time"; return; fi
  timeout "$t" "$build/bench/bench_calu_gpu" $shapes --reps=2 "$@" --csv="$out/calu-$name.csv" >"$out/calu-$name.log" 2>&1
  note "bench $name: rc $? at ${SECONDS}s"
}
bench gpu-panel --methods=hybrid_gpu,cusolver --row-blocks=2 --b=32,64,128
bench gpu-panel-cublas --methods=hybrid_gpu_cublas --row-blocks=2 --b=64 --no-check
bench gpu-panel-getrf --methods=hybrid_gpu --row-blocks=1 --b=64,128
bench cpu-panel --methods=hybrid --b=128 --d=1 --no-check
{
  for f in "$out"/calu-*.log; do echo "-- $(basename "$f")"; grep -v '^ *$' "$f" | head -n 60; done
  echo "== summary =="
  printf '%s\n' "${summary[@]}"
} | tee "$out/summary.txt"
