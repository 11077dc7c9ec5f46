#!/usr/bin/env bash
# The large-LU run on the GPU machine (one H200, 16 Xeon cores), from the repository root:
#
#   source .device-deps/env.sh; bench/calu/run-device.sh
#
# Configures build-calu (CUDA, tests, benchmarks), builds test_calu, test_cuda_calu,
# bench_calu_gpu; runs both tests; then the benchmark in steps bounded to about 6 minutes
# together (each step has its own timeout, a failing or late step does not stop the next):
#   1 hybrid (model's d, matrix on the GPU) and cuSOLVER dgetrf on every shape; 1b the
#     hybrid with the matrix on the host (16384^2, 100000 x 1024)
#   2 the hybrid's d sweep (and b 128 / 256) on 16384^2 and 100000 x 1024, and the trace of
#     16384^2 at b 128 and the model's d (trace.csv)
#   3 CPU-only: one m x b panel (TSLU against OpenBLAS dgetrf of it: the CPU's panel rate),
#     tinybatch CALU and OpenBLAS dgetrf on 16 cores, tall-skinny shapes then square ones up
#     to 16384 (b 128 / 256 tall, 128 square)
#   4 MKL dgetrf on the CPU cores through torch, if python3 has torch (mkl_getrf.py)
#   5 the plots (plot_calu.py, if matplotlib is there)
# Output in $OUT (or ./device-logs): build.log, test_calu.log, test_cuda_calu.log,
# calu-<step>.csv / .log, trace.csv, *.png, summary.txt (printed last).
# Knobs: TB_CALU_QUICK=1 (two shapes only), TB_CALU_STEP_TIMEOUT (seconds per step, default
# 150), TB_CALU_BUDGET (seconds for everything, default 540: steps that would start later
# are skipped and say so in the summary).
set -x
set -uo pipefail
root=$(pwd)
out=${OUT:-$root/device-logs}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
build=build-calu
tmo=${TB_CALU_STEP_TIMEOUT:-150}
deadline=$(( SECONDS + ${TB_CALU_BUDGET:-540} ))
summary=()
note() { summary+=("$1"); }
commit=$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nproc
  nvcc --version | tail -2
  pkg-config --modversion openblas lapacke
  [ -f "$build/build.ninja" ] ||
    meson setup "$build" -Dcuda=enabled -Dtests=true -Dbenchmarks=true -Dexamples=false -Dbuildtype=release
  # nvcc objects are not rebuilt when only a header changed (no depfiles): touch their sources.
  touch tests/cuda/test_calu.cu bench/calu/bench_calu.cu
  ninja -C "$build" tests/test_calu tests/cuda/test_cuda_calu bench/bench_calu_gpu bench/bench_calu
} >"$out/build.log" 2>&1
note "build: rc $? (build.log)"

timeout 120 "$build/tests/test_calu" >"$out/test_calu.log" 2>&1
note "test_calu (CPU): rc $? ($(tail -n 2 "$out/test_calu.log" | head -n 1))"
timeout 180 "$build/tests/cuda/test_cuda_calu" >"$out/test_cuda_calu.log" 2>&1
note "test_cuda_calu (hybrid): rc $? ($(tail -n 2 "$out/test_cuda_calu.log" | head -n 1))"

bench=$build/bench/bench_calu_gpu
square=4096,8192,16384,24576,32768
tall=100000x1024,200000x1024,100000x2048,400000x512
if [ "${TB_CALU_QUICK:-0}" = 1 ]; then square=8192; tall=100000x1024; fi
export OMP_NUM_THREADS=$(nproc)
# libgomp honours the panels' task priorities only with this set (1.04 - 1.16x on 16 cores).
export OMP_MAX_TASK_PRIORITY=2
# No OMP_PROC_BIND: a master thread bound to one core would hand that single core to every
# thread created after it (OpenBLAS's, the baseline's).

# Each step gets the smaller of its timeout and what is left of the whole run's budget
# (TB_CALU_BUDGET seconds from the start, default 540: a device call ends at 600).
left() { echo $(( deadline - SECONDS )); }
step() {  # name, then the benchmark's arguments
  local name=$1 t
  shift
  t=$(left)
  [ "$t" -gt "$tmo" ] && t=$tmo
  if [ "$t" -lt 20 ]; then
    note "bench $name: skipped, out of time"
    return
  fi
  timeout "$t" "$bench" "$@" --csv="$out/calu-$name.csv" >"$out/calu-$name.log" 2>&1
  note "bench $name: rc $? in at most ${t}s ($(grep -cE '^(calu|lapacke|panel_|hybrid|cusolver)' "$out/calu-$name.log") rows)"
}
step 1-shapes --square=$square --tall=$tall --methods=hybrid,cusolver --d=model --reps=1
step 1b-host --square=16384 --tall=100000x1024 --methods=hybrid_host --d=model --reps=1 --no-check
step 2-sweep --square=16384 --tall=100000x1024 --methods=hybrid --b=128,256 --d=model,1,2,4,8 --reps=1 --no-check \
  --trace="$out/trace.csv"
step 3-cpu-tall --tall=$tall --methods=panel,calu,lapacke --b=128,256 --reps=1
step 3-cpu-square --square=4096,8192,16384 --methods=calu,lapacke --b=128 --reps=1

if [ "$(left)" -lt 30 ]; then
  note "mkl (torch): skipped, out of time"
elif python3 -c 'import torch' >/dev/null 2>&1; then
  timeout $(( $(left) - 10 )) python3 bench/calu/mkl_getrf.py --square=4096,8192 --tall=$tall --commit="$commit" \
    --csv="$out/calu-4-mkl.csv" >"$out/calu-4-mkl.log" 2>&1
  note "mkl (torch): rc $? (calu-4-mkl.log)"
else
  note "mkl (torch): skipped, python3 has no torch"
fi
if python3 -c 'import matplotlib' >/dev/null 2>&1; then
  python3 bench/calu/plot_calu.py "$out"/calu-*.csv --out="$out/calu-$commit" >"$out/plot.log" 2>&1
  note "plots: rc $?"
  [ -f "$out/trace.csv" ] && python3 bench/calu/plot_calu.py --trace="$out/trace.csv" --out="$out/calu-$commit-trace" >>"$out/plot.log" 2>&1
else
  note "plots: skipped, no matplotlib"
fi

set +x
{
  echo "== bench_calu tables =="
  for f in "$out"/calu-*.log; do echo "-- $(basename "$f")"; grep -v '^ *$' "$f" | head -n 80; done
  echo "== summary (commit $commit) =="
  printf '%s\n' "${summary[@]}"
} | tee "$out/summary.txt"
