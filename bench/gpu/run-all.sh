#!/usr/bin/env bash
# One device call, one full iteration, from the repository root on the GPU machine:
#   source .device-deps/env.sh; TB_COMMIT=<id> bench/gpu/run-all.sh
# builds the GPU tests and bench_gpu (in parallel), runs the benchmark first (an idle GPU),
# then tests/cuda/run-device.sh (full grid, then memcheck and racecheck on the small grid).
# Everything lands in $OUT: bench.log, bench_gpu.csv, summary.txt, the sweep's files, and
# logs.tar (the build and test logs).
# Knobs: TB_GIB (GiB per operand, default 1), TB_BENCH_OPS, TB_SKIP_TESTS=1, TB_SKIP_BENCH=1,
# TB_SWEEP=1 (also build and run the tuning sweep sweep_gpu: sweep_gpu.csv, sweep.log),
# TB_SWEEP_OPS (sweep_gpu --ops, default getrf,inverse,potrf,gemm; getrs,potrs too),
# TB_SWEEP_BUILD (meson's sweep_build: which operations sweep_gpu is compiled for, a mask),
# TB_SWEEP_SIZES (meson's sweep_sizes: which n it is compiled for, for example 16,32),
# TINYBATCH_PROGRAMS (build and run only these GPU test programs, as tests/cuda/run-device.sh
# takes them), TINYBATCH_SANITIZE=0.
set -uo pipefail
root=$(pwd)
out=${OUT:-$root/device-logs}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
export OUT=$out
(
  [ -f build-bench/build.ninja ] ||
    meson setup build-bench -Dcuda=enabled -Dtests=false -Dbenchmarks=true -Dexamples=false
  [ -n "${TB_SWEEP_BUILD:-}" ] && meson configure build-bench -Dsweep_build="$TB_SWEEP_BUILD"
  [ -n "${TB_SWEEP_SIZES:-}" ] && meson configure build-bench -Dsweep_sizes="$TB_SWEEP_SIZES"
  # (nothing to build when neither is asked for: ninja without targets builds everything)
  targets="$([ "${TB_SKIP_BENCH:-0}" != 1 ] && echo bench/gpu/bench_gpu) $([ "${TB_SWEEP:-0}" = 1 ] && echo bench/gpu/sweep_gpu)"
  [ -z "${targets// /}" ] || ninja -C build-bench $targets
) >"$out/bench-build.log" 2>&1 &
bpid=$!
(
  [ -f build-device/build.ninja ] ||
    meson setup build-device -Dcuda=enabled -Dtests=true -Dbenchmarks=false -Dexamples=false
  # every GPU test program the build defines (the fast solves are four each on full grids)
  want='test_cuda_[a-z0-9_]+'
  [ -n "${TINYBATCH_PROGRAMS:-}" ] && want="($(echo $TINYBATCH_PROGRAMS | sed 's/ /|/g'))(_[0-3])?"
  if [ "${TB_SKIP_TESTS:-0}" != 1 ]; then
    ninja -C build-device $(ninja -C build-device -t targets all | grep -oE "^tests/cuda/${want}:" |
      tr -d : | grep -v test_cuda_host)
  fi
) >"$out/test-build.log" 2>&1
trc=$?
wait $bpid
brc=$?
echo "build: tests rc=$trc bench rc=$brc"
[ $brc -ne 0 ] && tail -n 30 "$out/bench-build.log"
[ $trc -ne 0 ] && tail -n 30 "$out/test-build.log"
if [ "${TB_SKIP_BENCH:-0}" != 1 ] && [ $brc -eq 0 ]; then
  timeout "${TB_BENCH_TIMEOUT:-300}" build-bench/bench/gpu/bench_gpu --gib "${TB_GIB:-1}" \
    --csv "$out/bench_gpu.csv" --commit "${TB_COMMIT:-unknown}" \
    --ops "${TB_BENCH_OPS:-gemm,getrf,inverse,potrf,getrs,potrs}" >"$out/bench.log" 2>&1
  echo "bench rc=$?"
fi
if [ "${TB_SWEEP:-0}" = 1 ] && [ $brc -eq 0 ]; then
  timeout "${TB_SWEEP_TIMEOUT:-300}" build-bench/bench/gpu/sweep_gpu --gib "${TB_GIB:-1}" \
    --csv "$out/sweep_gpu.csv" --commit "${TB_COMMIT:-unknown}" --ops "${TB_SWEEP_OPS:-getrf,inverse,potrf,gemm}" \
    >"$out/sweep.log" 2>&1
  echo "sweep rc=$?"
fi
if [ "${TB_SKIP_TESTS:-0}" != 1 ]; then
  TINYBATCH_BUILD=build-device tests/cuda/run-device.sh >/dev/null 2>&1
  echo "tests rc=$?"
  cat "$out/summary.txt"
fi
table=cat
command -v column >/dev/null && table="column -t"  # the GPU machine has no column
[ -f "$out/bench.log" ] && grep -v '^#' "$out/bench.log" | awk '{print $1, $2, $3, $4, $6, $7, $13, $14}' | $table
# The device tool brings back at most 8 files a call: the build and test logs travel as one
# tar (logs.tar), the CSVs, bench.log, sweep.log and summary.txt loose.
(cd "$out" && set -- $(ls bench-build.log test-build.log build.log tests.log memcheck.log racecheck.log 2>/dev/null) &&
  [ $# -gt 0 ] && tar -cf logs.tar "$@" && rm -f "$@") || true
